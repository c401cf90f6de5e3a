import Foundation
import KTVCore

// `ktv-bench compare --base BASE_KTV [--ktv KTV] [--runs N]` (`make bench-compare BASE=<rev>`): every
// `make bench` figure measured for two ktv binaries on the same generated inputs, the two run in
// turn (A B A B …, N times each) so a machine's drift lands on both. Each run is a whole process
// (posix_spawn, then wait4's own accounting of the child: wall, user + system CPU, peak RSS). It
// prints each figure's medians and the median of the pairs' ratios (HEAD / BASE), and flags a ratio
// above 1.05 in time or memory. The inputs are written by a child process of their own
// (`ktv-bench compare-inputs DIR`), so this process stays small: a child's peak RSS cannot read
// below its parent's at the spawn.

/// One whole-process run of a command.
struct ProcessRun {
    var wallS: Double
    var cpuS: Double
    var peakMB: Double
    var status: Int32
}

/// Runs `executable` with `arguments`, standard output to `stdoutPath` (default /dev/null),
/// standard error to /dev/null, and returns the kernel's accounting of it.
func runProcess(_ executable: String, _ arguments: [String], stdoutPath: String = "/dev/null") -> ProcessRun {
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let start = now()
    var pid: pid_t = 0
    guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { fail("cannot run \(executable)") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let wall = now() - start
    let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    let exited = status & 0x7F == 0
    return ProcessRun(wallS: wall, cpuS: cpu, peakMB: Double(usage.ru_maxrss) / 1024, status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
}

/// The inputs of every figure, under one folder, at fixed names: written once by
/// `ktv-bench compare-inputs DIR`, then named by `figures(in:)`.
enum CompareInputs {
    static let lyricFiles = 10_000, batchRows = 40, scoreTakes = 1000

    static func write(_ dir: String, shared: String) {
        func folder(_ name: String) -> String {
            let path = dir + "/" + name
            do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch { fail("\(path): \(error)") }
            return path
        }
        var t = now()
        func done(_ what: String) {
            print(String(format: "  %@ (%.1f s)", what, now() - t))
            t = now()
        }
        writeMixedLyricSet(dir: folder("lyrics-mixed"), count: lyricFiles)
        done("\(lyricFiles) lyric files, every format ktv reads in turn")
        writeKRCSet(dir: folder("lyrics-krc"), count: lyricFiles)
        done("\(lyricFiles) encrypted KRC files")
        if FileManager.default.fileExists(atPath: shared + "/lyrics") {
            let real = copySharedLyricSet(shared: shared, to: folder("lyrics-shared"), count: lyricFiles)
            done("\(real.files) real lyric files (the \(real.distinct) of \(shared)/lyrics in turn)")
        }
        writeBenchTrack(seconds: 600, to: dir + "/track10.wav")
        let long = (0..<6).map { _ in dir + "/track10.wav" }
        _ = runProcess("/usr/bin/sox", long + [dir + "/track60.wav"])
        done("10- and 60-minute dual-mono tracks")
        _ = writeRoomLog(hours: 3, to: dir + "/room.jsonl")
        done("a 3-hour room's progress log")
        let score = folder("score")
        let (reference, takes) = writeScoreTakes(dir: score, count: 50, songS: 180)
        let rows = (0..<scoreTakes).map { "csv-\($0),\(takes[$0 % takes.count]),\(reference)," }
        writeText("id,take,reference,accompaniment\n" + rows.joined(separator: "\n") + "\n", to: score + "/manifest.csv")
        let audio = makeAudioTakes(dir: score, count: 8, seconds: 30)
        let audioRows = (0..<batchRows).map { "take-\($0),\(audio.takes[$0 % audio.takes.count]),\(audio.reference),\(audio.accompaniment)" }
        writeText("id,take,reference,accompaniment\n" + audioRows.joined(separator: "\n") + "\n", to: score + "/audio-manifest.csv")
        _ = writeFreeTimingInputs(dir: score)
        _ = writeReferenceAudioPair(dir: score)
        done("score and batch takes")
        _ = writeSyncInput(minutes: 4, dir: dir)
        done("a 4-minute song to sync")
        writePitchBenchInput(seconds: 600, wav: dir + "/voice10.wav", truth: dir + "/voice10.f0.csv")
        _ = runProcess("/usr/bin/sox", (0..<6).map { _ in dir + "/voice10.wav" } + [dir + "/voice60.wav"])
        done("10- and 60-minute singing")
    }

    static func writeText(_ text: String, to path: String) {
        do { try FileIO.writeAtomically(Array(text.utf8), to: path) } catch { fail("\(error)") }
    }
}

/// One `make bench` figure as `compare` runs it: a ktv command line on the inputs; `memory` when
/// its peak RSS is a figure of its own; `items` for a per-second rate.
struct BenchFigure {
    var name: String
    var arguments: [String]
    var memory = false
    var items: (count: Int, unit: String)? = nil
    /// Exit statuses that mean the work was done (1 and 65: findings on purpose).
    var accepted: Set<Int32> = [0]
}

func compareFigures(_ d: String, scratch: String) -> [BenchFigure] {
    let s = d + "/score"
    return [
        BenchFigure(name: "lyrics validate, 10,000 files of every format", arguments: ["lyrics", "validate", d + "/lyrics-mixed", "--format", "json"],
                    items: (CompareInputs.lyricFiles, "files"), accepted: [0, 1, 65]),
        BenchFigure(name: "lyrics validate, 10,000 encrypted KRC", arguments: ["lyrics", "validate", d + "/lyrics-krc", "--format", "json"],
                    items: (CompareInputs.lyricFiles, "files")),
        BenchFigure(name: "lyrics validate, 10,000 real files (../shared/lyrics in turn)", arguments: ["lyrics", "validate", d + "/lyrics-shared", "--format", "json"],
                    memory: true, items: (CompareInputs.lyricFiles, "files"), accepted: [0, 1, 65]),
        BenchFigure(name: "split, 10-minute track", arguments: ["split", d + "/track10.wav", "--out-dir", scratch + "/split"]),
        BenchFigure(name: "split --vocals, 10-minute track", arguments: ["split", d + "/track10.wav", "--out-dir", scratch + "/splitv", "--vocals"]),
        BenchFigure(name: "split --vocals, 60-minute track", arguments: ["split", d + "/track60.wav", "--out-dir", scratch + "/split60", "--vocals"], memory: true),
        BenchFigure(name: "replay, 3-hour room", arguments: ["replay", d + "/room.jsonl", "--format", "json", "-o", scratch + "/replay.json"], memory: true),
        BenchFigure(name: "batch, 1,000 pitch-track takes, --jobs 1", arguments: ["batch", s + "/manifest.csv", "-o", scratch + "/csv.jsonl", "--jobs", "1", "--progress", "never"],
                    items: (CompareInputs.scoreTakes, "takes")),
        BenchFigure(name: "score --accompaniment, 30 s audio take", arguments: ["score", s + "/take0.wav", "--reference", s + "/reference30.json", "--accompaniment", s + "/accompaniment.wav", "--format", "json"]),
        BenchFigure(name: "score --timing free, 20 s take", arguments: ["score", s + "/free-take.txt", "--reference", s + "/free-ref.txt", "--timing", "free", "--format", "json"]),
        BenchFigure(name: "score --timing free, 10-minute take", arguments: ["score", s + "/free-take600.txt", "--reference", s + "/free-ref600.txt", "--timing", "free", "--format", "json"], memory: true),
        BenchFigure(name: "score --reference-audio, 30 s, --threads 1", arguments: ["score", s + "/singer-take30.wav", "--reference-audio", s + "/singer-ref30.wav", "--threads", "1", "--format", "json"]),
        BenchFigure(name: "--version (a process's start)", arguments: ["--version"], memory: true),
        BenchFigure(name: "batch, \(CompareInputs.batchRows) audio takes, --jobs 1", arguments: ["batch", s + "/audio-manifest.csv", "-o", scratch + "/b1.jsonl", "--jobs", "1", "--progress", "never"],
                    items: (CompareInputs.batchRows, "takes")),
        BenchFigure(name: "batch, \(CompareInputs.batchRows) audio takes, --jobs 2", arguments: ["batch", s + "/audio-manifest.csv", "-o", scratch + "/b2.jsonl", "--jobs", "2", "--progress", "never"],
                    memory: true, items: (CompareInputs.batchRows, "takes")),
        BenchFigure(name: "batch, \(CompareInputs.batchRows) audio takes, --jobs 2 --html-dir", arguments: ["batch", s + "/audio-manifest.csv", "-o", scratch + "/bh.jsonl", "--jobs", "2", "--progress", "never", "--html-dir", scratch + "/pages"],
                    items: (CompareInputs.batchRows, "takes")),
        BenchFigure(name: "lyrics sync, 4-minute song", arguments: ["lyrics", "sync", d + "/song4.krc", "--audio", d + "/song4.wav", "-o", scratch + "/synced.krc"], memory: true, accepted: [0, 1]),
        BenchFigure(name: "pitch, 10-minute singing (2 threads)", arguments: ["pitch", d + "/voice10.wav", "-o", scratch + "/p.csv"], memory: true),
        BenchFigure(name: "pitch --threads 1, 10-minute singing", arguments: ["pitch", d + "/voice10.wav", "--threads", "1", "-o", scratch + "/p1.csv"]),
        BenchFigure(name: "pitch, 60-minute singing", arguments: ["pitch", d + "/voice60.wav", "-o", scratch + "/p60.csv"], memory: true),
    ]
}

func benchCompare(_ args: [String]) {
    guard let base = option("--base", in: args) else { fail("compare needs --base PATH (the ktv binary of the older revision)") }
    let head = option("--ktv", in: args) ?? ".build/release/ktv"
    let runs = max(1, Int(option("--runs", in: args) ?? "5") ?? 5)
    let only = option("--only", in: args)
    let baseName = option("--base-name", in: args) ?? "BASE", headName = option("--head-name", in: args) ?? "HEAD"
    for exe in [base, head] where !FileManager.default.isExecutableFile(atPath: exe) { fail("no ktv binary at \(exe)") }
    let scratch = BenchDirectory("compare")
    defer { scratch.remove() }
    let inputs = scratch.path + "/inputs", out = scratch.path + "/out"
    print("writing the inputs (in a child process, so this one stays small):")
    let shared = option("--shared", in: args) ?? "../shared"
    let made = runProcess(CommandLine.arguments[0], ["compare-inputs", inputs, "--shared", shared], stdoutPath: scratch.path + "/inputs.log")
    if let log = try? String(contentsOfFile: scratch.path + "/inputs.log", encoding: .utf8) { print(log, terminator: "") }
    guard made.status == 0 else { fail("writing the inputs failed (exit \(made.status))") }

    print("\n\(headName) = \(head)\n\(baseName) = \(base)\neach figure: \(baseName) and \(headName) in turn, \(runs) runs each; medians; ratio = median of the pairs' \(headName)/\(baseName)\n")
    print("| figure | \(baseName) wall s | \(headName) wall s | wall ratio | CPU ratio | \(baseName) peak MB | \(headName) peak MB | peak ratio | rate (\(headName)) | |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    var flagged: [String] = []
    let present = { (figure: BenchFigure) in figure.arguments.allSatisfy { !$0.hasPrefix(inputs) || FileManager.default.fileExists(atPath: $0) } }
    for figure in compareFigures(inputs, scratch: out) where present(figure) && (only.map({ figure.name.contains($0) }) ?? true) {
        var a: [ProcessRun] = [], b: [ProcessRun] = []
        var unsupported: String?
        for _ in 0..<runs {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let rb = runProcess(base, figure.arguments)
            if !figure.accepted.contains(rb.status) { unsupported = "\(baseName) exits \(rb.status)"; break }
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let ra = runProcess(head, figure.arguments)
            if !figure.accepted.contains(ra.status) { fail("\(figure.name): \(headName) exits \(ra.status) (ktv \(figure.arguments.joined(separator: " ")))") }
            b.append(rb)
            a.append(ra)
        }
        if let unsupported {
            print("| \(figure.name) | n/a | | | | | | | | \(unsupported): not in that revision |")
            continue
        }
        func median(_ v: [Double]) -> Double { Stats.median(v) ?? .nan }
        let wallRatio = median(zip(a, b).map { $0.wallS / $1.wallS })
        let cpuRatio = median(zip(a, b).map { $0.cpuS / max($1.cpuS, 1e-6) })
        let peakRatio = median(zip(a, b).map { $0.peakMB / $1.peakMB })
        var flags: [String] = []
        if wallRatio > 1.05 { flags.append("SLOWER") }
        if figure.memory && peakRatio > 1.05 { flags.append("MORE MEMORY") }
        if !flags.isEmpty { flagged.append(figure.name) }
        let rate = figure.items.map { String(format: "%.0f %@/s", Double($0.count) / median(a.map(\.wallS)), $0.unit) } ?? ""
        let peak = { (runs: [ProcessRun]) in String(format: "%.0f", median(runs.map(\.peakMB))) }
        print(String(format: "| %@ | %.3f | %.3f | %.3f | %.3f | %@ | %@ | %@ | %@ | %@ |", figure.name, median(b.map(\.wallS)), median(a.map(\.wallS)),
                     wallRatio, cpuRatio, peak(b), peak(a), figure.memory ? String(format: "%.3f", peakRatio) : "", rate, flags.joined(separator: ", ")))
    }
    if flagged.isEmpty {
        print("\nno figure over 1.05 × \(baseName)")
    } else {
        print("\nover 1.05 × \(baseName): \(flagged.joined(separator: "; "))")
        exit(1)
    }
}
