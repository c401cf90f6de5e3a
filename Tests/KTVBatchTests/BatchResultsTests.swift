import Foundation
import KTVBatch
import KTVCore
import Testing

/// A results file read back by `ktv batch report` (`BatchResults`): what a tampered or hostile file
/// may hold must not crash or hang the report.
@Suite struct BatchResultsReadTests {
    func write(_ text: String) throws -> (dir: URL, path: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-results-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("r.jsonl").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (dir, path)
    }

    /// `score_100` of 1e308, -1e308 or an integer past `Int.max` trapped in `histogram(bins:)`
    /// (`Double value cannot be converted to Int`); elapsed times summing past `Int.max` in `summary()`.
    @Test func outOfRangeScoresAndTimesAreCountedNotTrapped() throws {
        let lines = [("a", "1e308"), ("b", "-1e308"), ("c", "99999999999999999999999"), ("d", "50"), ("e", "100")].map { id, v in
            "{\"id\":\"\(id)\",\"status\":\"ok\",\"elapsed_ms\":9223372036854775807,\"result\":{\"rules\":\"ktv\",\"score\":1,\"score_100\":\(v)}}"
        }
        let (dir, path) = try write(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(at: dir) }
        let results = try BatchResults.read(path: path)
        #expect(results.takes.count == 5)
        let histogram = results.histogram(bins: 10)
        #expect(histogram.count == 1 && histogram[0].rules == "ktv")
        #expect(histogram[0].counts == [1, 0, 0, 0, 0, 1, 0, 0, 0, 3])
        #expect(results.warnings.count == 3)
        #expect(results.warnings.allSatisfy { $0.contains("score_100") && $0.contains("outside 0…100") }, "\(results.warnings)")
        let summary = results.summary().serialized()
        #expect(summary.contains("\"total\""))
    }
}
