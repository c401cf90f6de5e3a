import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

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
