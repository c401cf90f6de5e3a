import KTVCore

/// Rules checked on the parsed model, on top of the findings the parsers report while reading.
///
/// | rule | severity | |
/// |---|---|---|
/// | negative-duration | error | line or word ends before it starts |
/// | zero-duration | warning | line, or words of a line, with zero duration |
/// | word-outside-line | warning | word starts before or ends after its line by more than the tolerance |
/// | word-overlap | warning | word starts before the previous word ends (beyond the tolerance) |
/// | overlapping-lines | info ≤ `commonOverlapMs`, else warning | line ends after the next starts |
/// | after-total | error (starts at/after `[total:]`), warning (ends after it) | |
/// | empty-line | warning | timed line with no text |
/// | duplicate-timestamp | warning | two lines start at the same millisecond |
public struct LyricsValidationOptions: Sendable {
    /// Word overlap and word-outside-line slack; real KRC files are off by 1 ms.
    public var wordToleranceMs: Int
    /// Line overlaps up to this are normal in user-made KRC (300 ms) and reported as info.
    public var commonOverlapMs: Int

    public init(wordToleranceMs: Int = 1, commonOverlapMs: Int = 300) {
        self.wordToleranceMs = wordToleranceMs
        self.commonOverlapMs = commonOverlapMs
    }
}

public enum LyricsValidator {
    /// The rule ids ktv reports, with their default severity and a one-line description (for SARIF).
    public static let rules: [(id: String, severity: Severity, summary: String)] = [
        ("unparsable-line", .error, "A line that is neither a tag nor a timed lyric row of the file's format."),
        ("unterminated-tag", .error, "A `[key:value` tag without its closing bracket."),
        ("negative-duration", .error, "A line or word that ends before it starts."),
        ("zero-duration", .warning, "A line or word whose duration is zero."),
        ("word-outside-line", .warning, "A word that starts before or ends after its line (beyond 1 ms)."),
        ("word-overlap", .warning, "A word that starts before the previous word ends (beyond 1 ms)."),
        ("overlapping-lines", .warning, "A line that ends after the next line starts."),
        ("lines-out-of-order", .warning, "A line that starts before the line above it."),
        ("after-total", .error, "Lyric text timed at or after the `[total:]` song length."),
        ("empty-line", .warning, "A time stamp with no text."),
        ("krc-nonzero-field", .warning, "A KRC unit whose third field is not 0."),
        ("yrc-nonzero-field", .warning, "A YRC unit whose third field is not 0."),
        ("ambiguous-timestamp", .warning, "A `[a:b:c]` stamp that could be mm:ss:cc or hh:mm:ss."),
        ("invalid-timestamp", .warning, "A time stamp with seconds over 59."),
        ("negative-timestamp", .warning, "A negative LRC time stamp."),
        ("non-utf8", .warning, "Text that is not UTF-8 and was read as GB18030."),
        ("translation-count-mismatch", .warning, "`[language:]` translations do not match the lyric rows one to one."),
        ("romanization-count-mismatch", .warning, "`[language:]` romanizations do not match the rows or units one to one."),
        ("duplicate-timestamp", .warning, "Two lines that start at the same millisecond."),
        ("invalid-offset", .warning, "An `[offset:]` tag that is not a whole number."),
        ("negative-time", .warning, "Times moved before 0 by `[offset:]` and clipped."),
        ("invalid-language-tag", .warning, "A `[language:]` tag that is not base64 JSON."),
        ("word-times-relative", .warning, "YRC word times that look relative to the line."),
        ("invalid-number", .error, "A Migu XML time or pitch that is not a number."),
        ("empty-word", .warning, "A Migu XML tone with no word."),
        ("unknown-end", .info, "The last line has no end time."),
        ("unknown-language-block", .info, "A `[language:]` block of an unknown type."),
        ("unreadable", .error, "A file that cannot be read as lyrics at all."),
    ]

    /// Parse findings plus model checks, ordered by line.
    public static func validate(_ parsed: ParsedLyrics, options: LyricsValidationOptions = .init()) -> [Diagnostic] {
        var diags = parsed.diagnostics
        let lyrics = parsed.lyrics
        let tol = options.wordToleranceMs
        let openEnded = Set(diags.filter { $0.rule == "unknown-end" }.compactMap(\.line))
        let total = lyrics.totalMs.flatMap { $0 > 0 ? $0 : nil }
        for (k, packedLine) in lyrics.lines.enumerated() {
            // Times only: the words' texts are decoded just for a finding that quotes one.
            let line = packedLine.timing
            let at = line.sourceLine
            if line.durationMs < 0 {
                diags.append(.error("negative-duration", line: at,
                                    "line at \(TimeText.ms(line.startMs)) ends \(-line.durationMs) ms before it starts; fix its end time"))
            } else if line.durationMs == 0, !openEnded.contains(at ?? -1) {
                diags.append(.warning("zero-duration", line: at,
                                      "line at \(TimeText.ms(line.startMs)) has zero duration; give it the length of its words"))
            }
            if line.isBlank {
                diags.append(.warning("empty-line", line: at,
                                      "line at \(TimeText.ms(line.startMs)) has a time but no text; remove it or add its lyric"))
            }
            checkWords(line, of: packedLine, tolerance: tol, openEnded: openEnded.contains(at ?? -1), into: &diags)
            if k + 1 < lyrics.lines.count {
                let next = lyrics.lines[k + 1]
                if next.startMs == line.startMs {
                    diags.append(.warning("duplicate-timestamp", line: next.sourceLine,
                                          "this line starts at the same time as the line above (\(TimeText.ms(line.startMs))); if it is a translation, keep it in a translation field instead"))
                } else if line.durationMs > 0, line.endMs > next.startMs + tol {
                    let overlap = line.endMs - next.startMs
                    let common = overlap <= options.commonOverlapMs
                    diags.append(Diagnostic(rule: "overlapping-lines", severity: common ? .info : .warning, line: at,
                                            message: "line ends at \(TimeText.ms(line.endMs)), \(overlap) ms after the next line starts (\(TimeText.ms(next.startMs)))" + (common ? "; overlaps up to \(options.commonOverlapMs) ms are common in real files (user-made KRC overlaps by 300 ms)" : "; shorten it or move the next line")))
                }
            }
            if let total {
                if line.startMs >= total {
                    diags.append(.error("after-total", line: at,
                                        "line starts at \(TimeText.ms(line.startMs)), at or after the song's end `[total:\(total)]`; it can never be shown"))
                } else if line.endMs > total {
                    diags.append(.warning("after-total", line: at,
                                          "line ends at \(TimeText.ms(line.endMs)), after the song's end `[total:\(total)]`"))
                }
            }
        }
        return diags.enumerated().sorted { a, b in
            let la = a.element.line ?? 0, lb = b.element.line ?? 0
            return la != lb ? la < lb : a.offset < b.offset
        }.map(\.element)
    }

    /// `openEnded`: the line's end is unknown (already reported), so its last word's zero length is not news.
    private static func checkWords(_ line: LinePacking.Timing, of packed: LyricLine, tolerance tol: Int, openEnded: Bool,
                                   into diags: inout [Diagnostic]) {
        let at = line.sourceLine
        var zero = 0, outside = 0, overlaps = 0
        var worstOutside = 0
        var firstZero: Int?, firstOutside: Int?, firstOverlap: (Int, Int)?
        var texts: [String]?
        func text(_ w: Int) -> String {
            if texts == nil { texts = packed.words.map(\.text) }
            return Scan.capped(texts?[w] ?? "")
        }
        for (w, word) in line.words.enumerated() {
            if word.durationMs < 0 {
                diags.append(.error("negative-duration", line: at,
                                    "word `\(text(w))` at \(TimeText.ms(word.startMs)) ends \(-word.durationMs) ms before it starts"))
            } else if word.durationMs == 0, !(openEnded && w == line.words.count - 1) {
                zero += 1
            }
            if word.durationMs == 0 { firstZero = firstZero ?? w }
            let before = line.startMs - word.startMs
            let after = word.endMs - line.endMs
            if line.durationMs >= 0, before > tol || after > tol {
                outside += 1
                worstOutside = max(worstOutside, before, after)
                firstOutside = firstOutside ?? w
            }
            if w > 0 {
                let prev = line.words[w - 1]
                let o = prev.endMs - word.startMs
                if o > tol, prev.durationMs > 0 {
                    overlaps += 1
                    firstOverlap = firstOverlap ?? (w, o)
                }
            }
        }
        if zero > 0 {
            diags.append(.warning("zero-duration", line: at,
                                  "\(zero) word(s) in this line have zero duration (e.g. `\(firstZero.map(text) ?? "")`); they are never highlighted"))
        }
        if outside > 0, let k = firstOutside {
            let f = line.words[k]
            diags.append(.warning("word-outside-line", line: at,
                                  "\(outside) word(s) lie outside the line \(TimeText.ms(line.startMs))–\(TimeText.ms(line.endMs)) by up to \(worstOutside) ms (first: `\(text(k))` at \(TimeText.ms(f.startMs)), \(f.durationMs) ms); fix the line's duration or the word times"))
        }
        if overlaps > 0, let (k, o) = firstOverlap {
            diags.append(.warning("word-overlap", line: at,
                                  "\(overlaps) word(s) start before the previous word ends (first: `\(text(k))` at \(TimeText.ms(line.words[k].startMs)), \(o) ms early)"))
        }
    }
}
