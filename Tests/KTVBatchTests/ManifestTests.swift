import Foundation
import KTVBatch
import Testing

@Suite struct ManifestTests {
    func parse(_ text: String, format: Manifest.Format? = nil) throws -> Manifest {
        try Manifest.parse(Array(text.utf8), name: "m.csv", baseDirectory: "/data", format: format)
    }

    func error(_ text: String) -> String {
        do { _ = try parse(text) } catch { return "\(error)" }
        return "no error"
    }

    @Test func csvQuotingLineEndingsAndBlankLines() throws {
        let m = try parse("\u{FEFF}id,take,reference,key_shift\r\n\"a,1\",\"t \"\"x\"\".wav\",r.xml,\r\n\r\nb,\"two\nlines.wav\",/abs/r.xml,-300\nc,t.csv,r.xml, auto \n")
        #expect(m.format == .csv)
        #expect(m.rows.count == 3)
        #expect(m.rows[0] == ManifestRow(line: 2, values: [.id: "a,1", .take: "t \"x\".wav", .reference: "r.xml"]))
        #expect(m.rows[1].line == 4)
        #expect(m.rows[1][.take] == "two\nlines.wav")
        #expect(m.rows[1][.keyShift] == "-300")
        // The record after a quoted newline starts on the right line; values are trimmed.
        #expect(m.rows[2].line == 6)
        #expect(m.rows[2][.keyShift] == "auto")
        #expect(m.resolve("r.xml") == "/data/r.xml")
        #expect(m.resolve("/abs/r.xml") == "/abs/r.xml")
    }

    @Test func anUnknownColumnIsAnErrorNamingIt() {
        #expect(error("id,take,reference,latncy_ms\na,t,r,5\n")
            == "m.csv: line 1: unknown column `latncy_ms` (did you mean `latency_ms`?); the columns are id, take, reference, lyrics, accompaniment, progress_log, device, rules, timing, latency_ms, key_shift, pitch_interval_ms, stream")
        #expect(error("id,take,reference,colour\n").hasPrefix("m.csv: line 1: unknown column `colour`; the columns are"))
        #expect(error("{\"id\": \"a\", \"take\": \"t\", \"reference\": \"r\"}\n{\"id\": \"b\", \"tkae\": \"t\"}\n")
            .hasPrefix("m.csv: line 2: unknown column `tkae` (did you mean `take`?)"))
    }

    @Test func structuralErrorsNameTheLine() {
        #expect(error("id,take\na,t\n") == "m.csv: line 1: no `reference` column; every manifest names id, take and reference")
        #expect(error("id,take,reference\na,t,r\nb,t\n") == "m.csv: line 3: 2 fields, but the header names 3 columns")
        #expect(error("id,take,reference\na,\"t,r\n") == "m.csv: line 2: a quoted field is never closed")
        #expect(error("id,take,reference\na,\"t\"x,r\n").hasPrefix("m.csv: line 2: text after a closing quote"))
        #expect(error("id,take,id,reference\n") == "m.csv: line 1: column `id` is named twice")
        #expect(error("") == "m.csv: empty: the first line names the columns (id,take,reference,…)")
        #expect(error("{\"id\": \"a\"}\n[1]\n").hasPrefix("m.csv: line 2: not a JSON object"))
        #expect(error("{\"id\": \"a\"}\n{\"id\": \"b\", \"latency_ms\": [1]}\n") == "m.csv: line 2: `latency_ms` is [1]; give a string or a number")
    }

    @Test func invalidUTF8IsAnErrorWithItsLine() {
        var bytes = Array("id,take,reference\na,t,r\nb,".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(",r\n".utf8)
        do {
            _ = try Manifest.parse(bytes, name: "m.csv", baseDirectory: ".")
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect("\(error)" == "m.csv: line 3: not UTF-8 text")
        }
    }

    @Test func jsonLinesTakeStringsNumbersAndNulls() throws {
        let m = try parse("\n{\"id\": \"a\", \"take\": \"t.wav\", \"reference\": \"r.xml\", \"latency_ms\": 120, \"key_shift\": -150.5, \"lyrics\": null}\n\n{\"id\": \"b\"}\n")
        #expect(m.format == .jsonl)
        #expect(m.rows.count == 2)
        #expect(m.rows[0] == ManifestRow(line: 2, values: [.id: "a", .take: "t.wav", .reference: "r.xml", .latencyMs: "120", .keyShift: "-150.5"]))
        #expect(m.rows[1] == ManifestRow(line: 4, values: [.id: "b"]))
    }
}

@Suite struct ShardTests {
    @Test func theHashIsFNV1a64() {
        // Published FNV-1a 64-bit test vectors.
        #expect(BatchShard.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(BatchShard.hash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(BatchShard.hash("foobar") == 0x8594_4171_f739_67e8)
    }

    @Test func shardsCoverEveryIdExactlyOnce() throws {
        let ids = (0..<2000).map { "take-\($0)" } + [""]
        for n in 1...7 {
            let shards = try (1...n).map { try BatchShard(index: $0, count: n) }
            var counts = [Int](repeating: 0, count: n)
            for id in ids {
                let owners = shards.indices.filter { shards[$0].contains(id: id) }
                #expect(owners.count == 1, "\(id) in \(owners.count) of \(n) shards")
                counts[owners[0]] += 1
            }
            // Balanced within 20 % of an even split.
            for c in counts { #expect(abs(Double(c) - Double(ids.count) / Double(n)) < 0.2 * Double(ids.count) / Double(n)) }
        }
        #expect(try BatchShard(parsing: "3/8") == BatchShard(index: 3, count: 8))
        #expect(try BatchShard(index: 1, count: 1).contains(id: nil))
    }

    @Test func badShardsAreRefused() {
        for text in ["0/4", "5/4", "a/b", "3", "1/0", "-1/2"] {
            #expect(throws: BatchError.self) { try BatchShard(parsing: text) }
        }
    }
}
