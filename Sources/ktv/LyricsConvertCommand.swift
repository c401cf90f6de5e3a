import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

extension LyricsCommand {
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a lyric file to another format.",
            discussion: """
            Output times are absolute: a source `[offset:]` is applied while reading and not written again.
            Anything the target cannot carry (word timing in plain LRC, translations in LRC/YRC) is reported on standard error.
            """)

        @Argument(help: "The lyric file (`-` for standard input).")
        var file: String

        @Option(help: "Target format: \(LyricsOutputFormat.allCases.map(\.rawValue).joined(separator: ", ")) (webvtt is vtt).",
                completion: .list(LyricsOutputFormat.allCases.map(\.rawValue)),
                transform: { try namedValue($0, LyricsOutputFormat.init(name:), valid: LyricsOutputFormat.allCases.map(\.rawValue),
                                              aliases: Array(LyricsOutputFormat.aliases.keys)) })
        var to: LyricsOutputFormat

        @Flag(help: "With --to qrc: wrap the rows in QQ Music's <QrcInfos> XML document (the same as --to qrc-xml).")
        var qrcWrapper = false

        @Option(help: LyricsWriteOptions.Spec.lrcFractionDigits.optionHelp)
        var lrcDigits = LyricsWriteOptions.Spec.lrcFractionDigits.defaultValue

        @Option(help: "With --to ttml: word times relative to their line, as TTML's timing model and W3C readers (ttconv) take them, or absolute, as Apple Music's and AMLL's files have them. Default: relative.",
                completion: .list(TTMLTiming.allCases.map(\.rawValue)),
                transform: { try namedValue($0, TTMLTiming.init(rawValue:), valid: TTMLTiming.allCases.map(\.rawValue)) })
        var ttmlTiming: TTMLTiming?

        @OptionGroup var read: ReadOptions

        @Flag(help: "Convert even when some lines could not be parsed (they are left out).")
        var lenient = false

        @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
        var output: String?

        func validate() throws {
            _ = try writeOptions()
            if qrcWrapper && to != .qrc && to != .qrcXML { throw ValidationError("--qrc-wrapper goes with --to qrc") }
            if ttmlTiming != nil && to != .ttml { throw ValidationError("--ttml-timing goes with --to ttml") }
        }

        /// The format written: `--to qrc --qrc-wrapper` is `qrc-xml`.
        var target: LyricsOutputFormat { qrcWrapper && to == .qrc ? .qrcXML : to }

        func writeOptions() throws -> LyricsWriteOptions {
            do { return try LyricsWriteOptions(lrcFractionDigits: lrcDigits, ttmlTiming: ttmlTiming ?? .relative).validated() } catch {
                throw usageError(error, flags: ["lrcFractionDigits": "--lrc-digits"])
            }
        }

        func run() throws {
            try refuseOutputsOverInputs([("-o", output)], inputs: [("the lyric file", file)])
            let writeOptions = try writeOptions()
            let parsed = try readLyrics(file, options: try read.parseOptions())
            try reportParseFindings(parsed, path: file, lenient: lenient)
            let written: WrittenLyrics
            do {
                written = try LyricsWriter.write(parsed.lyrics, as: target, options: writeOptions)
            } catch {
                printError("ktv: \(describe(error, path: file))")
                throw ExitCode(KTVExitCode.dataError)
            }
            for note in written.notes {
                printError(DiagnosticReport.text(note, path: displayName(file)))
            }
            try emit(written.bytes, to: output)
        }
    }
}
