import KTVCore

// Advanced SubStation Alpha (ASS, "v4.00+"), the karaoke subtitle format players and Aegisub use:
// a `[Script Info]` header, `[V4+ Styles]`, and `[Events]` whose `Dialogue:` rows carry
// `h:mm:ss.cc` times and, for karaoke, `{\k<cs>}` tags before each syllable (`\kf`/`\K` fill,
// `\ko` outline: the same timing). Grammar and the deviations met: docs/lyric-formats.md.
// Reference: the ASS specification ("Sub Station Alpha v4.00+ Script Format") and Aegisub's
// karaoke documentation.

enum ASSFormat {
    static let lyricStyle = "Default", translationStyle = "Translation"

    /// `h:mm:ss.cc`, rounded to the centisecond.
    static func stamp(_ ms: Int) -> String {
        let cs = (max(0, ms) + 5) / 10
        return "\(cs / 360_000):\(TimeText.pad((cs / 6000) % 60, 2)):\(TimeText.pad((cs / 100) % 60, 2)).\(TimeText.pad(cs % 100, 2))"
    }

    static func centiseconds(_ ms: Int) -> Int { (ms + 5) / 10 }

    /// One Dialogue per line; its words as `{\k}` syllables whose centiseconds are the differences of
    /// the rounded boundaries (line start, each word's start and end, line end), so the tags of a
    /// line sum to its written duration exactly and rounding never drifts along it. A gap between
    /// words is a `{\k}` with no text. Translations are a second style, one Dialogue each.
    static func write(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        var out = ""
        out += "[Script Info]\n; Written by ktv\nTitle: \(oneLine(lyrics.title ?? ""))\nScriptType: v4.00+\nWrapStyle: 0\nPlayResX: 1920\nPlayResY: 1080\nScaledBorderAndShadow: yes\n\n"
        out += "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n"
        out += "Style: \(lyricStyle),Arial,72,&H00FFFFFF,&H00FF9900,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,3,0,2,60,60,120,1\n"
        out += "Style: \(translationStyle),Arial,48,&H00E0E0E0,&H00E0E0E0,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,2,0,2,60,60,50,1\n\n"
        out += "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
        var clamped = 0
        for line in lyrics.lines {
            guard line.startMs >= 0, line.durationMs >= 0 else {
                throw .cannotWrite(format: .ass, detail: "line at \(TimeText.ms(line.startMs)) has a negative start or duration")
            }
            var text = ""
            let words = line.words
            if words.isEmpty {
                text = try escape(line.text, at: line.startMs)
            } else {
                var at = centiseconds(line.startMs)
                for w in words {
                    guard w.startMs >= 0, w.durationMs >= 0 else {
                        throw .cannotWrite(format: .ass, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                    }
                    var start = centiseconds(w.startMs), end = centiseconds(w.endMs)
                    // ASS syllables follow each other: a word starting before the one before ends (or
                    // before the line) is moved to where the last one ended.
                    if start < at { start = at; end = max(end, at); clamped += 1 }
                    if start > at { text += "{\\k\(start - at)}" }
                    text += "{\\k\(end - start)}" + (try escape(w.text, at: w.startMs))
                    at = end
                }
                let lineEnd = centiseconds(line.endMs)
                if lineEnd > at { text += "{\\k\(lineEnd - at)}" }
            }
            out += "Dialogue: 0,\(stamp(line.startMs)),\(stamp(max(line.endMs, words.last?.endMs ?? line.endMs))),\(lyricStyle),,0,0,0,karaoke,\(text)\n"
            if let tr = line.translation {
                out += "Dialogue: 0,\(stamp(line.startMs)),\(stamp(line.endMs)),\(translationStyle),,0,0,0,,\(try escape(tr, at: line.startMs))\n"
            }
        }
        if clamped > 0 {
            notes.append(.info("words-moved", "\(clamped) word(s) started before the word before them ended; ASS syllables follow each other, so each was moved to start where the one before ended"))
        }
        if lyrics.lines.contains(where: { $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("romanization-dropped", "ASS has no place for per-word romanization; use krc or json to keep it"))
        }
        if lyrics.artist != nil || lyrics.album != nil {
            notes.append(.info("tags-dropped", "ASS's header keeps the title only; the other tags (artist, album, …) were not written"))
        }
        return Array(out.utf8)
    }

    static func oneLine(_ s: String) -> String { s.replacingLineBreaks }

    /// Text as ASS shows it: `{` would open an override block and `\` start a tag, and ASS has no
    /// escape for either, so such text is refused rather than shown wrong; a line break becomes `\N`.
    static func escape(_ s: String, at ms: Int) throws(LyricsError) -> String {
        if s.contains("{") || s.contains("}") || s.contains("\\") {
            throw .cannotWrite(format: .ass, detail: "text `\(Scan.capped(s))` at \(TimeText.ms(ms)) holds `{`, `}` or `\\`, which ASS cannot escape")
        }
        return s.replacingLineBreaks
    }
}

/// Reads ASS: the `[Events]` section's `Format:` gives the columns; each `Dialogue:` of the lyric
/// style (or any style but `Translation` when none is called `Default`) is a line, its `\k`, `\kf`,
/// `\K` and `\ko` tags the words; a `Translation` Dialogue starting with a line is its translation.
/// Other override tags are ignored; `\N` and `\n` are line breaks, read as spaces.
struct ASSParser {
    var options: LyricsParseOptions

    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) -> Lyrics {
        var section = "", columns: [String] = []
        var tags: [LyricTag] = []
        var lines: [LyricLine] = []
        var translations: [(startMs: Int, text: String)] = []
        for row in Scan.lines(text) {
            // Only the start is trimmed: a Dialogue's text may end in a space that is part of its last word.
            let s = Scan.string(Scan.trimLeading(row.bytes)), trimmed = s.trimmingSpaces
            if trimmed.isEmpty || s.hasPrefix(";") { continue }
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") { section = trimmed.lowercased(); continue }
            guard let colon = s.firstIndex(of: ":") else { continue }
            let key = String(s[..<colon]).trimmingSpaces
            let raw = s[s.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            let value = key == "Dialogue" ? String(raw) : String(raw).trimmingSpaces
            if section == "[script info]", key == "Title", !value.isEmpty { tags.append(LyricTag(key: "ti", value: value)) }
            guard section == "[events]" else { continue }
            if key == "Format" { columns = value.split(separator: ",").map { String($0).trimmingSpaces.lowercased() }; continue }
            guard key == "Dialogue" else { continue }
            guard !columns.isEmpty, let ti = columns.firstIndex(of: "text"), let si = columns.firstIndex(of: "start"),
                  let ei = columns.firstIndex(of: "end") else {
                diags.append(.error("unparsable-line", line: row.number, "a Dialogue before the [Events] section's `Format:` row (or one without Start, End and Text); add `Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text`"))
                continue
            }
            // Text is the last column and may hold commas: split only the others off.
            let fields = value.split(separator: ",", maxSplits: columns.count - 1, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == columns.count else {
                diags.append(.error("unparsable-line", line: row.number, "a Dialogue with \(fields.count) fields where `Format:` names \(columns.count)"))
                continue
            }
            guard let start = Self.time(fields[si]), let end = Self.time(fields[ei]) else {
                diags.append(.error("invalid-time", line: row.number, "Dialogue times `\(fields[si])`, `\(fields[ei])` are not `h:mm:ss.cc`"))
                continue
            }
            let style = columns.firstIndex(of: "style").map { fields[$0].trimmingSpaces } ?? ASSFormat.lyricStyle
            let body = fields[ti]
            if style == ASSFormat.translationStyle {
                translations.append((start, Self.plain(body)))
                continue
            }
            let words = Self.syllables(body, lineStartMs: start)
            if words.isEmpty {
                lines.append(LyricLine(startMs: start, durationMs: max(0, end - start), text: Self.plain(body), sourceLine: row.number))
            } else {
                let kept = words.filter { !$0.text.isEmpty }
                lines.append(LyricLine(startMs: start, durationMs: max(0, end - start), text: kept.map(\.text).joined(), words: kept, sourceLine: row.number))
            }
        }
        for t in translations {
            if let k = lines.firstIndex(where: { $0.startMs == t.startMs }) { lines[k].translation = t.text }
        }
        var lyrics = Lyrics(format: .ass, tags: tags, lines: lines)
        Timeline.sortLines(&lyrics.lines, report: true, into: &diags)
        return lyrics
    }

    /// `h:mm:ss.cc` (hours any width, a fraction of 1-3 digits) in ms. On bytes, with `Int`'s
    /// reading of each field (splitting Strings was a quarter of reading an ASS file).
    static func time(_ raw: String) -> Int? {
        let b = Array(raw.utf8)
        let parts = Scan.trimSpaces(b[...]).split(separator: ASCII.colon, omittingEmptySubsequences: false)
        guard parts.count == 3, let h = Scan.integer(parts[0]), let m = Scan.integer(parts[1]), h >= 0, h < 1000, (0..<60).contains(m) else { return nil }
        let sec = parts[2].split(separator: ASCII.dot, omittingEmptySubsequences: false)
        guard sec.count <= 2, let s = Scan.integer(sec[0]), (0..<60).contains(s), sec[0].count <= 2 else { return nil }
        var frac = 0
        if sec.count == 2 {
            let digits = sec[1]
            guard (1...3).contains(digits.count), let f = Scan.integer(digits) else { return nil }
            frac = digits.count == 1 ? f * 100 : digits.count == 2 ? f * 10 : f
        }
        return ((h * 60 + m) * 60 + s) * 1000 + frac
    }

    /// The syllables of a karaoke Dialogue: each `\k`-family tag times the text after it (up to the
    /// next tag). Empty when the text has no karaoke tag. Read as bytes (every mark here is ASCII):
    /// walking Characters made ASS ten times slower to read than KRC.
    static func syllables(_ body: String, lineStartMs: Int) -> [LyricWord] {
        let b = Array(body.utf8)
        guard ByteText.contains(b[...], "\\k") || ByteText.contains(b[...], "\\K") else { return [] }
        var words: [LyricWord] = []
        var at = lineStartMs, pendingCs: Int?, text: [UInt8] = []
        func flush() {
            if let cs = pendingCs {
                words.append(LyricWord(startMs: at, durationMs: cs * 10, text: String(decoding: text, as: UTF8.self)))
                at += cs * 10
            } else if !text.isEmpty, !words.isEmpty {
                words[words.count - 1].text += String(decoding: text, as: UTF8.self)   // text after a block without a \k joins the syllable
            }
            pendingCs = nil
            text = []
        }
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "{"), let close = b[i...].firstIndex(of: UInt8(ascii: "}")) {
                if let cs = karaoke(b[(i + 1)..<close]) {
                    flush()
                    pendingCs = cs
                }
                i = close + 1
                continue
            }
            if isLineBreak(b, at: i) {
                text.append(ASCII.space)
                i += 2
                continue
            }
            text.append(b[i])
            i += 1
        }
        flush()
        return words
    }

    /// `\N`, `\n` or `\h` at `i`: ASS's line breaks and hard space, read as a space.
    private static func isLineBreak(_ b: [UInt8], at i: Int) -> Bool {
        b[i] == UInt8(ascii: "\\") && i + 1 < b.count && (b[i + 1] == UInt8(ascii: "N") || b[i + 1] == UInt8(ascii: "n") || b[i + 1] == UInt8(ascii: "h"))
    }

    /// The centiseconds of the block's `\k`, `\kf`, `\K` or `\ko` tag, if it has one.
    static func karaoke(_ block: ArraySlice<UInt8>) -> Int? {
        var j = block.startIndex
        while let slash = block[j...].firstIndex(of: UInt8(ascii: "\\")) {
            j = slash + 1
            guard j < block.endIndex, block[j] == UInt8(ascii: "k") || block[j] == UInt8(ascii: "K") else { continue }
            j += 1
            if j < block.endIndex, block[j] == UInt8(ascii: "f") || block[j] == UInt8(ascii: "o") { j += 1 }
            var e = j
            while e < block.endIndex, ASCII.isDigit(block[e]) { e += 1 }
            if e > j, e - j <= 7, let cs = Int(String(decoding: block[j..<e], as: UTF8.self)) { return cs }
        }
        return nil
    }

    /// The text without override blocks, line breaks as spaces.
    static func plain(_ body: String) -> String {
        let b = Array(body.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var inBlock = false
        var i = 0
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "{") { inBlock = true } else if c == UInt8(ascii: "}") { inBlock = false } else if !inBlock {
                if isLineBreak(b, at: i) {
                    out.append(ASCII.space)
                    i += 2
                    continue
                }
                out.append(c)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
