import KTVCore

/// Why pitch tracking or evaluation could not run. Messages say what to change.
public enum PitchError: ParameterErrorWrapping, Equatable, CustomStringConvertible, Sendable {
    /// A configuration value outside its range: name, value, allowed range.
    case invalidParameter(ParameterError)
    /// A pitch-track file (reference or estimate) that cannot be read: file, 1-based line, what is wrong.
    case badTrackFile(path: String, line: Int?, detail: String)
    /// The input has no usable samples for the request.
    case noAudio(String)

    /// The same error as a `ParameterError`, for front ends that rename parameters.
    public var parameterError: ParameterError? {
        if case let .invalidParameter(p) = self { return p }
        return nil
    }

    public var description: String {
        switch self {
        case let .invalidParameter(p):
            return p.description
        case let .badTrackFile(path, line, detail):
            if let line { return "\(path):\(line): \(detail)" }
            return "\(path): \(detail)"
        case let .noAudio(detail):
            return detail
        }
    }
}
