import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics
import KTVSync

extension ReplayConfiguration.Rules: ExpressibleByArgument {}

/// Exit code for a sync error: bad log or scenario data 65, unreadable files 74; a setting out of
/// range is a usage error naming the flag (64).
func syncFailure(_ error: SyncError) -> Error {
    if case let .invalidParameter(p) = error { return usageError(p) }
    printError("ktv: \(error)")
    return ExitCode(error.isDataError ? KTVExitCode.dataError : KTVExitCode.ioError)
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
        subcommands: [Analyze.self, Simulate.self],
        defaultSubcommand: Analyze.self)
}

extension ReplayCommand {
    enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    struct Analyze: ParsableCommand {
        typealias Spec = ReplayConfiguration.Spec

        static let configuration = CommandConfiguration(
            commandName: "analyze",
            abstract: "Replay progress logs (the default: `ktv replay LOG...`).",
            discussion: """
            Several files are read as one room (each device's events are put in order of its own clock).
            --rules auto applies each message's own vendor rules; a named set applies its rules to every
            progress message it can read. Warnings about the log go to standard error.
            """)

        @Argument(help: "Progress logs (`-` for standard input).")
        var logs: [String]

        @Option(help: "Report format: text or json.")
        var format: ReportFormat = .text

        @Option(help: "Rule set: auto, zego, agora or tencent.")
        var rules: ReplayConfiguration.Rules = .auto

        @Option(help: ArgumentHelp(Spec.thresholdMs.help))
        var thresholdMs: Int?

        @Flag(help: "ZEGO: also correct a follower that runs ahead (the vendor sample corrects only a late one).")
        var twoSided = false

        @Option(help: ArgumentHelp(Spec.windowMs.help))
        var windowMs = Spec.windowMs.defaultValue

        @Option(help: ArgumentHelp(Spec.toleranceMs.help))
        var toleranceMs = Spec.toleranceMs.defaultValue

        @Option(help: "Lyric file: measure how often the audience is shown the wrong line and word.")
        var lyrics: String?

        @Option(help: "Write the drift plot (SVG) here, atomically.")
        var svg: String?

        @Option(help: "Write the drift timeline (CSV) here, atomically.")
        var csv: String?

        @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.")
        var output: String?

        /// The settings, checked against their declarations (ranges are checked there only).
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
            var config = try configuration()
            if let lyrics {
                let parsed = try readLyrics(lyrics, options: LyricsParseOptions())
                guard !parsed.lyrics.lines.isEmpty else {
                    printError("ktv: \(displayName(lyrics)): the lyric file has no timed lines to compare the audience with")
                    throw ExitCode(KTVExitCode.dataError)
                }
                config.lyrics = parsed.lyrics
            }
            let report: ReplayReport
            do { report = try Replay.run(paths: logs, configuration: config) } catch { throw syncFailure(error) }
            for note in report.notes { printError(note.text) }
            if let svg { try emit(Array(DriftSVG.render(report).utf8), to: svg) }
            if let csv { try emit(Array(ReplayOutput.csv(report).utf8), to: csv) }
            let text: String
            switch format {
            case .text: text = ReplayOutput.text(report)
            case .json: text = ReplayOutput.json(report).serialized()
            }
            try emit(Array(text.utf8), to: output)
            if !report.allOK { throw ExitCode(KTVExitCode.findings) }
        }
    }

    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "simulate",
            abstract: "Simulate a karaoke room and write its progress log, with truth events.",
            discussion: """
            Built-in scenarios: \(Scenario.builtInNames.joined(separator: ", ")). A JSON scenario file may
            start from one (`"base": "zego"`) and change any field (docs/progress-log.md, "Simulator scenarios").
            Replaying the log checks replay against the truth events it carries.
            """)

        @Option(help: "A built-in scenario name or a JSON scenario file.")
        var scenario: String

        @Option(help: "Random seed (network jitter, callback timing); default: the scenario's.")
        var seed: UInt64?

        @Option(name: .shortAndLong, help: "Where to write the log (atomically; `-` for standard output).")
        var output: String

        func run() throws {
            var s: Scenario
            if let builtIn = Scenario.builtIn(scenario) {
                s = builtIn
            } else if FileManager.default.fileExists(atPath: scenario) {
                let bytes = try readInput(scenario)
                do { s = try Scenario.parse(bytes, fileName: scenario) } catch { throw syncFailure(error) }
            } else {
                printError("ktv: no scenario `\(scenario)`: use one of \(Scenario.builtInNames.joined(separator: ", ")), or the path of a JSON scenario file")
                throw ExitCode(KTVExitCode.usage)
            }
            if let seed { s.seed = seed }
            let room: SimulatedRoom
            do { room = try RoomSimulator.run(s) } catch { throw syncFailure(error) }
            try emit(room.log, to: output)
            printError("ktv: simulated `\(s.name)` (\(s.rules.rawValue), \(s.devices.count) devices, \(s.roomMs / 1000) s, seed \(s.seed)): \(room.events) events\(output == "-" ? "" : " written to \(output)")")
        }
    }
}
