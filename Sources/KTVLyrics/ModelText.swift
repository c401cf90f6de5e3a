import KTVCore

/// A plain-text view of a parsed model for people: tags, then each line with its start, duration and
/// words (`text@start+duration`, `[bg]` for background vocals), a duet's voice, translation, and a summary of the reference pitch.
public enum ModelText {
    /// The view in pieces of about `chunkBytes`, a line at a time.
    public static func write<E: Error>(_ parsed: ParsedLyrics, chunkBytes: Int = 1 << 20,
                                to sink: ([UInt8]) throws(E) -> Void) throws(E) {
        let l = parsed.lyrics
        var out = "format: \(l.format.rawValue)"
        if let e = parsed.encoding { out += " (\(e.rawValue))" }
        out += "\n"
        for tag in l.tags where tag.key.lowercased() != "language" {
            out += "tag \(tag.key): \(tag.value)\n"
        }
        if let o = l.offsetMs { out += "offset: \(o) ms as written; applied shift \(l.appliedShiftMs) ms\n" }
        let words = l.lines.reduce(0) { $0 + $1.words.count }
        out += "lines: \(l.lines.count), words: \(words)\n"
        for (k, packed) in l.lines.enumerated() {
            let line = (text: packed.text, words: packed.words)
            out += "\(k + 1)\t\(stamp(packed.startMs)) +\(packed.durationMs)\t\(line.text)\(packed.voice.map { "\t[voice \($0)]" } ?? "")\n"
            if !line.words.isEmpty {
                out += "\t" + line.words.map { w in
                    var s = "\(w.text)@\(w.startMs)+\(w.durationMs)"
                    if let r = w.romanization { s += "(\(r))" }
                    if w.background { s += "[bg]" }
                    return s
                }.joined(separator: " ") + "\n"
            }
            if let t = packed.translation { out += "\t= \(t)\n" }
            if out.utf8.count >= chunkBytes {
                try sink(Array(out.utf8))
                out = ""
            }
        }
        switch l.referencePitch {
        case let .notes(scale, notes)?:
            out += "reference pitch: \(notes.count) notes (\(scale.rawValue))\n"
        case let .contour(c)?:
            let grid = c.regularIntervalMs.map { "every \($0) ms" } ?? "at irregular times"
            out += "reference pitch: \(c.count) frames \(grid), \(c.voicedCount) voiced\n"
        case nil: break
        }
        try sink(Array(out.utf8))
    }

    static func stamp(_ ms: Int) -> String {
        let v = abs(ms)
        let s = "\(v / 60000):\(TimeText.pad((v / 1000) % 60, 2)).\(TimeText.pad(v % 1000, 3))"
        return ms < 0 ? "-" + s : s
    }
}
