import ArgumentParser
import Foundation
import KTVBatch
import KTVCore
import KTVReport
import KTVScore

/// `ktv batch MANIFEST …` scores a manifest (the default subcommand); `ktv batch report RESULTS`
/// turns a results file into a summary, a CSV and a dashboard.
struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Score the takes a manifest lists, or report on a results file.",
        subcommands: [BatchRunCommand.self, BatchReportCommand.self],
        defaultSubcommand: BatchRunCommand.self)
}

/// `ktv batch MANIFEST`: every take a manifest lists, scored on every core into a JSON Lines file.
struct BatchRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Score the takes a manifest lists: on every core, resumable, and split across machines with --shard.",
        usage: """
        ktv batch <manifest> [-o results.jsonl] [<options>]     (the same as ktv batch run <manifest> …)
          ktv batch report <results> [--html FILE] [--csv FILE]   (summarize a results file: ktv batch report --help)
        """,
        discussion: """
        The manifest is CSV with a header row, or JSON Lines (- for standard input). Columns: id, take, reference (required);
        lyrics, accompaniment, progress_log, device, rules, timing, latency_ms, key_shift, pitch_interval_ms, stream (a row's value
        replaces the flag's). Relative paths are taken from the manifest's folder (the current folder for standard input).
        An unknown column is an error. Each take gives one JSON line: {"id", "line", "status": "ok", "result": <ktv score
        JSON>} or {"id", "line", "status": "error", "reason", "error"}. Exit 1 when any take failed.
        Each worker is a child process tracking audio with one thread unless --threads says otherwise: a take that crashes
        its worker is retried once on a fresh one, then written with reason crash, and the batch goes on.
        """)

    @Argument(help: "The manifest: CSV (header row) or JSON Lines; - for standard input.")
    var manifest: String

    @Option(name: .shortAndLong, help: "The results, one JSON line per take in completion order; - for standard output.")
    var output: String = "-"

    @Option(help: ArgumentHelp(BatchConfiguration.Spec.jobs.help))
    var jobs: Int?

    @Option(help: BatchConfiguration.Spec.referenceCacheSize.optionHelp)
    var referenceCacheSize = BatchConfiguration.Spec.referenceCacheSize.defaultValue

    @Option(name: .customLong("take-timeout-seconds"), help: BatchConfiguration.Spec.takeTimeoutS.optionHelp)
    var takeTimeoutS = BatchConfiguration.Spec.takeTimeoutS.defaultValue

    @Flag(help: "Continue the results file: skip ids it holds with status ok (or reason crash), drop a line an earlier crash cut off, append.")
    var resume = false

    @Flag(help: "With --resume: score again the rows written as reason crash (they ended two workers each).")
    var retryCrashed = false

    /// The worker mode: rows on standard input, results on standard output (`WorkerServer`). Each
    /// worker of a batch is this program started with the batch's own arguments and this flag.
    @Flag(help: .hidden)
    var worker = false

    @Option(help: "Only shard K of N (K/N): the rows whose id's FNV-1a 64-bit hash mod N is K-1 (see the README).")
    var shard: String?

    @Flag(help: "Stop starting takes at the first failure (the takes in flight finish and are written).")
    var failFast = false

    @Option(help: "Progress on standard error: auto (a live bar on a terminal, a line every few seconds otherwise), always (the bar), never.")
    var progress: ProgressMode = .auto

    @Option(help: "Also write the summary as JSON here (atomically).")
    var summary: String?

    @Option(help: "Write each scored take's page here as <id>.html (HTML, as `ktv score --html` writes it; the result records it as page), for `ktv batch report --html` to link to.")
    var htmlDir: String?

    @Option(help: "Rule set for rows without a rules value: ktv, agora or ultrastar.")
    var rules: ScoringRuleSet = .ktv

    @OptionGroup var ruleFlags: RuleFlags

    @Option(help: "Timing for rows without a timing value: locked or free.")
    var timing: TakeRequest.Timing = .locked

    @Option(parsing: .unconditional, help: ArgumentHelp("For rows without a latency_ms value: " + ScoreConfiguration.Spec.latencyMs.help
                                                        + " auto: estimated from each take.", valueName: "ms|auto"))
    var latencyMs: String?

    @Option(help: "For rows without a pitch_interval_ms value: takes given as one Hz value per line, the interval between values, ms.")
    var pitchIntervalMs: Int?

    @OptionGroup var tracker: TrackerOptions

    func validate() throws {
        _ = try configuration()
        if resume && output == "-" { throw ValidationError("--resume continues a results file; give it with -o") }
        if retryCrashed && !resume { throw ValidationError("--retry-crashed goes with --resume") }
        if !worker, output != "-", manifest != "-", sameFile(output, manifest) {
            throw ValidationError("-o \(output) is the manifest itself; write the results to another file")
        }
    }

    /// Whether two paths name one file (same device and inode), links followed.
    func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// Each worker: this program again, with the batch's arguments and `--worker`.
    func launcher() -> WorkerLauncher {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return WorkerLauncher(executable: own, arguments: Array(CommandLine.arguments.dropFirst()) + ["--worker"])
    }

    func configuration() throws -> BatchConfiguration {
        var c = BatchConfiguration()
        if let jobs { c.jobs = jobs }
        c.referenceCacheSize = referenceCacheSize
        c.takeTimeoutS = takeTimeoutS
        if let shard { do { c.shard = try BatchShard(parsing: shard) } catch { throw batchUsage(error) } }
        c.failFast = failFast
        var defaults = RowDefaults()
        defaults.rules = rules
        _ = try ruleFlags.rules(rules)
        defaults.ruleOptions = try ruleFlags.options()
        defaults.timing = timing
        (defaults.latencyMs, defaults.estimateLatency) = try parseLatency(latencyMs)
        defaults.pitchIntervalMs = pitchIntervalMs
        c.defaults = defaults
        var t = try tracker.configuration()
        t.threads = tracker.threads.flatMap { $0 == 0 ? nil : $0 } ?? 1
        c.tracker = t
        c.takeWriter = htmlDir.map { TakePageWriter(directory: $0) }
        do { return try c.validated() } catch { throw batchUsage(error) }
    }

    func run() async throws {
        var config = try configuration()
        if worker {
            do { try WorkerServer.serve(configuration: config) } catch { throw batchFailure(error) }
            return
        }
        config.isolation = .childProcesses(launcher())
        if let htmlDir { try makeFolder(htmlDir) }
        let parsed: Manifest
        do { parsed = try Manifest.read(path: manifest) } catch { throw batchFailure(error) }
        let results: ResultsLog
        do { results = try ResultsLog(path: output, resume: resume, retryCrashed: retryCrashed) } catch { throw batchFailure(error) }
        for w in results.warnings { printError("ktv: warning: \(w)") }
        let display = ProgressDisplay(mode: progress)
        let done: BatchSummary
        do {
            done = try await BatchRunner.run(parsed, configuration: config, results: results) { display.show($0) }
        } catch {
            display.end()
            if case .io(.brokenPipe) = error { throw ExitCode.success }
            throw batchFailure(error)
        }
        display.end()
        printError(done.text().trimmingCharacters(in: .newlines))
        if let summary { try emit(Array((done.json().serialized() + "\n").utf8), to: summary) }
        if done.failed > 0 { throw ExitCode(KTVExitCode.findings) }
    }
}

enum ProgressMode: String, ExpressibleByArgument, CaseIterable { case auto, always, never }

/// Draws the progress on standard error: a bar redrawn in place, or a plain line every few seconds.
final class ProgressDisplay: @unchecked Sendable {
    private let bar: Bool, quiet: Bool
    private var last = 0.0
    private var drawn = false
    private let lock = NSLock()
    static let lineIntervalS = 5.0, barIntervalS = 0.1

    init(mode: ProgressMode) {
        quiet = mode == .never
        bar = mode == .always || (mode == .auto && isatty(2) == 1)
    }

    func show(_ p: BatchProgress) {
        guard !quiet else { return }
        lock.lock()
        defer { lock.unlock() }
        let interval = bar ? Self.barIntervalS : Self.lineIntervalS
        guard p.elapsedS - last >= interval || (bar && p.done == p.total) else { return }
        last = p.elapsedS
        if bar {
            let width = 30
            let filled = p.total > 0 ? min(width, p.done * width / p.total) : width
            let text = "\r\u{1B}[2K[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] " + p.line
            try? FileIO.writeAll(fd: 2, Array(text.utf8), path: "<stderr>")
            drawn = true
        } else {
            printError("ktv batch: " + p.line)
        }
    }

    /// Ends the bar's line.
    func end() {
        lock.lock()
        defer { lock.unlock() }
        if drawn { try? FileIO.writeAll(fd: 2, Array("\n".utf8), path: "<stderr>") }
        drawn = false
    }
}

/// A batch setting out of range: a usage error naming the flag.
func batchUsage(_ error: BatchError) -> Error {
    error.parameterError.map { usageError($0, flags: ["takeTimeoutS": "--take-timeout-seconds"]) } ?? ValidationError("\(error)")
}

/// Exit code and message for a batch that cannot run: a bad manifest 65, files 74, results already there 64.
func batchFailure(_ error: BatchError) -> Error {
    switch error {
    case let .resultsExist(path, bytes):
        printError("ktv: \(path): already holds \(bytes) bytes of results; pass --resume to continue it, or remove it to start over")
        return ExitCode(KTVExitCode.usage)
    case .io:
        printError("ktv: \(error)")
        return ExitCode(KTVExitCode.ioError)
    case .invalidParameter:
        return batchUsage(error)
    case .badManifest, .badResults:
        printError("ktv: \(error)")
        return ExitCode(KTVExitCode.dataError)
    }
}
