import Foundation
import KTVCore
import KTVSync

/// `ktv replay` on a simulated 3-hour room with four devices (about a million events), timed as a
/// whole process the way users run it. The log is generated in-process from the `long` scenario.
func benchReplay(_ args: [String]) {
    let ktv = option("--ktv", in: args) ?? ".build/release/ktv"
    let hours = Double(option("--hours", in: args) ?? "3") ?? 3
    guard FileManager.default.isExecutableFile(atPath: ktv) else { fail("no ktv binary at \(ktv); run `swift build -c release` first") }
    let scratch = BenchDirectory("replay")
    defer { scratch.remove() }
    let dir = scratch.path
    let logPath = dir + "/room.jsonl"
    let genStart = now()
    let (events, megabytes) = writeRoomLog(hours: hours, to: logPath)
    print(String(format: "generated a %.1f-hour room (4 devices, ZEGO rules): %d events, %.0f MB, in %.1f s", hours, events, megabytes, now() - genStart))

    var best = (seconds: Double.infinity, status: Int32(0), peakMB: 0.0)
    for _ in 0..<3 {
        let run = spawnMeasured(ktv, ["replay", logPath, "--format", "json", "-o", dir + "/report.json"])
        if run.status != 0 { fail("ktv replay exited \(run.status); the generated room should have every verdict ok") }
        if run.seconds < best.seconds { best = run }
    }
    print(String(format: "ktv replay: %d events in %.2f s (best of 3) = %.0f events/s, peak RSS %.0f MB",
                 events, best.seconds, Double(events) / best.seconds, best.peakMB))
    // The room carries its truth: show that replay still reproduces it at this size.
    if let data = FileManager.default.contents(atPath: dir + "/report.json"),
       let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
       let truth = report["truth_check"] as? [String: Any],
       let decisions = truth["decisions"] as? [String: Any],
       let pairs = truth["pairs"] as? [[String: Any]] {
        let worst = pairs.compactMap { $0["max_difference_ms"] as? Double }.max() ?? .nan
        print(String(format: "truth: %d of %d decisions reproduced; drift statistics within %.2f ms of the simulator's",
                     decisions["reproduced"] as? Int ?? -1, decisions["in_truth"] as? Int ?? -1, worst))
    }
    let target = 10.0 * hours / 3
    print(String(format: "target: under %.0f s -> %@", target, best.seconds < target ? "PASS" : "FAIL"))
}

/// A simulated room of `hours` (four devices, ZEGO rules, the `long` scenario) written as a progress
/// log; its events and megabytes. In a function of its own so the log's memory is freed before ktv
/// is measured.
func writeRoomLog(hours: Double, to logPath: String) -> (events: Int, megabytes: Double) {
    var s = Scenario.builtIn("long")!
    s.roomMs = Int(hours * 3_600_000)
    s.songMs = s.roomMs + 60_000
    do {
        let room = try RoomSimulator.run(s)
        try FileIO.writeAtomically(room.log, to: logPath)
        return (room.events, Double(room.log.count) / 1_048_576)
    } catch { fail("\(error)") }
}
