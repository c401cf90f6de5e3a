import Testing
import KTVCore

/// The statistics' definitions, with values worked out by hand (moved from KTVSyncTests with `Stats`).
@Suite struct StatsTests {
    @Test func median() {
        // An even count gives the mean of the middle two.
        #expect(Stats.median([1, 2, 3, 10]) == 2.5)
        #expect(Stats.median([4]) == 4)
        #expect(Stats.median([Double]()) == nil)
        #expect(Stats.median([Float(1), 2]) == 1.5)
    }

    /// Selection gives exactly what sorting gives: every rank, and the median, for odd and even
    /// counts, with ties, on seeded values.
    @Test func selectionEqualsSorting() {
        var rng = SeededGenerator(seed: 33)
        for n in 1...120 {
            let values = (0..<n).map { _ in Double(Int.random(in: -20...20, using: &rng)) + (Bool.random(using: &rng) ? 0.5 : 0) }
            let sorted = values.sorted()
            var work = values
            #expect(Stats.median(selecting: &work) == Stats.median(sorted))
            let rank = Int.random(in: 0..<n, using: &rng)
            work = values
            #expect(Stats.select(&work, rank: rank) == sorted[rank])
            #expect(work[..<rank].allSatisfy { $0 <= sorted[rank] } && work[rank...].allSatisfy { $0 >= sorted[rank] })
        }
        var none: [Double] = []
        #expect(Stats.median(selecting: &none) == nil)
    }

    @Test func nearestRankPercentile() {
        let twenty = (1...20).map(Double.init)
        #expect(Stats.percentile(twenty, 0.95) == 19)  // rank ⌈19.0⌉ = 19
        #expect(Stats.percentile(twenty, 0.96) == 20)  // rank ⌈19.2⌉ = 20, no interpolation
        #expect(Stats.percentile(twenty, 0) == 1)      // rank clamped to 1
        #expect(Stats.percentile([5, 6, 10, 12, 12], 0.95) == 12)  // rank ⌈4.75⌉ = 5
        #expect(Stats.percentile([Double](), 0.5) == nil)
    }

    @Test func upperOrderStatistic() {
        let twenty = (1...20).map(Double.init)
        #expect(Stats.upperOrderStatistic(twenty, 0.95) == 20)  // index ⌊19.0⌋ = 19, the 20th value
        #expect(Stats.upperOrderStatistic(twenty, 0.94) == 19)  // index ⌊18.8⌋ = 18
        #expect(Stats.upperOrderStatistic(twenty, 0.5) == 11)   // the upper median
        #expect(Stats.upperOrderStatistic([Float(3)], 1) == 3)  // clamped to the last
        #expect(Stats.upperOrderStatistic([Double](), 0.5) == nil)
    }

    @Test func mean() {
        #expect(Stats.mean([1, 2, 3, 10]) == 4)
        #expect(Stats.mean([]) == nil)
    }

    @Test func averageRanks() {
        // The two 20s occupy ranks 3 and 4 and share 3.5; the values keep their order.
        #expect(Stats.averageRanks([10, 20, 20, 5]) == [2, 3.5, 3.5, 1])
        // Three tied values occupy ranks 2, 3, 4: each gets 3.
        #expect(Stats.averageRanks([7, 7, 1, 7]) == [3, 3, 1, 3])
        #expect(Stats.averageRanks([4, 4]) == [1.5, 1.5])
        #expect(Stats.averageRanks([]) == [])
    }

    @Test func rocAUC() {
        // Pairs (positive, negative): 3>2, 3>1, 2=2 (½), 2>1, 2=2 (½), 2>1 → 5 of 6 pairs.
        #expect(Stats.rocAUC(positives: [3, 2, 2], negatives: [2, 1]) == 5.0 / 6.0)
        #expect(Stats.rocAUC(positives: [5, 6], negatives: [1, 2, 3]) == 1)
        #expect(Stats.rocAUC(positives: [1, 2], negatives: [5, 6, 7]) == 0)
        // Every pair tied: ½ each.
        #expect(Stats.rocAUC(positives: [4, 4], negatives: [4]) == 0.5)
        // 1 beats nothing, 3 beats 2, 5 beats 2 and 4: 3 of 6 pairs.
        #expect(Stats.rocAUC(positives: [1, 3, 5], negatives: [2, 4]) == 0.5)
        #expect(Stats.rocAUC(positives: [], negatives: [1]) == nil)
        #expect(Stats.rocAUC(positives: [1], negatives: []) == nil)
    }

    @Test func spearman() {
        #expect(Stats.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1)
        #expect(Stats.spearman([1, 2, 3, 4], [9, 7, 5, -1]) == -1)
        // Ranks of y = [1, 2.5, 2.5, 4]; deviations from 2.5: x (−1.5, −0.5, 0.5, 1.5), y (−1.5, 0, 0,
        // 1.5); covariance 4.5, squares 5 and 4.5 → 4.5 / √22.5 = 3 / √10.
        let tied = Stats.spearman([1, 2, 3, 4], [1, 2, 2, 3])
        #expect(tied.map { abs($0 - 3 / 10.0.squareRoot()) < 1e-15 } == true)
        // Monotone but not linear: ranks agree exactly.
        #expect(Stats.spearman([1, 2, 3], [1, 100, 10_000]) == 1)
        #expect(Stats.spearman([1, 2, 3], [5, 5, 5]) == nil)   // a constant list has no ranking
        #expect(Stats.spearman([1], [2]) == nil)
        #expect(Stats.spearman([1, 2], [1]) == nil)
    }
}
