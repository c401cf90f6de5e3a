import Foundation
import KTVCore

/// Kugou KRC plaintext: `[key:value]` tags and rows `[lineStartMs,lineDurMs]<offsetMs,durMs,x>text…`
/// where unit offsets are relative to the line start. `[language:]` carries base64 JSON with
/// per-line translation (type 1) and per-unit romanization (type 0). docs/lyric-formats.md §1.2-1.5.
struct KRCParser {
    var options: LyricsParseOptions

    func parse(_ text: [UInt8], format: LyricFormat, into diags: inout [Diagnostic]) -> Lyrics {
        var collector = TagCollector()
        var lines: [LyricLine] = []
        for row in Scan.lines(text) {
            let b = Scan.trimLeading(row.bytes)
            if b.isEmpty || Scan.isBlank(b) { continue }
            guard b.first == ASCII.lbracket else {
                diags.append(.error("unparsable-line", line: row.number,
                                    "expected a tag `[key:value]` or a row `[startMs,durMs]<offsetMs,durMs,0>text`, found `\(Scan.preview(b))`"))
                continue
            }
            switch parseRow(b, number: row.number, into: &diags) {
            case let .line(line): lines.append(line); continue
            case .invalid: continue
            case .notARow: break
            }
            collector.take(b, line: row.number, into: &diags) {
                "not a KRC row: expected `[startMs,durMs]` followed by units `<offsetMs,durMs,0>text`, found `\(Scan.preview(b))`"
            }
        }
        var lyrics = Lyrics(format: format, tags: collector.tags, lines: lines)
        if let value = lyrics.tag("language") {
            // Once decoded into translations and romanizations, the base64 is not kept twice.
            if KRCLanguage.apply(value, line: collector.languageLine, to: &lyrics.lines, into: &diags) {
                lyrics.tags.removeAll { $0.key.lowercased() == "language" }
            }
        }
        Timeline.finish(&lyrics, options: options, reportOrder: true, offsetLine: collector.offsetLine, into: &diags)
        return lyrics
    }

    enum RowResult { case line(LyricLine), invalid, notARow }

    /// Parses `[start,dur]<o,d,x>text…`; `.notARow` when the row does not start with `[digits,`.
    private func parseRow(_ b: ArraySlice<UInt8>, number: Int, into diags: inout [Diagnostic]) -> RowResult {
        var i = b.startIndex + 1
        guard let (start, e1) = Scan.uint(b, i), e1 < b.endIndex, b[e1] == ASCII.comma else { return .notARow }
        i = e1 + 1
        guard let (dur, e2) = Scan.uint(b, i), e2 < b.endIndex, b[e2] == ASCII.rbracket else {
            diags.append(.error("unparsable-line", line: number,
                                "row header must be `[startMs,durMs]` with whole milliseconds, found `\(Scan.preview(b))`"))
            return .invalid
        }
        i = e2 + 1
        if i < b.endIndex, Self.unitHeader(b, i) == nil {
            // Text before the first unit has no time of its own.
            let next = Self.nextUnit(b, from: i)
            let lead = b[i..<(next ?? b.endIndex)]
            if next == nil {
                diags.append(.error("unparsable-line", line: number,
                                    "row has text but no `<offsetMs,durMs,0>` units: `\(Scan.preview(lead))`; give every word a unit"))
                return .line(LyricLine(startMs: start, durationMs: dur, text: Scan.string(lead), sourceLine: number))
            }
            diags.append(.error("unparsable-line", line: number,
                                "text `\(Scan.preview(lead))` before the first `<offsetMs,durMs,0>` unit has no timing; put it inside a unit"))
            i = next!
        }
        // The words go from the row's bytes into the packed line: no String or LyricWord each.
        var raw: [LinePacking.RawWord] = []
        raw.reserveCapacity(8)
        while i < b.endIndex {
            guard let (o, d, x, afterHeader) = Self.unitHeader(b, i) else { break }
            let next = Self.nextUnit(b, from: afterHeader) ?? b.endIndex
            if x != 0 {
                diags.append(.warning("krc-nonzero-field", line: number,
                                      "unit `<\(o),\(d),\(x)>` has third field \(x); every known KRC writes 0 and its meaning is undocumented (kept as is)"))
            }
            raw.append(LinePacking.RawWord(startMs: start + o, durationMs: d, krcField: x, text: afterHeader..<next))
            i = next
        }
        return .line(LyricLine(packed: LinePacking.pack(startMs: start, durationMs: dur, sourceLine: number, words: raw, in: b)))
    }

    /// `<digits,digits,digits>` at `i`: (offset, duration, x, index after `>`).
    @inline(__always)
    static func unitHeader(_ b: ArraySlice<UInt8>, _ i: Int) -> (Int, Int, Int, Int)? {
        Scan.triple(b, i, open: ASCII.langle, close: ASCII.rangle)
    }

    /// The index of the next unit header at or after `from`; text may itself contain `<`.
    static func nextUnit(_ b: ArraySlice<UInt8>, from: Int) -> Int? {
        Scan.nextTriple(b, from: from, open: ASCII.langle, close: ASCII.rangle)
    }
}

/// The `[language:]` payload: base64 of `{"content":[{"language":0,"type":0|1,"lyricContent":[[…]]}],"version":1}`.
enum KRCLanguage {
    /// Returns true when the payload was understood (its content now lives in the lines). A block
    /// that is not read (unknown type, no `lyricContent`) makes it false: the tag is then the only
    /// place that block survives, as the `unknown-language-block` message promises.
    @discardableResult
    static func apply(_ base64: String, line: Int?, to lines: inout [LyricLine], into diags: inout [Diagnostic]) -> Bool {
        let trimmed = base64.trimmingSpaces
        if trimmed.isEmpty { return false }
        guard let data = Data(base64Encoded: trimmed, options: [.ignoreUnknownCharacters]) else {
            diags.append(.warning("invalid-language-tag", line: line,
                                  "`[language:]` is not valid base64; translation and romanization are ignored"))
            return false
        }
        guard let root = try? JSONReader.parse(Array(data), allowsTrailingCommas: true), case let .array(content)? = root["content"],
              content.allSatisfy({ if case .object = $0 { true } else { false } }) else {
            diags.append(.warning("invalid-language-tag", line: line,
                                  "`[language:]` does not decode to JSON with a `content` list; translation and romanization are ignored"))
            return false
        }
        var understood = true
        for block in content {
            let type = block["type"]?.number.flatMap { abs($0) < 9e15 ? Int($0) : nil }
            guard let rows = Self.listOfLists(block["lyricContent"]) else {
                diags.append(.warning("invalid-language-tag", line: line,
                                      "a `[language:]` block has no `lyricContent` list of lists; it is ignored"))
                understood = false
                continue
            }
            let strings = rows.map { $0.map { $0.string ?? "" } }
            switch type {
            case 1:
                if strings.count != lines.count {
                    diags.append(.warning("translation-count-mismatch", line: line,
                                          "`[language:]` has \(strings.count) translation rows for \(lines.count) lyric rows; translations were matched by row index"))
                }
                for (k, row) in strings.enumerated() where k < lines.count {
                    let t = row.joined(separator: " ")
                    lines[k].translation = Self.isPlaceholder(t) ? nil : t
                }
            case 0:
                if strings.count != lines.count {
                    diags.append(.warning("romanization-count-mismatch", line: line,
                                          "`[language:]` has \(strings.count) romanization rows for \(lines.count) lyric rows; rows were matched by index"))
                }
                for (k, row) in strings.enumerated() where k < lines.count {
                    // Words decoded and packed once per line, not once per word.
                    var words = lines[k].words
                    if row.count != words.count, !(row.allSatisfy(\.isEmpty)) {
                        diags.append(.warning("romanization-count-mismatch", line: lines[k].sourceLine,
                                              "romanization has \(row.count) entries for \(words.count) units; entries were matched by position"))
                    }
                    for (w, r) in row.enumerated() where w < words.count {
                        words[w].romanization = r.isEmpty ? nil : r
                    }
                    lines[k].words = words
                }
            default:
                diags.append(.info("unknown-language-block", line: line,
                                   "`[language:]` block of type \(type.map(String.init) ?? "none") is not translation (1) or romanization (0); kept in the tag only"))
                understood = false
            }
        }
        return understood
    }

    /// The value when it is a list of lists.
    static func listOfLists(_ v: JSONValue?) -> [[JSONValue]]? {
        guard case let .array(items)? = v else { return nil }
        var rows: [[JSONValue]] = []
        for item in items {
            guard case let .array(row) = item else { return nil }
            rows.append(row)
        }
        return rows
    }

    static func isPlaceholder(_ s: String) -> Bool {
        let t = s.trimmingSpaces
        return t.isEmpty || t == "//"
    }

    /// Builds the base64 payload for a model that has translations or romanizations; nil otherwise.
    static func encode(_ lines: [LyricLine]) -> String? {
        let hasTranslation = lines.contains { $0.translation != nil }
        let hasRoman = lines.contains { $0.words.contains { $0.romanization != nil } }
        guard hasTranslation || hasRoman else { return nil }
        // Keys in sorted order, as Foundation's `.sortedKeys` wrote them before.
        func block(type: Int, _ rows: [[String]]) -> JSONValue {
            .object([("language", .int(0)), ("lyricContent", .array(rows.map { .array($0.map(JSONValue.string)) })), ("type", .int(type))])
        }
        var content: [JSONValue] = []
        if hasRoman { content.append(block(type: 0, lines.map { $0.words.map { $0.romanization ?? "" } })) }
        if hasTranslation { content.append(block(type: 1, lines.map { [$0.translation ?? ""] })) }
        let data = Data(JSONValue.object([("content", .array(content)), ("version", .int(1))]).serialized(pretty: false).utf8)
        return data.base64EncodedString()
    }
}
