import KTVCore

/// Why a take could not be scored. Messages name the file and say what to change.
public enum ScoreError: ParameterErrorWrapping, Equatable, Sendable, CustomStringConvertible {
    /// A reference file that cannot be used: where (1-based line when known) and what is wrong.
    case badReference(path: String, line: Int?, detail: String)
    /// A take that cannot be used (empty, no voiced frame, bad rows).
    case badTake(path: String, line: Int?, detail: String)
    /// A setting out of range.
    case invalidParameter(ParameterError)
    /// A file given where it does not belong, told from what it holds (`InputKind`): an LRC given
    /// as the reference, audio as the reference file, a reference melody as the take.
    case misplaced(MisplacedInput)

    public var parameterError: ParameterError? {
        if case let .invalidParameter(p) = self { return p }
        return nil
    }

    public var description: String {
        switch self {
        case let .badReference(path, line, detail): return "\(path)\(line.map { ":\($0)" } ?? ""): \(detail)"
        case let .badTake(path, line, detail): return "\(path)\(line.map { ":\($0)" } ?? ""): \(detail)"
        case let .invalidParameter(p): return p.description
        case let .misplaced(m): return m.description
        }
    }

    /// The error with an empty file name filled in: the take's, or the reference melody's.
    func naming(take: String) -> ScoreError {
        if case let .badTake(path, line, detail) = self, path.isEmpty { return .badTake(path: take, line: line, detail: detail) }
        if case let .badReference(path, line, detail) = self, path.isEmpty {
            return .badReference(path: "the reference melody", line: line, detail: detail)
        }
        return self
    }
}
