import CFFmpeg
import Foundation
import KTVCore

// Audio through FFmpeg's libraries (libavformat demuxes, libavcodec decodes, libswresample turns
// every sample format into interleaved float): MP4/M4A (AAC, ALAC), WebM and Matroska (Opus,
// Vorbis), the audio of MP4/MKV/MOV video, and what else FFmpeg demuxes. `AudioReader` uses it for
// what libsndfile does not read; nothing else touches FFmpeg. Memory is bounded by one decoded
// frame (an AAC frame is 1024 samples, an Opus one at most 120 ms) plus the caller's block.
// Reference: FFmpeg's doc/examples/demux_decode.c and the send/receive API (libavcodec/avcodec.h).

/// One open audio stream of a file (or of bytes in memory, through a custom AVIOContext).
final class FFmpegDecoder {
    let sampleRateHz: Double
    let channels: Int
    /// Frames the container's duration gives (an estimate: the decoded count can differ by a frame);
    /// nil when it gives none.
    let estimatedFrames: Int?
    /// `MP4`, `Matroska/WebM`, … and `AAC`, `OPUS`, …, as `AudioInfo` names them.
    let container: String, codec: String
    /// Why decoding stopped before the end of the stream, when it did.
    private(set) var error: String?

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let streamIndex: Int32
    private let timeBase: AVRational
    /// Decoded samples not yet handed out (interleaved), and where the next one is.
    private var pending: [Float] = []
    private var pendingStart = 0
    private var draining = false, finished = false
    /// Samples to drop after a seek, up to the frame asked for.
    private var discard = 0
    private var io: UnsafeMutablePointer<AVIOContext>?
    private let memory: MemoryFile?

    static let quiet: Void = { av_log_set_level(AV_LOG_QUIET) }()   // the library never prints

    /// FFmpeg's libraries are loaded on the first file that needs them (Sources/CFFmpeg/loader.c),
    /// so only such a file fails where they are missing.
    private static func load(path: String) throws(AudioError) {
        var reason = [CChar](repeating: 0, count: 512)
        guard ktv_ffmpeg_load(&reason, reason.count) == 0 else { return }
        let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw .cannotOpen(path: path, reason: "this file needs FFmpeg's libraries, which are not installed (\(why)); "
                          + "install them (Debian: libavformat59 libavcodec59 libswresample4), or convert the file to WAV or FLAC", detected: nil)
    }

    /// Opens `path` (or `memory`, named `path`) and its `stream`-th audio stream (1-based; nil: the
    /// best one FFmpeg finds).
    init(path: String, memory: MemoryFile? = nil, stream: Int? = nil) throws(AudioError) {
        try Self.load(path: path)
        _ = Self.quiet
        self.memory = memory
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else { throw .readFailed(path: path, reason: "out of memory") }
        self.packet = packet
        self.frame = frame
        var fmt: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        if let memory {
            let size = 1 << 16
            guard let buffer = av_malloc(size),
                  let ctx = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 0,
                                               Unmanaged.passUnretained(memory).toOpaque(), Self.readMemory, nil, Self.seekMemory) else {
                avformat_free_context(fmt)
                throw .readFailed(path: path, reason: "out of memory")
            }
            io = ctx
            fmt?.pointee.pb = ctx
        }
        var code = avformat_open_input(&fmt, memory == nil ? path : "", nil, nil)
        guard code >= 0, let opened = fmt else {
            Self.cleanup(format: nil, io: &io, packet: packet, frame: frame)
            // An MP4 written without its index at the front and cut short has no `moov` box at all.
            let head = memory.map { Array($0.bytes.prefix(8)) } ?? ((try? FileIO.readPrefix(path, count: 8)) ?? [])
            let iso = head.count == 8 && head[4...7].elementsEqual("ftyp".utf8)
            throw .cannotOpen(path: path, reason: iso ? "the MP4 has no index (no moov box: a recording cut short before it was finished, or a damaged file); FFmpeg says: \(Self.message(code))"
                                                      : Self.message(code), detected: nil)
        }
        format = opened
        // A failure here leaves the streams as the header gave them, still worth trying to decode.
        _ = avformat_find_stream_info(opened, nil)
        // The audio streams, in file order.
        var audio: [Int32] = []
        for k in 0..<Int(opened.pointee.nb_streams) {
            if let s = opened.pointee.streams[k], s.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO { audio.append(Int32(k)) }
        }
        let chosen: Int32
        if let stream {
            guard stream >= 1, stream <= audio.count else {
                let count = audio.count
                Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
                throw .noAudioStream(path: path, detail: count == 0 ? "it holds no audio stream" : "audio stream \(stream) was asked for, and it holds \(count) audio stream(s)")
            }
            chosen = audio[stream - 1]
        } else {
            let best = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
            guard best >= 0 else {
                let others = opened.pointee.nb_streams   // read before the context is freed
                Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
                throw .noAudioStream(path: path, detail: "it holds no audio stream (\(others) stream(s) of other kinds: video, subtitles or data)")
            }
            chosen = best
        }
        streamIndex = chosen
        guard let st = opened.pointee.streams[Int(chosen)] else {
            Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
            throw .noAudioStream(path: path, detail: "the audio stream cannot be read")
        }
        timeBase = st.pointee.time_base
        let par = st.pointee.codecpar!
        let tag = par.pointee.codec_tag
        let fourCC = String(bytes: [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: tag >> $0) }, encoding: .isoLatin1) ?? ""
        guard let decoder = avcodec_find_decoder(par.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(par.pointee.codec_id))
            Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
            if ["drms", "enca", "drmi"].contains(fourCC) {
                throw .cannotOpen(path: path, reason: "the audio is protected by DRM (\(fourCC)) and cannot be decoded", detected: nil)
            }
            throw .cannotOpen(path: path, reason: "its audio codec (\(name)) is one this FFmpeg was built without", detected: nil)
        }
        context = avcodec_alloc_context3(decoder)
        guard let ctx = context, avcodec_parameters_to_context(ctx, par) >= 0 else {
            Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
            throw .readFailed(path: path, reason: "cannot set up the decoder")
        }
        ctx.pointee.pkt_timebase = st.pointee.time_base
        code = avcodec_open2(ctx, decoder, nil)
        guard code >= 0 else {
            avcodec_free_context(&context)
            Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
            throw .cannotOpen(path: path, reason: "cannot open the \(String(cString: decoder.pointee.name)) decoder: \(Self.message(code))", detected: nil)
        }
        sampleRateHz = Double(ctx.pointee.sample_rate)
        channels = Int(ctx.pointee.ch_layout.nb_channels)
        codec = String(cString: decoder.pointee.name).uppercased()
        let demuxer = String(cString: opened.pointee.iformat.pointee.name)
        container = demuxer.hasPrefix("mov,") ? "MP4" : demuxer.hasPrefix("matroska") ? "Matroska/WebM" : (demuxer.split(separator: ",").first.map(String.init) ?? demuxer).uppercased()
        let nopts = ktv_av_nopts_value()
        if st.pointee.duration != nopts, st.pointee.duration > 0 {
            estimatedFrames = Int((Double(st.pointee.duration) * Double(timeBase.num) / Double(timeBase.den) * sampleRateHz).rounded())
        } else if opened.pointee.duration != nopts, opened.pointee.duration > 0 {
            estimatedFrames = Int((Double(opened.pointee.duration) / Double(AV_TIME_BASE) * sampleRateHz).rounded())
        } else {
            estimatedFrames = nil
        }
        // Every sample format to interleaved float, same rate and layout (libswresample).
        var swr: OpaquePointer?
        var outLayout = AVChannelLayout(), inLayout = AVChannelLayout()
        _ = av_channel_layout_copy(&outLayout, &ctx.pointee.ch_layout)
        _ = av_channel_layout_copy(&inLayout, &ctx.pointee.ch_layout)
        code = swr_alloc_set_opts2(&swr, &outLayout, AV_SAMPLE_FMT_FLT, ctx.pointee.sample_rate, &inLayout, ctx.pointee.sample_fmt, ctx.pointee.sample_rate, 0, nil)
        av_channel_layout_uninit(&outLayout)
        av_channel_layout_uninit(&inLayout)
        guard code >= 0, let made = swr, swr_init(made) >= 0 else {
            swr_free(&swr)
            // Every stored property is set: deinit frees the rest.
            throw .readFailed(path: path, reason: "cannot convert its samples (libswresample)")
        }
        resampler = made
    }

    deinit {
        swr_free(&resampler)
        avcodec_free_context(&context)
        Self.cleanup(format: &format, io: &io, packet: packet, frame: frame)
    }

    private static func cleanup(format: UnsafeMutablePointer<UnsafeMutablePointer<AVFormatContext>?>?, io: inout UnsafeMutablePointer<AVIOContext>?,
                                packet: UnsafeMutablePointer<AVPacket>, frame: UnsafeMutablePointer<AVFrame>) {
        if let format { avformat_close_input(format) }
        if io != nil {
            av_freep(&io!.pointee.buffer)
            avio_context_free(&io)
        }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// Reads up to `frames` interleaved frames into `out`; fewer only at the end (or a decode error,
    /// then `error` says why).
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            let available = (pending.count - pendingStart) / channels
            if available > 0 {
                let n = min(available, frames - done)
                pending.withUnsafeBufferPointer { p in
                    (out + done * channels).update(from: p.baseAddress! + pendingStart, count: n * channels)
                }
                pendingStart += n * channels
                done += n
                continue
            }
            guard decodeNext() else { break }
        }
        return done
    }

    /// Decodes the next frame into `pending`; false at the end of the stream.
    private func decodeNext() -> Bool {
        guard let ctx = context, let fmt = format, !finished else { return false }
        while true {
            let got = avcodec_receive_frame(ctx, frame)
            if got == 0 {
                convert()
                av_frame_unref(frame)
                if pending.count > pendingStart { return true }
                continue
            }
            if got == ktv_averror_eof() { finished = true; return false }
            if got != ktv_averror_eagain() {
                error = "the decoder failed: \(Self.message(got))"
                finished = true
                return false
            }
            if draining { finished = true; return false }
            // The decoder wants input: the next packet of our stream, or the flush at the end.
            let read = av_read_frame(fmt, packet)
            if read < 0 {
                if read != ktv_averror_eof() { error = "the file ends in broken data: \(Self.message(read))" }
                draining = true
                _ = avcodec_send_packet(ctx, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(ctx, packet)
            // A damaged packet is skipped (as players do); the stream goes on.
            if sent < 0, sent != ktv_averror_eagain() { continue }
        }
    }

    /// The frame in `frame` as interleaved floats appended to `pending` (after any samples to discard).
    private func convert() {
        if pendingStart >= pending.count { pending.removeAll(keepingCapacity: true); pendingStart = 0 }
        let count = Int(frame.pointee.nb_samples)
        guard count > 0, let swr = resampler else { return }
        let start = pending.count
        pending.append(contentsOf: repeatElement(0, count: (count + 32) * channels))
        let converted: Int32 = pending.withUnsafeMutableBufferPointer { p in
            var outPlane: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(p.baseAddress! + start).assumingMemoryBound(to: UInt8.self)
            return frame.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: channels) { input in
                swr_convert(swr, &outPlane, Int32(count + 32), input, Int32(count))
            }
        }
        pending.removeLast(pending.count - start - max(0, Int(converted)) * channels)
        if discard > 0 {
            let drop = min(discard, (pending.count - start) / channels)
            pending.removeSubrange(start..<(start + drop * channels))
            discard -= drop
        }
    }

    /// Moves to `target` (frames from the start) for the next read: a seek to the packet before it,
    /// then the samples up to it decoded and dropped. False when the stream cannot seek.
    func seek(toFrame target: Int) -> Bool {
        guard let fmt = format, let ctx = context else { return false }
        // From a little before: a transform codec (AAC, Vorbis, Opus) needs the frame before to
        // overlap-add the first one whole; those decoded before the target are dropped.
        let preroll = max(0, target - Int(0.2 * sampleRateHz))
        let ts = Int64((Double(preroll) / sampleRateHz * Double(timeBase.den) / Double(timeBase.num)).rounded(.down))
        guard avformat_seek_file(fmt, streamIndex, Int64.min, ts, ts, 0) >= 0 || av_seek_frame(fmt, streamIndex, ts, AVSEEK_FLAG_BACKWARD) >= 0 else { return false }
        avcodec_flush_buffers(ctx)
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        draining = false
        finished = false
        error = nil
        // Where decoding resumes: the first frame's time says how many samples to drop.
        discard = 0
        var got = avcodec_receive_frame(ctx, frame)
        while got == ktv_averror_eagain() {
            let read = av_read_frame(fmt, packet)
            if read < 0 { return true }   // nothing after the seek point: the next read ends
            if packet.pointee.stream_index == streamIndex { _ = avcodec_send_packet(ctx, packet) }
            av_packet_unref(packet)
            got = avcodec_receive_frame(ctx, frame)
        }
        guard got == 0 else { return true }
        let pts = frame.pointee.best_effort_timestamp
        let at = pts == ktv_av_nopts_value() ? target : Int((Double(pts) * Double(timeBase.num) / Double(timeBase.den) * sampleRateHz).rounded())
        discard = max(0, target - at)
        convert()
        av_frame_unref(frame)
        return true
    }

    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // The custom AVIOContext over bytes in memory (the fuzz harness's path, and `AudioReader(bytes:)`).
    static let readMemory: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, buffer, size in
        guard let opaque, let buffer else { return ktv_averror_eof() }
        let file = Unmanaged<MemoryFile>.fromOpaque(opaque).takeUnretainedValue()
        let n = min(Int(size), file.bytes.count - file.offset)
        guard n > 0 else { return ktv_averror_eof() }
        file.bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + file.offset, count: n) }
        file.offset += n
        return Int32(n)
    }

    static let seekMemory: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        guard let opaque else { return -1 }
        let file = Unmanaged<MemoryFile>.fromOpaque(opaque).takeUnretainedValue()
        if whence & ktv_avseek_size() != 0 { return Int64(file.bytes.count) }
        let base: Int64
        switch whence & 3 {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = Int64(file.offset)
        case SEEK_END: base = Int64(file.bytes.count)
        default: return -1
        }
        let (to, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, to >= 0, to <= Int64(file.bytes.count) else { return -1 }
        file.offset = Int(to)
        return to
    }
}
