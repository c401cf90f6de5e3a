import Foundation
import Testing

/// `ktv batch` end to end: exit codes, standard streams, a kill and a resume, shards, memory.
@Suite struct BatchCLITests {
    /// A two-note reference and a take singing it, both small (a batch of thousands stays quick).
    func song(_ s: Scratch) throws {
        try s.write("ref.json", "{\"notes\": [{\"start_ms\": 100, \"duration_ms\": 300, \"midi\": 60}, {\"start_ms\": 500, \"duration_ms\": 300, \"midi\": 62}]}")
        var rows = ["time_s,f0_hz"]
        for f in 0..<100 {
            let ms = f * 10
            rows.append(String(format: "%.2f,%.2f", Double(f) / 100, ms >= 100 && ms < 400 ? 261.63 : ms >= 500 && ms < 800 ? 293.66 : 0))
        }
        try s.write("take.csv", rows.joined(separator: "\n") + "\n")
    }

    func manifest(_ s: Scratch, rows: Int, name: String = "m.csv") throws -> String {
        try s.write(name, "id,take,reference\n" + (0..<rows).map { "t\($0),take.csv,ref.json" }.joined(separator: "\n") + "\n")
    }

    func lines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func exitCodesAndMessages() throws {
        let s = try Scratch()
        try song(s)
        let good = try manifest(s, rows: 3)
        let ok = try ktv(["batch", good, "-o", s.path("r.jsonl"), "--progress", "never", "--summary", s.path("sum.json")])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try lines(s.path("r.jsonl")).count == 3)
        #expect(ok.stderr.hasPrefix("batch: 3 scored, 0 failed of 3 rows in "))
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("sum.json")))) as? [String: Any])
        #expect(summary["scored"] as? Int == 3)

        // The results are never overwritten by accident.
        let again = try ktv(["batch", good, "-o", s.path("r.jsonl"), "--progress", "never"])
        #expect(again.status == 64)
        #expect(again.stderr.contains("already holds") && again.stderr.contains("pass --resume to continue it"))

        let typo = try s.write("typo.csv", "id,take,reference,latncy_ms\na,take.csv,ref.json,3\n")
        let t = try ktv(["batch", typo, "--progress", "never"])
        #expect(t.status == 65)
        #expect(t.stderr == "ktv: \(typo): line 1: unknown column `latncy_ms` (did you mean `latency_ms`?); the columns are id, take, reference, lyrics, accompaniment, progress_log, device, rules, timing, latency_ms, key_shift, pitch_interval_ms, stream\n")
        #expect(t.stdout.isEmpty)

        #expect(try ktv(["batch", s.path("nowhere.csv")]).status == 74)
        #expect(try ktv(["batch", good, "--shard", "5/4"]).status == 64)
        #expect(try ktv(["batch", good, "--jobs", "0"]).status == 64)
        let resume = try ktv(["batch", good, "--resume"])
        #expect(resume.status == 64)
        #expect(resume.stderr.contains("--resume continues a results file; give it with -o"))

        let bad = try s.write("bad.csv", "id,take,reference\na,take.csv,ref.json\nb,nowhere.wav,ref.json\n")
        let failed = try ktv(["batch", bad, "-o", s.path("bad.jsonl"), "--progress", "never"])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("failures: missing 1"))
    }

    @Test func standardInputToStandardOutput() throws {
        let s = try Scratch()
        try song(s)
        let rows = (0..<5).map { "{\"id\": \"j\($0)\", \"take\": \"\(s.path("take.csv"))\", \"reference\": \"\(s.path("ref.json"))\"}" }
        let r = try ktv(["batch", "-", "--progress", "never"], stdin: Array((rows.joined(separator: "\n") + "\n").utf8))
        #expect(r.status == 0, "\(r.stderr)")
        let out = r.out.split(separator: "\n")
        #expect(out.count == 5)
        #expect(Set(out.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }.compactMap { $0["id"] as? String })
            == Set((0..<5).map { "j\($0)" }))
    }

    @Test func progressBarOrNothing() throws {
        let s = try Scratch()
        try song(s)
        let m = try manifest(s, rows: 4)
        let bar = try ktv(["batch", m, "-o", s.path("a.jsonl"), "--progress", "always", "--jobs", "1"])
        #expect(bar.stderr.contains("\r\u{1B}[2K[##############################] 4/4 takes · "))
        let quiet = try ktv(["batch", m, "-o", s.path("b.jsonl"), "--progress", "never"])
        #expect(!quiet.stderr.contains("takes ·"))
    }

    /// SIGKILL in the middle of a batch, then `--resume`: exactly one `ok` line per take.
    @Test func killedMidwayThenResumed() throws {
        let s = try Scratch()
        try song(s)
        let n = 3000
        let m = try manifest(s, rows: n)
        let results = s.path("r.jsonl")
        let p = Process()
        p.executableURL = KTVBinary.url
        p.arguments = ["batch", m, "-o", results, "--progress", "never", "--jobs", "2"]
        p.standardError = FileHandle.nullDevice
        try p.run()
        var written = 0
        while p.isRunning {
            written = (try? Data(contentsOf: URL(fileURLWithPath: results)))?.filter { $0 == 0x0A }.count ?? 0
            if written >= 200 { break }
            usleep(2000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal, "the batch finished before it could be killed")
        let before = try lines(results).count
        #expect(before >= 200 && before < n)

        let r = try ktv(["batch", m, "-o", results, "--resume", "--progress", "never", "--summary", s.path("sum.json")])
        #expect(r.status == 0, "\(r.stderr)")
        let all = try lines(results)
        let ok = all.filter { $0["status"] as? String == "ok" }.compactMap { $0["id"] as? String }
        #expect(ok.count == n)
        #expect(Set(ok).count == n)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("sum.json")))) as? [String: Any])
        #expect(summary["already_done"] as? Int == before)
        #expect(summary["scored"] as? Int == n - before)
    }

    @Test func shardsTogetherCoverTheManifestOnce() throws {
        let s = try Scratch()
        try song(s)
        let n = 200
        let m = try manifest(s, rows: n)
        var ids: [String] = []
        for k in 1...4 {
            let r = try ktv(["batch", m, "-o", s.path("s\(k).jsonl"), "--shard", "\(k)/4", "--progress", "never"])
            #expect(r.status == 0, "\(r.stderr)")
            ids += try lines(s.path("s\(k).jsonl")).compactMap { $0["id"] as? String }
        }
        #expect(ids.count == n)
        #expect(Set(ids) == Set((0..<n).map { "t\($0)" }))
    }

    /// 10,000 pitch-track takes: the process's peak memory is that of 1,000 within a few MB.
    @Test func tenThousandRowsWithFlatMemory() throws {
        let s = try Scratch()
        try song(s)
        var peaks: [Int: Double] = [:]
        for n in [1000, 10_000] {
            let m = try manifest(s, rows: n, name: "m\(n).csv")
            let r = try ktv(["batch", m, "-o", s.path("r\(n).jsonl"), "--progress", "never", "--summary", s.path("sum\(n).json")])
            #expect(r.status == 0, "\(r.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("sum\(n).json")))) as? [String: Any])
            #expect(summary["scored"] as? Int == n)
            // Once per worker process (each keeps its own cache; the default is one worker a core).
            #expect(summary["references_read"] as? Int == summary["jobs"] as? Int)
            peaks[n] = summary["peak_memory_mb"] as? Double
        }
        if let small = peaks[1000], let large = peaks[10_000] {
            #expect(large - small < 8, "peak \(small) MB for 1,000 takes, \(large) MB for 10,000")
        }
    }
}
