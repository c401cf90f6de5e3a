import KTVCore

/// Summary of one follower's signed drift against its lead (docs/progress-log.md, "Drift"), computed
/// the same way for replay's pairs and the simulator's truth.
public struct DriftStats: Sendable, Equatable {
    public var samples: Int
    /// Median of the signed drift.
    public var medianMs: Double
    /// Nearest-rank p95 of |drift| (`Stats.percentile`).
    public var p95AbsMs: Double
    public var maxAbsMs: Double
    /// Share of samples with |drift| above the threshold.
    public var overThresholdShare: Double

    public init(samples: Int, medianMs: Double, p95AbsMs: Double, maxAbsMs: Double, overThresholdShare: Double) {
        self.samples = samples
        self.medianMs = medianMs
        self.p95AbsMs = p95AbsMs
        self.maxAbsMs = maxAbsMs
        self.overThresholdShare = overThresholdShare
    }

    /// The summary of signed drift values; nil for none.
    public init?(values: [Double], thresholdMs: Double) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let abs = values.map { Swift.abs($0) }.sorted()
        let over = abs.reduce(0) { $0 + ($1 > thresholdMs ? 1 : 0) }
        self.init(samples: values.count, medianMs: Stats.median(sorted)!, p95AbsMs: Stats.percentile(abs, 0.95)!,
                  maxAbsMs: abs.last!, overThresholdShare: Double(over) / Double(values.count))
    }
}
