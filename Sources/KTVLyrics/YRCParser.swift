import KTVCore

/// NetEase YRC (docs/lyric-formats.md §3.1): rows `[startMs,durMs](wStartMs,wDurMs,flag)text…` with absolute
/// word times, JSON credit rows `{"t":ms,"c":[{"tx":"…"},…]}`, and tags.
struct YRCParser {
    var options: LyricsParseOptions

    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) -> Lyrics {
        var collector = TagCollector()
        var lines: [LyricLine] = []
        var creditRows: [Int] = []
        var warnedRelative = false
        for row in Scan.lines(text) {
            let b = Scan.trimLeading(row.bytes)
            if Scan.isBlank(b) { continue }
            if b.first == ASCII.lbrace {
                if let credit = credit(b, line: row.number, into: &diags) {
                    creditRows.append(lines.count)
                    lines.append(credit)
                }
                continue
            }
            guard b.first == ASCII.lbracket else {
                diags.append(.error("unparsable-line", line: row.number,
                                    "expected `[startMs,durMs](startMs,durMs,0)word…`, a JSON credit row or a tag, found `\(Scan.preview(b))`"))
                continue
            }
            if let (start, e1) = Scan.uint(b, b.startIndex + 1), e1 < b.endIndex, b[e1] == ASCII.comma {
                guard let (dur, e2) = Scan.uint(b, e1 + 1), e2 < b.endIndex, b[e2] == ASCII.rbracket else {
                    diags.append(.error("unparsable-line", line: row.number,
                                        "row header must be `[startMs,durMs]`, found `\(Scan.preview(b))`"))
                    continue
                }
                var words: [LyricWord] = []
                var i = e2 + 1
                if i < b.endIndex, Self.unit(b, i) == nil {
                    diags.append(.error("unparsable-line", line: row.number,
                                        "text `\(Scan.preview(b[i...]))` before the first `(startMs,durMs,0)` unit has no timing"))
                    i = Self.nextUnit(b, from: i) ?? b.endIndex
                }
                while let (ws, wd, flag, after) = Self.unit(b, i) {
                    let next = Self.nextUnit(b, from: after) ?? b.endIndex
                    if flag != 0 {
                        diags.append(.warning("yrc-nonzero-field", line: row.number,
                                              "unit `(\(ws),\(wd),\(flag))` has third field \(flag); every known YRC writes 0 (kept as is)"))
                    }
                    if ws < start, !warnedRelative, start > 0 {
                        diags.append(.warning("word-times-relative", line: row.number,
                                              "word starts at \(ws) ms, before its line (\(start) ms): YRC word times are absolute, this file may use times relative to the line"))
                        warnedRelative = true
                    }
                    words.append(LyricWord(startMs: ws, durationMs: wd, text: Scan.string(b[after..<next]), krcField: flag))
                    i = next
                }
                lines.append(LyricLine(startMs: start, durationMs: dur, joining: words, sourceLine: row.number))
                continue
            }
            collector.take(b, line: row.number, into: &diags) {
                "not a YRC row `[startMs,durMs](startMs,durMs,0)word…`: `\(Scan.preview(b))`"
            }
        }
        // Credit rows have a display time only: they last until the next row.
        let starts = lines.map(\.startMs)
        for k in creditRows {
            let next = starts.filter { $0 > lines[k].startMs }.min()
            lines[k].durationMs = (next ?? lines[k].startMs) - lines[k].startMs
            if next == nil {
                // NetEase repeats the credits at the end: nothing follows to end them. Said once as
                // `unknown-end` (info), which also keeps the validator from calling them zero-length.
                diags.append(.info("unknown-end", line: lines[k].sourceLine,
                                   "this credit row has no row after it, so it has no end time"))
            }
        }
        var lyrics = Lyrics(format: .yrc, tags: collector.tags, lines: lines)
        Timeline.finish(&lyrics, options: options, reportOrder: true, offsetLine: collector.offsetLine, into: &diags)
        return lyrics
    }

    private func credit(_ b: ArraySlice<UInt8>, line: Int, into diags: inout [Diagnostic]) -> LyricLine? {
        guard let obj = try? JSONReader.parse(Array(b), allowsTrailingCommas: true), case .object = obj else {
            diags.append(.error("unparsable-line", line: line,
                                "row starts with `{` but is not valid JSON; a YRC credit row looks like `{\"t\":0,\"c\":[{\"tx\":\"作词: \"}]}`"))
            return nil
        }
        guard let t = obj["t"]?.number, abs(t) < 9e15, case let .array(c)? = obj["c"], c.allSatisfy({ if case .object = $0 { true } else { false } }) else {
            diags.append(.error("unparsable-line", line: line,
                                "JSON credit row needs a number `t` (ms) and a list `c` of `{\"tx\":…}` parts"))
            return nil
        }
        let text = c.compactMap { $0["tx"]?.string }.joined()
        return LyricLine(startMs: Int(t), durationMs: 0, text: text, sourceLine: line)
    }

    /// `(digits,digits,digits)` at `i`.
    static func unit(_ b: ArraySlice<UInt8>, _ i: Int) -> (Int, Int, Int, Int)? {
        Scan.triple(b, i, open: ASCII.lparen, close: ASCII.rparen)
    }

    static func nextUnit(_ b: ArraySlice<UInt8>, from: Int) -> Int? {
        Scan.nextTriple(b, from: from, open: ASCII.lparen, close: ASCII.rparen)
    }
}

/// QQ Music QRC body (docs/lyric-formats.md §3.2): rows `[startMs,durMs]text(wStartMs,wDurMs)text(…)…` with
/// absolute word times written after the text; word text may itself contain `(` and `)`.
struct QRCParser {
    var options: LyricsParseOptions
    /// Added to reported line numbers when the body sits inside the XML wrapper.
    var lineBase = 0

    func parse(_ text: [UInt8], format: LyricFormat, into diags: inout [Diagnostic]) -> Lyrics {
        var collector = TagCollector()
        var lines: [LyricLine] = []
        for row in Scan.lines(text) {
            let number = row.number + lineBase
            let b = Scan.trimLeading(row.bytes)
            if Scan.isBlank(b) { continue }
            guard b.first == ASCII.lbracket else {
                diags.append(.error("unparsable-line", line: number,
                                    "expected `[startMs,durMs]word(startMs,durMs)…` or a tag, found `\(Scan.preview(b))`"))
                continue
            }
            if let (start, e1) = Scan.uint(b, b.startIndex + 1), e1 < b.endIndex, b[e1] == ASCII.comma {
                guard let (dur, e2) = Scan.uint(b, e1 + 1), e2 < b.endIndex, b[e2] == ASCII.rbracket else {
                    diags.append(.error("unparsable-line", line: number,
                                        "row header must be `[startMs,durMs]`, found `\(Scan.preview(b))`"))
                    continue
                }
                var words: [LyricWord] = []
                var i = e2 + 1
                while let t = Self.nextTiming(b, from: i) {
                    words.append(LyricWord(startMs: t.start, durationMs: t.dur, text: Scan.string(b[i..<t.pos])))
                    i = t.end
                }
                if i < b.endIndex, !Scan.isBlank(b[i...]) {
                    diags.append(.error("unparsable-line", line: number,
                                        "text `\(Scan.preview(b[i...]))` after the last `(startMs,durMs)` timing has no time; QRC writes the timing after each word"))
                }
                lines.append(LyricLine(startMs: start, durationMs: dur, joining: words, sourceLine: number))
                continue
            }
            collector.take(b, line: number, into: &diags) {
                "not a QRC row `[startMs,durMs]word(startMs,durMs)…`: `\(Scan.preview(b))`"
            }
        }
        var lyrics = Lyrics(format: format, tags: collector.tags, lines: lines)
        Timeline.finish(&lyrics, options: options, reportOrder: true, offsetLine: collector.offsetLine, into: &diags)
        return lyrics
    }

    /// The next `(digits,digits)` at or after `from`.
    static func nextTiming(_ b: ArraySlice<UInt8>, from: Int) -> (pos: Int, start: Int, dur: Int, end: Int)? {
        var j = from
        while j < b.endIndex {
            if b[j] == ASCII.lparen,
               let (s, e1) = Scan.uint(b, j + 1), e1 < b.endIndex, b[e1] == ASCII.comma,
               let (d, e2) = Scan.uint(b, e1 + 1), e2 < b.endIndex, b[e2] == ASCII.rparen {
                return (j, s, d, e2 + 1)
            }
            j += 1
        }
        return nil
    }
}
