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

        @Option(help: "Target format: \(LyricsOutputFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var to: LyricsOutputFormat

        @Option(help: "Digits after the point in LRC stamps: 3 (exact ms) or 2 (centiseconds, rounded).")
        var lrcDigits: Int = 3

        @OptionGroup var read: ReadOptions

        @Flag(help: "Convert even when some lines could not be parsed (they are left out).")
        var lenient = false

        @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
        var output: String?

        func validate() throws {
            guard lrcDigits == 2 || lrcDigits == 3 else {
                throw ValidationError("--lrc-digits must be 2 or 3, not \(lrcDigits)")
            }
        }

        func run() throws {
            let parsed = try readLyrics(file, options: try read.parseOptions())
            try reportParseFindings(parsed, path: file, lenient: lenient)
            let written: WrittenLyrics
            do {
                written = try LyricsWriter.write(parsed.lyrics, as: to, options: LyricsWriteOptions(lrcFractionDigits: lrcDigits))
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
