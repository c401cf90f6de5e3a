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
        }
    }

    /// The 1-based line the error is at, when it has one.
    public var line: Int? {
        if case let .malformed(line, _) = self { return line }
        return nil
    }
}
