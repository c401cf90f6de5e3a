import CSndFile
import Foundation
import KTVCore

/// Output encodings ktv writes.
public enum AudioFileFormat: String, Sendable, CaseIterable {
    case wav16 = "wav16", wav24 = "wav24", wavFloat = "wav-float", flac16 = "flac16", flac24 = "flac24"

    var sfFormat: Int32 {
        switch self {
        case .wav16: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_16)
        case .wav24: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_24)
        case .wavFloat: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_FLOAT)
        case .flac16: return Int32(SF_FORMAT_FLAC) | Int32(SF_FORMAT_PCM_16)
        case .flac24: return Int32(SF_FORMAT_FLAC) | Int32(SF_FORMAT_PCM_24)
        }
    }

    /// The WAV encoding that keeps what a source held: its PCM depth, or float for float/compressed sources.
    public static func wavMatching(_ info: AudioInfo) -> AudioFileFormat {
        switch info.pcmBits {
        case 16?: return .wav16
        case 24?: return .wav24
        default: return .wavFloat
        }
    }
}

/// Writes audio under a temporary name and puts it in place on `finish()` (see `AtomicOutput`: a
/// regular file is replaced by rename, a device or FIFO is written into), so no reader ever sees a
/// partial file. Dropping the writer without `finish()` removes the temporary.
///
/// A writer made with `init(output:…)` belongs to an `AtomicOutputSet`: `finish()` only closes the
/// file, and the set puts every output in place together.
public final class AudioWriter {
    public let path: String
    public let channels: Int
    private let output: AtomicOutput
    private let commitsOnFinish: Bool
    private var handle: OpaquePointer?

    /// A writer whose `finish()` puts the file in place.
    public convenience init(path: String, sampleRate: Double, channels: Int, format: AudioFileFormat) throws(AudioError) {
        let output: AtomicOutput
        do { output = try AtomicOutput(path: path) } catch { throw .cannotWrite(path: path, reason: error.reason) }
        try self.init(output: output, sampleRate: sampleRate, channels: channels, format: format, commitsOnFinish: true)
    }

    /// A writer for one output of a set; the set commits it.
    public convenience init(output: AtomicOutput, sampleRate: Double, channels: Int, format: AudioFileFormat) throws(AudioError) {
        try self.init(output: output, sampleRate: sampleRate, channels: channels, format: format, commitsOnFinish: false)
    }

    private init(output: AtomicOutput, sampleRate: Double, channels: Int, format: AudioFileFormat, commitsOnFinish: Bool) throws(AudioError) {
        self.path = output.target.path
        self.channels = channels
        self.output = output
        self.commitsOnFinish = commitsOnFinish
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate.rounded())
        info.channels = Int32(channels)
        info.format = format.sfFormat
        guard sf_format_check(&info) != 0 else {
            throw .cannotWrite(path: path, reason: "\(format.rawValue) cannot hold \(channels) channel(s) at \(Int(sampleRate)) Hz")
        }
        guard let h = sf_open(output.temporaryPath, Int32(SFM_WRITE), &info) else {
            throw .cannotWrite(path: path, reason: String(cString: sf_strerror(nil)))
        }
        // Float input beyond ±1 is clipped rather than wrapped when written as integers.
        sf_command(h, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        handle = h
    }

    deinit {
        if let h = handle {
            sf_close(h)
            output.discard()
        }
    }

    /// Writes interleaved frames.
    public func write(interleaved samples: UnsafeBufferPointer<Float>, frames: Int) throws(AudioError) {
        guard let h = handle else { throw .cannotWrite(path: path, reason: "writer already finished") }
        let n = sf_writef_float(h, samples.baseAddress, sf_count_t(frames))
        if n != frames {
            throw .cannotWrite(path: path, reason: String(cString: sf_strerror(h)))
        }
    }

    /// Writes one mono block (for single-channel writers).
    public func write(mono samples: [Float]) throws(AudioError) {
        guard channels == 1 else { throw .invalidArgument("write(mono:) needs a one-channel writer, this one has \(channels)") }
        try samples.withUnsafeBufferPointer { (p) throws(AudioError) in try write(interleaved: p, frames: samples.count) }
    }

    /// Closes the file and, unless it belongs to a set, puts it in place.
    public func finish() throws(AudioError) {
        guard let h = handle else { return }
        handle = nil
        if sf_close(h) != 0 {
            output.discard()
            throw .cannotWrite(path: path, reason: "closing failed")
        }
        guard commitsOnFinish else { return }
        do { try output.commit() } catch { throw .cannotWrite(path: path, reason: error.reason) }
    }
}

/// Writes a whole buffer in one call.
extension AudioBuffer {
    public func write(path: String, format: AudioFileFormat) throws(AudioError) {
        let writer = try AudioWriter(path: path, sampleRate: sampleRate, channels: channels.count, format: format)
        var interleaved = [Float](repeating: 0, count: frames * channels.count)
        for (c, ch) in channels.enumerated() {
            for f in 0..<frames { interleaved[f * channels.count + c] = ch[f] }
        }
        try interleaved.withUnsafeBufferPointer { (p) throws(AudioError) in try writer.write(interleaved: p, frames: frames) }
        try writer.finish()
    }
}
