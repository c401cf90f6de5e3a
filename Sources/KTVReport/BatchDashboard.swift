import Foundation
import KTVBatch
import KTVCore

/// A batch's dashboard: one self-contained HTML file (template `Templates/batch.html`) with the
/// score distribution per rule set, failures grouped by reason, the slowest takes, and a sortable,
/// filterable table of every take linking to its page when the batch wrote one. The counts are
/// made here (`BatchResults`), so the page only draws them.
public enum BatchDashboard {
    static let page = HTMLPage(template: EmbeddedTemplates.batch_html)
    /// Takes listed as the slowest.
    public static let slowestCount = 10

    /// The takes' pages the dashboard links to, by take id, and a sentence for each `page` it leaves
    /// out. A page is linked only when it is the file `ktv batch --html-dir` writes for the take
    /// (`TakePageWriter.fileName(id:)`) in the pages folder: the folder the results' pages are in
    /// (the one most are in; on a tie, one that does not climb with `..`, then the first). So a
    /// results line edited to `"page": "../../../etc/passwd"` gives no link out of the folder.
    public static func pageLinks(_ results: BatchResults) -> (pages: [String: String], dropped: [String]) {
        var named: [(id: String, page: String, folder: String)] = []
        var dropped: [String] = []
        for t in results.takes {
            guard let page = t.page else { continue }
            guard (page as NSString).lastPathComponent == TakePageWriter.fileName(id: t.id) else {
                dropped.append("\(results.name): take \(quoted(t.id)): its page \(quoted(page)) is not the page ktv batch writes for it (\(TakePageWriter.fileName(id: t.id))); not linked")
                continue
            }
            named.append((t.id, page, lexicalFolder(page)))
        }
        var count: [String: Int] = [:], order: [String] = []
        for n in named {
            if count[n.folder] == nil { order.append(n.folder) }
            count[n.folder, default: 0] += 1
        }
        let climbs = { (folder: String) in folder.split(separator: "/").contains("..") }
        let folder = order.enumerated().min { a, b in
            let ka = (-(count[a.element] ?? 0), climbs(a.element) ? 1 : 0, a.offset)
            let kb = (-(count[b.element] ?? 0), climbs(b.element) ? 1 : 0, b.offset)
            return ka < kb
        }?.element
        var pages: [String: String] = [:]
        for n in named {
            if n.folder == folder { pages[n.id] = n.page; continue }
            dropped.append("\(results.name): take \(quoted(n.id)): its page \(quoted(n.page)) is outside the pages folder \(quoted(folder ?? "")); not linked")
        }
        return (pages, dropped)
    }

    /// The folder of `path` with `.` and `a/..` taken out, as written (nothing is looked up on disk).
    static func lexicalFolder(_ path: String) -> String {
        var parts: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true).dropLast() {
            if segment == "." { continue }
            if segment == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            if segment == "..", path.hasPrefix("/") { continue }   // above the root is the root
            parts.append(segment)
        }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }

    /// `outputPath` places the links to the takes' pages relative to the dashboard; only the pages
    /// `pageLinks` keeps are linked.
    public static func render(_ results: BatchResults, outputPath: String) -> String {
        let pages = pageLinks(results).pages
        func n(_ v: Double?, _ digits: Double = 10) -> JSONValue { v.map { .double(($0 * digits).rounded() / digits) } ?? .null }
        func take(_ t: TakeOutcome) -> JSONValue {
            .object([
                ("id", .string(t.id)), ("line", t.line.map(JSONValue.int) ?? .null), ("status", .string(t.status)),
                ("rules", t.rules.map(JSONValue.string) ?? .null), ("score", n(t.score, 100)), ("score_100", n(t.score100, 100)),
                ("latency_ms", n(t.latencyMs)), ("judged_share", n(t.judgedShare, 1000)),
                ("top_finding", t.topFinding.map(JSONValue.string) ?? .null), ("top_finding_message", t.topFindingMessage.map(JSONValue.string) ?? .null),
                ("reason", t.reason.map(JSONValue.string) ?? .null), ("error", t.error.map(JSONValue.string) ?? .null),
                ("elapsed_ms", t.elapsedMs.map(JSONValue.int) ?? .null),
                ("page", pages[t.id].map { .string(TakePage.link(from: outputPath, to: $0)) } ?? .null),
            ])
        }
        let data = JSONValue.object([
            ("title", .string((results.name as NSString).lastPathComponent)),
            ("summary", results.summary()),
            // The median score_100 per rule set: `ScoreDistribution`'s, as the summary's p50 (the page computes none).
            ("medians", .array(results.distributions(score100: true).map { rules, d in
                .object([("rules", .string(rules)), ("count", .int(d.count)), ("median", n(d.p50, 100))])
            })),
            ("histogram", .array(results.histogram().map { h in .object([("rules", .string(h.rules)), ("counts", .array(h.counts.map(JSONValue.int)))]) })),
            ("failures", .array(results.failuresByReason.map { g in .object([("reason", .string(g.reason)), ("takes", .array(g.takes.map(take)))]) })),
            ("slowest", .array(results.slowest(slowestCount).map { .string($0.id) })),
            ("takes", .array(results.takes.map(take))),
        ])
        return page.render(title: "\((results.name as NSString).lastPathComponent) · ktv batch report", data: data)
    }
}
