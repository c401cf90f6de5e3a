import CSndFile
import Foundation

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

/// Writes audio to a temporary file beside the destination and renames it into place on `finish()`,
/// so no reader ever sees a partial file. Dropping the writer without `finish()` removes the temporary.
public final class AudioWriter {
    public let path: String
    public let channels: Int
    private let temporaryPath: String
    private var handle: OpaquePointer?

    public init(path: String, sampleRate: Double, channels: Int, format: AudioFileFormat) throws(AudioError) {
        self.path = path
        self.channels = channels
        let url = URL(fileURLWithPath: path)
        temporaryPath = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate.rounded())
        info.channels = Int32(channels)
        info.format = format.sfFormat
        guard sf_format_check(&info) != 0 else {
            throw .cannotWrite(path: path, reason: "\(format.rawValue) cannot hold \(channels) channel(s) at \(Int(sampleRate)) Hz")
        }
        guard let h = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            let dir = url.deletingLastPathComponent().path
            var isDir: ObjCBool = false
            let reason = FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue
                ? String(cString: sf_strerror(nil)) : "folder \(dir) does not exist"
            throw .cannotWrite(path: path, reason: reason)
        }
        // Float input beyond ±1 is clipped rather than wrapped when written as integers.
        sf_command(h, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        handle = h
    }

    deinit {
        if let h = handle {
            sf_close(h)
            unlink(temporaryPath)
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
        precondition(channels == 1, "write(mono:) needs a one-channel writer")
        try samples.withUnsafeBufferPointer { (p) throws(AudioError) in try write(interleaved: p, frames: samples.count) }
    }

    /// Closes the file and renames it into place.
    public func finish() throws(AudioError) {
        guard let h = handle else { return }
        handle = nil
        if sf_close(h) != 0 {
            unlink(temporaryPath)
            throw .cannotWrite(path: path, reason: "closing failed")
        }
        if rename(temporaryPath, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .cannotWrite(path: path, reason: reason)
        }
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
