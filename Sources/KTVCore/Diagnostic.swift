/// Findings reported by parsers and validators.
///
/// A diagnostic is data: the library never prints. Reporters in the `ktv` executable turn a list
/// of diagnostics into compiler-style text, JSON or SARIF.

/// How serious a finding is. Ordered: `info < warning < error`.
public enum Severity: String, Sendable, Codable, Comparable, CaseIterable {
    case info
    case warning
    case error

    private var rank: Int {
        switch self {
        case .info: return 0
        case .warning: return 1
        case .error: return 2
        }
    }

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// One finding: a rule id (stable, kebab-case), a severity, where it is and what to do about it.
public struct Diagnostic: Sendable, Equatable, Codable {
    public var rule: String
    public var severity: Severity
    /// 1-based line in the (decoded, decrypted) text; nil when the finding is about the whole file.
    public var line: Int?
    /// Byte offset in the file as read, for findings that have no line (binary containers, encodings).
    public var byteOffset: Int?
    /// What is wrong and how to fix it.
    public var message: String

    public init(rule: String, severity: Severity, line: Int? = nil, byteOffset: Int? = nil, message: String) {
        self.rule = rule
        self.severity = severity
        self.line = line
        self.byteOffset = byteOffset
        self.message = message
    }

    public static func error(_ rule: String, line: Int? = nil, _ message: String) -> Diagnostic {
        Diagnostic(rule: rule, severity: .error, line: line, message: message)
    }

    public static func warning(_ rule: String, line: Int? = nil, _ message: String) -> Diagnostic {
        Diagnostic(rule: rule, severity: .warning, line: line, message: message)
    }

    public static func info(_ rule: String, line: Int? = nil, _ message: String) -> Diagnostic {
        Diagnostic(rule: rule, severity: .info, line: line, message: message)
    }
}

extension Array where Element == Diagnostic {
    /// The most serious severity present, or nil for an empty list.
    public var worstSeverity: Severity? { self.map(\.severity).max() }

    public var hasErrors: Bool { contains { $0.severity == .error } }
}

/// Process exit codes shared by every `ktv` command (BSD sysexits where one fits).
public enum KTVExitCode {
    /// Success, no findings at the failing level.
    public static let ok: Int32 = 0
    /// Findings: invalid lyrics, failed takes.
    public static let findings: Int32 = 1
    /// Command-line usage error (EX_USAGE).
    public static let usage: Int32 = 64
    /// Input data cannot be used (EX_DATAERR).
    public static let dataError: Int32 = 65
    /// Reading or writing a file failed (EX_IOERR).
    public static let ioError: Int32 = 74
    /// Interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
    public static let interrupted: Int32 = 130
}

/// An error that says how a command stopped by it exits (`KTVExitCode`): the input's fault (65),
/// the machine's (74), or a setting's (64). Front ends print the error and exit with its code.
public protocol ExitCoded: Error {
    var exitCode: Int32 { get }
}

extension FileIOError: ExitCoded {
    /// Over its size limit: the input is the problem (65); missing, unreadable or unwritable: the machine (74).
    public var exitCode: Int32 {
        if case .tooLarge = self { return KTVExitCode.dataError }
        return KTVExitCode.ioError
    }
}
