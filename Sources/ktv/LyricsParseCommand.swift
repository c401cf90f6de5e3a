import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

extension LyricsCommand {
    enum ModelFormat: String, ExpressibleByArgument, CaseIterable { case json, text }

    struct Parse: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the normalized model of a lyric or pitch file.",
            discussion: "Files with error findings are refused (exit 65) unless --lenient is given; findings go to standard error.")

        @Argument(help: "The lyric file (`-` for standard input).")
        var file: String

        @Option(help: "Output: json or text.")
        var format: ModelFormat = .json

        @OptionGroup var read: ReadOptions

        @Flag(help: "Print the model even when some lines could not be parsed (they are left out).")
        var lenient = false

        @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
        var output: String?

        func run() throws {
            try refuseOutputsOverInputs([("-o", output)], inputs: [("the lyric file", file)])
            let parsed = try readLyrics(file, options: try read.parseOptions())
            try reportParseFindings(parsed, path: file, lenient: lenient)
            // Streamed: the model's JSON is several times the size of the file.
            try emitStreaming(to: output) { put in
                switch format {
                case .json: try JSONModel.write(parsed.lyrics, to: put)
                case .text: try ModelText.write(parsed, to: put)
                }
            }
        }
    }
}
