import KTVCore

// TTML2 lyrics as Apple Music and the AMLL player use them (W3C "Timed Text Markup Language 2";
// Apple's word-timed profile): `<p begin end ttm:agent>` per line, `<span begin end>` per word, a
// `ttm:role="x-bg"` span holding the background vocals' words, `x-translation` and `x-roman` spans
// for the translation and romanization, agents declared as `<ttm:agent xml:id>` in the head.
// Grammar and deviations met: docs/lyric-formats.md §3.7.
//
// Times: in TTML's timing model (TTML2 §12.1.1: `p` and `span` are parallel time containers), an
// element's `begin` and `end` are offsets from its parent's begin, so a word's span counts from its
// line's `<p>`. Apple Music's files and AMLL (its reader and its editor) put the song's clock in every
// span instead; a W3C reader (ttconv) then places each word a line's start too late. ktv writes
// either (`TTMLTiming`, relative by default) and reads both, telling them apart by the values.

/// How the times of a TTML element's children are counted.
public enum TTMLTiming: String, Sendable, CaseIterable {
    /// From the parent's begin: TTML's timing model, what W3C readers (ttconv, IMSC players) expect.
    case relative
    /// On the song's clock, whatever the parent: Apple Music's and AMLL's files, and their readers.
    case absolute
}

enum TTMLFormat {
    /// `hh:mm:ss.fff`: TTML's clock time wants two digits of hours at least.
    static func stamp(_ ms: Int) -> String {
        let v = max(0, ms)
        return "\(TimeText.pad(v / 3_600_000, 2)):\(TimeText.pad((v / 60000) % 60, 2)):\(TimeText.pad((v / 1000) % 60, 2)).\(TimeText.pad(v % 1000, 3))"
    }

    /// One `<p>` per line, written on one row with nothing between spans but what the words hold
    /// (TTML keeps spaces between elements as text, so indentation would become spaces in the lyric).
    /// `timing`: word times from the line's begin (TTML) or on the song's clock (Apple, AMLL). A
    /// relative `<p>` begins at its first word when that starts before the line (an offset cannot
    /// be negative), with a note.
    static func write(_ lyrics: Lyrics, timing: TTMLTiming = .relative, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        let agents = Array(Set(lyrics.lines.compactMap(\.voice))).sorted()
        let end = lyrics.lines.map { max($0.endMs, $0.words.map(\.endMs).max() ?? 0) }.max() ?? 0
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<tt xmlns=\"http://www.w3.org/ns/ttml\" xmlns:ttm=\"http://www.w3.org/ns/ttml#metadata\" xmlns:itunes=\"http://music.apple.com/lyric-ttml-internal\" itunes:timing=\"Word\" xml:lang=\"und\">"
        out += "<head><metadata>"
        for a in agents { out += "<ttm:agent type=\"\(a == "v1000" ? "group" : "person")\" xml:id=\"\(xmlEscaped(a))\"/>" }
        if let t = lyrics.title { out += "<ttm:title>\(xmlEscaped(t))</ttm:title>" }
        for tag in lyrics.tags where !["ti", "offset", "language"].contains(tag.key.lowercased()) {
            out += "<amll:meta xmlns:amll=\"http://www.example.com/ns/amll\" key=\"\(xmlEscaped(tag.key))\" value=\"\(xmlEscaped(tag.value))\"/>"
        }
        out += "</metadata></head>\n<body dur=\"\(stamp(end))\"><div>\n"
        var movedStarts = 0
        for (k, line) in lyrics.lines.enumerated() {
            guard line.startMs >= 0, line.durationMs >= 0 else {
                throw .cannotWrite(format: .ttml, detail: "line at \(TimeText.ms(line.startMs)) has a negative start or duration")
            }
            let lineEnd = max(line.endMs, line.words.map(\.endMs).max() ?? line.endMs)
            var lineStart = line.startMs
            if timing == .relative, let first = line.words.map(\.startMs).min(), first < lineStart {
                lineStart = first
                movedStarts += 1
            }
            // What a word's times are counted from.
            let origin = timing == .relative ? lineStart : 0
            out += "<p begin=\"\(stamp(lineStart))\" end=\"\(stamp(lineEnd))\" itunes:key=\"L\(k + 1)\""
            if let v = line.voice { out += " ttm:agent=\"\(xmlEscaped(v))\"" }
            out += ">"
            let words = line.words
            if words.isEmpty {
                out += xmlEscaped(line.text.replacingLineBreaks)
            } else {
                var inBackground = false
                for w in words {
                    guard w.startMs >= 0, w.durationMs >= 0 else {
                        throw .cannotWrite(format: .ttml, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                    }
                    if w.background != inBackground {
                        out += w.background ? "<span ttm:role=\"x-bg\">" : "</span>"
                        inBackground = w.background
                    }
                    out += "<span begin=\"\(stamp(w.startMs - origin))\" end=\"\(stamp(w.endMs - origin))\">\(xmlEscaped(w.text.replacingLineBreaks))</span>"
                }
                if inBackground { out += "</span>" }
                let roman = words.compactMap(\.romanization)
                if !roman.isEmpty { out += "<span ttm:role=\"x-roman\">\(xmlEscaped(roman.joined(separator: " ")))</span>" }
            }
            if let tr = line.translation { out += "<span ttm:role=\"x-translation\" xml:lang=\"und\">\(xmlEscaped(tr.replacingLineBreaks))</span>" }
            out += "</p>\n"
        }
        out += "</div></body></tt>\n"
        if movedStarts > 0 {
            notes.append(.info("line-start-moved", "\(movedStarts) line(s) start after their first word; their <p> begins at that word (TTML counts a word's time from its line's begin, which cannot come after it)"))
        }
        if lyrics.lines.contains(where: { $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("romanization-joined", "TTML keeps a line's romanization as one x-roman span; per-word romanizations were joined with spaces"))
        }
        return Array(out.utf8)
    }
}

/// Reads TTML lyrics: `<p>` elements anywhere under `<body>` are lines (times from `begin`/`end`,
/// or `begin`/`dur`, in clock time `h:mm:ss.fff`, `mm:ss.fff`, `ss.fff` or offset time `12.5s`,
/// `1500ms`); their timed `<span>`s are words, the text between spans belongs to the word before;
/// a `ttm:role="x-bg"` span's words are background words; `x-translation` and `x-roman` spans are
/// the translation and romanization; `ttm:agent` is the line's voice; `<ttm:title>` is the title.
/// Times are read in the document's dialect (`dialect(of:)`): offsets from the parent's begin
/// (TTML), or the song's clock (Apple, AMLL).
struct TTMLParser {
    var options: LyricsParseOptions

    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) throws(LyricsError) -> Lyrics {
        let root: XMLElement
        do { root = try MiniXML.parse(text, mixedContent: true) } catch {
            throw .malformed(line: error.line, detail: "malformed XML: \(error.message)")
        }
        guard root.name == "tt" || root.name.hasSuffix(":tt") else {
            throw .unrecognizedFormat(detail: "XML root is `<\(root.name)>`; TTML has `<tt>`")
        }
        var tags: [LyricTag] = []
        func metadata(_ e: XMLElement) {
            for c in e.children {
                if c.name == "ttm:title", !c.text.isBlank { tags.append(LyricTag(key: "ti", value: c.text.trimmingSpaces)) }
                if c.name.hasSuffix(":meta"), let k = c.attribute("key"), let v = c.attribute("value") { tags.append(LyricTag(key: k, value: v)) }
                metadata(c)
            }
        }
        if let head = root.child("head") { metadata(head) }
        guard let body = root.child("body") else {
            throw .malformed(line: root.line, detail: "`<tt>` has no `<body>` holding the lyric paragraphs")
        }
        let timing = Self.dialect(of: body)
        var lines: [LyricLine] = []
        // `origin`: where the times of `e`'s children count from (its begin, relative dialect).
        func paragraphs(_ e: XMLElement, origin: Int) {
            for c in e.children {
                if c.name == "p" {
                    if let l = line(c, origin: origin, timing: timing, into: &diags) { lines.append(l) }
                } else {
                    let own = timing == .relative ? Self.rawTimes(c).map { origin + $0.begin } : nil
                    paragraphs(c, origin: own ?? origin)
                }
            }
        }
        let bodyOrigin = timing == .relative ? Self.rawTimes(body)?.begin ?? 0 : 0
        paragraphs(body, origin: bodyOrigin)
        var lyrics = Lyrics(format: .ttml, tags: tags, lines: lines)
        Timeline.sortLines(&lyrics.lines, report: true, into: &diags)
        return lyrics
    }

    private func line(_ p: XMLElement, origin: Int, timing: TTMLTiming, into diags: inout [Diagnostic]) -> LyricLine? {
        guard let (start, end) = Self.span(p, origin: origin, into: &diags) else { return nil }
        var words: [LyricWord] = []
        var translation: String?, roman: String?
        func take(_ e: XMLElement, background: Bool, origin: Int) {
            for c in e.children where c.name == "span" {
                switch c.attribute("ttm:role") {
                case "x-translation": translation = c.text.trimmingSpaces
                case "x-roman": roman = c.text.trimmingSpaces
                case "x-bg":
                    // A timed background span is what its words count from (relative dialect).
                    let own = timing == .relative ? Self.rawTimes(c).map { origin + $0.begin } : nil
                    take(c, background: true, origin: own ?? origin)
                default:
                    if let (s, e) = Self.span(c, origin: origin, into: &diags) {
                        var w = LyricWord(startMs: s, durationMs: max(0, e - s), text: c.text)
                        w.background = background
                        words.append(w)
                    } else if !words.isEmpty {
                        words[words.count - 1].text += c.text   // an untimed span: text of the word before
                    }
                }
                // Text after a span (a space between words) belongs to the word before it.
                if !c.tail.isEmpty, !words.isEmpty, c.attribute("ttm:role") == nil || c.attribute("ttm:role") == "x-bg" {
                    words[words.count - 1].text += c.tail.replacingLineBreaks
                }
            }
        }
        take(p, background: false, origin: timing == .relative ? start : 0)
        // The model keeps romanization per word: a line's x-roman span with a part per word is split onto them.
        if let roman, !words.isEmpty {
            let parts = roman.split(separator: " ").map(String.init)
            if parts.count == words.count {
                for k in words.indices { words[k].romanization = parts[k] }
            } else {
                diags.append(.info("romanization-dropped", line: p.line, "the line's x-roman span has \(parts.count) part(s) for \(words.count) word(s); it was not kept"))
            }
        }
        let text = words.isEmpty ? p.text.replacingLineBreaks.trimmingSpaces : words.map(\.text).joined()
        var line = LyricLine(startMs: start, durationMs: max(0, end - start), text: text, words: words, translation: translation, sourceLine: p.line)
        if let v = p.attribute("ttm:agent") { line.voice = v }
        return line
    }

    /// How far (ms) a child may reach outside its parent and still be taken to lie within it.
    static let slackMs = 1

    /// The dialect of a document's times, from their values: each timed element inside a timed
    /// parent that begins after 0 (where the two readings differ) fits inside its parent read one
    /// way, the other, or both. Taken as song times, a child lies within its parent's `begin…end`;
    /// taken as offsets, within `0…end − begin`. The reading more elements fit alone wins; when none
    /// tells them apart, a parent's first timed child beginning with it (Apple, AMLL) or at 0 (TTML)
    /// does; when nothing does, TTML's own reading (relative).
    static func dialect(of body: XMLElement) -> TTMLTiming {
        var onlyAbsolute = 0, onlyRelative = 0, hintAbsolute = 0, hintRelative = 0
        func visit(_ e: XMLElement, parent: (begin: Int, end: Int?)?) {
            var first = true
            for c in e.children {
                let own = rawTimes(c)
                if let own, let parent, parent.begin > 0 {
                    let absolute = own.begin >= parent.begin - slackMs && (parent.end == nil || (own.end ?? own.begin) <= parent.end! + slackMs)
                    let relative = own.begin >= 0 && (parent.end == nil || (own.end ?? own.begin) <= parent.end! - parent.begin + slackMs)
                    if absolute && !relative { onlyAbsolute += 1 }
                    if relative && !absolute { onlyRelative += 1 }
                    if first {
                        if own.begin == parent.begin { hintAbsolute += 1 } else if own.begin == 0 { hintRelative += 1 }
                    }
                }
                if own != nil { first = false }
                visit(c, parent: own ?? parent)
            }
        }
        visit(body, parent: rawTimes(body))
        if onlyAbsolute != onlyRelative { return onlyAbsolute > onlyRelative ? .absolute : .relative }
        if hintAbsolute != hintRelative { return hintAbsolute > hintRelative ? .absolute : .relative }
        return .relative
    }

    /// An element's `begin` and `end` (or `begin` + `dur`) as written, ms; nil without a readable `begin`.
    static func rawTimes(_ e: XMLElement) -> (begin: Int, end: Int?)? {
        guard let b = e.attribute("begin").flatMap(time) else { return nil }
        if let raw = e.attribute("end") { return (b, time(raw)) }
        if let d = e.attribute("dur").flatMap(time) { return (b, b + d) }
        return (b, nil)
    }

    /// An element's `begin` and `end` (or `begin` + `dur`), ms, counted from `origin`; nil without them.
    static func span(_ e: XMLElement, origin: Int = 0, into diags: inout [Diagnostic]) -> (Int, Int)? {
        guard let b = e.attribute("begin") else { return nil }
        guard let start = time(b) else {
            diags.append(.error("invalid-time", line: e.line, "`begin=\"\(b)\"` is not a TTML time such as `1:02.345` or `62.345s`"))
            return nil
        }
        if let raw = e.attribute("end") {
            guard let end = time(raw) else {
                diags.append(.error("invalid-time", line: e.line, "`end=\"\(raw)\"` is not a TTML time such as `1:02.345` or `62.345s`"))
                return nil
            }
            return (origin + start, origin + end)
        }
        if let raw = e.attribute("dur"), let d = time(raw) { return (origin + start, origin + start + d) }
        return (origin + start, origin + start)
    }

    /// Clock time (`h:mm:ss.fff`, `mm:ss.fff`, `ss.fff`) or offset time (`12.5s`, `1500ms`, `0.5h`, `2m`), ms.
    static func time(_ raw: String) -> Int? {
        // On bytes: every span has two times, each read twice (the dialect, then the line), and
        // String splitting made TTML the slowest format to read.
        let b = Array(raw.utf8)
        let s = Scan.trimSpaces(b[...])
        for (suffix, scale) in [("ms", 1.0), ("h", 3_600_000.0), ("m", 60_000.0), ("s", 1000.0)] where s.reversed().starts(with: suffix.utf8.reversed()) {
            let number = s.dropLast(suffix.utf8.count)
            guard !number.isEmpty, number.allSatisfy({ ASCII.isDigit($0) || $0 == ASCII.dot }),
                  let v = Double(String(decoding: number, as: UTF8.self)), v < 1e9 else { return nil }
            return Int((v * scale).rounded())
        }
        let parts = s.split(separator: ASCII.colon, omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var ms = 0
        for (k, part) in parts.enumerated() {
            let last = k == parts.count - 1
            if last {
                guard let v = DecimalTime.milliseconds(fromSeconds: part), v >= 0, parts.count == 1 || v < 60_000 else { return nil }
                return ms * 60_000 + v
            }
            guard let v = Scan.integer(part), v >= 0, v < 1_000_000, k == 0 || v < 60 else { return nil }
            ms = ms * 60 + v
        }
        return nil
    }
}
