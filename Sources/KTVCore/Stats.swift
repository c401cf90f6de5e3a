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
/// - average ranks: 1-based ranks in ascending order, tied values sharing the mean of the ranks
///   they occupy (scipy's `rankdata(method="average")`).
/// - ROC AUC: the Mann-Whitney U statistic over the pairs (positive, negative), a pair counting 1
///   when the positive is higher and 1/2 when the two are equal, divided by the number of pairs:
///   the chance that a random positive scores above a random negative (scikit-learn's `roc_auc_score`).
/// - Spearman correlation: the Pearson correlation of the two lists' average ranks (scipy's
///   `spearmanr`, ties included).
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

    /// The median of `values` in any order, equal to `median` of them sorted, found by selection
    /// (O(n) on average, not a sort's O(n log n)): a take's key is the median of every voiced frame,
    /// and sorting them was a tenth of scoring a pitch-track take. Reorders `values`.
    @inlinable
    public static func median<T: BinaryFloatingPoint>(selecting values: inout [T]) -> T? {
        let n = values.count
        guard n > 0 else { return nil }
        let upper = select(&values, rank: n / 2)
        if n % 2 == 1 { return upper }
        // After selection every value below rank n/2 is at most `upper`: the lower middle is their largest.
        var lower = values[0]
        for i in 1..<(n / 2) where values[i] > lower { lower = values[i] }
        return (lower + upper) / 2
    }

    /// The value of 0-based `rank` in ascending order (quickselect, median-of-three pivots), leaving
    /// smaller-or-equal values before it and larger-or-equal after. `rank` must be an index of `values`.
    @inlinable
    public static func select<T: Comparable>(_ values: inout [T], rank: Int) -> T {
        var lo = 0, hi = values.count - 1
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if values[mid] < values[lo] { values.swapAt(mid, lo) }
            if values[hi] < values[lo] { values.swapAt(hi, lo) }
            if values[hi] < values[mid] { values.swapAt(hi, mid) }
            let pivot = values[mid]
            var i = lo, j = hi
            while i <= j {
                while values[i] < pivot { i += 1 }
                while pivot < values[j] { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if rank <= j { hi = j } else if rank >= i { lo = i } else { return values[rank] }
        }
        return values[rank]
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

    /// The 1-based rank of each value in ascending order, in the values' order; tied values share the
    /// mean of the ranks they occupy: [10, 20, 20, 5] → [2, 3.5, 3.5, 1]. NaN has no rank: keep it out.
    public static func averageRanks(_ values: [Double]) -> [Double] {
        let order = values.indices.sorted { values[$0] < values[$1] }
        var ranks = [Double](repeating: 0, count: values.count)
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count, values[order[end]] == values[order[start]] { end += 1 }
            // Positions start..<end hold equal values: ranks start+1 … end, whose mean is this.
            let shared = Double(start + 1 + end) / 2
            for k in start..<end { ranks[order[k]] = shared }
            start = end
        }
        return ranks
    }

    /// ROC AUC of `positives` against `negatives` (higher = more positive): the Mann-Whitney U over all
    /// (positive, negative) pairs, ties counted 1/2, divided by the number of pairs. 1 when every
    /// positive is above every negative, 0.5 for no separation; nil when either list is empty.
    /// Computed from rank sums, so it is exact (U = sum of the positives' ranks − n₊(n₊+1)/2).
    public static func rocAUC(positives: [Double], negatives: [Double]) -> Double? {
        guard !positives.isEmpty, !negatives.isEmpty else { return nil }
        let ranks = averageRanks(positives + negatives)
        let positiveCount = Double(positives.count)
        let u = ranks.prefix(positives.count).reduce(0, +) - positiveCount * (positiveCount + 1) / 2
        return u / (positiveCount * Double(negatives.count))
    }

    /// Pearson's correlation of paired lists; nil when they differ in length, hold fewer than two
    /// pairs, or either is constant.
    public static func pearson(_ x: [Double], _ y: [Double]) -> Double? {
        guard x.count == y.count, x.count >= 2, let mx = mean(x), let my = mean(y) else { return nil }
        var covariance = 0.0, varianceX = 0.0, varianceY = 0.0
        for i in x.indices {
            let dx = x[i] - mx, dy = y[i] - my
            covariance += dx * dy
            varianceX += dx * dx
            varianceY += dy * dy
        }
        guard varianceX > 0, varianceY > 0 else { return nil }
        return covariance / (varianceX * varianceY).squareRoot()
    }

    /// The least-squares line y = intercept + slope·x through paired lists; nil when they differ in
    /// length, hold fewer than two pairs, or every x is the same.
    public static func linearFit(_ x: [Double], _ y: [Double]) -> (intercept: Double, slope: Double)? {
        guard x.count == y.count, x.count >= 2, let mx = mean(x), let my = mean(y) else { return nil }
        var sxy = 0.0, sxx = 0.0
        for i in x.indices {
            sxy += (x[i] - mx) * (y[i] - my)
            sxx += (x[i] - mx) * (x[i] - mx)
        }
        guard sxx > 0 else { return nil }
        return (my - sxy / sxx * mx, sxy / sxx)
    }

    /// Spearman's rank correlation of paired lists: the Pearson correlation of their average ranks.
    /// nil when the lists differ in length, hold fewer than two pairs, or either is constant (no
    /// ranking to correlate).
    public static func spearman(_ x: [Double], _ y: [Double]) -> Double? {
        guard x.count == y.count, x.count >= 2 else { return nil }
        return pearson(averageRanks(x), averageRanks(y))
    }
}
