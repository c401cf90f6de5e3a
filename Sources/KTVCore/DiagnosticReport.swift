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

    /// How many of this file's findings have `severity`.
    public func count(_ severity: Severity) -> Int { diagnostics.filter { $0.severity == severity }.count }
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
    /// Compiler-style lines for every finding, then one summary line: files checked, errors,
    /// warnings, files with errors. `displayName` turns a path into how the report names it.
    public static func textSummary(_ results: [FileFindings], displayName: (String) -> String = { $0 }) -> String {
        var s = ""
        for r in results {
            for d in r.diagnostics { s += text(d, path: displayName(r.path)) + "\n" }
        }
        let failed = results.filter { $0.count(.error) > 0 }.count
        return s + "\(results.count) file(s) checked: \(total(.error, results)) error(s), \(total(.warning, results)) warning(s); \(failed) file(s) with errors\n"
    }

    /// How many findings of all `files` have `severity`.
    static func total(_ severity: Severity, _ files: [FileFindings]) -> Int { files.reduce(0) { $0 + $1.count(severity) } }

    /// `path:line: severity: message [rule]`, the form editors and CI logs link to.
    public static func text(_ d: Diagnostic, path: String) -> String {
        var loc = path
        if let l = d.line { loc += ":\(l)" } else if let o = d.byteOffset { loc += ": byte offset \(o)" }
        return "\(loc): \(d.severity.rawValue): \(d.message) [\(d.rule)]"
    }

    public static func json(_ files: [FileFindings]) -> JSONValue {
        .object([
            ("totals", .object([
                ("files", .int(files.count)),
                ("unreadable", .int(files.filter { $0.fatal || $0.unreadable }.count)),
                ("errors", .int(total(.error, files))),
                ("warnings", .int(total(.warning, files))),
                ("infos", .int(total(.info, files))),
            ])),
            ("files", .array(files.map { f in
                .object([
                    ("path", .string(f.path)),
                    ("readable", .bool(!f.fatal)),
                    ("errors", .int(f.count(.error))),
                    ("warnings", .int(f.count(.warning))),
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

    /// The findings at `minimum` or above (files keep their place, with fewer findings).
    public static func filtered(_ files: [FileFindings], minimum: Severity) -> [FileFindings] {
        files.map { f in
            var f = f
            f.diagnostics.removeAll { $0.severity < minimum }
            return f
        }
    }

    /// SARIF 2.1.0 (OASIS), the format code-review tools read. Locations under `base` (an absolute
    /// folder) are relative URIs on the `SRCROOT` base (`originalUriBaseIds`), so a review tool maps
    /// them onto its checkout; others are absolute `file://` URIs. `workingDirectory` (absolute)
    /// resolves relative paths.
    public static func sarif(_ files: [FileFindings], rules: [RuleDescription], toolVersion: String,
                             base: String, workingDirectory: String) -> JSONValue {
        let root = base.hasSuffix("/") ? base : base + "/"
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
                var physical: [(String, JSONValue)] = [("artifactLocation", location(f.path, root: root, workingDirectory: workingDirectory))]
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
                ("originalUriBaseIds", .object([("SRCROOT", .object([("uri", .string("file://" + uri(root)))]))])),
                ("results", .array(results)),
            ])])),
        ])
    }

    /// An artifact location: relative to `root` on `SRCROOT` when under it, else an absolute file URI.
    static func location(_ path: String, root: String, workingDirectory: String) -> JSONValue {
        var absolute = path.hasPrefix("/") ? path : (workingDirectory.hasSuffix("/") ? workingDirectory : workingDirectory + "/") + path
        // "./a" and "a/../b" as a reader would resolve them.
        var parts: [Substring] = []
        for p in absolute.split(separator: "/", omittingEmptySubsequences: true) {
            if p == "." { continue }
            if p == ".." { _ = parts.popLast(); continue }
            parts.append(p)
        }
        absolute = "/" + parts.joined(separator: "/")
        if absolute.hasPrefix(root) {
            return .object([("uri", .string(uri(String(absolute.dropFirst(root.count))))), ("uriBaseId", .string("SRCROOT"))])
        }
        return .object([("uri", .string("file://" + uri(absolute)))])
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
