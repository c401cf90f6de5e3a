import CSndFile
import Foundation
import KTVCore

/// What libsndfile found in a file.
public struct AudioInfo: Sendable, Equatable {
    public var sampleRate: Double
    public var channels: Int
    /// Frames (samples per channel); for MP3 libsndfile's count, which may be an estimate.
    public var frames: Int
    /// Container, e.g. `WAV`, `FLAC`, `OGG`, `MPEG`.
    public var container: String
    /// Sample encoding, e.g. `PCM_16`, `FLOAT`, `VORBIS`, `MPEG_LAYER_III`.
    public var encoding: String

    public var durationS: Double { Double(frames) / sampleRate }
    /// `WAV PCM_16` — how messages name the format.
    public var formatName: String { "\(container) \(encoding)" }
    /// Bits of the integer PCM encoding (16 or 24), nil for float and compressed encodings.
    public var pcmBits: Int? {
        switch encoding {
        case "PCM_16": return 16
        case "PCM_24": return 24
        default: return nil
        }
    }
}

/// Where an input's audio stops short of what its header promised.
public struct AudioTruncation: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// Audio decoded before the stream ended or broke, seconds.
    public var decodedS: Double
    /// What the header claimed, seconds (nil when it gave no length).
    public var claimedS: Double?
    /// libsndfile's words, when the decoder reported an error.
    public var reason: String?

    public var description: String {
        var s = String(format: "%@: the audio ends at %.3f s", path, decodedS)
        if let claimedS { s += String(format: " of the %.3f s its header claims", claimedS) }
        s += reason.map { " (\($0))" } ?? ""
        return s + "; the file is truncated or damaged, and only the decoded part was analysed"
    }
}

/// Streaming reader over any format libsndfile decodes (WAV, FLAC, OGG/Vorbis, Opus, MP3, AIFF, …).
///
/// One reader per file; reads blocks of interleaved Float frames into a buffer the caller reuses,
/// so a long file is processed in bounded memory. Not thread-safe; use one per thread.
///
/// Bad input is refused at open, before any analysis sizes a buffer from the header: a folder or an
/// unreadable path (`.unreadable`), a format libsndfile cannot decode (`.cannotOpen`), a sample rate
/// the analyses cannot use (`.unsupportedSampleRate`, outside `sampleRateRangeHz`). A stream that
/// breaks or ends before its header's length ends the reading there; `truncation` says where.
public final class AudioReader {
    /// Sample rates every analysis in ktv can work with: from telephone-band audio up to the highest
    /// rate in studio use. Below 8 kHz the voice band (up to 3.4 kHz) is not there to analyse.
    public static let sampleRateRangeHz: ClosedRange<Double> = 8000...768_000

    public let path: String
    public let info: AudioInfo
    /// Set once reading stopped early: a decode error, or fewer frames than the header claimed.
    public private(set) var truncation: AudioTruncation?
    /// False when the header gave no length (a streamed FLAC or Ogg): `info.frames` is then the count
    /// found by decoding the file once at open.
    public let lengthFromHeader: Bool
    /// The decoder: libsndfile first, for everything it reads; FFmpeg for the containers it does not.
    private enum Source { case sndfile(OpaquePointer), ffmpeg(FFmpegDecoder) }
    private let source: Source
    /// Keeps the bytes of an in-memory file alive for libsndfile's callbacks.
    private let memory: MemoryFile?
    private var position = 0
    /// What the container says is missing though every frame libsndfile counted decodes (a WAV
    /// whose `data` chunk claims more bytes than the file holds, an Ogg stream without its end
    /// mark): reported as a truncation when reading reaches the end.
    private var shortfall: (claimedS: Double?, reason: String)?

    public enum Spec {
        public static let stream = Parameter<Int>("stream", range: 1...64, default: 1, defaultText: "the first audio stream",
            "The audio stream read from a container with several (a video, an MKV with two languages), counted from 1 among its audio streams; a WAV, FLAC or MP3 file has one.")
        public static let all: [ParameterInfo] = [stream.info]
    }

    /// Opens a file. `stream` picks the audio stream (from 1) of a container read through FFmpeg;
    /// nil takes the best one (the first, usually).
    public convenience init(path: String, stream: Int? = nil) throws(AudioError) {
        // A FIFO or a device is refused before it is opened: the open of a FIFO waits for a writer,
        // and a stream's first bytes, once libsndfile has read them, are not there for FFmpeg.
        if let kind = FileIO.specialFileKind(path) { throw .unreadable(path: path, reason: FileIO.notRegularReason(kind)) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw .unreadable(path: path, reason: code == ENOENT ? "no such file" : code == EACCES || code == EPERM ? "permission denied" : String(cString: strerror(code)))
        }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw .unreadable(path: path, reason: "is a folder, not an audio file")
        }
        // An Ogg file's last page, read before libsndfile takes the descriptor (pread moves no offset).
        var tail: [UInt8] = []
        if (st.st_mode & S_IFMT) == S_IFREG, st.st_size > 0 {
            let count = Int(min(off_t(Self.oggTailBytes), st.st_size))
            tail = [UInt8](repeating: 0, count: count)
            let got = tail.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, st.st_size - off_t(count)) }
            tail = got == count ? tail : []
        }
        var sfinfo = SF_INFO()
        // libsndfile closes the descriptor with the handle (and on failure).
        guard let h = sf_open_fd(fd, Int32(SFM_READ), &sfinfo, Int32(SF_TRUE)) else {
            let reason = String(cString: sf_strerror(nil))
            let prefix = (try? FileIO.readPrefix(path, count: 12)) ?? []
            guard FormatSniffer.isFFmpegContainer(prefix: prefix, path: path) else {
                throw .cannotOpen(path: path, reason: reason, detected: FormatSniffer.unsupportedName(prefix: prefix))
            }
            try self.init(ffmpeg: try FFmpegDecoder(path: path, stream: stream), path: path, memory: nil)
            return
        }
        if let stream, stream != 1 {
            sf_close(h)
            throw .noAudioStream(path: path, detail: "audio stream \(stream) was asked for, and a file libsndfile reads holds one")
        }
        try self.init(handle: h, info: sfinfo, path: path, memory: nil, tail: tail)
    }

    /// Opens audio held in memory (any format libsndfile reads), through its virtual I/O.
    /// `name` is how messages call it.
    public convenience init(bytes: [UInt8], name: String) throws(AudioError) {
        let file = MemoryFile(bytes)
        var vio = SF_VIRTUAL_IO(get_filelen: MemoryFile.length, seek: MemoryFile.seek, read: MemoryFile.read,
                                write: MemoryFile.write, tell: MemoryFile.tell)
        var sfinfo = SF_INFO()
        guard let h = sf_open_virtual(&vio, Int32(SFM_READ), &sfinfo, Unmanaged.passUnretained(file).toOpaque()) else {
            let reason = String(cString: sf_strerror(nil))
            let prefix = Array(bytes.prefix(12))
            guard FormatSniffer.isFFmpegContainer(prefix: prefix, path: name) else {
                throw .cannotOpen(path: name, reason: reason, detected: FormatSniffer.unsupportedName(prefix: prefix))
            }
            let memory = MemoryFile(bytes)
            try self.init(ffmpeg: try FFmpegDecoder(path: name, memory: memory), path: name, memory: memory)
            return
        }
        try self.init(handle: h, info: sfinfo, path: name, memory: file, tail: Array(bytes.suffix(Self.oggTailBytes)))
    }

    /// A container libsndfile does not read, through FFmpeg. Its length is the container's (an
    /// estimate, as an MP3's is), or counted by decoding once when it gives none.
    private init(ffmpeg d: FFmpegDecoder, path: String, memory: MemoryFile?) throws(AudioError) {
        self.path = path
        self.memory = memory
        source = .ffmpeg(d)
        var info = AudioInfo(sampleRate: d.sampleRateHz, channels: d.channels, frames: d.estimatedFrames ?? 0,
                             container: d.container, encoding: d.codec)
        guard Self.sampleRateRangeHz.contains(info.sampleRate) else {
            throw .unsupportedSampleRate(path: path, rateHz: info.sampleRate, range: Self.sampleRateRangeHz)
        }
        guard (1...64).contains(info.channels) else {
            throw .wrongChannelCount(path: path, found: info.channels, expected: "ktv reads 1 to 64 channels", format: info.formatName)
        }
        lengthFromHeader = d.estimatedFrames != nil
        if d.estimatedFrames == nil {
            var block = [Float](repeating: 0, count: 4096 * d.channels)
            var total = 0
            while true {
                let n = block.withUnsafeMutableBufferPointer { d.read(into: $0.baseAddress!, frames: 4096) }
                if n == 0 { break }
                total += n
            }
            info.frames = total
            guard d.seek(toFrame: 0) else {
                throw .cannotOpen(path: path, reason: "the container gives no length and the stream cannot be rewound after counting it", detected: nil)
            }
        }
        guard info.frames > 0 else { throw .empty(path: path) }
        self.info = info
    }

    private init(handle h: OpaquePointer, info sfinfo: SF_INFO, path: String, memory: MemoryFile?, tail: [UInt8]) throws(AudioError) {
        self.path = path
        self.memory = memory
        source = .sndfile(h)
        let major = Int32(sfinfo.format) & Int32(SF_FORMAT_TYPEMASK)
        let sub = Int32(sfinfo.format) & Int32(SF_FORMAT_SUBMASK)
        var info = AudioInfo(sampleRate: Double(sfinfo.samplerate), channels: Int(sfinfo.channels),
                             frames: Int(sfinfo.frames), container: Self.majorName(major), encoding: Self.subName(sub))
        guard Self.sampleRateRangeHz.contains(info.sampleRate) else {
            sf_close(h)
            throw .unsupportedSampleRate(path: path, rateHz: info.sampleRate, range: Self.sampleRateRangeHz)
        }
        guard (1...64).contains(info.channels) else {
            sf_close(h)
            throw .wrongChannelCount(path: path, found: info.channels, expected: "ktv reads 1 to 64 channels", format: info.formatName)
        }
        // A header without a length (FLAC's total_samples = 0 means "unknown"; libsndfile then says 0
        // or SF_COUNT_MAX): count by decoding once, so analyses that place windows get a real length.
        let unknown = sfinfo.frames <= 0 || sfinfo.frames == Int64.max
        lengthFromHeader = !unknown
        if unknown {
            info.frames = Self.countFrames(h, channels: info.channels)
            if sf_seek(h, 0, SEEK_SET) != 0 {
                sf_close(h)
                throw .cannotOpen(path: path, reason: "the header gives no length and the stream cannot be rewound after counting it", detected: nil)
            }
        }
        // Checked before the last property is set: once `self` is whole, a throw runs deinit, which
        // closes the handle itself (closing it here too was a double close, found by fuzz-audio).
        guard info.frames > 0 else {
            sf_close(h)
            throw .empty(path: path)
        }
        if info.container == "OGG", !tail.isEmpty, !Self.endsWithEndOfStream(tail) {
            shortfall = (nil, "the Ogg stream stops without its end-of-stream page")
        } else if let ratio = Self.dataChunkClaim(h) {
            shortfall = (info.durationS * ratio, "the data chunk claims \(String(format: "%.1f", ratio))× the bytes the file holds")
        }
        self.info = info
    }

    /// The largest Ogg page: the last page of a file lies within this many bytes of its end.
    static let oggTailBytes = 65_307

    /// Whether the last Ogg page in `tail` (the file's last bytes) is marked end-of-stream (header
    /// type flag 0x04, RFC 3533 §6). A file cut short ends inside a page, or on one without the mark.
    static func endsWithEndOfStream(_ tail: [UInt8]) -> Bool {
        let magic: [UInt8] = Array("OggS".utf8)
        var k = tail.count - 27
        while k >= 0 {
            if tail[k] == magic[0], tail[k + 1] == magic[1], tail[k + 2] == magic[2], tail[k + 3] == magic[3], tail[k + 4] == 0 {
                return tail[k + 5] & 0x04 != 0
            }
            k -= 1
        }
        return true   // no page header in reach: nothing to say
    }

    /// How many times the audio the file holds its header's `data` (WAV) or `SSND` (AIFF) chunk
    /// claims, from libsndfile's log (`data : 1764000 (should be 399920)`); nil when they agree or
    /// the size is a streaming placeholder (0 or 0xFFFFFFFF: written before the length was known).
    static func dataChunkClaim(_ h: OpaquePointer) -> Double? {
        var log = [CChar](repeating: 0, count: 8192)
        let n = log.withUnsafeMutableBytes { Int(sf_command(h, Int32(SFC_GET_LOG_INFO), $0.baseAddress, Int32($0.count))) }
        guard n > 0 else { return nil }
        let text = String(decoding: log.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("data :") || line.hasPrefix("SSND :") {
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Double($0) }
            guard line.contains("should be"), numbers.count >= 2 else { continue }
            let claimed = numbers[0], held = numbers[numbers.count - 1]
            guard claimed > held, held > 0, claimed < 0xFFFF_FF00 else { continue }
            return claimed / held
        }
        return nil
    }

    deinit { if case let .sndfile(h) = source { sf_close(h) } }

    private static func countFrames(_ h: OpaquePointer, channels: Int) -> Int {
        var buffer = [Float](repeating: 0, count: 16384 * channels)
        var total = 0
        while true {
            let got = buffer.withUnsafeMutableBufferPointer { sf_readf_float(h, $0.baseAddress, 16384) }
            if got <= 0 { break }
            total += Int(got)
        }
        return total
    }

    /// Reads up to `frames` interleaved frames into `buffer` (resized as needed); returns frames read,
    /// 0 at the end. A decode error ends the stream like the end of the file and sets `truncation`.
    /// A stream that ends before its first frame decodes (a header, then damaged data) is an error
    /// naming the file: there is nothing to analyse.
    public func read(into buffer: inout [Float], frames: Int) throws(AudioError) -> Int {
        guard truncation == nil, frames > 0 else { return 0 }
        let need = frames * info.channels
        if buffer.count < need { buffer = [Float](repeating: 0, count: need) }
        let handle: OpaquePointer
        switch source {
        case let .ffmpeg(d):
            let n = readFFmpeg(d, into: &buffer, frames: frames)
            if n == 0, position == 0 { throw nothingDecoded() }
            return n
        case let .sndfile(h): handle = h
        }
        let got = buffer.withUnsafeMutableBufferPointer { p in
            sf_readf_float(handle, p.baseAddress, sf_count_t(frames))
        }
        let n = max(0, Int(got))
        position += n
        if n < frames {
            // The end of the stream: early if the decoder failed, or if the header promised more
            // (MP3 lengths are libsndfile's estimate, so only a decoder error counts there).
            let err = sf_error(handle)
            if err != 0 || (position < info.frames && info.container != "MPEG") {
                truncation = AudioTruncation(path: path, decodedS: Double(position) / info.sampleRate,
                                             claimedS: info.durationS,
                                             reason: err != 0 ? String(cString: sf_strerror(handle)) : nil)
            } else if let shortfall {
                truncation = AudioTruncation(path: path, decodedS: Double(position) / info.sampleRate,
                                             claimedS: shortfall.claimedS, reason: shortfall.reason)
            }
        }
        if n == 0, position == 0 { throw nothingDecoded() }
        return n
    }

    /// The error for a stream that ended before one frame decoded, though the header gave a length.
    private func nothingDecoded() -> AudioError {
        truncation = truncation ?? AudioTruncation(path: path, decodedS: 0, claimedS: info.durationS, reason: nil)
        let why = truncation?.reason.map { " (\($0))" } ?? ""
        return .readFailed(path: path, reason: String(format: "not one frame of the %.3f s its header gives could be decoded%@; the file is damaged, or is not the %@ its header says",
                                                      info.durationS, why, info.formatName))
    }

    /// FFmpeg's stream ended: early when the decoder failed, or when it stopped more than 1 % (at
    /// least 0.1 s) short of the container's length (an estimate, like an MP3's, so not to the frame).
    private func readFFmpeg(_ d: FFmpegDecoder, into buffer: inout [Float], frames: Int) -> Int {
        let n = buffer.withUnsafeMutableBufferPointer { d.read(into: $0.baseAddress!, frames: frames) }
        position += n
        if n < frames {
            let shortS = Double(info.frames - position) / info.sampleRate
            if d.error != nil || (lengthFromHeader && shortS > max(0.1, 0.01 * info.durationS)) {
                truncation = AudioTruncation(path: path, decodedS: Double(position) / info.sampleRate, claimedS: info.durationS,
                                             reason: d.error ?? "the \(info.container) file ends before the length its header gives")
            }
        }
        return n
    }

    /// Moves to frame `frame` (0-based) for the next read. Past the decodable end (a truncated file)
    /// the next read returns 0 and `truncation` is set.
    public func seek(toFrame frame: Int) throws(AudioError) {
        let target = max(0, min(frame, info.frames))
        let handle: OpaquePointer
        switch source {
        case let .ffmpeg(d):
            if !d.seek(toFrame: target) {
                truncation = truncation ?? AudioTruncation(path: path, decodedS: Double(position) / info.sampleRate, claimedS: info.durationS,
                                                          reason: "cannot seek to \(String(format: "%.3f", Double(target) / info.sampleRate)) s in the \(info.container) file")
            } else {
                position = target
            }
            return
        case let .sndfile(h): handle = h
        }
        if sf_seek(handle, sf_count_t(target), SEEK_SET) < 0 {
            guard target < info.frames else { position = target; return }
            // Seeking into the missing part of a damaged file: the end of what can be decoded.
            truncation = truncation ?? AudioTruncation(path: path, decodedS: Double(position) / info.sampleRate,
                                                      claimedS: info.durationS,
                                                      reason: "cannot seek to \(String(format: "%.3f", Double(target) / info.sampleRate)) s: \(String(cString: sf_strerror(handle)))")
            return
        }
        position = target
    }

    static func majorName(_ m: Int32) -> String {
        switch m {
        case Int32(SF_FORMAT_WAV): return "WAV"
        case Int32(SF_FORMAT_WAVEX): return "WAVEX"
        case Int32(SF_FORMAT_RF64): return "RF64"
        case Int32(SF_FORMAT_AIFF): return "AIFF"
        case Int32(SF_FORMAT_AU): return "AU"
        case Int32(SF_FORMAT_FLAC): return "FLAC"
        case Int32(SF_FORMAT_OGG): return "OGG"
        case Int32(SF_FORMAT_MPEG): return "MPEG"
        case Int32(SF_FORMAT_CAF): return "CAF"
        case Int32(SF_FORMAT_W64): return "W64"
        case Int32(SF_FORMAT_RAW): return "RAW"
        default: return "format 0x" + String(m, radix: 16)
        }
    }

    static func subName(_ s: Int32) -> String {
        switch s {
        case Int32(SF_FORMAT_PCM_S8): return "PCM_S8"
        case Int32(SF_FORMAT_PCM_U8): return "PCM_U8"
        case Int32(SF_FORMAT_PCM_16): return "PCM_16"
        case Int32(SF_FORMAT_PCM_24): return "PCM_24"
        case Int32(SF_FORMAT_PCM_32): return "PCM_32"
        case Int32(SF_FORMAT_FLOAT): return "FLOAT"
        case Int32(SF_FORMAT_DOUBLE): return "DOUBLE"
        case Int32(SF_FORMAT_VORBIS): return "VORBIS"
        case Int32(SF_FORMAT_OPUS): return "OPUS"
        case Int32(SF_FORMAT_MPEG_LAYER_I): return "MPEG_LAYER_I"
        case Int32(SF_FORMAT_MPEG_LAYER_II): return "MPEG_LAYER_II"
        case Int32(SF_FORMAT_MPEG_LAYER_III): return "MPEG_LAYER_III"
        case Int32(SF_FORMAT_ULAW): return "ULAW"
        case Int32(SF_FORMAT_ALAW): return "ALAW"
        default: return "encoding 0x" + String(s, radix: 16)
        }
    }
}

/// Whole-file audio, one array per channel. For short files; long ones should stream with `AudioReader`.
public struct AudioBuffer: Sendable {
    public var sampleRate: Double
    public var channels: [[Float]]

    public init(sampleRate: Double, channels: [[Float]]) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var frames: Int { channels.first?.count ?? 0 }

    /// Reads a whole file.
    public static func read(path: String) throws(AudioError) -> (AudioBuffer, AudioInfo) {
        let reader = try AudioReader(path: path)
        let n = reader.info.channels
        var chans = [[Float]](repeating: [], count: n)
        // A header's length is a claim, not a promise: reserve at most ten minutes up front and grow
        // with what is actually decoded.
        for c in 0..<n { chans[c].reserveCapacity(min(reader.info.frames, Int(600 * reader.info.sampleRate))) }
        var block: [Float] = []
        while true {
            let got = try reader.read(into: &block, frames: 65536)
            if got == 0 { break }
            for c in 0..<n {
                for f in 0..<got { chans[c].append(block[f * n + c]) }
            }
        }
        if chans[0].isEmpty { throw .empty(path: path) }
        return (AudioBuffer(sampleRate: reader.info.sampleRate, channels: chans), reader.info)
    }
}

/// Names formats libsndfile does not read, from their first bytes, so the error can say what the file is.
public enum FormatSniffer {
    /// Reads the first bytes without ever trapping: an unreadable path simply names nothing.
    static func unsupportedName(path: String) -> String? {
        guard let prefix = try? FileIO.readPrefix(path, count: 12) else { return nil }
        return unsupportedName(prefix: prefix)
    }

    /// Whether the first bytes are a container ktv reads as audio: RIFF/RF64 (WAV), fLaC, OggS,
    /// FORM (AIFF), an ID3 tag or an MPEG frame sync (MP3), or one of FFmpeg's (`isFFmpegContainer`).
    /// For callers that take either audio or text (a pitch track) and must tell them apart before reading.
    public static func isAudio(prefix head: [UInt8]) -> Bool {
        func starts(_ s: String) -> Bool { head.starts(with: Array(s.utf8)) }
        if starts("RIFF") || starts("RF64") || starts("fLaC") || starts("OggS") || starts("FORM") || starts("ID3") { return true }
        if isFFmpegContainer(prefix: head, path: nil) { return true }
        return head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0
    }

    /// Containers handed to FFmpeg when libsndfile refuses them, by their first bytes: ISO media
    /// (`ftyp`: MP4, M4A, MOV, 3GP), EBML (Matroska, WebM), ASF (WMA), AMR, raw AAC (ADTS); or by a
    /// file name ending in one of theirs. Only these: FFmpeg's probe would take random bytes for
    /// some stream, and a corrupt file must stay an error, not become noise.
    static func isFFmpegContainer(prefix b: [UInt8], path: String?) -> Bool {
        if b.count >= 8, b[4] == 0x66, b[5] == 0x74, b[6] == 0x79, b[7] == 0x70 { return true }   // ftyp
        if b.count >= 4, b[0] == 0x1A, b[1] == 0x45, b[2] == 0xDF, b[3] == 0xA3 { return true }   // EBML
        if b.count >= 4, b[0] == 0x30, b[1] == 0x26, b[2] == 0xB2, b[3] == 0x75 { return true }   // ASF
        if b.starts(with: Array("#!AMR".utf8)) { return true }
        if b.count >= 2, b[0] == 0xFF, b[1] & 0xF6 == 0xF0 { return true }                        // ADTS
        guard let path else { return false }
        return ffmpegExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    static let ffmpegExtensions: Set<String> = ["mp4", "m4a", "m4b", "mov", "3gp", "mkv", "mka", "webm", "aac", "wma", "amr", "ac3", "ts", "m2ts"]

    static func unsupportedName(prefix b: [UInt8]) -> String? {
        guard b.count >= 4 else { return b.isEmpty ? "an empty file" : nil }
        func ascii(_ r: Range<Int>) -> String { String(decoding: b[r], as: UTF8.self) }
        if b.count >= 8, ascii(4..<8) == "ftyp" { return "an MP4/M4A (AAC or ALAC) container" }
        if ascii(0..<4) == "caff" { return nil }
        if b[0] == 0x30, b[1] == 0x26, b[2] == 0xB2, b[3] == 0x75 { return "a WMA/ASF container" }
        if ascii(0..<4) == "#!AM" { return "AMR" }
        if b[0] == 0xFF, b[1] & 0xF6 == 0xF0 { return "raw AAC (ADTS)" }
        if ascii(0..<4) == "MThd" { return "a MIDI file" }
        if ascii(0..<3) == "ID3" { return nil }
        if b.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || ($0 >= 0x20 && $0 < 0x7F) }) { return "a text file" }
        return nil
    }
}

/// Bytes in memory behind libsndfile's virtual I/O. The callbacks get this object as `user_data`.
final class MemoryFile {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private static func file(_ p: UnsafeMutableRawPointer?) -> MemoryFile? {
        p.map { Unmanaged<MemoryFile>.fromOpaque($0).takeUnretainedValue() }
    }

    static let length: sf_vio_get_filelen = { p in sf_count_t(file(p)?.bytes.count ?? 0) }

    static let seek: sf_vio_seek = { offset, whence, p in
        guard let f = file(p) else { return -1 }
        let base: Int
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = f.offset
        case SEEK_END: base = f.bytes.count
        default: return -1
        }
        let (target, overflow) = base.addingReportingOverflow(Int(offset))
        guard !overflow, target >= 0 else { return -1 }
        f.offset = target
        return sf_count_t(target)
    }

    static let read: sf_vio_read = { ptr, count, p in
        guard let f = file(p), let ptr, count > 0, f.offset < f.bytes.count else { return 0 }
        let n = min(Int(count), f.bytes.count - f.offset)
        f.bytes.withUnsafeBytes { src in
            ptr.copyMemory(from: src.baseAddress! + f.offset, byteCount: n)
        }
        f.offset += n
        return sf_count_t(n)
    }

    static let write: sf_vio_write = { _, _, _ in 0 }

    static let tell: sf_vio_tell = { p in sf_count_t(file(p)?.offset ?? 0) }
}
