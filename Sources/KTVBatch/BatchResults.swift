import Foundation
import KTVCore
import KTVScore

/// One take as a results file last left it: the flat facts a table, a CSV row or a dashboard needs.
public struct TakeOutcome: Sendable, Equatable {
    public var id: String
    /// The manifest line the take came from.
    public var line: Int?
    /// `ok` or `error`.
    public var status: String
    public var rules: String?
    public var score: Double?
    public var score100: Double?
    public var latencyMs: Double?
    public var judgedShare: Double?
    /// The first finding that costs points (a warning or a fault; nil when none did): its code and message.
    public var topFinding: String?
    public var topFindingMessage: String?
    public var reason: String?
    public var error: String?
    public var elapsedMs: Int?
    /// Under the ktv rules: each dimension's score by its JSON name (nil: not measured), and the
    /// score on the experts' 1-5 scale.
    public var dimensions: [String: Double?] = [:]
    public var expertGrade: Double?
    /// The take's path as the manifest gave it, and its page when the batch wrote one.
    public var take: String?
    public var page: String?

    public var isOK: Bool { status == "ok" }
}

/// A whole results file read back, every run in it (a resumed batch appends): the last line of
/// each id counts, in the order ids first appeared. Read a line at a time, keeping only each take's
/// flat facts, so a file of many takes' full score cards never sits in memory.
public struct BatchResults: Sendable {
    public var name: String
    public var takes: [TakeOutcome]
    /// Lines read, and how many of them a later line of the same id replaced.
    public var linesRead = 0
    public var superseded = 0
    /// Lines passed over, each with why (a torn last line, a line that is not a result).
    public var warnings: [String] = []

    /// A results line longer than this is refused (a score card of a long song is well under 10 MB).
    public static let maxLineBytes = 64 << 20
    /// A results file that is no regular file (standard input, a pipe, a device), whose end may never
    /// come, is read no further than this.
    public static let maxStreamBytes = 256 << 20
    /// Lines passed over are named one by one up to this many, then counted.
    public static let maxWarnings = 100

    public init(name: String, takes: [TakeOutcome]) {
        self.name = name
        self.takes = takes
    }

    public static func read(path: String) throws(BatchError) -> BatchResults {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(.cannotRead(path: path, reason: FileIO.readReason(errno))) }
        defer { if fd != 0 { close(fd) } }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { throw .io(.cannotRead(path: path, reason: "is a folder, not a file")) }
        let isRegular = (st.st_mode & S_IFMT) == S_IFREG
        let name = path == "-" ? "<stdin>" : path
        var results = BatchResults(name: name, takes: [])
        var index: [String: Int] = [:]
        var passedOver = 0
        func warn(_ text: @autoclosure () -> String) {
            passedOver += 1
            if passedOver <= maxWarnings { results.warnings.append(text()) }
        }
        var reader = FDLineReader(fd: fd, maxLineBytes: maxLineBytes, maxBytes: isRegular ? Int.max : maxStreamBytes)
        while let bytes = reader.next() {
            results.linesRead += 1
            let number = results.linesRead
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            guard let value = try? JSONReader.parse(bytes), case .object = value else {
                warn("\(name): line \(number) is not a JSON object; passed over")
                continue
            }
            guard let outcome = TakeOutcome(resultLine: value) else {
                warn("\(name): line \(number) has no \"id\" and \"status\"; it is not a ktv batch result, passed over")
                continue
            }
            if let s = outcome.score100, !(0...100).contains(s) {
                warn("\(name): line \(number): score_100 \(s) is outside 0…100, which ktv never writes (the file was edited); the histogram counts it in its nearest bin")
            }
            if let k = index[outcome.id] {
                results.takes[k] = outcome
                results.superseded += 1
            } else {
                index[outcome.id] = results.takes.count
                results.takes.append(outcome)
            }
        }
        switch reader.overLimit {
        case .line?:
            throw .badResults(path: name, detail: "line \(results.linesRead + 1) runs past \(FileIO.describeSize(maxLineBytes)) without an end; that is no results line (a score card of a long song is well under 10 MB)")
        case .total?:
            throw .badResults(path: name, detail: "more than \(FileIO.describeSize(maxStreamBytes)) read from a stream (a pipe or a device, not a regular file) without its end; a results file that large must be read as a file")
        case nil: break
        }
        if passedOver > maxWarnings {
            results.warnings.append("\(name): \(passedOver - maxWarnings) more lines passed over (only the first \(maxWarnings) are named)")
        }
        if reader.unterminatedBytes > 0 {
            results.warnings.append("\(name): line \(results.linesRead + 1) was cut off (\(reader.unterminatedBytes) bytes without an end, from a run that stopped mid-write); passed over")
        }
        return results
    }

    public var ok: Int { takes.filter(\.isOK).count }
    public var failed: Int { takes.count - ok }

    /// Failures by reason, each with its takes in file order.
    public var failuresByReason: [(reason: String, takes: [TakeOutcome])] {
        var groups: [String: [TakeOutcome]] = [:]
        for t in takes where !t.isOK { groups[t.reason ?? "unknown", default: []].append(t) }
        return groups.sorted { $0.value.count != $1.value.count ? $0.value.count > $1.value.count : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The takes that took longest, slowest first.
    public func slowest(_ count: Int) -> [TakeOutcome] {
        Array(takes.filter { $0.elapsedMs != nil }.sorted { ($0.elapsedMs ?? 0) > ($1.elapsedMs ?? 0) }.prefix(count))
    }

    /// Histogram of `score_100` per rule set: `bins` equal bins over 0…100 (100 falls in the last).
    /// A score outside 0…100 (a results file edited by hand: `read` warns of it) counts in the end
    /// bin nearest to it; the bin is chosen before any conversion to `Int`, which would trap on 1e308.
    public func histogram(bins: Int = 10) -> [(rules: String, counts: [Int])] {
        guard bins > 0 else { return [] }
        var out: [String: [Int]] = [:]
        for t in takes where t.isOK {
            guard let s = t.score100, s.isFinite else { continue }
            let x = s / 100 * Double(bins)
            let bin = x < 1 ? 0 : x >= Double(bins - 1) ? bins - 1 : Int(x)
            out[t.rules ?? "unknown", default: Array(repeating: 0, count: bins)][bin] += 1
        }
        return out.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The scored takes' scores by rule set, on the rule set's own scale (`score`) or on 0-100
    /// (`score_100`, the one scale every rule set has), each summarised by `ScoreDistribution`.
    public func distributions(score100: Bool = false) -> [(rules: String, distribution: ScoreDistribution)] {
        var byRules: [String: [Double]] = [:]
        for t in takes where t.isOK { if let s = score100 ? t.score100 : t.score { byRules[t.rules ?? "unknown", default: []].append(s) } }
        return byRules.sorted { $0.key < $1.key }.map { ($0.key, ScoreDistribution($0.value)) }
    }

    /// The summary over every id in the file (not only the last run's).
    public func summary() -> JSONValue {
        func r(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
        let elapsed = takes.compactMap(\.elapsedMs).map(Double.init).sorted()
        // Summed as Double: edited lines of `Int.max` would trap an `Int` sum or conversion.
        let sum = elapsed.reduce(0, +)
        let total = Int(exactly: sum).map(JSONValue.int) ?? .double(sum)
        return .object([
            ("results", .string(name)),
            ("lines", .int(linesRead)),
            ("ids", .int(takes.count)),
            ("ok", .int(ok)),
            ("failed", .int(failed)),
            ("superseded_lines", .int(superseded)),
            ("failures_by_reason", .object(failuresByReason.map { ($0.reason, .int($0.takes.count)) })),
            ("scores", .object(distributions().map { name, d in
                (name, .object([("count", .int(d.count)), ("mean", r(d.mean)), ("min", r(d.min)), ("p10", r(d.p10)),
                                       ("p50", r(d.p50)), ("p90", r(d.p90)), ("max", r(d.max))]))
            })),
            ("elapsed_ms", .object([("total", total), ("p50", elapsed.isEmpty ? .null : r(Stats.median(elapsed) ?? 0)),
                                    ("p90", elapsed.isEmpty ? .null : r(Stats.percentile(elapsed, 0.9) ?? 0)), ("max", elapsed.last.map { r($0) } ?? .null)])),
            ("warnings", .array(warnings.map(JSONValue.string))),
        ])
    }

    public static let csvColumns = ["id", "status", "rules", "score", "score_100", "latency_ms", "judged_share", "top_finding", "reason", "error", "elapsed_ms"]
        + ScoreDimension.allCases.map { $0.rawValue } + ["expert_grade"]

    /// One flat row per take (RFC 4180). Text cells that a spreadsheet would run as a formula
    /// (starting with =, +, -, @, tab or carriage return) get a leading `'`, as OWASP advises.
    public func csv() -> String {
        func text(_ s: String?) -> String {
            guard var s else { return "" }
            if let c = s.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(c) { s = "'" + s }
            return s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
        }
        func number(_ v: Double?, _ digits: Int) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "" }
        var out = Self.csvColumns.joined(separator: ",") + "\r\n"
        for t in takes {
            var cells: [String] = [text(t.id), t.status, text(t.rules), number(t.score, 2), number(t.score100, 2), number(t.latencyMs, 1),
                                   number(t.judgedShare, 3), text(t.topFinding), text(t.reason), text(t.error), t.elapsedMs.map(String.init) ?? ""]
            for d in ScoreDimension.allCases { cells.append(number(t.dimensions[d.rawValue] ?? nil, 1)) }
            cells.append(number(t.expertGrade, 2))
            out += cells.joined(separator: ",") + "\r\n"
        }
        return out
    }
}

extension TakeOutcome {
    /// A results line: `{"id", "line", "status": "ok", "elapsed_ms", "result": <score JSON>}` or
    /// `{"id", "line", "status": "error", "reason", "error"}`. Nil when it has no id or status.
    init?(resultLine v: JSONValue) {
        guard let status = v["status"]?.string else { return nil }
        let id: String
        if let s = v["id"]?.string { id = s } else if case let .int(line)? = v["line"] { id = "(no id, line \(line))" } else { return nil }
        self.id = id
        self.status = status
        if case let .int(line)? = v["line"] { self.line = line }
        reason = v["reason"]?.string
        error = v["error"]?.string
        if case let .int(ms)? = v["elapsed_ms"] { elapsedMs = ms }
        guard let result = v["result"], case .object = result else { return }
        rules = result["rules"]?.string
        score = result["score"]?.number
        score100 = result["score_100"]?.number
        latencyMs = result["latency_ms"]?.number
        judgedShare = result["judged_share"]?.number
        take = result["take"]?.string
        page = result["page"]?.string
        if case let .object(dims)? = result["dimensions"] {
            for (name, d) in dims { dimensions[name] = d["score"]?.number }
        }
        expertGrade = result["expert_grade"]?.number
        if case let .array(findings)? = result["findings"] {
            // The first that costs points (docs/batch.md): an info (a forgiven octave, a free
            // transposition) costs nothing, so a take with only those has no top finding.
            let top = findings.first { $0["severity"]?.string != "info" }
            topFinding = top?["code"]?.string
            topFindingMessage = top?["message"]?.string
        }
    }
}
