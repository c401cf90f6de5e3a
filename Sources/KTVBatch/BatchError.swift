import KTVCore
import KTVScore

/// Why a batch could not run at all (a take that fails is a `BatchFailure` line, not this). Messages
/// name the file and the line and say what to change.
public enum BatchError: ParameterErrorWrapping, Equatable, Sendable, CustomStringConvertible {
    /// The manifest cannot be read as CSV or JSON Lines, or names a column ktv does not know.
    case badManifest(path: String, line: Int?, detail: String)
    /// The results file cannot be continued, or holds results a fresh run would mix with its own.
    case badResults(path: String, detail: String)
    /// The results file already holds lines and the run was not asked to continue it.
    case resultsExist(path: String, bytes: Int)
    /// The results (or another output) would be written over the manifest itself.
    case outputIsManifest(path: String, manifest: String)
    /// An output would be written over a file a manifest row names (`input` says which and where).
    case outputIsInput(path: String, input: String)
    /// Reading the manifest or writing the results failed.
    case io(FileIOError)
    /// A setting out of range.
    case invalidParameter(ParameterError)
    /// The manifest given is another kind of file (a recording, lyrics, a reference), told from its bytes.
    case misplaced(MisplacedInput)

    public var parameterError: ParameterError? {
        if case let .invalidParameter(p) = self { return p }
        return nil
    }

    public var description: String {
        switch self {
        case let .badManifest(path, line, detail): return "\(path)\(line.map { ": line \($0)" } ?? ""): \(detail)"
        case let .badResults(path, detail): return "\(path): \(detail)"
        case let .resultsExist(path, bytes):
            return "\(path): already holds \(bytes) bytes of results; resume the batch to continue it, or remove the file to start over"
        case let .outputIsManifest(path, manifest):
            let how = path == manifest ? "" : " (\(manifest), through a link)"
            return "\(path) is the manifest itself\(how): writing it would destroy the input; write it elsewhere"
        case let .outputIsInput(path, input): return "\(path) is \(input), an input of the batch: writing it would destroy the input; write it elsewhere"
        case let .io(error): return "\(error)"
        case let .invalidParameter(p): return p.description
        case let .misplaced(m): return m.description
        }
    }
}

extension BatchError: ExitCoded {
    /// A bad manifest or results file, or another kind of file given as the manifest, 65; files as
    /// `FileIOError` says; results already there, an output onto an input or a setting 64.
    public var exitCode: Int32 {
        switch self {
        case .resultsExist, .outputIsManifest, .outputIsInput, .invalidParameter: return KTVExitCode.usage
        case let .io(e): return e.exitCode
        case .badManifest, .badResults, .misplaced: return KTVExitCode.dataError
        }
    }
}
