import KTVCore

/// LRC in all its real-world shapes (docs/lyric-formats.md §2): `[mm:ss]`, `[mm:ss.x|.xx|.xxx]` (a decimal
/// fraction of a second), minutes ≥ 60, `[mm:ss:xx]` (ambiguous; read as a fraction, warned),
/// `[hh:mm:ss.xx]`, several stamps per row, ID tags, `[offset:±N]`, enhanced (A2) word stamps
/// `<mm:ss.xx>word` with or without a closing stamp, and the inline `[mm:ss.xx]word[mm:ss.xx]word` style.
///
/// Line ends: an empty stamped row right after a line ends it; otherwise a closing stamp; otherwise the
/// next line's start; for the last line `[total:]`, or its last word stamp.
struct LRCParser {
    var options: LyricsParseOptions

    /// One timed row after multi-stamp expansion.
    private struct Row {
        var startMs: Int
        var text: String
        /// Word starts and texts; `ends[k]` is the stamp after word k, if any.
        var words: [(start: Int, text: String, end: Int?)]
        var closingMs: Int?
        var isEndMarker: Bool
        var line: Int
        var order: Int
    }

    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) -> Lyrics {
        var collector = TagCollector()
        var rows: [Row] = []
        var previousEarliestStamp: Int?
        var reportedOrder = false
        for src in Scan.lines(text) {
            let b = Scan.trimLeading(src.bytes)
            if Scan.isBlank(b) { continue }
            guard b.first == ASCII.lbracket else {
                diags.append(.error("unparsable-line", line: src.number,
                                    "expected `[mm:ss.xx]text` or a tag `[key:value]`, found `\(Scan.preview(b))`"))
                continue
            }
            var stamps: [Int] = []
            var i = b.startIndex
            while i < b.endIndex, b[i] == ASCII.lbracket, let t = Self.stamp(b, i, close: ASCII.rbracket) {
                report(t, line: src.number, into: &diags)
                stamps.append(t.ms)
                i = t.end
                // `[00:01.00] [00:02.00]text` style: spaces between leading stamps.
                let j = Scan.skipSpaces(b, i)
                if j < b.endIndex, b[j] == ASCII.lbracket, Self.stamp(b, j, close: ASCII.rbracket) != nil { i = j }
            }
            if stamps.isEmpty {
                collector.take(b, line: src.number, into: &diags) {
                    "`\(Scan.preview(b))` is neither a time stamp `[mm:ss.xx]` nor a tag `[key:value]`; minutes and seconds must be digits"
                }
                continue
            }
            let negative = stamps.filter { $0 < 0 }
            if !negative.isEmpty {
                diags.append(.warning("negative-timestamp", line: src.number,
                                      "negative time stamp \(TimeText.ms(negative[0])) cannot be shown; the row was dropped for that stamp"))
                stamps.removeAll { $0 < 0 }
                if stamps.isEmpty { continue }
            }
            if let prev = previousEarliestStamp, stamps[0] < prev, stamps.count == 1, !reportedOrder {
                diags.append(.warning("lines-out-of-order", line: src.number,
                                      "this row starts at \(TimeText.ms(stamps[0])), before the row above it (\(TimeText.ms(prev))); rows were sorted by time"))
                reportedOrder = true
            }
            // The stamps of one row may be in any order (`[00:30.00][00:10.00]`): a row is out of
            // order only when it starts before every stamp of the row above.
            previousEarliestStamp = stamps.min()
            let body = parseBody(b[i...], lineStart: stamps[0], line: src.number, into: &diags)
            for s in stamps {
                let shift = s - stamps[0]
                rows.append(Row(startMs: s, text: body.text,
                                words: body.words.map { ($0.start + shift, $0.text, $0.end.map { $0 + shift }) },
                                closingMs: body.closing.map { $0 + shift },
                                isEndMarker: body.words.isEmpty && body.text.isBlank && body.closing == nil,
                                line: src.number, order: rows.count))
            }
        }
        rows.sort { $0.startMs != $1.startMs ? $0.startMs < $1.startMs : $0.order < $1.order }

        var lyrics = Lyrics(format: .lrc, tags: collector.tags)
        let total = lyrics.totalMs
        var lines: [LyricLine] = []
        var endedByTotal: [(line: Int, lastWordOpen: Bool)] = []
        // The next later start after each row, from the end: rows are sorted, and searching forward
        // from every row is quadratic when thousands share one stamp.
        var nextLater = [Int?](repeating: nil, count: rows.count)
        if rows.count > 1 {
            for k in stride(from: rows.count - 2, through: 0, by: -1) {
                nextLater[k] = rows[k + 1].startMs > rows[k].startMs ? rows[k + 1].startMs : nextLater[k + 1]
            }
        }
        for (k, row) in rows.enumerated() {
            if row.isEndMarker {
                if k == 0 || rows[k - 1].isEndMarker {
                    diags.append(.warning("empty-line", line: row.line,
                                          "time stamp with no text and no line before it to end; remove it or give it text"))
                }
                continue
            }
            let nextStart = nextLater[k]
            let nextIsMarker = k + 1 < rows.count && rows[k + 1].isEndMarker
            var end: Int
            if nextIsMarker {
                end = rows[k + 1].startMs
            } else if let c = row.closingMs {
                end = c
            } else if let n = nextStart {
                end = n
            } else if let lastEnd = row.words.last?.end {
                end = lastEnd
            } else if let t = total, t > row.startMs {
                end = t
                endedByTotal.append((lines.count, row.words.last.map { $0.end == nil } ?? false))
            } else {
                // Nothing says where the last line ends: keep every word start inside it.
                end = max(row.startMs, row.words.last?.start ?? row.startMs)
                diags.append(.info("unknown-end", line: row.line,
                                   "the last line has no end time; add an empty `[mm:ss.xx]` row after it (or a `[total:]` tag)"))
            }
            var words: [LyricWord] = []
            for w in row.words {
                let wEnd = w.end ?? end
                words.append(LyricWord(startMs: w.start, durationMs: wEnd - w.start, text: w.text))
            }
            let text = words.isEmpty ? row.text : words.map(\.text).joined()
            lines.append(LyricLine(startMs: row.startMs, durationMs: end - row.startMs, text: text,
                                   words: words, sourceLine: row.line))
        }
        lyrics.lines = lines
        lyrics.format = lines.contains { !$0.words.isEmpty } ? .enhancedLRC : .lrc
        Timeline.finish(&lyrics, options: options, reportOrder: false, offsetLine: collector.offsetLine, into: &diags)
        // `[total:]` is the song's length, not a time stamp: `[offset:]` moves the stamps, not the end
        // of the song, so a line (and its open last word) ended by `[total:]` still ends there.
        // (Rows were sorted above, so finishing did not reorder the lines.)
        if let t = total, lyrics.appliedShiftMs != 0 {
            for (k, lastWordOpen) in endedByTotal {
                lyrics.lines[k].durationMs = max(0, t - lyrics.lines[k].startMs)
                if lastWordOpen, let w = lyrics.lines[k].words.indices.last {
                    lyrics.lines[k].words[w].durationMs = max(0, t - lyrics.lines[k].words[w].startMs)
                }
            }
        }
        return lyrics
    }

    private struct Body {
        var text: String
        var words: [(start: Int, text: String, end: Int?)]
        var closing: Int?
    }

    /// The part of a row after its leading stamps: plain text, or words split by `<t>` / `[t]` stamps.
    private func parseBody(_ rest: ArraySlice<UInt8>, lineStart: Int, line: Int, into diags: inout [Diagnostic]) -> Body {
        var markers: [(pos: Int, end: Int, ms: Int)] = []
        var i = rest.startIndex
        while i < rest.endIndex {
            let c = rest[i]
            if c == ASCII.langle || c == ASCII.lbracket,
               let t = Self.stamp(rest, i, close: c == ASCII.langle ? ASCII.rangle : ASCII.rbracket) {
                report(t, line: line, into: &diags)
                markers.append((i, t.end, t.ms))
                i = t.end
            } else {
                i += 1
            }
        }
        if markers.isEmpty {
            return Body(text: Scan.string(Scan.trim(rest)), words: [], closing: nil)
        }
        var words: [(start: Int, text: String, end: Int?)] = []
        let lead = rest[rest.startIndex..<markers[0].pos]
        if !Scan.isBlank(lead) {
            words.append((lineStart, Scan.string(lead), markers[0].ms))
        }
        var closing: Int?
        for (k, m) in markers.enumerated() {
            let segEnd = k + 1 < markers.count ? markers[k + 1].pos : rest.endIndex
            let seg = rest[m.end..<segEnd]
            let isLast = k + 1 == markers.count
            if seg.isEmpty || (isLast && Scan.isBlank(seg)) {
                if isLast { closing = m.ms }
                continue
            }
            words.append((m.ms, Scan.string(seg), isLast ? nil : markers[k + 1].ms))
        }
        // `[00:01.10]Hello World[00:06.13]`: a single trailing stamp is the line's end, not word timing.
        if words.count == 1, !Scan.isBlank(lead), markers.count == 1, closing != nil {
            return Body(text: Scan.string(Scan.trim(lead)), words: [], closing: closing)
        }
        return Body(text: words.map(\.text).joined(), words: words, closing: closing)
    }

    private func report(_ t: Stamp, line: Int, into diags: inout [Diagnostic]) {
        if t.ambiguous {
            diags.append(.warning("ambiguous-timestamp", line: line,
                                  "`\(t.raw)` could be mm:ss:cc or hh:mm:ss; read as minutes:seconds.fraction (\(TimeText.ms(t.ms))). Write `[mm:ss.xx]` to remove the doubt"))
        }
        if t.secondsOver59 {
            diags.append(.warning("invalid-timestamp", line: line,
                                  "`\(t.raw)` has a seconds field over 59; read as \(TimeText.ms(t.ms)), but most players reject it"))
        }
    }

    struct Stamp {
        var ms: Int
        var end: Int
        var ambiguous: Bool
        var secondsOver59: Bool
        var raw: String
    }

    /// A time stamp at `i` (`[` or `<` there), closed by `close`: `-?M:S`, `M:S.f`, `M:S:f` (ambiguous), `H:M:S.f`.
    static func stamp(_ b: ArraySlice<UInt8>, _ i: Int, close: UInt8) -> Stamp? {
        var j = i + 1
        var negative = false
        if j < b.endIndex, b[j] == ASCII.minus { negative = true; j += 1 }
        guard let (a, e1) = Scan.uint(b, j), e1 < b.endIndex, b[e1] == ASCII.colon else { return nil }
        guard let (s, e2) = Scan.uint(b, e1 + 1), e2 - (e1 + 1) <= 2, e2 < b.endIndex else { return nil }
        j = e2
        var ms: Int
        var ambiguous = false
        var over = s > 59
        if b[j] == close {
            ms = (a * 60 + s) * 1000
        } else if b[j] == ASCII.dot {
            guard let f = fraction(b, j + 1), f.end < b.endIndex, b[f.end] == close else { return nil }
            ms = (a * 60 + s) * 1000 + f.ms
            j = f.end
        } else if b[j] == ASCII.colon {
            // Third field: `[mm:ss:xx]` or `[hh:mm:ss.xx]`.
            guard let (c, e3) = Scan.uint(b, j + 1), e3 < b.endIndex else { return nil }
            if b[e3] == ASCII.dot, e3 - (j + 1) <= 2 {
                guard let f = fraction(b, e3 + 1), f.end < b.endIndex, b[f.end] == close else { return nil }
                ms = ((a * 60 + s) * 60 + c) * 1000 + f.ms
                over = s > 59 || c > 59
                j = f.end
            } else if b[e3] == close {
                guard let f = fraction(b, j + 1) else { return nil }
                ms = (a * 60 + s) * 1000 + f.ms
                ambiguous = true
                j = e3
            } else {
                return nil
            }
        } else {
            return nil
        }
        let raw = Scan.string(b[i...j])
        return Stamp(ms: negative ? -ms : ms, end: j + 1, ambiguous: ambiguous, secondsOver59: over, raw: raw)
    }

    /// A decimal fraction of a second: `.5` = 500, `.05` = 50, `.123` = 123, `.1235` = 124 (rounded half up).
    static func fraction(_ b: ArraySlice<UInt8>, _ i: Int) -> (ms: Int, end: Int)? {
        var j = i
        var digits: [Int] = []
        while j < b.endIndex, ASCII.isDigit(b[j]) {
            digits.append(Int(b[j] - ASCII.zero))
            j += 1
        }
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        var ms = 0
        for k in 0..<3 { ms = ms * 10 + (k < digits.count ? digits[k] : 0) }
        if digits.count > 3, digits[3] >= 5 { ms += 1 }
        return (ms, j)
    }
}
