import Foundation
import KTVCore
import KTVPitch
import KTVScore

// Scoring a manifest of takes on every core. `jobs` workers run as child tasks of one task group;
// each owns a `Scorer` (its pitch tracker and FFT plans made once, for every take it scores) and
// pulls the next row when it is done with one, so at most `jobs` takes are in memory. References
// come from one shared cache. Each finished take is one line appended to the results at once, in
// completion order; a take that fails is an error line and the batch goes on.

/// What a row leaves out, taken from the command line.
public struct RowDefaults: Sendable {
    public var rules: ScoringRuleSet = .ktv
    /// The rule sets' settings; a row's `key_shift` replaces `keyShift`.
    public var ruleOptions = ScoringRuleSet.Options()
    public var timing: TakeRequest.Timing = .locked
    public var latencyMs: Double?
    /// Rows without a latency estimate it from the take (`latency_ms` `auto` does it for one row).
    public var estimateLatency = false
    public var pitchIntervalMs: Int?

    public init(rules: ScoringRuleSet = .ktv, ruleOptions: ScoringRuleSet.Options = ScoringRuleSet.Options(), timing: TakeRequest.Timing = .locked,
                latencyMs: Double? = nil, estimateLatency: Bool = false, pitchIntervalMs: Int? = nil) {
        self.rules = rules
        self.ruleOptions = ruleOptions
        self.timing = timing
        self.latencyMs = latencyMs
        self.estimateLatency = estimateLatency
        self.pitchIntervalMs = pitchIntervalMs
    }
}

/// Something written for each take a worker scores, beside its result line (the `ktv` executable
/// gives one that writes the take's HTML page). It runs in the worker, and its time counts in the
/// take's `elapsed_ms`. A failure is recorded in the result as `page_error`; the take stays scored.
public protocol TakeArtifactWriter: Sendable {
    /// Writes it and returns its path, which the result records as `page`.
    func write(id: String, takePath: String, referencePath: String, result: Scorer.Result) throws -> String
}

/// A batch's settings, checked once.
public struct BatchConfiguration: Sendable {
    public enum Spec {
        public static let jobs = Parameter<Int>("jobs", unit: "takes", range: 1...1024, default: 1, defaultText: "the number of cores",
            "Takes scored at once, each worker with its own pitch tracker; at most this many takes are in memory.")
        public static let referenceCacheSize = Parameter<Int>("referenceCacheSize", unit: "references", range: 1...100_000, default: 256,
            "Reference melodies kept in memory, shared by the workers; the least recently used is dropped first.")
        public static let takeTimeoutS = Parameter<Double>("takeTimeoutS", unit: "s", range: 1...86_400, default: 900,
            "A worker process that gives no result for a take in this long is killed, and the take retried once, then written as a crash (child-process workers only).")
        public static let all: [ParameterInfo] = [jobs.info, referenceCacheSize.info, takeTimeoutS.info]
    }

    public var jobs = ProcessInfo.processInfo.activeProcessorCount
    public var referenceCacheSize = Spec.referenceCacheSize.defaultValue
    /// How long a worker process may take over one take before it is killed.
    public var takeTimeoutS = Spec.takeTimeoutS.defaultValue
    /// Stop starting takes after the first failure (those in flight finish and are written).
    public var failFast = false
    /// Only the rows of this shard.
    public var shard: BatchShard?
    public var defaults = RowDefaults()
    /// One tracker per worker; one thread each (the workers are the parallelism).
    public var tracker: PitchConfiguration = {
        var c = PitchConfiguration()
        c.threads = 1
        return c
    }()
    public var reference = ReferenceOptions()
    /// Where the workers run: in this process, or as child processes a crash cannot take down.
    public var isolation = WorkerIsolation.inProcess
    /// Written for each take scored, in the worker, after scoring (`ktv batch --html-dir`: its page).
    public var takeWriter: (any TakeArtifactWriter)?

    public init() {}

    public func validated() throws(BatchError) -> BatchConfiguration {
        do {
            try Spec.jobs.check(jobs)
            try Spec.referenceCacheSize.check(referenceCacheSize)
            try Spec.takeTimeoutS.check(takeTimeoutS)
        } catch { throw BatchError(error) }
        do { _ = try tracker.validated() } catch { throw .invalidParameter(name: "tracker", value: "\(error)", allowed: "a valid pitch configuration") }
        // The defaults a row takes are checked here, once, as settings (a row's own values are its own).
        do {
            if let l = defaults.latencyMs { try ScoreConfiguration.Spec.latencyMs.check(l) }
            if let p = defaults.pitchIntervalMs { try TakeReader.Spec.pitchIntervalMs.check(p) }
        } catch { throw BatchError(error) }
        return self
    }
}

/// How far a batch is: after every take.
public struct BatchProgress: Sendable, Equatable {
    /// Takes finished in this run (scored or failed), of `total` to do.
    public var done: Int
    public var total: Int
    public var failed: Int
    public var elapsedS: Double

    public var takesPerMinute: Double { elapsedS > 0 ? Double(done) / elapsedS * 60 : 0 }
    /// Seconds left at the rate so far; nil before the first take.
    public var etaS: Double? { done > 0 && elapsedS > 0 ? Double(total - done) / (Double(done) / elapsedS) : nil }

    /// `1204/10000 takes · 612/min · ETA 14m22s · 3 failed`
    public var line: String {
        var s = "\(done)/\(total) takes · \(Int(takesPerMinute.rounded()))/min"
        if let eta = etaS, done < total { s += " · ETA \(Self.duration(eta))" }
        return s + " · \(failed) failed"
    }

    /// `14m22s`, `1h03m`, `9s`.
    public static func duration(_ s: Double) -> String {
        let t = Int(s.rounded())
        if t >= 3600 { return String(format: "%dh%02dm", t / 3600, t / 60 % 60) }
        if t >= 60 { return String(format: "%dm%02ds", t / 60, t % 60) }
        return "\(t)s"
    }
}

/// A request to stop a running batch, safe to make from any thread (a Ctrl-C handler's): no take is
/// started after it; the takes in flight finish and are written, and the summary says the run was
/// interrupted.
public final class BatchStop: @unchecked Sendable {
    private let lock = NSLock()
    private var requested = false

    public init() {}

    public func request() {
        lock.lock()
        requested = true
        lock.unlock()
    }

    public var isRequested: Bool {
        lock.lock()
        defer { lock.unlock() }
        return requested
    }
}

/// Runs a manifest.
public enum BatchRunner {
    /// Scores every row of `manifest` in `configuration.shard` whose id is not in
    /// `results.completedIds`, appending one line per row to `results`. Throws only when the batch
    /// cannot go on (the results cannot be written, a setting out of range); a take that fails is a line.
    /// `stop` ends it early (the summary's `interrupted` is then set).
    public static func run(_ manifest: Manifest, configuration: BatchConfiguration, results: ResultsLog, stop: BatchStop = BatchStop(),
                           progress: @escaping @Sendable (BatchProgress) -> Void = { _ in }) async throws(BatchError) -> BatchSummary {
        // Checks the tracker's settings too: each worker's `Scorer` checks nothing more.
        let configuration = try configuration.validated()
        var summary = BatchSummary(manifestRows: manifest.rows.count, shard: configuration.shard, jobs: configuration.jobs)
        var todo: [ManifestRow] = []
        var duplicates: [(ManifestRow, Int)] = []
        var firstLine: [String: Int] = [:]
        for row in manifest.rows where configuration.shard?.contains(id: row.id) ?? true {
            summary.inShard += 1
            if let id = row.id {
                if let first = firstLine[id] { duplicates.append((row, first)); continue }
                firstLine[id] = row.line
                if results.completedIds.contains(id) { summary.alreadyDone += 1; continue }
            }
            todo.append(row)
        }
        let state = RunState(total: todo.count + duplicates.count, failFast: configuration.failFast,
                             results: results, stop: stop, progress: progress)
        for (row, first) in duplicates {
            state.finish(row: row, outcome: .failure(BatchFailure(reason: .row, message: "\(manifest.name): line \(row.line): id \(quoted(row.id ?? "")) repeats line \(first)'s; ids must be unique")), elapsedMs: 0)
        }
        state.queue = todo
        let jobs = min(configuration.jobs, todo.count)
        switch configuration.isolation {
        case .inProcess:
            let cache = ReferenceCache(options: configuration.reference, capacity: configuration.referenceCacheSize)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<jobs {
                    group.addTask {
                        let worker = BatchWorker(manifest: manifest, configuration: configuration, cache: cache)
                        while let row = state.next() {
                            let start = DispatchTime.now().uptimeNanoseconds
                            let outcome = worker.score(row)
                            state.finish(row: row, outcome: outcome, elapsedMs: Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000))
                        }
                    }
                }
            }
            summary.referencesRead = cache.loads
        case let .childProcesses(launcher):
            await runChildren(launcher, manifest: manifest, jobs: jobs, timeoutS: configuration.takeTimeoutS, state: state)
        }
        results.sync()
        if let error = state.writeError { throw .io(error) }
        state.fill(&summary)
        return summary
    }
}

/// The shared state of a run: the queue, the counts, the results (every access under one lock).
final class RunState: @unchecked Sendable {
    var queue: [ManifestRow] = []
    private var nextIndex = 0
    private var stopped = false
    private(set) var writeError: FileIOError?
    private var done = 0, failed = 0, scored = 0
    private var failures: [BatchFailure.Reason: Int] = [:]
    private var scores: [String: [Double]] = [:]
    private let total: Int
    private let failFast: Bool
    private let results: ResultsLog
    private let stop: BatchStop
    private let progress: @Sendable (BatchProgress) -> Void
    private let started = DispatchTime.now().uptimeNanoseconds
    private let lock = NSLock()
    /// Child workers: how many died and were replaced, their peaks and references read, summed.
    private var restarts = 0, workerPeakBytes = 0, workerReferences = 0

    init(total: Int, failFast: Bool, results: ResultsLog, stop: BatchStop, progress: @escaping @Sendable (BatchProgress) -> Void) {
        self.stop = stop
        self.total = total
        self.failFast = failFast
        self.results = results
        self.progress = progress
    }

    var elapsedS: Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }

    /// The next row to score, or nil when there is none or the run stopped.
    func next() -> ManifestRow? {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, !stop.isRequested, nextIndex < queue.count else { return nil }
        nextIndex += 1
        return queue[nextIndex - 1]
    }

    func finish(row: ManifestRow, outcome: Result<(JSONValue, score: Double, rules: String), BatchFailure>, elapsedMs: Int) {
        var line: [(String, JSONValue)] = [("id", row.id.map(JSONValue.string) ?? .null), ("line", .int(row.line))]
        switch outcome {
        case let .success((result, _, _)):
            line += [("status", .string("ok")), ("elapsed_ms", .int(elapsedMs)), ("result", result)]
        case let .failure(f):
            line += [("status", .string("error")), ("reason", .string(f.reason.rawValue)), ("error", .string(f.message))]
        }
        lock.lock()
        defer { lock.unlock() }
        guard writeError == nil else { return }
        do { try results.append(.object(line)) } catch {
            writeError = error
            stopped = true
            return
        }
        done += 1
        switch outcome {
        case let .success((_, score, rules)):
            scored += 1
            scores[rules, default: []].append(score)
        case let .failure(f):
            failed += 1
            failures[f.reason, default: 0] += 1
            if failFast { stopped = true }
        }
        progress(BatchProgress(done: done, total: total, failed: failed, elapsedS: elapsedS))
    }

    func countRestart() {
        lock.lock()
        defer { lock.unlock() }
        restarts += 1
    }

    /// A child worker that is done (finished or dead): what it reported.
    func addWorker(_ worker: ChildWorker) {
        lock.lock()
        defer { lock.unlock() }
        workerPeakBytes += worker.peakBytes
        workerReferences += worker.referencesRead
    }

    func fill(_ summary: inout BatchSummary) {
        lock.lock()
        defer { lock.unlock() }
        summary.workerRestarts = restarts
        summary.referencesRead += workerReferences
        summary.scored = scored
        summary.failed = failed
        summary.notRun = total - done
        summary.stoppedEarly = stopped && writeError == nil && total > done
        summary.interrupted = stop.isRequested && total > done
        summary.failuresByReason = failures
        summary.scores = scores.mapValues { ScoreDistribution($0) }
        summary.wallS = elapsedS
        // With child workers: this process's peak plus each worker's (an upper bound on the batch's
        // peak, since the workers' peaks need not coincide).
        summary.peakMemoryMB = ProcessMemory.peakResidentBytes().map { Double($0 + workerPeakBytes) / 1_048_576 }
    }
}

/// One worker: a scorer (its tracker made once) and the row → request translation.
struct BatchWorker {
    let manifest: Manifest
    let configuration: BatchConfiguration
    let cache: ReferenceCache
    let scorer: Scorer?

    init(manifest: Manifest, configuration: BatchConfiguration, cache: ReferenceCache) {
        self.manifest = manifest
        self.configuration = configuration
        self.cache = cache
        scorer = try? Scorer(configuration: ScoreConfiguration(tracker: configuration.tracker))
    }

    func score(_ row: ManifestRow) -> Result<(JSONValue, score: Double, rules: String), BatchFailure> {
        do {
            guard let scorer else { throw BatchFailure(reason: .scoring, message: "the scorer could not be made") }
            let (request, referencePath, lyricsPath) = try self.request(row)
            let reference = try cache.melody(path: referencePath, lyricsPath: lyricsPath) { path, lyrics, options in
                try ReferenceReader.read(path: path, lyricsPath: lyrics, options: options)
            }.get()
            let result = try scorer.score(request, reference: reference)
            var json = ScoreReport.json(result.card, take: row[.take] ?? "", reference: row[.reference] ?? "")
            if case var .object(members) = json {
                if !result.truncations.isEmpty { members.append(("warnings", .array(result.truncations.map { .string("\($0)") }))) }
                if let writer = configuration.takeWriter, let id = row.id {
                    do { members.append(("page", .string(try writer.write(id: id, takePath: request.take, referencePath: referencePath, result: result)))) } catch {
                        members.append(("page_error", .string("\(error)")))
                    }
                }
                json = .object(members)
            }
            return .success((json, result.card.score, result.card.rules))
        } catch let f as BatchFailure {
            return .failure(f)
        } catch {
            return .failure(BatchFailure(error, stage: .take))
        }
    }

    /// The row as a request: its values checked, defaults filled in, paths resolved and present.
    func request(_ row: ManifestRow) throws(BatchFailure) -> (TakeRequest, reference: String, lyrics: String?) {
        func bad(_ column: ManifestColumn, _ detail: String) -> BatchFailure {
            BatchFailure(reason: .row, message: "\(manifest.name): line \(row.line): \(column.rawValue): \(detail)")
        }
        if row.id == nil { throw bad(.id, "missing; every row needs an id (results and --resume go by it)") }
        guard let take = row[.take] else { throw bad(.take, "missing; give the take's path") }
        guard let reference = row[.reference] else { throw bad(.reference, "missing; give the reference melody's path") }
        let defaults = configuration.defaults
        var set = defaults.rules
        if let r = row[.rules] {
            guard let s = ScoringRuleSet(rawValue: r) else { throw bad(.rules, "\(quoted(r)) is not one of \(ScoringRuleSet.allCases.map(\.rawValue).joined(separator: ", "))") }
            set = s
        }
        var timing = defaults.timing
        if let t = row[.timing] {
            guard let v = TakeRequest.Timing(rawValue: t) else { throw bad(.timing, "\(quoted(t)) is not locked or free") }
            timing = v
        }
        var latencyMs = defaults.latencyMs, estimateLatency = defaults.estimateLatency
        if let l = row[.latencyMs] {
            guard let setting = LatencySetting(parsing: l) else { throw bad(.latencyMs, "\(quoted(l)) \(LatencySetting.expected)") }
            (latencyMs, estimateLatency) = (setting.ms, setting.estimates)
        }
        var pitchIntervalMs = defaults.pitchIntervalMs
        if let p = row[.pitchIntervalMs] {
            guard let v = Int(p) else { throw bad(.pitchIntervalMs, "\(quoted(p)) is not a whole number of milliseconds") }
            pitchIntervalMs = v
        }
        var stream: Int?
        if let s = row[.stream] {
            guard let v = Int(s) else { throw bad(.stream, "\(quoted(s)) is not a whole number (the audio stream, from 1)") }
            stream = v
        }
        var options = defaults.ruleOptions
        if let k = row[.keyShift] {
            do { options.keyShift = try KeyShift(parsing: k) } catch { throw bad(.keyShift, "\(quoted(k)): \(error.allowed)") }
        }
        let rules: any ScoringRules
        do { rules = try set.rules(options) } catch { throw bad(.rules, "\(error)") }
        for column in ManifestColumn.paths {
            guard let p = row[column] else { continue }
            let resolved = manifest.resolve(p)
            if access(resolved, F_OK) != 0 && errno == ENOENT {
                throw BatchFailure(reason: .missing, message: "\(manifest.name): line \(row.line): \(column.rawValue): \(resolved): no such file")
            }
        }
        if let accompaniment = row[.accompaniment], let why = TakeRequest.accompanimentRefusal(takePath: manifest.resolve(take), name: take) {
            throw bad(.accompaniment, "\(quoted(accompaniment)) \(why)")
        }
        let request = TakeRequest(take: manifest.resolve(take), accompaniment: row[.accompaniment].map(manifest.resolve),
                                  pitchIntervalMs: pitchIntervalMs, timing: timing, latencyMs: latencyMs,
                                  progressLog: row[.progressLog].map(manifest.resolve), device: row[.device], rules: rules, keyShift: options.keyShift,
                                  estimateLatency: estimateLatency, stream: stream)
        do { _ = try request.validated() } catch {
            let names: [String: ManifestColumn] = ["latencyMs": .latencyMs, "pitchIntervalMs": .pitchIntervalMs, "stream": .stream, "progressLog": .progressLog,
                                                   "device": .device, "timing": .timing]
            if let p = error.parameterError, let column = names[p.name] { throw bad(column, "\(p.value); allowed: \(p.allowed)") }
            throw BatchFailure(reason: .row, message: "\(manifest.name): line \(row.line): \(error)")
        }
        return (request, manifest.resolve(reference), row[.lyrics].map(manifest.resolve))
    }
}
