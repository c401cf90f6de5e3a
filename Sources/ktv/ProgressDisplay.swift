import ArgumentParser
import Foundation
import KTVBatch
import KTVCore

enum ProgressMode: String, ExpressibleByArgument, CaseIterable { case auto, always, never }

/// Draws the progress on standard error: a bar redrawn in place, or a plain line every few seconds.
final class ProgressDisplay: @unchecked Sendable {
    private let bar: Bool, quiet: Bool
    private var last = 0.0
    private var drawn = false
    private var silenced = false
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
        guard !silenced else { return }
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

    /// Ends the bar's line; with `quiet`, draws nothing more (the run is being interrupted).
    func end(quiet: Bool = false) {
        lock.lock()
        defer { lock.unlock() }
        if drawn { try? FileIO.writeAll(fd: 2, Array("\n".utf8), path: "<stderr>") }
        drawn = false
        if quiet { silenced = true }
    }
}


/// Ctrl-C (SIGINT) or SIGTERM during a batch. The first stops starting takes: the ones in flight
/// finish and are written, the progress line ends, and the run returns with its summary. The
/// second exits at once (130), after the line being written, so no line is torn.
final class BatchInterruption: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ktv.batch.signals")
    private var sources: [DispatchSourceSignal] = []
    private var count = 0
    let stop = BatchStop()

    init(results: ResultsLog, display: ProgressDisplay) {
        let stop = self.stop
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [unowned self] in
                count += 1
                display.end(quiet: true)
                if count == 1 {
                    stop.request()
                    printError("ktv: interrupted: finishing the takes in flight; press Ctrl-C again to quit at once")
                } else {
                    results.closeForExit()
                    printError("ktv: interrupted at once; rerun with --resume to continue")
                    exit(KTVExitCode.interrupted)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// After the run: an interrupted one says how far it got and how to go on, and exits 130.
    func finish(_ done: BatchSummary) throws {
        guard done.interrupted else { return }
        printError("ktv: interrupted: \(done.inShard - done.notRun) of \(done.inShard) done; rerun with --resume to continue")
        throw ExitCode(KTVExitCode.interrupted)
    }
}
