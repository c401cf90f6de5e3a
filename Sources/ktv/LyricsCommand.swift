import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics
import KTVPitch
import KTVScore

struct LyricsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lyrics",
        abstract: "Parse, decrypt, convert, validate and sync karaoke lyric files (\(LyricFormat.allCases.map(\.title).joined(separator: ", "))).",
        subcommands: [Parse.self, Decrypt.self, Convert.self, Validate.self, Sync.self]
    )
}

/// The ceiling on lyric text, shared by every command that reads lyrics and by `decrypt`.
struct TextLimitOptions: ParsableArguments {
    @Option(help: LyricsParseOptions.Spec.maxTextMb.optionHelp)
    var maxTextMb = LyricsParseOptions.Spec.maxTextMb.defaultValue

    func validate() throws { _ = try options() }

    func options(offsetSign: OffsetSign = .subtract, format: LyricFormat? = nil) throws -> LyricsParseOptions {
        do { return try LyricsParseOptions(offsetSign: offsetSign, format: format, maxTextMb: maxTextMb) } catch { throw usageError(error) }
    }

}

/// Options every command that reads lyrics shares.
struct ReadOptions: ParsableArguments {
    @Option(name: .customLong("from"), help: "Read as this format instead of detecting it (\(LyricFormat.allCases.map(\.rawValue).joined(separator: ", "))).",
            completion: .list(LyricFormat.allCases.map(\.rawValue)),
            transform: { try namedValue($0, LyricFormat.init(name:), valid: LyricFormat.allCases.map(\.rawValue),
                                              aliases: Array(LyricFormat.aliases.keys)) })
    var format: LyricFormat?

    @Option(help: "How `[offset:N]` is applied: subtract (effective = stamp − N, the LRC convention) or add.")
    var offsetSign: OffsetSign = .subtract

    @OptionGroup var limit: TextLimitOptions

    func parseOptions() throws -> LyricsParseOptions { try limit.options(offsetSign: offsetSign, format: format) }
}

// Shared by the lyrics subcommands: reading a lyric file, and its findings and errors worded for the command line.

/// `path: line N: message` / `path: byte offset N: message` for a file that cannot be read as lyrics.
func describe(_ error: LyricsError, path: String) -> String {
    "\(displayName(path)): \(lyricsErrorMessage(error))"
}

/// The error's message, with the option that gets past it when there is one.
func lyricsErrorMessage(_ error: LyricsError) -> String {
    if case .tooLarge = error { return "\(error); raise the limit with --max-text-mb N if the file is genuine" }
    return "\(error)"
}

/// Reads a lyric file's bytes, never more than the text ceiling (more could not be lyrics we read).
func readLyricBytes(_ path: String, maxTextBytes: Int) throws -> [UInt8] {
    do { return try FileIO.read(path, maxBytes: maxTextBytes) } catch {
        if case let .tooLarge(_, limit) = error {
            printError("ktv: \(describe(LyricsBatch.tooLargeInput(path, limitBytes: limit), path: path))")
            throw ExitCode(KTVExitCode.dataError)
        }
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

/// Reads a lyric file and stops with exit 65 (or 74) and a precise message when it cannot: what the
/// file is when it is no lyrics (a recording, a reference melody, a pitch track, a manifest).
func readLyrics(_ path: String, options: LyricsParseOptions) throws -> ParsedLyrics {
    let bytes = try readLyricBytes(path, maxTextBytes: options.maxTextBytes)
    let head = options.format == nil ? Array(bytes.prefix(1 << 20)) : []
    do {
        // Handed over, not copied: the reader can then drop a BOM in place.
        return try LyricsReader.read(consume bytes, fileName: path == "-" ? nil : path, options: options)
    } catch {
        let misplaced = head.isEmpty ? nil : MisplacedInput.check(path: displayName(path), bytes: head, slot: .lyrics)
        printError("ktv: \(misplaced?.message(naming: { slotFlag($0, in: "lyrics") }) ?? describe(error, path: path))")
        throw ExitCode(KTVExitCode.dataError)
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

/// The library names the lyric text limit; how to raise it is the command line's to say.
func mentionTextLimitFlag(_ results: inout [FileFindings]) {
    for i in results.indices {
        for j in results[i].diagnostics.indices where results[i].diagnostics[j].rule == LyricsBatch.tooLargeRule {
            results[i].diagnostics[j].message += "; raise the limit with --max-text-mb N if the file is genuine"
        }
    }
}

/// The library says the lyrics follow another edit of the song; the command that fixes it is the command line's to say.
func mentionSyncCommand(_ results: inout [FileFindings], audio: String) {
    for i in results.indices {
        for j in results[i].diagnostics.indices where results[i].diagnostics[j].rule == LyricTimingCheck.differentEditRule {
            let path = results[i].path, ext = (path as NSString).pathExtension
            results[i].diagnostics[j].message += "; fix it with `ktv lyrics sync \(shellQuoted(path)) --audio \(shellQuoted(audio)) -o synced\(ext.isEmpty ? "" : "." + ext)`"
        }
    }
}

/// A path as a shell reads it back: quoted when it holds anything but safe characters.
func shellQuoted(_ s: String) -> String {
    let safe = s.allSatisfy { $0.isLetter || $0.isNumber || "-_./+,:@".contains($0) }
    return safe && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
