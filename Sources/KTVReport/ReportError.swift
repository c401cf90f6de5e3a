import KTVCore

/// Why a page or a report could not be written. Messages name the file and say what to change.
public enum ReportError: ParameterErrorWrapping, Equatable, Sendable, CustomStringConvertible {
    /// `--embed-audio` with a recording larger than the page may carry.
    case audioTooLarge(path: String, bytes: Int, limitBytes: Int)
    /// A results file line that is not a batch result.
    case badResults(path: String, line: Int, detail: String)
    case io(FileIOError)
    case invalidParameter(ParameterError)

    public var parameterError: ParameterError? {
        if case let .invalidParameter(p) = self { return p }
        return nil
    }

    public var description: String {
        switch self {
        case let .audioTooLarge(path, bytes, limit):
            return "\(path): \(bytes / 1_048_576) MB is too large to embed in the page (limit \(limit / 1_048_576) MB); "
                + "link to the recording instead (drop --embed-audio), or raise the limit"
        case let .badResults(path, line, detail): return "\(path): line \(line): \(detail)"
        case let .io(error): return "\(error)"
        case let .invalidParameter(p): return p.description
        }
    }
}

extension ReportError: ExitCoded {
    /// A recording too large to embed or a bad setting 64, a bad results file 65, files 74.
    public var exitCode: Int32 {
        switch self {
        case .audioTooLarge, .invalidParameter: return KTVExitCode.usage
        case .badResults: return KTVExitCode.dataError
        case let .io(e): return e.exitCode
        }
    }
}
