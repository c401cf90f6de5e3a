/// Order statistics and the mean, defined once so that every report (and the simulator's truth)
/// computes a figure the same way.
///
/// Definitions:
/// - median: the middle value of the sorted values; for an even count, the mean of the two middle
///   values (numpy's `median`).
/// - percentile: **nearest rank** (Hyndman & Fan definition 1, the "inverted CDF" method of numpy's
///   `percentile(method="inverted_cdf")`; not numpy's default linear interpolation): the smallest
///   value with at least a share `q` of the values at or below it, i.e. the value of 1-based rank
///   ⌈q·n⌉ (at least rank 1). It always returns one of the values.
/// - upper order statistic: the value of 0-based index ⌊q·n⌋ (clamped to n − 1): the smallest value
///   with more than a share `q` of the values at or below it. For q = 0.5 it is the upper median. Level
///   estimates (a track's loud level, a median gain) use it, so they are always one of the values.
/// - mean: the arithmetic mean, summed in order.
///
/// The order statistics take values **already sorted ascending**: callers usually want several
/// statistics of one array, so it is sorted once. Every function returns nil for no values.
public enum Stats {
    /// The middle of `sorted`; the mean of the two middle values for an even count.
    @inlinable
    public static func median<T: BinaryFloatingPoint>(_ sorted: [T]) -> T? {
        guard !sorted.isEmpty else { return nil }
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    /// Nearest-rank percentile of `sorted` for a share `q` in 0…1 (0.95 for p95): the value of rank
    /// ⌈q·n⌉, clamped to 1…n. p95 of 1…20 is 19; of five values it is the largest.
    @inlinable
    public static func percentile<T>(_ sorted: [T], _ q: Double) -> T? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }

    /// The value of 0-based index ⌊q·n⌋ of `sorted`, clamped to the last: above a share `q` of the
    /// values. Of 1…20, q = 0.95 gives 20 (nearest rank gives 19); q = 0.5 gives the upper median.
    @inlinable
    public static func upperOrderStatistic<T>(_ sorted: [T], _ q: Double) -> T? {
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, max(0, Int(Double(sorted.count) * q)))]
    }

    /// The arithmetic mean (order does not matter).
    public static func mean(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        return values.reduce(0, +) / Double(values.count)
    }
}
