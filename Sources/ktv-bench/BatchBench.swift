import Foundation
import KTVCore

// `ktv-bench batch`: `ktv batch` over 200 rows of 30-second audio takes with their accompaniment
// (8 distinct recordings, cycled), once with --jobs 1 and once with --jobs 2, in the same run, each a
// whole process measured for wall time and peak memory (VmHWM). Targets (issue 12): speed-up of
// --jobs 2 over --jobs 1 ≥ 1.8 on a 2-core machine, ≥ 600 takes per minute with --jobs 2, and
// peak memory with --jobs 2 under 300 MB.

func benchBatch(_ args: [String]) {
    let rows = Int(option("--takes", in: args) ?? "200") ?? 200
    let distinct = Int(option("--distinct", in: args) ?? "8") ?? 8
    let ktvPath = option("--ktv", in: args) ?? ".build/release/ktv"
    let scratch = BenchDirectory("batch")
    defer { scratch.remove() }
    let dir = scratch.path

    let set = makeAudioTakes(dir: dir, count: distinct, seconds: 30)
    let manifest = "id,take,reference,accompaniment\n" + (0..<rows).map { k in
        "take-\(k),\(set.takes[k % set.takes.count]),\(set.reference),\(set.accompaniment)"
    }.joined(separator: "\n") + "\n"
    let manifestPath = dir + "/manifest.csv"
    do { try FileIO.writeAtomically(Array(manifest.utf8), to: manifestPath) } catch { fail("\(error)") }

    print("| --jobs | takes | wall s | takes/min | peak MB | mean score |")
    print("|---|---|---|---|---|---|")
    var perMinute: [Int: Double] = [:], peak: [Int: Double] = [:]
    for jobs in [1, 2] {
        let results = dir + "/results-\(jobs).jsonl", summaryPath = dir + "/summary-\(jobs).json"
        let run = spawnMeasured(ktvPath, ["batch", manifestPath, "-o", results, "--jobs", "\(jobs)", "--progress", "never", "--summary", summaryPath], quiet: true)
        guard run.status == 0, let bytes = try? FileIO.read(summaryPath), let summary = try? JSONReader.parse(bytes),
              summary["scored"]?.number == Double(rows) else { fail("ktv batch --jobs \(jobs) exited \(run.status) or did not score every take") }
        perMinute[jobs] = Double(rows) / run.seconds * 60
        peak[jobs] = run.peakMB
        let mean = summary["scores"]?["ktv"]?["mean"]?.number ?? .nan
        print(String(format: "| %d | %d | %.1f | %.0f | %.0f | %.1f |", jobs, rows, run.seconds, perMinute[jobs] ?? 0, run.peakMB, mean))
        try? FileManager.default.removeItem(atPath: results)
    }
    let speedup = (perMinute[2] ?? 0) / (perMinute[1] ?? 1)
    func verdict(_ ok: Bool) -> String { ok ? "PASS" : "FAIL" }
    print(String(format: "speed-up --jobs 2 / --jobs 1: %.2f (target ≥ 1.8) -> %@; --jobs 2: %.0f takes/min (target ≥ 600) -> %@; peak %.0f MB (target < 300) -> %@",
                 speedup, verdict(speedup >= 1.8), perMinute[2] ?? 0, verdict((perMinute[2] ?? 0) >= 600), peak[2] ?? 0, verdict((peak[2] ?? 0) < 300)))
}
