import CSndFile
import Foundation

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

    public var durationSeconds: Double { Double(frames) / sampleRate }
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

/// Streaming reader over any format libsndfile decodes (WAV, FLAC, OGG/Vorbis, Opus, MP3, AIFF, …).
///
/// One reader per file; reads blocks of interleaved Float frames into a buffer the caller reuses,
/// so a long file is processed in bounded memory. Not thread-safe; use one per thread.
public final class AudioReader {
    public let path: String
    public let info: AudioInfo
    private let handle: OpaquePointer

    public init(path: String) throws(AudioError) {
        self.path = path
        var sfinfo = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &sfinfo) else {
            let reason = String(cString: sf_strerror(nil))
            throw .cannotOpen(path: path, reason: Self.explain(reason, path: path), detected: FormatSniffer.unsupportedName(path: path))
        }
        handle = h
        let major = Int32(sfinfo.format) & Int32(SF_FORMAT_TYPEMASK)
        let sub = Int32(sfinfo.format) & Int32(SF_FORMAT_SUBMASK)
        info = AudioInfo(sampleRate: Double(sfinfo.samplerate), channels: Int(sfinfo.channels),
                         frames: Int(sfinfo.frames), container: Self.majorName(major), encoding: Self.subName(sub))
        guard sfinfo.frames > 0 else {
            sf_close(h)
            throw .empty(path: path)
        }
    }

    deinit { sf_close(handle) }

    /// Reads up to `frames` interleaved frames into `buffer` (resized as needed); returns frames read, 0 at the end.
    public func read(into buffer: inout [Float], frames: Int) throws(AudioError) -> Int {
        let need = frames * info.channels
        if buffer.count < need { buffer = [Float](repeating: 0, count: need) }
        let got = buffer.withUnsafeMutableBufferPointer { p in
            sf_readf_float(handle, p.baseAddress, sf_count_t(frames))
        }
        if got < 0 || (got == 0 && sf_error(handle) != 0) {
            throw .readFailed(path: path, reason: String(cString: sf_strerror(handle)))
        }
        return Int(got)
    }

    /// Moves to frame `frame` (0-based) for the next read.
    public func seek(toFrame frame: Int) throws(AudioError) {
        if sf_seek(handle, sf_count_t(frame), SEEK_SET) < 0 {
            throw .readFailed(path: path, reason: "cannot seek to frame \(frame): \(String(cString: sf_strerror(handle)))")
        }
    }

    private static func explain(_ reason: String, path: String) -> String {
        if !FileManager.default.fileExists(atPath: path) { return "no such file" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return reason
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
        for c in 0..<n { chans[c].reserveCapacity(reader.info.frames) }
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
enum FormatSniffer {
    static func unsupportedName(path: String) -> String? {
        guard let h = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? h.close() }
        let b = [UInt8](h.readData(ofLength: 12))
        guard b.count >= 4 else { return b.isEmpty ? "an empty file" : nil }
        func ascii(_ r: Range<Int>) -> String { String(decoding: b[r], as: UTF8.self) }
        if b.count >= 8, ascii(4..<8) == "ftyp" { return "an MP4/M4A (AAC or ALAC) container" }
        if ascii(0..<4) == "caff" { return nil }
        if b[0] == 0x30, b[1] == 0x26, b[2] == 0xB2, b[3] == 0x75 { return "a WMA/ASF container" }
        if ascii(0..<4) == "#!AM" { return "AMR" }
        if b[0] == 0xFF, b[1] & 0xF6 == 0xF0 { return "raw AAC (ADTS)" }
        if ascii(0..<4) == "MThd" { return "a MIDI file" }
        if ascii(0..<4) == "ID3\u{03}" || ascii(0..<3) == "ID3" { return nil }
        if b.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || ($0 >= 0x20 && $0 < 0x7F) }) { return "a text file" }
        return nil
    }
}
