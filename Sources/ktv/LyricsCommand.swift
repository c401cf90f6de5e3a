import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

struct LyricsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lyrics",
        abstract: "Parse, decrypt, convert and validate karaoke lyric files (KRC, LRC, enhanced LRC, YRC, QRC, Migu XML, Agora pitch).",
        subcommands: [Parse.self, Decrypt.self, Convert.self, Validate.self]
    )
}

/// The ceiling on lyric text, shared by every command that reads lyrics and by `decrypt`.
struct TextLimitOptions: ParsableArguments {
    @Option(help: ArgumentHelp(LyricsParseOptions.Spec.maxTextMb.help))
    var maxTextMb = LyricsParseOptions.Spec.maxTextMb.defaultValue

    func validate() throws { _ = try options() }

    func options(offsetSign: OffsetSign = .subtract, format: LyricFormat? = nil) throws -> LyricsParseOptions {
        do { return try LyricsParseOptions(offsetSign: offsetSign, format: format, maxTextMb: maxTextMb) } catch { throw usageError(error) }
    }

}

/// Options every command that reads lyrics shares.
struct ReadOptions: ParsableArguments {
    @Option(name: .customLong("from"), help: "Read as this format instead of detecting it (\(LyricFormat.allCases.map(\.rawValue).joined(separator: ", "))).")
    var format: LyricFormat?

    @Option(help: "How `[offset:N]` is applied: subtract (effective = stamp − N, the LRC convention) or add.")
    var offsetSign: OffsetSign = .subtract

    @OptionGroup var limit: TextLimitOptions

    func parseOptions() throws -> LyricsParseOptions { try limit.options(offsetSign: offsetSign, format: format) }
}

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

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the exact plaintext bytes inside an encrypted KRC (`krc1`) file.")

        @Argument(help: "The encrypted KRC file (`-` for standard input).")
        var file: String

        @OptionGroup var limit: TextLimitOptions

        @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
        var output: String?

        func run() throws {
            let maxTextBytes = try limit.options().maxTextBytes
            let bytes = try readLyricBytes(file, maxTextBytes: maxTextBytes)
            let plain: [UInt8]
            do { plain = try KRCContainer.decrypt(bytes, maxTextBytes: maxTextBytes) } catch {
                printError("ktv: \(describe(error, path: file))")
                throw ExitCode(KTVExitCode.dataError)
            }
            try emit(plain, to: output)
        }
    }

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

/// Prints parse findings (warnings and errors) to standard error; stops with 65 on errors unless lenient.
func reportParseFindings(_ parsed: ParsedLyrics, path: String, lenient: Bool) throws {
    for d in parsed.diagnostics where d.severity >= .warning {
        printError(DiagnosticReport.text(d, path: displayName(path)))
    }
    let errors = parsed.diagnostics.filter { $0.severity == .error }.count
    if errors > 0 && !lenient {
        printError("ktv: \(displayName(path)): \(errors) error(s); fix them, or pass --lenient to leave the bad lines out")
        throw ExitCode(KTVExitCode.dataError)
    }
}

/// The `--format text` view of a model.
enum ModelText {
    /// The view in pieces of about `chunkBytes`, a line at a time.
    static func write<E: Error>(_ parsed: ParsedLyrics, chunkBytes: Int = 1 << 20,
                                to sink: ([UInt8]) throws(E) -> Void) throws(E) {
        let l = parsed.lyrics
        var out = "format: \(l.format.rawValue)"
        if let e = parsed.encoding { out += " (\(e.rawValue))" }
        out += "\n"
        for tag in l.tags where tag.key.lowercased() != "language" {
            out += "tag \(tag.key): \(tag.value)\n"
        }
        if let o = l.offsetMs { out += "offset: \(o) ms as written; applied shift \(l.appliedShiftMs) ms\n" }
        let words = l.lines.reduce(0) { $0 + $1.words.count }
        out += "lines: \(l.lines.count), words: \(words)\n"
        for (k, packed) in l.lines.enumerated() {
            let line = (text: packed.text, words: packed.words)
            out += "\(k + 1)\t\(stamp(packed.startMs)) +\(packed.durationMs)\t\(line.text)\n"
            if !line.words.isEmpty {
                out += "\t" + line.words.map { w in
                    var s = "\(w.text)@\(w.startMs)+\(w.durationMs)"
                    if let r = w.romanization { s += "(\(r))" }
                    return s
                }.joined(separator: " ") + "\n"
            }
            if let t = packed.translation { out += "\t= \(t)\n" }
            if out.utf8.count >= chunkBytes {
                try sink(Array(out.utf8))
                out = ""
            }
        }
        switch l.referencePitch {
        case let .notes(scale, notes)?:
            out += "reference pitch: \(notes.count) notes (\(scale.rawValue))\n"
        case let .contour(interval, hz)?:
            out += "reference pitch: \(hz.count) frames every \(interval) ms, \(hz.compactMap { $0 }.count) voiced\n"
        case nil: break
        }
        try sink(Array(out.utf8))
    }

    static func stamp(_ ms: Int) -> String {
        let v = abs(ms)
        let s = "\(v / 60000):\(TimeText.pad((v / 1000) % 60, 2)).\(TimeText.pad(v % 1000, 3))"
        return ms < 0 ? "-" + s : s
    }

}
