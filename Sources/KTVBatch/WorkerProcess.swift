import Foundation
import KTVCore

// Take isolation. A Swift runtime trap or the kernel's OOM killer ends a whole process, so a batch
// that scores in its own process ends with the first take that trips one, and `--resume` meets the
// same take again. With `WorkerIsolation.childProcesses` each worker is a child process (the same
// program in a worker mode, `WorkerServer.serve`), fed rows and answering with results over pipes,
// one JSON line each; it keeps its `Scorer` (tracker, canceller, FFT plans) and reference cache for
// every row it is given. When a worker dies, its row is retried once on a fresh worker; a row that
// kills two workers is written as `reason: crash` with the signal and the tail of the worker's
// standard error, and the batch goes on.

/// How a batch's workers run: chosen once, by whoever starts the batch.
public enum WorkerIsolation: Sendable {
    /// Every worker is a task in this process (a library's default: a take that traps ends the run).
    case inProcess
    /// Every worker is a child process started by the launcher (what `ktv batch` uses).
    case childProcesses(WorkerLauncher)
}

/// How to start one worker: a program that calls `WorkerServer.serve` with the batch's configuration.
public struct WorkerLauncher: Sendable {
    public var executable: String
    public var arguments: [String]
    /// Added to this process's environment. `SWIFT_BACKTRACE=enable=no` is added unless set (a
    /// backtrace would take seconds and bury the one line that says why the worker died).
    public var environment: [String: String]

    public init(executable: String, arguments: [String], environment: [String: String] = [:]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// This program again (its own executable, links followed), with its own arguments and `extra`.
    public static func thisProgram(adding extra: [String]) -> WorkerLauncher {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return WorkerLauncher(executable: own, arguments: Array(CommandLine.arguments.dropFirst()) + extra)
    }
}

/// A test hook: a worker given the row whose id is the value of this environment variable traps on
/// purpose, as a crash in the scoring code would. Documented for tests; not for production use.
public enum WorkerFailpoint {
    public static let variable = "KTV_BATCH_CRASH_ID"
    /// Likewise: a worker given the row with this id never answers (a hang, for the take timeout).
    public static let hangVariable = "KTV_BATCH_HANG_ID"
    /// Likewise: every take waits this many ms first (so a test can interrupt a run mid-way).
    public static let slowVariable = "KTV_BATCH_SLOW_MS"
}

/// The worker's side of the pipes: a header line naming the manifest (for relative paths and
/// messages), then one row per line in, one result per line out, until standard input ends.
public enum WorkerServer {
    public static func serve(configuration: BatchConfiguration, input: Int32 = 0, output: Int32 = 1) throws(BatchError) {
        let configuration = try configuration.validated()
        var lines = FDLineReader(fd: input)
        guard let first = lines.next(), let header = try? JSONReader.parse(first),
              let name = header["manifest"]?.string, let base = header["base"]?.string else {
            throw .badManifest(path: "<worker input>", line: 1, detail: "expected the worker header {\"manifest\", \"base\"}")
        }
        let manifest = Manifest(name: name, format: .csv, rows: [], baseDirectory: base)
        let cache = ReferenceCache(options: configuration.reference, capacity: configuration.referenceCacheSize)
        let worker = BatchWorker(manifest: manifest, configuration: configuration, cache: cache)
        let crashId = ProcessInfo.processInfo.environment[WorkerFailpoint.variable]
        let hangId = ProcessInfo.processInfo.environment[WorkerFailpoint.hangVariable]
        let slowMs = ProcessInfo.processInfo.environment[WorkerFailpoint.slowVariable].flatMap { UInt32($0) }
        while let line = lines.next() {
            if let slowMs { usleep(min(slowMs, 60_000) * 1000) }
            guard let message = try? JSONReader.parse(line), let row = ManifestRow(message: message) else {
                throw .badManifest(path: "<worker input>", line: nil, detail: "a row message that is not {\"line\", \"values\"}")
            }
            if let crashId, row.id == crashId {
                fatalError("\(WorkerFailpoint.variable)=\(crashId): this worker traps on purpose (a test failpoint)")
            }
            if let hangId, row.id == hangId {
                while true { sleep(3600) }   // the test failpoint: never answers
            }
            var reply: [(String, JSONValue)]
            switch worker.score(row) {
            case let .success((result, score, rules)):
                reply = [("status", .string("ok")), ("result", result), ("score", .double(score)), ("rules", .string(rules))]
            case let .failure(f):
                reply = [("status", .string("error")), ("reason", .string(f.reason.rawValue)), ("error", .string(f.message))]
            }
            reply += [("references_read", .int(cache.loads)), ("peak_rss", .int(ProcessMemory.peakResidentBytes() ?? 0))]
            // Written as it is made: a long song's score card is never whole in memory as text.
            do {
                try JSONValue.object(reply).write(pretty: false) { (piece: [UInt8]) throws(FileIOError) in try FileIO.writeAll(fd: output, piece, path: "<worker output>") }
                try FileIO.writeAll(fd: output, [0x0A], path: "<worker output>")
            } catch {
                return   // the batch went away: nothing left to answer
            }
        }
    }
}

extension ManifestRow {
    /// The row as a worker message: `{"line", "values": {column: value}}`.
    var message: JSONValue {
        .object([("line", .int(line)), ("values", .object(values.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, .string($0.value)) }))])
    }

    init?(message: JSONValue) {
        guard case let .int(line)? = message["line"], case let .object(pairs)? = message["values"] else { return nil }
        var values: [ManifestColumn: String] = [:]
        for (key, value) in pairs {
            guard let column = ManifestColumn(rawValue: key), let text = value.string else { return nil }
            values[column] = text
        }
        self.init(line: line, values: values)
    }
}

/// One worker process, seen from the batch: rows written to its standard input, results read from
/// its standard output, its standard error drained into a bounded tail.
final class ChildWorker {
    /// How a worker ended while it had a row.
    struct Death: Error, CustomStringConvertible {
        var description: String
    }

    private let process = Process()
    private let input: FileHandle
    private var output: FDLineReader
    private let tail = TailBuffer(capacity: 2048)
    private let drained = DispatchSemaphore(value: 0)
    /// The largest peak resident size the worker reported, bytes; and its references read.
    private(set) var peakBytes = 0
    private(set) var referencesRead = 0

    init(_ launcher: WorkerLauncher, manifest: Manifest) throws {
        process.executableURL = URL(fileURLWithPath: launcher.executable)
        process.arguments = launcher.arguments
        var environment = ProcessInfo.processInfo.environment
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
        environment.merge(launcher.environment) { $1 }
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        input = stdin.fileHandleForWriting
        output = FDLineReader(fd: stdout.fileHandleForReading.fileDescriptor, keeping: stdout.fileHandleForReading)
        let errors = stderr.fileHandleForReading, tail = tail, drained = drained
        // Drained all the time, so a worker that writes much never blocks on a full pipe.
        Thread.detachNewThread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(errors.fileDescriptor, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                tail.append(chunk[0..<n])
            }
            drained.signal()
        }
        let header = JSONValue.object([("manifest", .string(manifest.name)), ("base", .string(manifest.baseDirectory))])
        guard send(header) else { throw Death(description: "the worker ended before it was given a row") }
    }

    private func send(_ message: JSONValue) -> Bool {
        let bytes = Array((message.serialized(pretty: false) + "\n").utf8)
        do { try FileIO.writeAll(fd: input.fileDescriptor, bytes, path: "<worker input>") } catch { return false }
        return true
    }

    /// The row's result line, or how the worker died (killed when it gave none within `timeoutS`).
    func score(_ row: ManifestRow, timeoutS: Double) -> Result<JSONValue, Death> {
        guard send(row.message) else { return .failure(ended()) }
        let line: [UInt8]?
        switch output.next(timeoutS: timeoutS) {
        case let .line(l): line = l
        case .end: line = nil
        case .timedOut:
            kill(process.processIdentifier, SIGKILL)
            let death = ended()
            return .failure(Death(description: "given no result in \(Int(timeoutS)) s, it was killed (\(death))"))
        }
        // The score card passes through as its text: the batch writes it into the results, and a
        // long song's card as a tree would take several times the memory of its text.
        guard let line, let reply = try? JSONReader.parse(line, keepingRaw: ["result"]) else { return .failure(ended()) }
        if case let .int(b)? = reply["peak_rss"] { peakBytes = max(peakBytes, b) }
        if case let .int(n)? = reply["references_read"] { referencesRead = n }
        return .success(reply)
    }

    /// Waits for a worker that stopped answering and says how it ended.
    private func ended() -> Death {
        try? input.close()
        process.waitUntilExit()
        drained.wait()
        let how: String
        if process.terminationReason == .uncaughtSignal {
            let number = process.terminationStatus
            how = "killed by signal \(number)\(Self.signalNames[number].map { " (\($0))" } ?? "")"
        } else {
            how = "exited with status \(process.terminationStatus)"
        }
        // The runtime's stack trace after a fatal error says nothing to a reader of results: its message is kept.
        var said = tail.text
        if let trace = said.range(of: "Current stack trace:") { said = String(said[..<trace.lowerBound]) }
        said = String(said.trimmingCharacters(in: .whitespacesAndNewlines).suffix(600))
        return Death(description: how + (said.isEmpty ? "" : "; its standard error ended: \(said)"))
    }

    /// Ends a worker that is done: its input closes, it finishes and exits.
    func finish() {
        try? input.close()
        process.waitUntilExit()
        drained.wait()
    }

    static let signalNames: [Int32: String] = [SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGILL: "SIGILL", SIGABRT: "SIGABRT",
                                               SIGTRAP: "SIGTRAP", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGTERM: "SIGTERM"]
}

/// The last `capacity` bytes written to it, for the tail of a worker's standard error.
final class TailBuffer: @unchecked Sendable {
    private var bytes: [UInt8] = []
    private let capacity: Int
    private let lock = NSLock()

    init(capacity: Int) { self.capacity = capacity }

    func append(_ chunk: ArraySlice<UInt8>) {
        lock.lock()
        defer { lock.unlock() }
        bytes += chunk
        if bytes.count > capacity { bytes.removeFirst(bytes.count - capacity) }
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Lines from a descriptor, read in blocks. `maxLineBytes` bounds a line (a results file's reader
/// sets it; a worker's pipes do not), and `maxBytes` everything read: past either, reading ends as
/// at the end of the input with `overLimit` set, so an endless input (`/dev/zero`, `/dev/urandom`)
/// costs neither unbounded memory nor unbounded time.
struct FDLineReader {
    let fd: Int32
    /// Keeps the descriptor's owner (a `FileHandle`) alive while it is read.
    let owner: AnyObject?
    let maxLineBytes: Int
    let maxBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for a newline resumes: the bytes from `start` up to here hold none (without
    /// it, each block read would scan the whole pending line again: quadratic in a long line).
    private var searched = 0
    private var atEnd = false
    /// Bytes read from the descriptor so far.
    private(set) var bytesRead = 0
    /// Why reading stopped short of the end, when it did: `.line` (a line longer than
    /// `maxLineBytes`) or `.total` (more than `maxBytes` read).
    private(set) var overLimit: Limit?

    enum Limit: Equatable { case line, total }

    init(fd: Int32, keeping owner: AnyObject? = nil, maxLineBytes: Int = Int.max, maxBytes: Int = Int.max) {
        self.fd = fd
        self.owner = owner
        self.maxLineBytes = maxLineBytes
        self.maxBytes = maxBytes
    }

    enum Next { case line([UInt8]), end, timedOut }

    /// Bytes after the last newline once the end is reached: a torn last line when not 0.
    var unterminatedBytes: Int { buffer.count - start }

    /// The next line without its `\n`; nil at the end (a last line without `\n` is dropped: it was torn).
    mutating func next() -> [UInt8]? {
        if case let .line(l) = next(timeoutS: nil) { return l }
        return nil
    }

    /// The next line, the end, or no line within `timeoutS` (nil: wait as long as it takes).
    mutating func next(timeoutS: Double?) -> Next {
        let deadline = timeoutS.map { DispatchTime.now().uptimeNanoseconds + UInt64($0 * 1e9) }
        while true {
            if let nl = buffer[max(start, searched)...].firstIndex(of: 0x0A) {
                if nl - start > 1 << 20 {
                    // A long line (a worker's reply with a long song's score card) is handed over, not
                    // copied, and the reader goes on with a buffer of what follows it, not of its size.
                    var line = buffer
                    buffer = Array(line[(nl + 1)...])
                    line.removeSubrange(nl...)
                    if start > 0 { line.removeSubrange(..<start) }
                    (start, searched) = (0, 0)
                    return .line(line)
                }
                let line = Array(buffer[start..<nl])
                start = nl + 1
                searched = start
                if start > 1 << 16 { buffer.removeFirst(start); start = 0; searched = 0 }
                return .line(line)
            }
            searched = buffer.count
            guard !atEnd else { return .end }
            if buffer.count - start > maxLineBytes || bytesRead > maxBytes {
                overLimit = buffer.count - start > maxLineBytes ? .line : .total
                atEnd = true
                return .end
            }
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                guard now < deadline else { return .timedOut }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let waitMs = Int32(min(Double(Int32.max), Double(deadline - now) / 1e6 + 1))
                let ready = poll(&p, 1, waitMs)
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { continue }   // the deadline is checked above
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { atEnd = true; continue }
            bytesRead += n
            buffer += chunk[0..<n]
        }
    }
}

extension BatchRunner {
    /// The workers as child processes: one thread a worker waiting on its pipes (not the cooperative
    /// pool, whose few threads would leave workers unfed when jobs exceed cores).
    static func runChildren(_ launcher: WorkerLauncher, manifest: Manifest, jobs: Int, timeoutS: Double, state: RunState) async {
        let group = DispatchGroup()
        for _ in 0..<jobs {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var child: ChildWorker?
                while let row = state.next() {
                    let start = DispatchTime.now().uptimeNanoseconds
                    var deaths: [String] = []
                    var outcome: Result<(JSONValue, score: Double, rules: String), BatchFailure>?
                    while outcome == nil {
                        do {
                            let worker = try child ?? ChildWorker(launcher, manifest: manifest)
                            child = worker
                            switch worker.score(row, timeoutS: timeoutS) {
                            case let .success(reply): outcome = Self.outcome(reply, row: row, manifest: manifest)
                            case let .failure(death): throw death
                            }
                        } catch {
                            if let dead = child { state.addWorker(dead) }
                            child = nil
                            state.countRestart()
                            deaths.append("\(error)")
                            // Retried once on a fresh worker; a row that kills two is the row's fault.
                            if deaths.count >= 2 {
                                outcome = .failure(BatchFailure(reason: .crash, message: "\(manifest.name): line \(row.line): "
                                    + "scoring this take ended the worker twice; the second time it was \(deaths[1])"))
                            }
                        }
                    }
                    state.finish(row: row, outcome: outcome ?? .failure(BatchFailure(reason: .crash, message: "no result")),
                                 elapsedMs: Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000))
                }
                if let child {
                    child.finish()
                    state.addWorker(child)
                }
            }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { done.resume() }
        }
    }

    /// A worker's reply as the row's outcome.
    static func outcome(_ reply: JSONValue, row: ManifestRow, manifest: Manifest) -> Result<(JSONValue, score: Double, rules: String), BatchFailure> {
        if reply["status"]?.string == "ok", let result = reply["result"], let score = reply["score"]?.number, let rules = reply["rules"]?.string {
            return .success((result, score, rules))
        }
        let reason = reply["reason"]?.string.flatMap(BatchFailure.Reason.init(rawValue:)) ?? .scoring
        return .failure(BatchFailure(reason: reason, message: reply["error"]?.string ?? "\(manifest.name): line \(row.line): the worker gave no error"))
    }
}
