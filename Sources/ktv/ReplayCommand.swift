import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics
import KTVSync

extension ReplayConfiguration.Rules: ExpressibleByArgument {}

/// Exit code for a sync error: bad log or scenario data 65, unreadable files 74, bad options 64.
func syncFailure(_ error: SyncError) -> ExitCode {
    printError("ktv: \(error)")
    switch error {
    case .malformedLog, .badScenario: return ExitCode(KTVExitCode.dataError)
    case .cannotRead: return ExitCode(KTVExitCode.ioError)
    case .invalidConfiguration: return ExitCode(KTVExitCode.usage)
    }
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

        @Option(help: "Seek threshold in ms (default: zego 30, agora 50, tencent 50).")
        var thresholdMs: Int?

        @Flag(help: "ZEGO: also correct a follower that runs ahead (the vendor sample corrects only a late one).")
        var twoSided = false

        @Option(help: "A logged seek belongs to the latest decision at most this many ms before it.")
        var windowMs = 200

        @Option(help: "A seek further than this many ms from the rule's target is wrong_target.")
        var toleranceMs = 20

        @Option(help: "Lyric file: measure how often the audience is shown the wrong line and word.")
        var lyrics: String?

        @Option(help: "Write the drift plot (SVG) here, atomically.")
        var svg: String?

        @Option(help: "Write the drift timeline (CSV) here, atomically.")
        var csv: String?

        @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.")
        var output: String?

        func validate() throws {
            guard !logs.isEmpty else { throw ValidationError("give at least one progress log (or `-` for standard input)") }
            if let t = thresholdMs, !(1...10_000).contains(t) { throw ValidationError("--threshold-ms must be 1-10000, not \(t)") }
            guard (1...60_000).contains(windowMs) else { throw ValidationError("--window-ms must be 1-60000, not \(windowMs)") }
            guard (0...10_000).contains(toleranceMs) else { throw ValidationError("--tolerance-ms must be 0-10000, not \(toleranceMs)") }
        }

        func run() throws {
            var config = ReplayConfiguration()
            config.rules = rules
            config.thresholdMs = thresholdMs
            config.twoSided = twoSided
            config.windowMs = windowMs
            config.toleranceMs = toleranceMs
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
