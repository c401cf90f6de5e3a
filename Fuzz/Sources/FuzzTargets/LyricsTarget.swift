import KTVCore
import KTVLyrics

/// `fuzz-lyrics`: every lyric reader on the bytes (format detected, then each format forced, as
/// `ktv lyrics parse --from` does), and the validator on whatever parses. Any outcome but a crash
/// is fine: a thrown `LyricsError` is the clean failure.
public enum LyricsTarget {
    /// Detection, then every format but `elrc`, which is read by the same parser as `lrc`.
    static let formats: [LyricFormat?] = [nil] + LyricFormat.allCases.filter { $0 != .enhancedLRC }.map(Optional.some)

    public static func run(_ bytes: [UInt8]) {
        for format in formats {
            var options = LyricsParseOptions()
            options.format = format
            guard let parsed = try? LyricsReader.read(bytes, fileName: "fuzz", options: options) else { continue }
            _ = LyricsValidator.validate(parsed)
        }
    }
}
