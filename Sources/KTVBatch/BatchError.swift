import KTVCore

/// Why a batch could not run at all (a take that fails is a `BatchFailure` line, not this). Messages
/// name the file and the line and say what to change.
public enum BatchError: ParameterErrorWrapping, Equatable, Sendable, CustomStringConvertible {
    /// The manifest cannot be read as CSV or JSON Lines, or names a column ktv does not know.
    case badManifest(path: String, line: Int?, detail: String)
    /// The results file cannot be continued, or holds results a fresh run would mix with its own.
    case badResults(path: String, detail: String)
    /// The results file already holds lines and the run was not asked to continue it.
    case resultsExist(path: String, bytes: Int)
    /// The results would be written over the manifest itself.
    case outputIsManifest(path: String)
    /// Reading the manifest or writing the results failed.
    case io(FileIOError)
    /// A setting out of range.
    case invalidParameter(name: String, value: String, allowed: String)

    public var parameterError: ParameterError? {
        if case let .invalidParameter(name, value, allowed) = self { return ParameterError(name: name, value: value, allowed: allowed) }
        return nil
    }

    public var description: String {
        switch self {
        case let .badManifest(path, line, detail): return "\(path)\(line.map { ": line \($0)" } ?? ""): \(detail)"
        case let .badResults(path, detail): return "\(path): \(detail)"
        case let .resultsExist(path, bytes):
            return "\(path): already holds \(bytes) bytes of results; resume the batch to continue it, or remove the file to start over"
        case let .outputIsManifest(path): return "\(path) is the manifest itself; write the results to another file"
        case let .io(error): return "\(error)"
        case let .invalidParameter(name, value, allowed): return ParameterError(name: name, value: value, allowed: allowed).description
        }
    }
}
