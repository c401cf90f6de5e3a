import Foundation
@testable import KTVBatch
import KTVCore
import KTVScore
import Testing

/// A scratch folder with a reference (8 notes) and pitch-track takes singing it.
final class BatchScratch {
    let dir: String
    static let midis = [60, 62, 64, 65, 67, 65, 64, 62]

    init() throws {
        dir = NSTemporaryDirectory() + "ktv-batch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let notes = Self.midis.enumerated().map { k, m in "{\"start_ms\": \(1000 + k * 600), \"duration_ms\": 500, \"midi\": \(m)}" }
        try write("ref.json", "{\"notes\": [\(notes.joined(separator: ", "))]}")
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    /// A take singing the reference `detune` cents off, as `time_s,f0_hz` rows every 10 ms.
    @discardableResult
    func take(_ name: String, detune: Double = 0) throws -> String {
        var rows = ["time_s,f0_hz"]
        for f in 0..<600 {
            let ms = f * 10
            var hz = 0.0
            for (k, m) in Self.midis.enumerated() where ms >= 1000 + k * 600 && ms < 1000 + k * 600 + 480 {
                hz = 440 * pow(2, (Double(m) - 69 + detune / 100) / 12)
            }
            rows.append(String(format: "%.2f,%.3f", Double(f) / 100, hz))
        }
        return try write(name, rows.joined(separator: "\n") + "\n")
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = dir + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func lines(_ name: String) throws -> [JSONValue] {
        let text = try String(contentsOfFile: dir + "/" + name, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONReader.parse(Array($0.utf8)) }
    }
}

@Suite struct BatchRunnerTests {
    func run(_ s: BatchScratch, _ manifest: String, resume: Bool = false, jobs: Int = 2, failFast: Bool = false,
             shard: BatchShard? = nil) async throws -> (summary: BatchSummary, lines: [JSONValue]) {
        let m = try Manifest.read(path: try s.write("m.csv", manifest))
        let results = try ResultsLog(path: s.dir + "/results.jsonl", resume: resume)
        var c = BatchConfiguration()
        c.jobs = jobs
        c.failFast = failFast
        c.shard = shard
        let summary = try await BatchRunner.run(m, configuration: c, results: results)
        return (summary, try s.lines("results.jsonl"))
    }

    func byId(_ lines: [JSONValue]) -> [String: JSONValue] {
        Dictionary(lines.compactMap { l in l["id"]?.string.map { ($0, l) } }, uniquingKeysWith: { a, _ in a })
    }

    @Test func everyKindOfBadRowGivesExactlyOneLineWithItsReason() async throws {
        let s = try BatchScratch()
        try s.take("good.csv")
        try s.take("flat.csv", detune: -150)
        var generator = SeededGenerator(seed: 7)
        try s.write("corrupt.wav", (0..<4000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try s.write("empty.csv", "")
        try s.write("bad-ref.json", "{\"notes\": [")
        let (summary, lines) = try await run(s, """
            id,take,reference,rules,key_shift,latency_ms
            good,good.csv,ref.json,,,
            flat,flat.csv,ref.json,,none,
            agora,good.csv,ref.json,agora,,
            corrupt,corrupt.wav,ref.json,,,
            missing,nowhere.csv,ref.json,,,
            empty,empty.csv,ref.json,,,
            badref,good.csv,bad-ref.json,,,
            rules,good.csv,ref.json,karaoke,,
            key,good.csv,ref.json,,sideways,
            latency,good.csv,ref.json,,,99999
            noreference,good.csv,,,,

            """)
        #expect(lines.count == 11)
        let rows = byId(lines)
        #expect(rows.count == 11)
        for id in ["good", "flat", "agora"] { #expect(rows[id]?["status"]?.string == "ok", "\(id)") }
        #expect(rows["good"]?["result"]?["score"]?.number == 100)
        #expect(try #require(rows["flat"]?["result"]?["score"]?.number) < 60)
        #expect(rows["agora"]?["result"]?["rules"]?.string == "agora")
        let expected: [String: String] = ["corrupt": "audio", "missing": "missing", "empty": "take", "badref": "reference",
                                          "rules": "row", "key": "row", "latency": "row", "noreference": "row"]
        for (id, reason) in expected {
            #expect(rows[id]?["status"]?.string == "error", "\(id)")
            #expect(rows[id]?["reason"]?.string == reason, "\(id): \(rows[id]?["error"]?.string ?? "")")
        }
        #expect(rows["missing"]?["error"]?.string == "\(s.dir)/m.csv: line 6: take: \(s.dir)/nowhere.csv: no such file")
        #expect(rows["rules"]?["error"]?.string == "\(s.dir)/m.csv: line 9: rules: `karaoke` is not one of ktv, agora, ultrastar")
        #expect(rows["latency"]?["error"]?.string == "\(s.dir)/m.csv: line 11: latency_ms: 99999.0; allowed: −10000…10000 ms")
        #expect(rows["badref"]?["error"]?.string?.hasPrefix("\(s.dir)/bad-ref.json") == true)
        #expect(rows["noreference"]?["line"] == .int(12))
        #expect(summary.scored == 3)
        #expect(summary.failed == 8)
        #expect(summary.failuresByReason == [.audio: 1, .take: 1, .missing: 1, .reference: 1, .row: 4])
        #expect(summary.scores["ktv"]?.count == 2)
        #expect(summary.scores["agora"]?.count == 1)
    }

    @Test func aReferenceUsedByManyTakesIsReadOnce() async throws {
        let s = try BatchScratch()
        try s.take("t.csv")
        let rows = (0..<40).map { "r\($0),t.csv,ref.json" }.joined(separator: "\n")
        let (summary, lines) = try await run(s, "id,take,reference\n" + rows + "\n", jobs: 4)
        #expect(lines.count == 40)
        #expect(summary.scored == 40)
        #expect(summary.referencesRead == 1)
        #expect(abs((summary.scores["ktv"]?.p10 ?? 0) - 100) < 0.01)
    }

    @Test func resumeSkipsWhatIsDoneAndRetriesFailures() async throws {
        let s = try BatchScratch()
        try s.take("t.csv")
        let manifest = "id,take,reference\na,t.csv,ref.json\nb,later.csv,ref.json\nc,t.csv,ref.json\n"
        let first = try await run(s, manifest)
        #expect(first.summary.scored == 2)
        #expect(first.summary.failed == 1)
        // Without resume the results are not overwritten.
        await #expect(throws: BatchError.self) { _ = try await run(s, manifest) }
        try s.take("later.csv")
        let second = try await run(s, manifest, resume: true)
        #expect(second.summary.alreadyDone == 2)
        #expect(second.summary.scored == 1)
        #expect(second.lines.count == 4)
        #expect(second.lines.filter { $0["status"]?.string == "ok" }.compactMap { $0["id"]?.string }.sorted() == ["a", "b", "c"])
    }

    @Test func aTornLastLineIsDroppedWithAWarning() throws {
        let s = try BatchScratch()
        let path = try s.write("results.jsonl", "{\"id\":\"a\",\"status\":\"ok\"}\n{\"id\":\"b\",\"status\":\"error\"}\nnot json\n{\"id\":\"c\",\"status\":\"o")
        let log = try ResultsLog(path: path, resume: true)
        #expect(log.completedIds == ["a"])
        #expect(log.warnings.count == 2)
        #expect(log.warnings[0] == "\(path): line 3 is not a JSON object; ignored (its take, if any, is scored again)")
        #expect(log.warnings[1].hasPrefix("\(path): line 4 was cut off (21 bytes without an end"))
        try log.append(.object([("id", .string("c")), ("status", .string("ok"))]))
        #expect(try String(contentsOfFile: path, encoding: .utf8)
            == "{\"id\":\"a\",\"status\":\"ok\"}\n{\"id\":\"b\",\"status\":\"error\"}\nnot json\n{\"id\":\"c\",\"status\":\"ok\"}\n")
        #expect(throws: BatchError.resultsExist(path: path, bytes: 87)) { _ = try ResultsLog(path: path, resume: false) }
        #expect(throws: BatchError.self) { _ = try ResultsLog(path: "-", resume: true) }
    }

    /// A row written as `reason: crash` ended two workers: resuming does not give it a third unless asked.
    @Test func crashedRowsAreDoneUnlessRetried() throws {
        let s = try BatchScratch()
        let path = try s.write("results.jsonl", "{\"id\":\"a\",\"status\":\"ok\"}\n{\"id\":\"b\",\"status\":\"error\",\"reason\":\"crash\"}\n"
                               + "{\"id\":\"c\",\"status\":\"error\",\"reason\":\"take\"}\n")
        #expect(try ResultsLog(path: path, resume: true).completedIds == ["a", "b"])
        #expect(try ResultsLog(path: path, resume: true, retryCrashed: true).completedIds == ["a"])
    }

    /// Rows travel to a worker process and back as JSON lines, every column kept.
    @Test func aRowSurvivesTheWorkerMessage() throws {
        var values: [ManifestColumn: String] = [:]
        for (k, c) in ManifestColumn.allCases.enumerated() { values[c] = "v\(k) \"quoted\" ✓" }
        let row = ManifestRow(line: 42, values: values)
        let text = row.message.serialized(pretty: false)
        #expect(!text.contains("\n"))
        #expect(ManifestRow(message: try JSONReader.parse(Array(text.utf8))) == row)
        #expect(ManifestRow(message: try JSONReader.parse(Array("{\"line\":1,\"values\":{\"nope\":\"x\"}}".utf8))) == nil)
    }

    @Test func failFastStopsStartingTakes() async throws {
        let s = try BatchScratch()
        try s.take("t.csv")
        let (summary, lines) = try await run(s, "id,take,reference\na,missing.csv,ref.json\nb,t.csv,ref.json\nc,t.csv,ref.json\n",
                                             jobs: 1, failFast: true)
        #expect(lines.count == 1)
        #expect(summary.failed == 1)
        #expect(summary.notRun == 2)
        #expect(summary.stoppedEarly)
    }

    @Test func shardsSplitTheManifestExactlyOnce() async throws {
        let s = try BatchScratch()
        try s.take("t.csv")
        let manifest = "id,take,reference\n" + (0..<30).map { "take-\($0),t.csv,ref.json" }.joined(separator: "\n") + "\n"
        var seen: [String] = []
        for k in 1...3 {
            try? FileManager.default.removeItem(atPath: s.dir + "/results.jsonl")
            let (summary, lines) = try await run(s, manifest, shard: try BatchShard(index: k, count: 3))
            #expect(summary.manifestRows == 30)
            #expect(summary.inShard == lines.count)
            seen += lines.compactMap { $0["id"]?.string }
        }
        #expect(seen.sorted() == (0..<30).map { "take-\($0)" }.sorted())
    }
}
