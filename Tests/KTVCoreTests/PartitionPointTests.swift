import KTVCore
import Testing

@Suite struct PartitionPointTests {
    @Test func theFirstIndexNotBefore() {
        let t = [10, 20, 20, 30]
        #expect(t.partitionPoint { $0 < 20 } == 1)     // first at or after 20
        #expect(t.partitionPoint { $0 <= 20 } == 3)    // first after 20
        #expect(t.partitionPoint { $0 < 5 } == 0)
        #expect(t.partitionPoint { $0 <= 30 } == 4)
        #expect([Int]().partitionPoint { $0 < 1 } == 0)
        // A slice answers with the array's own indices.
        #expect(t[2...].partitionPoint { $0 < 30 } == 3)
        // Against a linear scan, on every cut of a sorted array with repeats.
        var rng = SeededGenerator(seed: 9)
        let sorted = (0..<200).map { _ in Int.random(in: 0...50, using: &rng) }.sorted()
        for x in -1...52 {
            #expect(sorted.partitionPoint { $0 < x } == (sorted.firstIndex { $0 >= x } ?? sorted.count))
        }
    }
}
