import Foundation
import Testing

/// Ctrl-C on `ktv batch` (issue 23): the first stops starting takes and ends with the summary,
/// "interrupted: N of M done; rerun with --resume", exit 130; the second quits at once. No line is
/// torn either way, and `--resume` then completes the rest with each id once.
@Suite struct BatchInterruptTests {
    /// 24 pitch-track takes that each take 250 ms (the worker's slow failpoint), 2 workers.
    func batch(_ s: Scratch) throws -> String {
        let ref = try s.write("ref.json", "[{\"start_ms\":0,\"duration_ms\":1000,\"midi\":57}]")
        _ = ref
        _ = try s.write("take.csv", "time_s,f0_hz\n" + (0..<100).map { String(format: "%.2f,220\n", Double($0) / 100) }.joined())
        return try s.write("m.csv", "id,take,reference\n" + (1...24).map { "t\($0),take.csv,ref.json\n" }.joined())
    }

    /// Runs the batch, sends SIGINT `signals` times (the first after 1.2 s, the next 0.1 s later), waits.
    func interrupted(_ manifest: String, output: String, signals: Int) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = KTVBinary.url
        p.arguments = ["batch", manifest, "-o", output, "--jobs", "2", "--progress", "always"]
        var env = ProcessInfo.processInfo.environment
        env["KTV_BATCH_SLOW_MS"] = "250"
        p.environment = env
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        Thread.sleep(forTimeInterval: 1.2)
        for k in 0..<signals {
            if k > 0 { Thread.sleep(forTimeInterval: 0.1) }
            kill(p.processIdentifier, SIGINT)
        }
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// Every line of the results file: whole JSON objects, their ids.
    func ids(_ path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"), "a torn last line")
        return try text.split(separator: "\n").map { line in
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(obj["status"] as? String == "ok", "\(line)")
            return try #require(obj["id"] as? String)
        }
    }

    @Test(arguments: [1, 2])
    func interruptThenResume(signals: Int) throws {
        let s = try Scratch()
        let manifest = try batch(s)
        let out = s.path("results.jsonl")
        let r = try interrupted(manifest, output: out, signals: signals)
        #expect(r.status == 130, "\(r.stderr)")
        #expect(r.stderr.contains("interrupted: finishing the takes in flight; press Ctrl-C again to quit at once"), "\(r.stderr)")
        let first = try ids(out)
        #expect(first.count > 0 && first.count < 24, "\(first.count) done")
        if signals == 1 {
            // The summary, then the line saying how to go on; the bar's line was ended first.
            #expect(r.stderr.contains("not run (interrupted)"), "\(r.stderr)")
            #expect(r.stderr.contains("ktv: interrupted: \(first.count) of 24 done; rerun with --resume to continue\n"), "\(r.stderr)")
            #expect(!r.stderr.contains("]" + " ktv: interrupted"), "the message landed on the progress bar's line")
        } else {
            #expect(r.stderr.contains("ktv: interrupted at once; rerun with --resume to continue"), "\(r.stderr)")
        }
        let resumed = try ktv(["batch", manifest, "-o", out, "--resume", "--progress", "never"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let all = try ids(out)
        #expect(all.count == 24 && Set(all).count == 24, "\(all.count) lines, \(Set(all).count) ids")
    }
}
