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
        subcommands: [BatchRunCommand.self, BatchReportCommand.self, BatchSyncCommand.self],
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
        The manifest: CSV with a header row, or JSON Lines. Columns: id, take, reference (required); lyrics, accompaniment,
        progress_log, device, rules, timing, latency_ms, key_shift, pitch_interval_ms, stream (each replaces its flag for the row).
        Paths are relative to the manifest's folder; an unknown column is an error. Each take gives one JSON line, ok or error;
        exit 1 when any failed. Workers are child processes (one tracker thread each): a take that crashes its worker is retried
        once, then written with reason crash. Ctrl-C stops starting takes, prints the summary and exits 130 (--resume goes on).
        """)

    @Argument(help: "The manifest: CSV (header row) or JSON Lines; - for standard input.")
    var manifest: String

    @Option(name: .shortAndLong, help: "The results, one JSON line per take in completion order; - for standard output.")
    var output: String = "-"

    @Option(help: BatchConfiguration.Spec.jobs.flagHelp)
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

    @Option(help: "Only shard K of N (K/N): the rows whose id's FNV-1a 64-bit hash mod N is K-1 (docs/batch.md).")
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
    }

    func configuration() throws -> BatchConfiguration {
        var c = BatchConfiguration()
        if let jobs { c.jobs = jobs }
        c.referenceCacheSize = referenceCacheSize
        c.takeTimeoutS = takeTimeoutS
        if let shard { do { c.shard = try BatchShard(parsing: shard) } catch { throw batchUsage(error) } }
        c.failFast = failFast
        _ = try ruleFlags.rules(rules)
        let latency = try parseLatency(latencyMs)
        c.defaults = RowDefaults(rules: rules, ruleOptions: try ruleFlags.options(), timing: timing, latencyMs: latency?.ms,
                                 estimateLatency: latency?.estimates ?? false, pitchIntervalMs: pitchIntervalMs)
        var t = try tracker.configuration()
        t.threads = tracker.threads.flatMap { $0 == 0 ? nil : $0 } ?? 1
        c.tracker = t
        c.takeWriter = htmlDir.map { TakePageWriter(directory: $0) }
        do { return try c.validated() } catch { throw batchUsage(error) }
    }

    func run() async throws {
        var config = try configuration()
        if worker {
            // A terminal's Ctrl-C reaches the whole process group: the worker finishes its take and
            // leaves when the batch closes its input.
            signal(SIGINT, SIG_IGN)
            do { try WorkerServer.serve(configuration: config) } catch { throw batchFailure(error) }
            return
        }
        // Each worker: this program again, with the batch's arguments and --worker.
        config.isolation = .childProcesses(.thisProgram(adding: ["--worker"]))
        if let htmlDir { try makeFolder(htmlDir) }
        let job: BatchJob
        do {
            job = try BatchJob(manifestPath: manifest, outputPath: output, resume: resume, retryCrashed: retryCrashed, alsoWriting: summary.map { [$0] } ?? [])
        } catch { throw batchFailure(error) }
        for w in job.warnings { printError("ktv: warning: \(w)") }
        let display = ProgressDisplay(mode: progress)
        let interruption = BatchInterruption(results: job.results, display: display)
        let done: BatchSummary
        do {
            done = try await job.run(configuration: config, stop: interruption.stop) { display.show($0) }
        } catch {
            display.end()
            if case .io(.brokenPipe) = error { throw ExitCode.success }
            throw batchFailure(error)
        }
        display.end()
        printError(done.text().trimmingCharacters(in: .newlines))
        if let summary { try emit(Array((done.json().serialized() + "\n").utf8), to: summary) }
        try interruption.finish(done)
        if done.failed > 0 { throw ExitCode(KTVExitCode.findings) }
    }
}
