/// Findings for many files, rendered as compiler-style text, JSON or SARIF 2.1.0.
public struct FileFindings: Sendable {
    public var path: String
    public var diagnostics: [Diagnostic]
    /// Set when the file could not be read as lyrics at all (exit 65).
    public var fatal: Bool
    /// Set when the file could not be read from disk at all (missing, a folder, no permission: exit 74).
    public var unreadable: Bool = false
    /// Further per-file results for the JSON report (e.g. the lyric/audio alignment).
    public var extra: [(String, JSONValue)]

    public init(path: String, diagnostics: [Diagnostic], fatal: Bool = false, extra: [(String, JSONValue)] = []) {
        self.path = path
        self.diagnostics = diagnostics
        self.fatal = fatal
        self.extra = extra
    }
}

public struct RuleDescription: Sendable {
    public var id: String
    public var severity: Severity
    public var summary: String

    public init(id: String, severity: Severity, summary: String) {
        self.id = id
        self.severity = severity
        self.summary = summary
    }
}

public enum DiagnosticReport {
    /// `path:line: severity: message [rule]`, the form editors and CI logs link to.
    public static func text(_ d: Diagnostic, path: String) -> String {
        var loc = path
        if let l = d.line { loc += ":\(l)" } else if let o = d.byteOffset { loc += ": byte offset \(o)" }
        return "\(loc): \(d.severity.rawValue): \(d.message) [\(d.rule)]"
    }

    public static func json(_ files: [FileFindings]) -> JSONValue {
        .object([
            ("files", .array(files.map { f in
                .object([
                    ("path", .string(f.path)),
                    ("readable", .bool(!f.fatal)),
                    ("errors", .int(f.diagnostics.filter { $0.severity == .error }.count)),
                    ("warnings", .int(f.diagnostics.filter { $0.severity == .warning }.count)),
                    ("findings", .array(f.diagnostics.map { d in
                        .object([
                            ("rule", .string(d.rule)), ("severity", .string(d.severity.rawValue)),
                            ("line", d.line.map(JSONValue.int) ?? .null),
                            ("byte_offset", d.byteOffset.map(JSONValue.int) ?? .null),
                            ("message", .string(d.message)),
                        ])
                    })),
                ] + f.extra)
            })),
        ])
    }

    /// SARIF 2.1.0 (OASIS), the format code-review tools read.
    public static func sarif(_ files: [FileFindings], rules: [RuleDescription], toolVersion: String) -> JSONValue {
        func level(_ s: Severity) -> String {
            switch s {
            case .error: return "error"
            case .warning: return "warning"
            case .info: return "note"
            }
        }
        let ruleIndex = Dictionary(uniqueKeysWithValues: rules.enumerated().map { ($1.id, $0) })
        var results: [JSONValue] = []
        for f in files {
            for d in f.diagnostics {
                var region: [(String, JSONValue)] = []
                if let l = d.line { region.append(("startLine", .int(l))) }
                if let o = d.byteOffset { region.append(("byteOffset", .int(o))) }
                var physical: [(String, JSONValue)] = [("artifactLocation", .object([("uri", .string(uri(f.path)))]))]
                if !region.isEmpty { physical.append(("region", .object(region))) }
                var result: [(String, JSONValue)] = [("ruleId", .string(d.rule))]
                if let i = ruleIndex[d.rule] { result.append(("ruleIndex", .int(i))) }
                result += [
                    ("level", .string(level(d.severity))),
                    ("message", .object([("text", .string(d.message))])),
                    ("locations", .array([.object([("physicalLocation", .object(physical))])])),
                ]
                results.append(.object(result))
            }
        }
        let driver: JSONValue = .object([
            ("name", .string("ktv")),
            ("version", .string(toolVersion)),
            ("informationUri", .string("https://example.invalid/ktv")),
            ("rules", .array(rules.map { r in
                .object([
                    ("id", .string(r.id)),
                    ("shortDescription", .object([("text", .string(r.summary))])),
                    ("defaultConfiguration", .object([("level", .string(level(r.severity)))])),
                ])
            })),
        ])
        return .object([
            ("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json")),
            ("version", .string("2.1.0")),
            ("runs", .array([.object([
                ("tool", .object([("driver", driver)])),
                ("results", .array(results)),
            ])])),
        ])
    }

    /// A relative URI reference for a path (spaces and non-ASCII percent-encoded).
    static func uri(_ path: String) -> String {
        var out = ""
        for b in path.utf8 {
            let c = Character(Unicode.Scalar(b))
            if b < 0x80, c.isLetter || c.isNumber || "-._~/".contains(c) {
                out.append(c)
            } else {
                let h = String(b, radix: 16, uppercase: true)
                out += "%" + (h.count == 1 ? "0" + h : h)
            }
        }
        return out
    }
}
