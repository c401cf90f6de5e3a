/// Why a file cannot be read as lyrics at all (exit 65). Findings inside a readable file are
/// `Diagnostic`s instead. Every message says where and how to fix it.
public enum LyricsError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are not text in a supported encoding.
    case undecodable(byteOffset: Int, detail: String)
    /// Not a lyric or pitch file ktv knows.
    case unrecognizedFormat(detail: String)
    /// A broken KRC container (bad magic, damaged zlib stream).
    case badContainer(byteOffset: Int?, detail: String)
    /// A structural error that stops parsing (malformed XML or JSON), at a 1-based line when known.
    case malformed(line: Int?, detail: String)
    /// A known format ktv deliberately does not read.
    case unsupported(detail: String)
    /// The model cannot be written in the requested format.
    case cannotWrite(format: LyricFormat, detail: String)
    /// The lyric text (a decrypted KRC, or the file itself) is over `LyricsParseOptions.maxTextBytes`.
    case tooLarge(limitBytes: Int, detail: String)

    public var description: String {
        switch self {
        case let .undecodable(offset, detail):
            return "byte offset \(offset): \(detail)"
        case let .unrecognizedFormat(detail):
            return "not a lyric file ktv can read: \(detail)"
        case let .badContainer(offset, detail):
            if let offset { return "byte offset \(offset): \(detail)" }
            return detail
        case let .malformed(line, detail):
            if let line { return "line \(line): \(detail)" }
            return detail
        case let .unsupported(detail):
            return detail
        case let .cannotWrite(format, detail):
            return "cannot write \(format.rawValue): \(detail)"
        case let .tooLarge(limit, detail):
            return "\(detail), over the \(Self.megabytes(limit)) limit on lyric text; the file is likely a decompression bomb or not a lyric file, or it must be read with a larger limit"
        }
    }

    /// `64 MB` for whole mebibytes, else `0.001 MB (1000 bytes)`: small limits appear in tests and scripts.
    static func megabytes(_ bytes: Int) -> String {
        let mib = 1_048_576
        if bytes % mib == 0 { return "\(bytes / mib) MB" }
        let thousandths = (bytes * 1000 + mib / 2) / mib
        let frac = String(thousandths % 1000)
        return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac) MB (\(bytes) bytes)"
    }

    /// The 1-based line the error is at, when it has one.
    public var line: Int? {
        if case let .malformed(line, _) = self { return line }
        return nil
    }
}
