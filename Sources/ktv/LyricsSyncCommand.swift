import ArgumentParser
import Foundation
import KTVAudio
import KTVCore
import KTVLyrics
import KTVPitch

extension LyricsCommand {
    struct Sync: ParsableCommand {
        enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

        static let configuration = CommandConfiguration(
            abstract: "Retime lyrics to the audio they will play with: an offset, a different speed, sections cut or added.",
            discussion: """
            The map from the lyrics' clock to the audio's is found from the voice: a dual-mono track is split first; with --accompaniment the bleed is cancelled; any other audio is taken as a vocal stem.
            Every line and word moves by the map; translations and tags are kept. Lines whose audio was cut are left out and listed; lines placed with low confidence are moved by their section's map and listed.
            The report (the sections, each line's old and new start) goes to standard output.
            Exit 0 when every line is placed, 1 when some are dropped or low-confidence (the file is still written), 65 when the audio has no voice.
            """)

        @Argument(help: "The lyric file (`-` for standard input).")
        var file: String

        @Option(help: "The audio the lyrics will play with: a dual-mono KTV track, a recording (with --accompaniment), or a vocal stem.")
        var audio: String

        @Option(help: "The backing track played during the recording: its bleed is cancelled before the voice is tracked.")
        var accompaniment: String?

        @OptionGroup var stream: StreamOption

        @Option(help: ArgumentHelp("Without --accompaniment: " + layoutHelp))
        var layout: String = "auto"

        @Option(name: .customLong("search-seconds"), help: LyricSyncConfiguration.Spec.searchS.optionHelp)
        var searchS = LyricSyncConfiguration.Spec.searchS.defaultValue

        @Option(name: .shortAndLong, help: "Write the retimed lyrics to this file (atomically).")
        var output: String

        @Option(help: "Write this format instead of the input's: \(LyricsOutputFormat.allCases.map(\.rawValue).joined(separator: ", ")).",
                completion: .list(LyricsOutputFormat.allCases.map(\.rawValue)),
                transform: { try namedValue($0, LyricsOutputFormat.init(name:), valid: LyricsOutputFormat.allCases.map(\.rawValue),
                                              aliases: Array(LyricsOutputFormat.aliases.keys)) })
        var to: LyricsOutputFormat?

        @Flag(help: "Give lines timed by line only (plain LRC, SRT, line-level TTML) word times from the voice: a CJK character is a syllable, other scripts split at spaces. Plain LRC is then written as enhanced LRC unless --to says otherwise.")
        var words = false

        @Option(help: "Report format: text or json.")
        var format: ReportFormat = .text

        @OptionGroup var read: ReadOptions

        func validate() throws {
            warnOldLayout(layout)
            _ = try configuration()
            if accompaniment != nil && layout != "auto" { throw ValidationError("--layout is for a dual-mono track; with --accompaniment the recording is one voice over the backing track: drop one of them") }
        }

        func configuration() throws -> (LyricSyncConfiguration, SplitLayout) {
            var c = LyricSyncConfiguration()
            c.searchS = searchS
            do { return (try c.validated(), try splitLayout(layout)) } catch let error as PitchError {
                throw error.parameterError.map { usageError($0, flags: ["searchS": "--search-seconds"]) } ?? ValidationError("\(error)")
            }
        }

        func run() throws {
            try refuseOutputsOverInputs([("-o", output)], inputs: [("the lyric file", file), ("--audio", audio), ("--accompaniment", accompaniment)])
            let (config, layout) = try configuration()
            let parsed = try readLyrics(file, options: try read.parseOptions())
            try reportParseFindings(parsed, path: file, lenient: false)
            let same = words && parsed.lyrics.format == .lrc ? .elrc : LyricsOutputFormat(writing: parsed.lyrics.format)
            guard let target = to ?? same else {
                printError("ktv: \(displayName(file)) is \(parsed.lyrics.format.rawValue), which ktv does not write; choose a format with --to")
                throw ExitCode(KTVExitCode.usage)
            }
            let outcome: LyricSyncOutcome
            do {
                outcome = try LyricRetiming.sync(parsed.lyrics, audio: audio, stream: try stream.checked(), accompaniment: accompaniment,
                                                 layout: layout, configuration: config, words: words ? WordTimingConfiguration() : nil)
            } catch let error as AudioError {
                throw failure(error)
            } catch let error as PitchError {
                printError("ktv: \(audio): \(error)")
                throw ExitCode(KTVExitCode.dataError)
            }
            for t in outcome.truncations { printError("ktv: warning: \(t)") }
            let written: WrittenLyrics
            do { written = try LyricsWriter.write(outcome.lyrics, as: target) } catch {
                printError("ktv: \(describe(error, path: file))")
                throw ExitCode(KTVExitCode.dataError)
            }
            for note in written.notes { printError(DiagnosticReport.text(note, path: displayName(file))) }
            try emit(written.bytes, to: output)
            let report = format == .json
                ? LyricSyncReport.json(outcome, lyrics: parsed.lyrics, audio: audio).serialized() + "\n"
                : LyricSyncReport.text(outcome, lyrics: parsed.lyrics, audio: audio)
            try writeStandardOutput(report)
            if !outcome.map.dropped.isEmpty || !outcome.map.lowConfidence.isEmpty { throw ExitCode(KTVExitCode.findings) }
        }
    }
}
