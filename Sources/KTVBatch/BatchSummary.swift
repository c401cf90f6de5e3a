import Foundation
import KTVCore

/// The scores of one rule set in a run (rule sets have their own scales: ktv 0-100, agora per line,
/// ultrastar of 10000, so they are never pooled). The one place a batch's scores are summarised:
/// the run's summary, `ktv batch report`'s and its dashboard's all come from here, with KTVCore's
/// `Stats` (the median of an even count is the mean of the middle two; p10 and p90 nearest-rank).
public struct ScoreDistribution: Sendable, Equatable {
    public var count: Int
    public var mean: Double
    public var min: Double, p10: Double, p50: Double, p90: Double, max: Double

    public init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        mean = Stats.mean(sorted) ?? 0
        min = sorted.first ?? 0
        max = sorted.last ?? 0
        p10 = Stats.percentile(sorted, 0.1) ?? 0
        p50 = Stats.median(sorted) ?? 0
        p90 = Stats.percentile(sorted, 0.9) ?? 0
    }
}

/// What a run did: counts, scores, failures by reason, throughput.
public struct BatchSummary: Sendable, Equatable {
    /// Rows in the manifest, and in this run's shard.
    public var manifestRows: Int
    public var shard: BatchShard?
    public var inShard = 0
    /// Rows skipped because the results already hold an `ok` line for their id.
    public var alreadyDone = 0
    public var scored = 0
    public var failed = 0
    /// Rows not started because the run stopped at the first failure.
    public var notRun = 0
    public var stoppedEarly = false
    /// Stopped by a `BatchStop` (Ctrl-C) before every row was run.
    public var interrupted = false
    public var failuresByReason: [BatchFailure.Reason: Int] = [:]
    /// By rule set name.
    public var scores: [String: ScoreDistribution] = [:]
    /// References read from disk (each read once however many takes use it, while it stays cached).
    public var referencesRead = 0
    public var wallS = 0.0
    public var jobs: Int
    /// This process's peak resident memory at the end of the run, MB (Linux; nil elsewhere).
    public var peakMemoryMB: Double?
    /// Child workers that died and were replaced.
    public var workerRestarts = 0

    init(manifestRows: Int, shard: BatchShard?, jobs: Int) {
        self.manifestRows = manifestRows
        self.shard = shard
        self.jobs = jobs
    }

    public var takesPerMinute: Double { wallS > 0 ? Double(scored + failed) / wallS * 60 : 0 }

    public func json() -> JSONValue {
        func r(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
        return .object([
            ("manifest_rows", .int(manifestRows)),
            ("shard", shard.map { .string($0.description) } ?? .null),
            ("in_shard", .int(inShard)),
            ("already_done", .int(alreadyDone)),
            ("scored", .int(scored)),
            ("failed", .int(failed)),
            ("not_run", .int(notRun)),
            ("stopped_early", .bool(stoppedEarly)),
            ("failures_by_reason", .object(failuresByReason.sorted { $0.key < $1.key }.map { ($0.key.rawValue, .int($0.value)) })),
            ("scores", .object(scores.sorted { $0.key < $1.key }.map { name, d in
                (name, .object([("count", .int(d.count)), ("mean", r(d.mean)), ("min", r(d.min)), ("p10", r(d.p10)),
                                ("p50", r(d.p50)), ("p90", r(d.p90)), ("max", r(d.max))]))
            })),
            ("references_read", .int(referencesRead)),
            ("wall_s", r(wallS)),
            ("takes_per_minute", r(takesPerMinute)),
            ("jobs", .int(jobs)),
            ("peak_memory_mb", peakMemoryMB.map { r($0) } ?? .null),
            ("worker_restarts", .int(workerRestarts)),
            ("interrupted", .bool(interrupted)),
        ])
    }

    public func text() -> String {
        var out = "batch: \(scored) scored, \(failed) failed"
        if alreadyDone > 0 { out += ", \(alreadyDone) already done" }
        if notRun > 0 { out += ", \(notRun) not run (\(interrupted ? "interrupted" : "stopped at the first failure"))" }
        out += " of \(counted(inShard, "row"))"
        if let shard { out += " in shard \(shard) (\(manifestRows) in the manifest)" }
        out += String(format: " in %.1f s: %.0f takes/min with ", wallS, takesPerMinute) + counted(jobs, "job")
        out += peakMemoryMB.map { String(format: ", peak memory %.0f MB", $0) } ?? ""
        out += workerRestarts > 0 ? ", \(workerRestarts) worker(s) restarted after a crash\n" : "\n"
        for (name, d) in scores.sorted(by: { $0.key < $1.key }) {
            out += "  \(name) scores: " + String(format: "mean %.1f, p10 %.1f, median %.1f, p90 %.1f (min %.1f, max %.1f, n=%d)\n",
                                                   d.mean, d.p10, d.p50, d.p90, d.min, d.max, d.count)
        }
        if !failuresByReason.isEmpty {
            out += "  failures: " + failuresByReason.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ") + "\n"
        }
        return out
    }
}
