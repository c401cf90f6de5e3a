import KTVCore

/// Errors of the sync module. Each message names where the problem is and how to fix it.
public enum SyncError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A log line that is not a valid event: the file, the 1-based line, the field (nil when the
    /// line is not JSON at all) and what is wrong with it.
    case malformedLog(file: String, line: Int, field: String?, detail: String)
    /// A log, scenario or lyric file that cannot be read.
    case cannotRead(path: String, reason: String)
    /// A scenario (built-in name or JSON file) that cannot be used.
    case badScenario(detail: String)
    /// A scenario name that is neither built in nor a file.
    case unknownScenario(String)
    /// A lyric file (for the audience measures) that cannot be used: its path and what is wrong.
    case badLyrics(path: String, detail: String)
    /// A configuration value outside its declared range (`ReplayConfiguration.Spec`).
    case invalidParameter(ParameterError)

    public var description: String {
        switch self {
        case let .malformedLog(file, line, field, detail):
            if let field { return "\(file):\(line): field `\(field)`: \(detail)" }
            return "\(file):\(line): \(detail)"
        case let .cannotRead(path, reason):
            return "\(path): cannot read: \(reason)"
        case let .badScenario(detail):
            return "scenario: \(detail)"
        case let .unknownScenario(name):
            return "no scenario `\(name)`: use one of \(Scenario.builtInNames.joined(separator: ", ")), or the path of a JSON scenario file"
        case let .badLyrics(path, detail):
            return "\(path): \(detail)"
        case let .invalidParameter(error):
            return error.description
        }
    }

    /// True for the errors that mean bad input data (exit 65) rather than I/O (74) or usage (64).
    public var isDataError: Bool {
        switch self {
        case .malformedLog, .badScenario, .badLyrics: return true
        case .cannotRead, .unknownScenario, .invalidParameter: return false
        }
    }
}

extension SyncError: ExitCoded {
    /// A malformed log, scenario or lyric file 65, an unknown scenario or a setting 64, files 74.
    public var exitCode: Int32 {
        switch self {
        case .unknownScenario, .invalidParameter: return KTVExitCode.usage
        default: return isDataError ? KTVExitCode.dataError : KTVExitCode.ioError
        }
    }
}
