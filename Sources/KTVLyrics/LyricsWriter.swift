import KTVCore

/// Formats ktv writes (every readable lyric format but the pitch files, and SRT, which is not read).
public enum LyricsOutputFormat: String, Sendable, CaseIterable {
    case krc
    case krcText = "krc-text"
    case lrc
    case elrc
    case yrc
    /// QQ Music QRC rows, plaintext.
    case qrc
    /// QRC rows inside the `<QrcInfos>` wrapper QQ Music's decrypted files have.
    case qrcXML = "qrc-xml"
    /// Migu / Agora XML: `<sentence>` per line, `<tone begin end pitch>` per word.
    case xml
    /// Advanced SubStation Alpha, a Dialogue per line with `{\k}` karaoke tags.
    case ass
    /// WebVTT, a cue per line with `<hh:mm:ss.ttt>` word timestamps.
    case vtt
    /// TTML2 as Apple Music and AMLL use it.
    case ttml
    /// Lyricify Syllable.
    case lys
    case json
    case srt

    /// Other names the formats go by.
    public static let aliases: [String: LyricsOutputFormat] = ["webvtt": .vtt, "ssa": .ass]

    /// The format a name gives: its raw value or an alias (`webvtt`), in any case.
    public init?(name: String) {
        let key = name.lowercased()
        guard let format = LyricsOutputFormat(rawValue: key) ?? Self.aliases[key] else { return nil }
        self = format
    }

    /// The format that writes what `format` reads (Migu XML is `xml`); nil for the pitch-only formats.
    public init?(writing format: LyricFormat) {
        if format == .miguXML { self = .xml; return }
        guard let f = LyricsOutputFormat(rawValue: format.rawValue) else { return nil }
        self = f
    }
}

public struct LyricsWriteOptions: Sendable {
    public enum Spec {
        public static let lrcFractionDigits = Parameter<Int>("lrcFractionDigits", unit: "digits", range: 2...3, default: 3,
            "Digits after the point in LRC stamps: 3 (exact milliseconds) or 2 (centiseconds, rounded with carry, the classic form).")
        public static let all: [ParameterInfo] = [lrcFractionDigits.info]
    }

    /// `Spec.lrcFractionDigits`.
    public var lrcFractionDigits: Int
    /// How TTML word (`<span>`) times are written: relative to their line (`<p>`), as TTML's timing
    /// model reads them, or absolute, as Apple Music and AMLL write and read them.
    public var ttmlTiming: TTMLTiming

    public init(lrcFractionDigits: Int = Spec.lrcFractionDigits.defaultValue, ttmlTiming: TTMLTiming = .relative) {
        self.lrcFractionDigits = lrcFractionDigits
        self.ttmlTiming = ttmlTiming
    }

    public func validated() throws(ParameterError) -> LyricsWriteOptions {
        try Spec.lrcFractionDigits.check(lrcFractionDigits)
        return self
    }
}

/// The bytes of a written file, with notes on anything the target format could not carry.
public struct WrittenLyrics: Sendable {
    public var bytes: [UInt8]
    public var notes: [Diagnostic]
}

/// Writes the model. Written times are absolute: an `[offset:]` read from the source was applied
/// while parsing, so it is not written again.
public enum LyricsWriter {
    public static func write(_ lyrics: Lyrics, as format: LyricsOutputFormat,
                             options: LyricsWriteOptions = .init()) throws(LyricsError) -> WrittenLyrics {
        var notes: [Diagnostic] = []
        if lyrics.appliedShiftMs != 0 {
            notes.append(.info("offset-applied", "the source's `[offset:]` was applied (times moved by \(lyrics.appliedShiftMs) ms); the output has absolute times and no offset tag"))
        }
        if lyrics.lines.isEmpty, lyrics.referencePitch != nil, format != .json {
            throw .cannotWrite(format: LyricFormat(rawValue: format.rawValue) ?? .json,
                               detail: "this is a pitch file with no lyric lines; convert it to json")
        }
        let text: [UInt8]
        switch format {
        case .krc:
            let plain = try krcText(lyrics, notes: &notes)
            return WrittenLyrics(bytes: try KRCContainer.encrypt(plain), notes: notes)
        case .krcText:
            return WrittenLyrics(bytes: try krcText(lyrics, notes: &notes), notes: notes)
        case .lrc:
            text = try lrc(lyrics, words: false, options: options, notes: &notes)
        case .elrc:
            text = try lrc(lyrics, words: true, options: options, notes: &notes)
        case .yrc:
            text = try yrc(lyrics, notes: &notes)
        case .qrc:
            text = try qrc(lyrics, notes: &notes)
        case .qrcXML:
            text = qrcWrapped(try qrc(lyrics, notes: &notes))
        case .xml:
            text = try miguXML(lyrics, notes: &notes)
        case .ass:
            text = try ASSFormat.write(lyrics, notes: &notes)
        case .vtt:
            text = try WebVTTFormat.write(lyrics, notes: &notes)
        case .ttml:
            text = try TTMLFormat.write(lyrics, timing: options.ttmlTiming, notes: &notes)
        case .lys:
            text = try LyricifySyllable.write(lyrics, notes: &notes)
        case .json:
            var bytes: [UInt8] = []
            JSONModel.write(lyrics) { (chunk: [UInt8]) -> Void in bytes += chunk }
            return WrittenLyrics(bytes: bytes, notes: notes)
        case .srt:
            text = srt(lyrics)
        }
        return WrittenLyrics(bytes: text, notes: notes)
    }

    /// The line's words, or, for a line without word timing, one word spanning it (counted in
    /// `synthesized`, for the note that says so): what the word-timed formats write.
    static func wordsOrOne(_ line: LyricLine, synthesized: inout Int) -> [LyricWord] {
        let words = line.words
        guard words.isEmpty else { return words }
        synthesized += 1
        return [LyricWord(startMs: line.startMs, durationMs: line.durationMs, text: line.text)]
    }

    /// A line's row header `[start,duration]` (KRC, YRC, QRC), refused when either is negative.
    static func rowHeader(_ line: LyricLine, format: LyricFormat) throws(LyricsError) -> String {
        guard line.startMs >= 0, line.durationMs >= 0 else {
            throw .cannotWrite(format: format, detail: "line at \(TimeText.ms(line.startMs)) has a negative start or duration")
        }
        return "[\(line.startMs),\(line.durationMs)]"
    }

    /// Tags worth writing back: `offset` is already applied and `language` is rebuilt from the model.
    private static func headerTags(_ lyrics: Lyrics) -> [LyricTag] {
        lyrics.tags.filter { let k = $0.key.lowercased(); return k != "offset" && k != "language" }
    }

    private static func checkText(_ s: String, format: LyricFormat, at ms: Int) throws(LyricsError) {
        if s.contains("\n") || s.contains("\r") {
            throw .cannotWrite(format: format, detail: "text at \(TimeText.ms(ms)) contains a line break, which \(format.rawValue) cannot hold")
        }
    }

    // MARK: KRC

    static func krcText(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        var out: [UInt8] = []
        out += "\u{FEFF}"
        for tag in headerTags(lyrics) { out += "[\(tag.key):\(tag.value)]\r\n" }
        if let lang = KRCLanguage.encode(lyrics.lines) { out += "[language:\(lang)]\r\n" }
        var synthesized = 0
        for line in lyrics.lines {
            out += try rowHeader(line, format: .krc)
            let words = wordsOrOne(line, synthesized: &synthesized)
            for w in words {
                let offset = w.startMs - line.startMs
                guard offset >= 0, w.durationMs >= 0, w.krcField >= 0 else {
                    throw .cannotWrite(format: .krc, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) starts before its line (\(TimeText.ms(line.startMs))) or has a negative duration; KRC offsets are relative to the line and cannot be negative")
                }
                try checkText(w.text, format: .krc, at: w.startMs)
                if w.text.contains("<"), KRCParser.nextUnit(Array(w.text.utf8)[...], from: 0) != nil {
                    throw .cannotWrite(format: .krc, detail: "word text `\(Scan.capped(w.text))` contains a `<n,n,n>` unit header, which KRC cannot escape")
                }
                out += "<\(offset),\(w.durationMs),\(w.krcField)>\(w.text)"
            }
            out += "\r\n"
        }
        if synthesized > 0 {
            notes.append(.info("words-synthesized", "\(synthesized) line(s) had no word timing; each was written as one KRC unit spanning the line"))
        }
        return out
    }

    // MARK: LRC and enhanced LRC

    static func stamp(_ ms: Int, digits: Int) -> String {
        let v = max(0, ms)
        if digits == 2 {
            let cs = (v + 5) / 10  // round half up, carrying into seconds and minutes
            return "\(TimeText.pad(cs / 6000, 2)):\(TimeText.pad((cs / 100) % 60, 2)).\(TimeText.pad(cs % 100, 2))"
        }
        return "\(TimeText.pad(v / 60000, 2)):\(TimeText.pad((v / 1000) % 60, 2)).\(TimeText.pad(v % 1000, 3))"
    }

    /// `[digits:` or `<digits:` in text: LRC has no escape, so a reader takes it for a time stamp.
    static func stampLike(_ s: String) -> Bool {
        let b = Array(s.utf8)
        var i = 0
        while i < b.count {
            if b[i] == ASCII.lbracket || b[i] == ASCII.langle {
                var j = i + 1
                while j < b.count, b[j] >= 0x30, b[j] <= 0x39 { j += 1 }
                if j > i + 1, j < b.count, b[j] == UInt8(ascii: ":") { return true }
            }
            i += 1
        }
        return false
    }

    static func lrc(_ lyrics: Lyrics, words: Bool, options: LyricsWriteOptions, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        let digits = options.lrcFractionDigits == 2 ? 2 : 3
        let format: LyricFormat = words ? .enhancedLRC : .lrc
        var out: [UInt8] = []
        for tag in headerTags(lyrics) { out += "[\(tag.key):\(tag.value)]\n" }
        var droppedWords = 0, truncated = 0, droppedEmpty = 0, translations = 0, emptyLines = 0
        // A row with a stamp and no text is how LRC ends the line before: a line without text has no
        // form of its own, so it is left out (and said so).
        let lines = lyrics.lines.filter { line in
            let keep = !line.text.allSatisfy { $0 == " " || $0 == "\t" } || (words && line.words.contains { !$0.text.isEmpty })
            if !keep { emptyLines += 1 }
            return keep
        }
        for line in lines {
            for t in [line.text] + (words ? line.words.map(\.text) : []) where stampLike(t) {
                throw .cannotWrite(format: format, detail: "text \(quoted(t)) at \(TimeText.ms(line.startMs)) holds `[m:` or `<m:`, which an LRC reader takes for a time stamp; LRC cannot escape it (convert to krc-text, yrc or json)")
            }
        }
        for (k, line) in lines.enumerated() {
            let text = line.text.replacingLineBreaks
            if line.translation != nil { translations += 1 }
            var lastWordEnd: Int?
            // Plain LRC only needs to know whether there were words to drop.
            let lineWords = words ? line.words : []
            if words, !lineWords.isEmpty {
                out += "[\(stamp(line.startMs, digits: digits))]"
                let ws = lineWords.filter { !$0.text.isEmpty }
                droppedEmpty += lineWords.count - ws.count
                for (i, w) in ws.enumerated() {
                    out += "<\(stamp(w.startMs, digits: digits))>\(w.text.replacingLineBreaks)"
                    let next = i + 1 < ws.count ? ws[i + 1].startMs : nil
                    if next != w.endMs { out += "<\(stamp(w.endMs, digits: digits))>" }
                }
                lastWordEnd = ws.last?.endMs
                out += "\n"
            } else {
                if line.wordCount > 0 { droppedWords += 1 }
                out += "[\(stamp(line.startMs, digits: digits))]\(text)\n"
            }
            // An empty stamped row ends the line where the next line or the closing word stamp would not.
            let nextStart = k + 1 < lines.count ? lines[k + 1].startMs : nil
            if let n = nextStart, line.endMs > n {
                truncated += 1
            } else if line.endMs != (lastWordEnd ?? nextStart) || nextStart == nil && lastWordEnd == nil {
                out += "[\(stamp(line.endMs, digits: digits))]\n"
            }
        }
        if droppedWords > 0 {
            notes.append(.info("words-dropped", "word timing of \(droppedWords) line(s) is not written in plain LRC; convert to elrc to keep it"))
        }
        if droppedEmpty > 0 {
            notes.append(.info("words-dropped", "\(droppedEmpty) word(s) with empty text cannot be written in enhanced LRC and were left out"))
        }
        if truncated > 0 {
            notes.append(.warning("overlap-truncated", "\(truncated) line(s) end after the next line starts; LRC cannot show that, so they end where the next line starts"))
        }
        if translations > 0 {
            notes.append(.info("translation-dropped", "translations of \(translations) line(s) are not written in LRC; use krc or json to keep them"))
        }
        if emptyLines > 0 {
            notes.append(.info("empty-lines-dropped", "\(emptyLines) line(s) without text are left out: an LRC row with a stamp and no text ends the line before it"))
        }
        return out
    }

    // MARK: YRC

    static func yrc(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        var out: [UInt8] = []
        for tag in headerTags(lyrics) { out += "[\(tag.key):\(tag.value)]\n" }
        for line in lyrics.lines {
            out += try rowHeader(line, format: .yrc)
            var synthesized = 0   // YRC says nothing of lines without word timing
            let ws = wordsOrOne(line, synthesized: &synthesized)
            for w in ws {
                guard w.startMs >= 0, w.durationMs >= 0 else {
                    throw .cannotWrite(format: .yrc, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                }
                try checkText(w.text, format: .yrc, at: w.startMs)
                out += "(\(w.startMs),\(w.durationMs),\(w.krcField))\(w.text)"
            }
            out += "\n"
        }
        if lyrics.lines.contains(where: { $0.translation != nil || $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("translation-dropped", "YRC has no place for translations or romanizations; use krc or json to keep them"))
        }
        return out
    }

    // MARK: QRC

    /// Rows `[start,dur]word(start,dur)word(start,dur)…`, word times absolute and after the text.
    static func qrc(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        var out: [UInt8] = []
        for tag in headerTags(lyrics) { out += "[\(tag.key):\(tag.value)]\n" }
        var synthesized = 0
        for line in lyrics.lines {
            out += try rowHeader(line, format: .qrc)
            let words = wordsOrOne(line, synthesized: &synthesized)
            // A row whose first word begins like a KRC unit `<n,n,n>` or a YRC unit `(n,n,n)` would be
            // read back as that format.
            if let first = words.first {
                let b = Array(first.text.utf8)[...]
                if KRCParser.unitHeader(b, b.startIndex) != nil || YRCParser.unit(b, b.startIndex) != nil {
                    throw .cannotWrite(format: .qrc, detail: "the line at \(TimeText.ms(line.startMs)) begins with `\(Scan.capped(first.text))`, a KRC or YRC unit, so the file would read as that format; write it as krc or json")
                }
            }
            for w in words {
                guard w.startMs >= 0, w.durationMs >= 0 else {
                    throw .cannotWrite(format: .qrc, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                }
                try checkText(w.text, format: .qrc, at: w.startMs)
                // The reader takes the first `(n,n)` as the word's timing: a word holding one cannot be written.
                if QRCParser.nextTiming(Array(w.text.utf8)[...], from: 0) != nil {
                    throw .cannotWrite(format: .qrc, detail: "word text `\(Scan.capped(w.text))` contains a `(n,n)` timing, which QRC cannot escape")
                }
                out += "\(w.text)(\(w.startMs),\(w.durationMs))"
            }
            out += "\n"
        }
        if synthesized > 0 {
            notes.append(.info("words-synthesized", "\(synthesized) line(s) had no word timing; each was written as one QRC word spanning the line"))
        }
        if lyrics.lines.contains(where: { $0.translation != nil || $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("translation-dropped", "QRC carries translations in a companion file, which ktv does not write; use krc or json to keep them"))
        }
        return out
    }

    /// The QRC body as the `LyricContent` attribute of QQ Music's `<QrcInfos>` document (the body's
    /// line breaks kept as written: the reader takes the attribute raw).
    static func qrcWrapped(_ body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out += "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<QrcInfos>\n<QrcHeadInfo SaveTime=\"0\" Version=\"100\"/>\n<LyricInfo LyricCount=\"1\">\n<Lyric_1 LyricType=\"1\" LyricContent=\""
        for b in body {
            switch b {
            case UInt8(ascii: "&"): out += "&amp;"
            case UInt8(ascii: "\""): out += "&quot;"
            case UInt8(ascii: "<"): out += "&lt;"
            default: out.append(b)
            }
        }
        out += "\"/>\n</LyricInfo>\n</QrcInfos>\n"
        return out
    }

    // MARK: Migu / Agora XML

    /// `<song><general>` (title, singer) then `<midi_lrc>` with a `<sentence>` per line and a `<tone
    /// begin end pitch>` per word (seconds to the millisecond; pitch in Hz from the word's reference
    /// pitch, else 0 = unpitched), as the Migu and Agora players read it.
    static func miguXML(_ lyrics: Lyrics, notes: inout [Diagnostic]) throws(LyricsError) -> [UInt8] {
        func seconds(_ ms: Int) -> String { "\(ms / 1000).\(TimeText.pad(ms % 1000, 3))" }
        var out: [UInt8] = []
        out += "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<song>\n<general>\n"
        if let t = lyrics.title { out += "<name>\(xmlEscaped(t))</name>\n" }
        if let a = lyrics.artist { out += "<singer>\(xmlEscaped(a))</singer>\n" }
        out += "</general>\n<midi_lrc>\n<paragraph>\n"
        var synthesized = 0, pitched = 0
        for line in lyrics.lines {
            let words = wordsOrOne(line, synthesized: &synthesized)
            out += "<sentence>\n"
            for w in words {
                guard w.startMs >= 0, w.durationMs >= 0 else {
                    throw .cannotWrite(format: .miguXML, detail: "word `\(Scan.capped(w.text))` at \(TimeText.ms(w.startMs)) has a negative start or duration")
                }
                try checkText(w.text, format: .miguXML, at: w.startMs)
                let pitch = w.pitchHz.map { String($0) } ?? "0"
                if w.pitchHz != nil { pitched += 1 }
                out += "<tone begin=\"\(seconds(w.startMs))\" end=\"\(seconds(w.endMs))\" pitch=\"\(pitch)\"><word>\(xmlEscaped(w.text))</word></tone>\n"
            }
            out += "</sentence>\n"
        }
        out += "</paragraph>\n</midi_lrc>\n</song>\n"
        if synthesized > 0 {
            notes.append(.info("words-synthesized", "\(synthesized) line(s) had no word timing; each was written as one tone spanning the line"))
        }
        if pitched == 0, !lyrics.lines.isEmpty {
            notes.append(.info("no-pitch", "the model has no reference pitch, so every tone is written with pitch=\"0\" (unpitched)"))
        }
        if lyrics.lines.contains(where: { $0.translation != nil || $0.words.contains { $0.romanization != nil } }) {
            notes.append(.info("translation-dropped", "Migu XML has no place for translations or romanizations; use krc or json to keep them"))
        }
        return out
    }

    // MARK: SRT

    static func srt(_ lyrics: Lyrics) -> [UInt8] {
        func t(_ ms: Int) -> String {
            let v = max(0, ms)
            return "\(TimeText.pad(v / 3_600_000, 2)):\(TimeText.pad((v / 60000) % 60, 2)):\(TimeText.pad((v / 1000) % 60, 2)),\(TimeText.pad(v % 1000, 3))"
        }
        var out: [UInt8] = []
        for (k, line) in lyrics.lines.enumerated() {
            out += "\(k + 1)\n\(t(line.startMs)) --> \(t(line.endMs))\n\(line.text.replacingLineBreaks.trimmingSpaces)\n"
            if let tr = line.translation { out += tr.replacingLineBreaks + "\n" }
            out += "\n"
        }
        return out
    }
}

extension String {
    var replacingLineBreaks: String {
        guard contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return self }
        return split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }).joined(separator: " ")
    }
}

/// Writers build bytes, not a `String` copied into bytes at the end: the output of a large file
/// would be in memory twice.
private func += (out: inout [UInt8], s: String) {
    out.append(contentsOf: s.utf8)
}
