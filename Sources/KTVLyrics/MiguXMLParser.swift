import KTVCore

/// Migu / Agora XML (docs/lyric-formats.md §3.3): `song/general/midi_lrc/paragraph/sentence/tone/word`,
/// tone `begin`/`end` in decimal seconds (converted exactly, rounded to the millisecond), `pitch` in Hz
/// (0 = unpitched). Each sentence is a line; its span runs from the first tone's begin to the last tone's end.
struct MiguXMLParser {
    func parse(_ text: [UInt8], into diags: inout [Diagnostic]) throws(LyricsError) -> Lyrics {
        let root: XMLElement
        do { root = try MiniXML.parse(text) } catch {
            throw .malformed(line: error.line, detail: "malformed XML: \(error.message)")
        }
        guard root.name == "song" else {
            throw .unrecognizedFormat(detail: "XML root is `<\(root.name)>`; Migu lyrics have `<song>` and QRC has `<QrcInfos>`")
        }
        var tags: [LyricTag] = []
        if let general = root.child("general") {
            for c in general.children {
                let key: String
                switch c.name {
                case "name": key = "ti"
                case "singer": key = "ar"
                default: key = c.name
                }
                tags.append(LyricTag(key: key, value: c.text.trimmingSpaces))
            }
        }
        guard let midi = root.child("midi_lrc") else {
            throw .malformed(line: root.line, detail: "`<song>` has no `<midi_lrc>` element holding the sentences")
        }
        var lines: [LyricLine] = []
        var notes: [ReferencePitch.Note] = []
        // Sentences sit in `<paragraph>`s; some files put them straight under `<midi_lrc>`.
        let sentences = midi.children.flatMap { $0.name == "paragraph" ? $0.children : [$0] }
        do {
            for sentence in sentences where sentence.name == "sentence" || sentence.name == "overlap" {
                let toneElements = sentence.name == "overlap" ? [sentence] : sentence.children.filter { $0.name == "tone" || $0.name == "monolog" }
                var words: [LyricWord] = []
                var english: [Bool] = []
                for tone in toneElements {
                    guard let begin = time(tone, "begin", into: &diags), let end = time(tone, "end", into: &diags) else { continue }
                    let wordElements = tone.children("word")
                    if wordElements.isEmpty {
                        diags.append(.warning("empty-word", line: tone.line,
                                              "`<tone>` has no `<word>` child; it is kept as a word with empty text"))
                    }
                    var text = wordElements.map(\.text).joined()
                    let isEnglish = tone.attribute("lang") == "2"
                    if isEnglish { text = text.trimmingSpaces }
                    var pitch: Double?
                    if let raw = tone.attribute("pitch") {
                        if let v = Double(raw.trimmingSpaces), v.isFinite, v >= 0 {
                            pitch = v > 0 ? v : nil
                        } else {
                            diags.append(.error("invalid-number", line: tone.line,
                                                "`pitch=\"\(raw)\"` is not a frequency in Hz; write a number such as `pitch=\"196\"` (0 = unpitched)"))
                        }
                    }
                    words.append(LyricWord(startMs: begin, durationMs: end - begin, text: text, pitchHz: pitch))
                    english.append(isEnglish)
                    if let p = pitch { notes.append(.init(startMs: begin, durationMs: end - begin, value: p)) }
                }
                // English tones carry no spaces. Like Agora, give each a trailing space (but the
                // line's last) and a leading one only after a non-English word: one space between
                // two English words, so the line reads `fly away`, not `fly  away`.
                for k in words.indices where english[k] && !words[k].text.isEmpty {
                    let lead = k > 0 && !english[k - 1] && !words[k - 1].text.isEmpty ? " " : ""
                    let trail = k == words.count - 1 ? "" : " "
                    words[k].text = lead + words[k].text + trail
                }
                guard let first = words.first else {
                    diags.append(.warning("empty-line", line: sentence.line,
                                          "`<\(sentence.name)>` has no timed `<tone>`; it was skipped"))
                    continue
                }
                let lineEnd = words.map(\.endMs).max() ?? first.endMs
                let text = words.map(\.text).joined().trimmingSpaces
                lines.append(LyricLine(startMs: first.startMs, durationMs: lineEnd - first.startMs, text: text,
                                       words: words, sourceLine: sentence.line))
            }
        }
        var lyrics = Lyrics(format: .miguXML, tags: tags, lines: lines)
        if !notes.isEmpty { lyrics.referencePitch = .notes(scale: .hz, notes) }
        Timeline.sortLines(&lyrics.lines, report: true, into: &diags)
        return lyrics
    }

    private func time(_ tone: XMLElement, _ key: String, into diags: inout [Diagnostic]) -> Int? {
        guard let raw = tone.attribute(key) else {
            diags.append(.error("invalid-number", line: tone.line, "`<tone>` has no `\(key)` attribute (seconds, e.g. `\(key)=\"18.487\"`); the tone was skipped"))
            return nil
        }
        guard let ms = DecimalTime.milliseconds(fromSeconds: raw) else {
            diags.append(.error("invalid-number", line: tone.line,
                                "`\(key)=\"\(raw)\"` is not a time in seconds such as `18.487`; the tone was skipped"))
            return nil
        }
        return ms
    }
}

/// Exact decimal-seconds to milliseconds, rounded half up, never through a float.
enum DecimalTime {
    static func milliseconds(fromSeconds raw: String) -> Int? { milliseconds(fromSeconds: Array(raw.utf8)[...]) }

    static func milliseconds(fromSeconds raw: ArraySlice<UInt8>) -> Int? {
        var bytes = Scan.trimSpaces(raw)
        var negative = false
        if bytes.first == ASCII.minus { negative = true; bytes = bytes.dropFirst() } else if bytes.first == ASCII.plus { bytes = bytes.dropFirst() }
        var whole = 0
        var i = bytes.startIndex
        var sawDigit = false
        while i < bytes.endIndex, ASCII.isDigit(bytes[i]) {
            guard i - bytes.startIndex < 9 else { return nil }
            whole = whole * 10 + Int(bytes[i] - ASCII.zero)
            i += 1
            sawDigit = true
        }
        var frac = 0
        if i < bytes.endIndex, bytes[i] == ASCII.dot {
            guard let f = LRCParser.fraction(bytes, i + 1) else {
                if sawDigit, i + 1 == bytes.endIndex { return (negative ? -1 : 1) * whole * 1000 }
                return nil
            }
            frac = f.ms
            i = f.end
            sawDigit = true
        }
        guard sawDigit, i == bytes.endIndex else { return nil }
        let ms = whole * 1000 + frac
        return negative ? -ms : ms
    }
}
