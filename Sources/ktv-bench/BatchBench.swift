import Foundation
import KTVCore
import KTVReport
import KTVScore

// `ktv-bench batch`: `ktv batch` over 200 rows of 30-second audio takes with their accompaniment
// (8 distinct recordings, cycled), once with --jobs 1 and once with --jobs 2, in the same run, each a
// whole process measured for wall time and peak memory (VmHWM). Targets (issue 12): speed-up of
// --jobs 2 over --jobs 1 ≥ 1.8 on a 2-core machine, ≥ 600 takes per minute with --jobs 2, and
// peak memory with --jobs 2 under 300 MB. Then (issue 21) --jobs 2 again with --html-dir: the
// pages may add under 10 % to the wall time; and 1,000 take pages written in this process from one
// scored take, timed alone.

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
    // The same run writing every take's page.
    let pagesDir = dir + "/pages", results = dir + "/results-pages.jsonl"
    let paged = spawnMeasured(ktvPath, ["batch", manifestPath, "-o", results, "--jobs", "2", "--progress", "never", "--html-dir", pagesDir], quiet: true)
    guard paged.status == 0 else { fail("ktv batch --html-dir exited \(paged.status)") }
    let pages = (try? FileManager.default.contentsOfDirectory(atPath: pagesDir)) ?? []
    let pageBytes = pages.compactMap { try? FileManager.default.attributesOfItem(atPath: pagesDir + "/" + $0)[.size] as? Int }.reduce(0, +)
    let withoutS = Double(rows) / (perMinute[2] ?? 1) * 60
    let overhead = paged.seconds / withoutS - 1
    print(String(format: "| 2, --html-dir | %d | %.1f | %.0f | %.0f | %d pages, %.0f KB each |", rows, paged.seconds, Double(rows) / paged.seconds * 60,
                 paged.peakMB, pages.count, Double(pageBytes) / Double(max(1, pages.count)) / 1024))

    // 1,000 pages of one 30 s take, rendered and written atomically, in this process.
    var thousandS = Double.nan
    if let scorer = try? Scorer(configuration: ScoreConfiguration()),
       let reference = try? ReferenceReader.read(path: set.reference),
       let result = try? scorer.score(TakeRequest(take: set.takes[0], accompaniment: set.accompaniment), reference: reference) {
        let writer = TakePageWriter(directory: dir + "/thousand")
        try? FileManager.default.createDirectory(atPath: writer.directory, withIntermediateDirectories: true)
        let start = DispatchTime.now().uptimeNanoseconds
        for k in 0..<1000 { _ = try? writer.write(id: "take-\(k)", takePath: set.takes[0], referencePath: set.reference, result: result) }
        thousandS = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    let speedup = (perMinute[2] ?? 0) / (perMinute[1] ?? 1)
    func verdict(_ ok: Bool) -> String { ok ? "PASS" : "FAIL" }
    print(String(format: "pages: --html-dir adds %.1f %% to the --jobs 2 wall time (target < 10 %%) -> %@; 1,000 take pages written in %.2f s (%.1f ms each, one thread)",
                 overhead * 100, verdict(overhead < 0.10), thousandS, thousandS))
    print(String(format: "speed-up --jobs 2 / --jobs 1: %.2f (target ≥ 1.8) -> %@; --jobs 2: %.0f takes/min (target ≥ 600) -> %@; peak %.0f MB (target < 300) -> %@",
                 speedup, verdict(speedup >= 1.8), perMinute[2] ?? 0, verdict((perMinute[2] ?? 0) >= 600), peak[2] ?? 0, verdict((peak[2] ?? 0) < 300)))
}
