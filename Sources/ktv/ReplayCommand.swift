import ArgumentParser
import KTVCore
import KTVSync

extension ReplayConfiguration.Rules: ExpressibleByArgument {}

/// Exit code for a sync error: bad log, scenario or lyric data 65, unreadable files 74, bad options 64.
func syncFailure(_ error: SyncError) -> Error {
    if case let .invalidParameter(p) = error { return usageError(p) }
    return failure(error)
}

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Recompute chorus sync decisions (ZEGO, Agora, Tencent) from progress logs and judge every seek.",
        discussion: """
        `ktv replay LOG...` reads progress logs (JSON Lines, docs/progress-log.md), recomputes what each chorus
        device should have done, and gives each decision a verdict: ok, missing, unexpected or wrong_target.
        Exit 0 when every verdict is ok, 1 when any is not, 65 on a malformed log, 74 when a file cannot be read.
        `ktv replay simulate` writes the log of a simulated room (with truth events) to try rules and thresholds.
        """,
        subcommands: [Analyze.self, SimulateCommand.self],
        defaultSubcommand: Analyze.self)

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    struct Analyze: ParsableCommand {
        typealias Spec = ReplayConfiguration.Spec

        static let configuration = CommandConfiguration(
            commandName: "analyze",
            abstract: "Replay the progress logs of a chorus session and say where the sync failed.",
            usage: """
            ktv replay <logs> ... [--rules zego|agora|tencent] [<options>]     (the same as ktv replay analyze <logs> …)
              ktv replay simulate --scenario <name> -o <log>   (make a room's log: ktv replay simulate --help)
            """,
            discussion: """
            Several files are read as one room (each device's events are put in order of its own clock).
            --rules auto applies each message's own vendor rules; a named set applies its rules to every
            progress message it can read. Warnings about the log go to standard error.
            """)

        @Argument(help: "Progress logs (`-` for standard input).") var logs: [String]
        @Option(help: "Report format: text or json.") var format: ReportFormat = .text
        @Option(help: "Rule set: auto, zego, agora or tencent.") var rules: ReplayConfiguration.Rules = .auto
        @Option(help: Spec.thresholdMs.flagHelp) var thresholdMs: Int?
        @Flag(help: "ZEGO: also correct a follower that runs ahead (the vendor sample corrects only a late one).") var twoSided = false
        @Option(help: Spec.windowMs.optionHelp) var windowMs = Spec.windowMs.defaultValue
        @Option(help: Spec.toleranceMs.optionHelp) var toleranceMs = Spec.toleranceMs.defaultValue
        @Option(help: "Lyric file: measure how often the audience is shown the wrong line and word.") var lyrics: String?
        @Option(help: "Write the drift plot (SVG) here, atomically.") var svg: String?
        @Option(help: "Write the drift timeline (CSV) here, atomically.") var csv: String?
        @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.") var output: String?

        func configuration() throws -> ReplayConfiguration {
            var c = ReplayConfiguration()
            c.rules = rules
            c.thresholdMs = thresholdMs
            c.twoSided = twoSided
            c.windowMs = windowMs
            c.toleranceMs = toleranceMs
            do { return try c.validated() } catch { throw syncFailure(error) }
        }

        func validate() throws {
            guard !logs.isEmpty else { throw ValidationError("give at least one progress log (or `-` for standard input)") }
            _ = try configuration()
        }

        func run() throws {
            try refuseOutputsOverInputs([("--svg", svg), ("--csv", csv), ("-o", output)],
                                        inputs: logs.map { ("the progress log", $0) } + [("--lyrics", lyrics)])
            let report: ReplayReport
            do { report = try Replay.run(paths: logs, lyricsPath: lyrics, configuration: configuration()) } catch let e as SyncError { throw syncFailure(e) }
            for note in report.notes { printError(note.text) }
            if let svg { try emit(Array(DriftSVG.render(report).utf8), to: svg) }
            if let csv { try emit(Array(ReplayOutput.csv(report).utf8), to: csv) }
            try emit(Array((format == .json ? ReplayOutput.json(report).serialized() : ReplayOutput.text(report)).utf8), to: output)
            if !report.allOK { throw ExitCode(KTVExitCode.findings) }
        }
    }
}
