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

    /// `outputPath` places the links to the takes' pages relative to the dashboard.
    public static func render(_ results: BatchResults, outputPath: String) -> String {
        func n(_ v: Double?, _ digits: Double = 10) -> JSONValue { v.map { .double(($0 * digits).rounded() / digits) } ?? .null }
        func take(_ t: TakeOutcome) -> JSONValue {
            .object([
                ("id", .string(t.id)), ("line", t.line.map(JSONValue.int) ?? .null), ("status", .string(t.status)),
                ("rules", t.rules.map(JSONValue.string) ?? .null), ("score", n(t.score, 100)), ("score_100", n(t.score100, 100)),
                ("latency_ms", n(t.latencyMs)), ("judged_share", n(t.judgedShare, 1000)),
                ("top_finding", t.topFinding.map(JSONValue.string) ?? .null), ("top_finding_message", t.topFindingMessage.map(JSONValue.string) ?? .null),
                ("reason", t.reason.map(JSONValue.string) ?? .null), ("error", t.error.map(JSONValue.string) ?? .null),
                ("elapsed_ms", t.elapsedMs.map(JSONValue.int) ?? .null),
                ("page", t.page.map { .string(TakePage.link(from: outputPath, to: $0)) } ?? .null),
            ])
        }
        let data = JSONValue.object([
            ("title", .string((results.name as NSString).lastPathComponent)),
            ("summary", results.summary()),
            ("histogram", .array(results.histogram().map { h in .object([("rules", .string(h.rules)), ("counts", .array(h.counts.map(JSONValue.int)))]) })),
            ("failures", .array(results.failuresByReason.map { g in .object([("reason", .string(g.reason)), ("takes", .array(g.takes.map(take)))]) })),
            ("slowest", .array(results.slowest(slowestCount).map { .string($0.id) })),
            ("takes", .array(results.takes.map(take))),
        ])
        return page.render(title: "\((results.name as NSString).lastPathComponent) · ktv batch report", data: data)
    }
}
