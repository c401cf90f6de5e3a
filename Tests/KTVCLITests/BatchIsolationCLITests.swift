import Foundation
import Testing

/// `n` rows of one short pitch-track take (t0, t1, …) against a one-note reference.
func pitchBatch(_ s: Scratch, rows n: Int) throws -> String {
    try s.write("ref.json", "[{\"start_ms\": 100, \"duration_ms\": 300, \"midi\": 60}]")
    try s.write("take.csv", "time_s,f0_hz\n0.1,261.63\n0.2,261.63\n0.3,261.63\n")
    return try s.write("m.csv", "id,take,reference\n" + (0..<n).map { "t\($0),take.csv,ref.json" }.joined(separator: "\n") + "\n")
}

/// `ktv batch` with its workers as child processes: a worker killed mid-take, a take that traps
/// every worker it is given (the test failpoint), and the batch flags checked once as usage.
@Suite struct BatchIsolationCLITests {
    /// `n` rows of one audio take (a 3 s sung melody, tracked in each row, slow enough to be killed
    /// during) against a notes reference.
    func audioBatch(_ s: Scratch, rows n: Int) throws -> String {
        _ = try dualMonoTrack(s, "take.wav", seconds: 3)
        try s.write("ref.json", "[{\"start_ms\": 500, \"duration_ms\": 800, \"midi\": 62}, {\"start_ms\": 1500, \"duration_ms\": 800, \"midi\": 64}]")
        return try s.write("m.csv", "id,take,reference\n" + (0..<n).map { "t\($0),take.wav,ref.json" }.joined(separator: "\n") + "\n")
    }

    func results(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The processes whose parent is `pid`.
    func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    @Test func aWorkerKilledMidTakeIsReplacedAndEveryTakeIsScoredOnce() throws {
        let s = try Scratch()
        let n = 12
        let manifest = try audioBatch(s, rows: n)
        let out = s.path("r.jsonl")
        let p = Process()
        p.executableURL = KTVBinary.url
        p.arguments = ["batch", manifest, "-o", out, "--jobs", "2", "--progress", "never", "--summary", s.path("summary.json")]
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Once two takes are written, SIGKILL one worker: whatever take it holds is in flight.
        var killed: Int32?
        let deadline = Date().addingTimeInterval(120)
        while killed == nil, p.isRunning, Date() < deadline {
            let written = (try? String(contentsOfFile: out, encoding: .utf8))?.split(separator: "\n").count ?? 0
            if written >= 2, let worker = children(of: p.processIdentifier).first {
                kill(worker, SIGKILL)
                killed = worker
            } else {
                usleep(20_000)
            }
        }
        p.waitUntilExit()
        try #require(killed != nil, "no worker was found to kill")
        #expect(p.terminationStatus == 0)
        let lines = try results(out)
        let ids = lines.compactMap { $0["id"] as? String }
        #expect(ids.count == n && Set(ids).count == n, "\(ids)")
        #expect(lines.allSatisfy { $0["status"] as? String == "ok" }, "\(lines.filter { $0["status"] as? String != "ok" })")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("summary.json")))) as? [String: Any])
        #expect(summary["worker_restarts"] as? Int == 1)
        #expect(summary["scored"] as? Int == n)
    }

    @Test func aRowThatCrashesTwoWorkersIsWrittenAsACrashAndTheRestAreScored() throws {
        let s = try Scratch()
        let manifest = try pitchBatch(s, rows: 8)
        let out = s.path("r.jsonl")
        let crash = try runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                   ["KTV_BATCH_CRASH_ID=t3", KTVBinary.url.path, "batch", manifest, "-o", out, "--jobs", "2", "--progress", "never"])
        #expect(crash.status == 1, "\(crash.stderr)")
        #expect(crash.stderr.contains("7 scored, 1 failed of 8 rows") && crash.stderr.contains("2 worker(s) restarted after a crash"), "\(crash.stderr)")
        let lines = try results(out)
        #expect(lines.count == 8)
        let t3 = try #require(lines.first { $0["id"] as? String == "t3" })
        #expect(t3["status"] as? String == "error" && t3["reason"] as? String == "crash")
        let message = try #require(t3["error"] as? String)
        #expect(message.hasPrefix("\(manifest): line 5: scoring this take ended the worker twice; the second time it was killed by signal "), "\(message)")
        #expect(message.contains("Fatal error: KTV_BATCH_CRASH_ID=t3: this worker traps on purpose"), "\(message)")
        #expect(!message.contains("stack trace"))
        #expect(lines.filter { $0["status"] as? String == "ok" }.count == 7)
        // Resuming ends at once: the crashed row is not given a third worker...
        let resumed = try runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                     ["KTV_BATCH_CRASH_ID=t3", KTVBinary.url.path, "batch", manifest, "-o", out, "--resume", "--progress", "never"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("0 scored, 0 failed, 8 already done of 8 rows"), "\(resumed.stderr)")
        #expect(try results(out).count == 8)
        // ...unless asked (the failpoint is off now, so it is scored).
        let retried = try ktv(["batch", manifest, "-o", out, "--resume", "--retry-crashed", "--progress", "never"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(try results(out).last?["id"] as? String == "t3" && (try results(out).last?["status"] as? String) == "ok")
    }

    @Test func resultsIntoTheManifestAndOutOfRangeFlagsAreUsageErrors() throws {
        let s = try Scratch()
        try s.write("ref.json", "[{\"start_ms\": 100, \"duration_ms\": 300, \"midi\": 60}]")
        try s.write("take.csv", "time_s,f0_hz\n0.1,261.63\n")
        let text = "id,take,reference\nt0,take.csv,ref.json\n"
        let manifest = try s.write("m.csv", text)
        let linked = s.path("link.csv")
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: manifest)
        for o in [manifest, linked] {
            let r = try ktv(["batch", manifest, "-o", o, "--resume"])
            #expect(r.status == 64 && r.stderr.contains("is the manifest itself"), "\(r.stderr)")
        }
        #expect(try String(contentsOfFile: manifest, encoding: .utf8) == text)
        for (flag, value, allowed) in [("--latency-ms", "99999", "−10000…10000 ms"), ("--pitch-interval-ms", "0", "1…1000 ms")] {
            let r = try ktv(["batch", manifest, "-o", s.path("r.jsonl"), flag, value])
            #expect(r.status == 64, "\(flag): \(r.stderr)")
            #expect(r.stderr.contains("\(flag) = ") && r.stderr.contains(allowed), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: s.path("r.jsonl")))
        }
    }
}

/// A take that hangs its worker (the `KTV_BATCH_HANG_ID` failpoint) does not hang the batch.
@Suite struct BatchTimeoutCLITests {
    @Test func aHungWorkerIsKilledAtTheTimeoutAndTheBatchEnds() throws {
        let s = try Scratch()
        let manifest = try pitchBatch(s, rows: 4)
        let out = s.path("r.jsonl")
        let start = Date()
        let r = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"),
                               ["120", "/usr/bin/env", "KTV_BATCH_HANG_ID=t1", KTVBinary.url.path, "batch", manifest, "-o", out,
                                "--take-timeout-seconds", "2", "--jobs", "2", "--progress", "never"])
        #expect(r.status == 1, "exit \(r.status) (124: the batch hung): \(r.stderr)")
        #expect(Date().timeIntervalSince(start) < 60)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        let t1 = lines.first { $0.contains("\"id\":\"t1\"") } ?? ""
        #expect(t1.contains("\"reason\":\"crash\"") && t1.contains("given no result in 2 s, it was killed"), "\(t1)")
        #expect(lines.filter { $0.contains("\"status\":\"ok\"") }.count == 3)
        let bad = try ktv(["batch", manifest, "-o", s.path("r2.jsonl"), "--take-timeout-seconds", "0"])
        #expect(bad.status == 64 && bad.stderr.contains("--take-timeout-seconds"), "\(bad.stderr)")
    }
}
