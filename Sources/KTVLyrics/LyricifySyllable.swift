import KTVCore

// Lyricify Syllable (LYS), the word-timed format Lyricify, LDDC and AMLL exchange: LRC-style tags,
// then a row per line, `[p]word(startMs,durMs)word(startMs,durMs)…`, word times absolute and
// written after the text (as in QRC), and `p` a digit that says who sings: 0-2 not said, 3-5 the
// lead, 6-8 the background vocals, each as unset / left / right (a duet's two sides). Reference:
// Lyricify's "Lyrics Guide and Standards" (docs.lyricify.app). Grammar: docs/lyric-formats.md §3.8.

enum LyricifySyllable {
    /// The side a line's voice is shown on: `v1` left, `v2` right, anything else not said.
    static func side(_ voice: String?) -> Int { voice == "v1" ? 1 : voice == "v2" ? 2 : 0 }

    /// A line whose words are partly background is written as two rows, lead then background, as
    /// Lyricify itself keeps them.
    static func write(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        var out = ""
        for tag in lyrics.tags where !["offset", "language"].contains(tag.key.lowercased()) { out += "[\(tag.key):\(tag.value.replacingLineBreaks)]\n" }
        var split = 0, synthesized = 0
        for line in lyrics.lines {
            let words = LyricsWriter.wordsOrOne(line, synthesized: &synthesized)
            let lead = words.filter { !$0.background }, backing = words.filter(\.background)
            if !lead.isEmpty && !backing.isEmpty { split += 1 }
            let side = side(line.voice)
            for (group, background) in [(lead, false), (backing, true)] where !group.isEmpty {
                out += "[\(background ? 6 + side : side == 0 ? 0 : 3 + side)]"
                for w in group {
                    guard w.startMs >= 0, w.durationMs >= 0 else {
                        throw .cannotWrite(format: .lyricifySyllable, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                    }
                    if w.text.contains("\n") || w.text.contains("\r") || QRCParser.nextTiming(Array(w.text.utf8)[...], from: 0) != nil {
                        throw .cannotWrite(format: .lyricifySyllable, detail: "word text `\(Scan.capped(w.text))` holds a line break or a `(n,n)` timing, which LYS cannot escape")
                    }
                    out += "\(w.text)(\(w.startMs),\(w.durationMs))"
                }
                out += "\n"
            }
        }
        if split > 0 { notes.append(.info("background-split", "\(split) line(s) had background words; each was written as a lead row and a background row, as Lyricify keeps them")) }
        if synthesized > 0 { notes.append(.info("words-synthesized", "\(synthesized) line(s) had no word timing; each was written as one word spanning the line")) }
        if lyrics.lines.contains(where: { $0.translation != nil || $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("translation-dropped", "LYS keeps translations in a companion file, which ktv does not write; use ttml, krc or json to keep them"))
        }
        return Array(out.utf8)
    }
}

/// Reads LYS rows (and the tags before them). A row's line runs from its first word's start to its
/// last word's end; a background row's words are background words; the side is the line's voice.
struct LyricifySyllableParser {
    var options: LyricsParseOptions

    /// `[p]` with `p` one digit, at the start of `b`: the digit and where the row's words start.
    static func header(_ b: ArraySlice<UInt8>) -> (Int, Int)? {
        let i = b.startIndex
        guard b.count >= 3, b[i] == ASCII.lbracket, ASCII.isDigit(b[i + 1]), b[i + 2] == ASCII.rbracket else { return nil }
        return (Int(b[i + 1] - ASCII.zero), i + 3)
    }

    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) -> Lyrics {
        var collector = TagCollector()
        var lines: [LyricLine] = []
        for row in Scan.lines(text) {
            let b = Scan.trimLeading(row.bytes)
            if Scan.isBlank(b) { continue }
            guard let (property, from) = Self.header(b) else {
                collector.take(b, line: row.number, into: &diags) { "not a Lyricify Syllable row `[p]word(startMs,durMs)…`: `\(Scan.preview(b))`" }
                continue
            }
            var words: [LyricWord] = []
            var i = from
            while let t = QRCParser.nextTiming(b, from: i) {
                var w = LyricWord(startMs: t.start, durationMs: t.dur, text: Scan.string(b[i..<t.pos]))
                w.background = property >= 6
                words.append(w)
                i = t.end
            }
            if i < b.endIndex, !Scan.isBlank(b[i...]) {
                diags.append(.error("unparsable-line", line: row.number, "text `\(Scan.preview(b[i...]))` after the last `(startMs,durMs)` timing has no time; LYS writes the timing after each word"))
            }
            guard let first = words.first else {
                diags.append(.warning("empty-line", line: row.number, "a `[\(property)]` row with no timed word; it was skipped"))
                continue
            }
            if property > 8 {
                diags.append(.warning("unknown-property", line: row.number, "`[\(property)]` is not a Lyricify property (0-8); read as the lead, side not said"))
            }
            let end = words.map(\.endMs).max() ?? first.endMs
            var line = LyricLine(startMs: first.startMs, durationMs: end - first.startMs, joining: words, sourceLine: row.number)
            switch property <= 8 ? property % 3 : 0 {
            case 1: line.voice = "v1"
            case 2: line.voice = "v2"
            default: break
            }
            lines.append(line)
        }
        var lyrics = Lyrics(format: .lyricifySyllable, tags: collector.tags, lines: lines)
        Timeline.finish(&lyrics, options: options, reportOrder: true, offsetLine: collector.offsetLine, into: &diags)
        return lyrics
    }
}
