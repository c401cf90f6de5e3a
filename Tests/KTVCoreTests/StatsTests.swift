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
}
