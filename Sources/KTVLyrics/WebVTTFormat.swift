import KTVCore

// WebVTT (W3C, "WebVTT: The Web Video Text Tracks Format"): a `WEBVTT` header, then cues of
// `start --> end` and text, whose `<hh:mm:ss.ttt>` timestamp tags time the text after them (the
// karaoke a browser's `::cue(:past)` / `:future` styling shows). Grammar and deviations met:
// docs/lyric-formats.md §3.6.

enum WebVTTFormat {
    /// `hh:mm:ss.ttt`.
    static func stamp(_ ms: Int) -> String {
        let v = max(0, ms)
        return "\(TimeText.pad(v / 3_600_000, 2)):\(TimeText.pad((v / 60000) % 60, 2)):\(TimeText.pad((v / 1000) % 60, 2)).\(TimeText.pad(v % 1000, 3))"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.replacingLineBreaks {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A cue per line: `<start>` before each word's text; a gap after a
    /// word is an empty timestamp span (`word<end><next start>next`), so word ends survive. The
    /// translation is the cue's second text line; the tags sit in a `NOTE` block as `[key:value]`.
    static func write(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        var out = "WEBVTT\n\n"
        let tags = lyrics.tags.filter { let k = $0.key.lowercased(); return k != "offset" && k != "language" }
        if !tags.isEmpty {
            out += "NOTE\n" + tags.map { "[\($0.key.replacingOccurrences(of: "-->", with: "- ->")):\($0.value.replacingLineBreaks.replacingOccurrences(of: "-->", with: "- ->"))]" }.joined(separator: "\n") + "\n\n"
        }
        var moved = 0
        for (k, line) in lyrics.lines.enumerated() {
            guard line.startMs >= 0, line.durationMs >= 0 else {
                throw .cannotWrite(format: .webVTT, detail: "line at \(TimeText.ms(line.startMs)) has a negative start or duration")
            }
            let words = line.words
            let end = max(line.endMs, words.map(\.endMs).max() ?? line.endMs)
            out += "\(k + 1)\n\(stamp(line.startMs)) --> \(stamp(end))\n"
            if words.isEmpty {
                out += escape(line.text)
            } else {
                var at = line.startMs
                for (i, w) in words.enumerated() {
                    guard w.startMs >= 0, w.durationMs >= 0 else {
                        throw .cannotWrite(format: .webVTT, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                    }
                    var start = w.startMs
                    if start < at { start = at; moved += 1 }   // timestamps only go forward
                    // Every word opens with its timestamp (the first too: a one-word line stays a word).
                    out += "<\(stamp(start))>"
                    out += escape(w.text)
                    at = max(start, w.endMs)
                    let next = i + 1 < words.count ? words[i + 1].startMs : end
                    // The word ends before the next starts (or before the cue ends): mark its end.
                    if w.endMs < next { out += "<\(stamp(w.endMs))>" }
                }
            }
            out += "\n"
            if let tr = line.translation, !tr.isBlank { out += escape(tr) + "\n" }
            out += "\n"
        }
        if moved > 0 {
            notes.append(.info("words-moved", "\(moved) word(s) started before the word before them ended; WebVTT timestamps only go forward, so each was moved to start where the one before ended"))
        }
        if lyrics.lines.contains(where: { $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("romanization-dropped", "WebVTT has no place for per-word romanization; use krc or json to keep it"))
        }
        return Array(out.utf8)
    }
}

/// Reads WebVTT: the header, `NOTE` blocks (their `[key:value]` lines are tags), `STYLE` and
/// `REGION` blocks (skipped), and cues: an optional identifier line, the timing line (settings
/// after the end are ignored), then text lines up to a blank line. The first text line is the
/// lyric; `<timestamp>` tags split it into words, each ending where the next timestamp is (an empty
/// span between two timestamps is a pause); other tags (`<c>`, `<v>`, `<b>`, `<i>`, `<u>`, `<ruby>`,
/// `<lang>`) are dropped with their text kept; later text lines are the translation.
struct WebVTTParser {
    var options: LyricsParseOptions

    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) -> Lyrics {
        var rows = Array(Scan.lines(text))
        var tags: [LyricTag] = []
        var lines: [LyricLine] = []
        if let first = rows.first {
            let header = Scan.string(first.bytes).drop { $0 == "\u{FEFF}" }
            if !header.hasPrefix("WEBVTT") {
                diags.append(.error("unparsable-line", line: first.number, "a WebVTT file starts with `WEBVTT`; found `\(Scan.preview(first.bytes))`"))
            }
            rows.removeFirst()
        }
        // Blocks: runs of non-blank rows.
        var blocks: [[TextLine]] = [], current: [TextLine] = []
        for row in rows {
            if Scan.isBlank(row.bytes) { if !current.isEmpty { blocks.append(current); current = [] } } else { current.append(row) }
        }
        if !current.isEmpty { blocks.append(current) }
        for block in blocks {
            let head = Scan.string(block[0].bytes)
            if head.hasPrefix("NOTE") {
                for row in block {
                    let s = Scan.string(row.bytes).trimmingSpaces
                    if s.hasPrefix("["), s.hasSuffix("]"), let colon = s.firstIndex(of: ":") {
                        tags.append(LyricTag(key: String(s[s.index(after: s.startIndex)..<colon]), value: String(s[s.index(after: colon)..<s.index(before: s.endIndex)])))
                    }
                }
                continue
            }
            if head.hasPrefix("STYLE") || head.hasPrefix("REGION") { continue }
            guard let t = block.firstIndex(where: { ByteText.contains($0.bytes, "-->") }) else {
                diags.append(.error("unparsable-line", line: block[0].number, "a block with no `start --> end` timing line: `\(Scan.preview(block[0].bytes))`"))
                continue
            }
            let timing = Scan.string(block[t].bytes).components(separatedBy: "-->")
            let endField = timing.count > 1 ? (timing[1].trimmingSpaces.split(separator: " ").first.map(String.init) ?? "") : ""
            guard timing.count == 2, let start = Self.time(timing[0].trimmingSpaces), let end = Self.time(endField) else {
                let negative = timing.contains { $0.trimmingSpaces.hasPrefix("-") }
                diags.append(.error("invalid-time", line: block[t].number, negative
                    ? "a cue time cannot be negative; found `\(Scan.preview(block[t].bytes))`"
                    : "a cue timing must be `hh:mm:ss.ttt --> hh:mm:ss.ttt`; found `\(Scan.preview(block[t].bytes))`"))
                continue
            }
            let textRows = block[(t + 1)...].map { Scan.string($0.bytes) }
            guard let lyric = textRows.first else {
                lines.append(LyricLine(startMs: start, durationMs: max(0, end - start), text: "", sourceLine: block[t].number))
                continue
            }
            let (plain, words) = Self.words(lyric, cueStart: start, cueEnd: end)
            var line = LyricLine(startMs: start, durationMs: max(0, end - start), text: words.isEmpty ? plain : words.map(\.text).joined(),
                                 words: words, sourceLine: block[t].number)
            if textRows.count > 1 { line.translation = textRows.dropFirst().map { Self.words($0, cueStart: start, cueEnd: end).0 }.joined(separator: " ") }
            lines.append(line)
        }
        var lyrics = Lyrics(format: .webVTT, tags: tags, lines: lines)
        Timeline.sortLines(&lyrics.lines, report: true, into: &diags)
        return lyrics
    }

    /// `hh:mm:ss.ttt` or `mm:ss.ttt` in ms. Every field is ASCII digits only: `Int("-00")` is 0, so
    /// `-00:01.000` would otherwise read as 1000 ms (and `+01` as 1).
    static func time(_ raw: String) -> Int? { time(bytes: Array(raw.utf8)[...]) }

    /// `time` on bytes: a cue's every word tag is one, and splitting Strings was half of reading a file.
    static func time(bytes raw: ArraySlice<UInt8>) -> Int? {
        func digits(_ s: ArraySlice<UInt8>) -> Int? { !s.isEmpty && s.allSatisfy(ASCII.isDigit) ? Scan.integer(s) : nil }
        let parts = raw.split(separator: ASCII.colon, omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count) else { return nil }
        let h = parts.count == 3 ? digits(parts[0]) : 0
        let m = digits(parts[parts.count - 2])
        let sec = parts[parts.count - 1].split(separator: ASCII.dot, omittingEmptySubsequences: false)
        guard let h, let m, h < 100_000, m < 60, sec.count == 2, sec[0].count == 2, sec[1].count == 3,
              let s = digits(sec[0]), s < 60, let f = digits(sec[1]) else { return nil }
        return ((h * 60 + m) * 60 + s) * 1000 + f
    }

    /// The character references a cue's text may hold, and what they stand for.
    static let entities: [String: String] = ["&amp;": "&", "&lt;": "<", "&gt;": ">", "&nbsp;": "\u{00A0}", "&lrm;": "\u{200E}", "&rlm;": "\u{200F}"]

    /// The cue text without tags, and its words when it has timestamp tags (none otherwise). Read as
    /// bytes (tags and references are ASCII): walking Characters made WebVTT ten times slower to
    /// read than KRC.
    static func words(_ text: String, cueStart: Int, cueEnd: Int) -> (String, [LyricWord]) {
        let b = Array(text.utf8)
        var segments: [(startMs: Int, text: [UInt8])] = [(cueStart, [])]
        var plain: [UInt8] = []
        plain.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            let c = b[i]
            if c == ASCII.langle, let close = b[i...].firstIndex(of: ASCII.rangle) {
                if let ms = time(bytes: b[(i + 1)..<close]) { segments.append((ms, [])) }
                i = close + 1
                continue
            }
            if c == UInt8(ascii: "&"), let semi = b[i..<min(b.count, i + 8)].firstIndex(of: UInt8(ascii: ";")),
               let v = entities[String(decoding: b[i...semi], as: UTF8.self)] {
                segments[segments.count - 1].text += v.utf8
                plain += v.utf8
                i = semi + 1
                continue
            }
            segments[segments.count - 1].text.append(c)
            plain.append(c)
            i += 1
        }
        let plainText = String(decoding: plain, as: UTF8.self)
        guard segments.count > 1 else { return (plainText, []) }
        var words: [LyricWord] = []
        for (k, seg) in segments.enumerated() where !seg.text.isEmpty {
            let end = k + 1 < segments.count ? segments[k + 1].startMs : cueEnd
            words.append(LyricWord(startMs: seg.startMs, durationMs: max(0, end - seg.startMs), text: String(decoding: seg.text, as: UTF8.self)))
        }
        return (plainText, words)
    }
}
