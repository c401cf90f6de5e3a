import KTVCore

// ktv's notes JSON, the one exchange format of a reference melody, written with KTVCore's
// `JSONValue` (keys in a fixed order, so files diff cleanly); `ReferenceReader.read` reads it back.
// Source: ktv's own format (docs: `ktv score notes`):
//   {"notes": [{"start_ms", "duration_ms", "midi" (null = unpitched), "word", "line", "kind"}],
//    "lines": [{"start_ms", "end_ms", "text"}]}
// plus, only when they say something, "beat_ms" (an UltraStar song's beat, which its scoring
// needs) and "scale": "relative" (pitches on an unknown offset, Agora's 0-100 scale).
// `midi` is cents / 100, written as a whole number when it is one; a fractional pitch reads back
// within 1e-9 cents (the division by 100 is not exact in binary).

/// Writes a melody as ktv's notes JSON.
public enum NotesJSON {
    public static func value(_ melody: ReferenceMelody) -> JSONValue {
        var root: [(String, JSONValue)] = [
            ("notes", .array(melody.notes.map { n in
                .object([
                    ("start_ms", .int(n.startMs)),
                    ("duration_ms", .int(n.durationMs)),
                    ("midi", n.cents.map { c in c == c.rounded() && abs(c) < 1e12 && Int(c) % 100 == 0 ? .int(Int(c) / 100) : .double(c / 100) } ?? .null),
                    ("word", .string(n.word)),
                    ("line", .int(n.line)),
                    ("kind", .string(n.kind.rawValue)),
                ])
            })),
            ("lines", .array(melody.lines.map { .object([("start_ms", .int($0.startMs)), ("end_ms", .int($0.endMs)), ("text", .string($0.text))]) })),
        ]
        if let b = melody.beatMs { root.append(("beat_ms", .double(b))) }
        if melody.scale == .relative { root.append(("scale", .string(melody.scale.rawValue))) }
        return .object(root)
    }

    /// The JSON text, UTF-8, two-space indented.
    public static func write(_ melody: ReferenceMelody) -> [UInt8] {
        Array(value(melody).serialized(pretty: true).utf8)
    }
}

extension NotesJSON {
    /// What a notes JSON file holds, as written: notes in file order (`line` as the file gives it),
    /// and the file's own lines, beat and scale when it names them.
    struct Contents {
        var notes: [MelodyNote] = []
        /// Whether any note named its `line`.
        var anyLine = false
        var lines: [MelodyLine]?
        var beatMs: Double?
        var scale = ReferenceMelody.PitchScale.absolute
    }

    /// Reads ktv's notes JSON straight from its bytes (`JSONReader`, no tree of values: a note costs
    /// about what its `MelodyNote` does, so a file needs memory near its own size). A UTF-8 byte-order
    /// mark is skipped. Every time is checked against `SongBounds` where it is read, so an error names
    /// the line of the value.
    static func read(_ bytes: [UInt8], path: String) throws(ScoreError) -> Contents {
        try JSONReader.decodeChecked(bytes, skippingBOM: true, invalid: { ScoreError.badReference(path: path, line: $0, detail: $1) }) { r in
            try contents(&r, path: path)
        }
    }

    private static func contents(_ r: inout JSONReader, path: String) throws -> Contents {
        let text = r.bytes
        func fail(_ at: Int, _ detail: String) -> ScoreError {
            .badReference(path: path, line: JSONReader.location(of: at, in: text).line, detail: detail)
        }
        var c = Contents()
        r.skipSpace()
        let rootAt = r.offset
        switch r.peek() {
        case 0x5B?:
            try notes(&r, into: &c, fail: fail)
        case 0x7B?:
            var sawNotes = false, sawLines = false, sawBeat = false, sawScale = false
            try r.forEachMember { r, key in
                r.skipSpace()
                let at = r.offset
                if !sawNotes, r.keyEquals(key, "notes") {
                    sawNotes = true
                    guard r.peek() == 0x5B else { throw fail(at, "`notes` must be a list of notes") }
                    try notes(&r, into: &c, fail: fail)
                } else if !sawLines, r.keyEquals(key, "lines") {
                    sawLines = true
                    guard r.peek() == 0x5B else { return try r.skipValue() }
                    var lines: [MelodyLine] = []
                    try r.forEachElement { r in
                        let k = lines.count
                        r.skipSpace()
                        let lineAt = r.offset
                        var start: Int??, end: Int??, words: String?
                        if r.peek() == 0x7B {
                            try r.forEachMember { r, key in
                                if start == nil, r.keyEquals(key, "start_ms") { start = try integer(&r) }
                                else if end == nil, r.keyEquals(key, "end_ms") { end = try integer(&r) }
                                else if words == nil, r.keyEquals(key, "text"), r.peek() == 0x22 { words = try r.string() }
                                else { try r.skipValue() }
                            }
                        } else {
                            try r.skipValue()
                        }
                        guard let s = start ?? nil, let e = end ?? nil else { throw fail(lineAt, "lines[\(k)] needs integers `start_ms` and `end_ms`") }
                        if let p = SongBounds.timeProblem(ms: s) { throw fail(lineAt, "lines[\(k)].start_ms: \(p)") }
                        if let p = SongBounds.timeProblem(ms: e) { throw fail(lineAt, "lines[\(k)].end_ms: \(p)") }
                        if e < s { throw fail(lineAt, "lines[\(k)] ends at \(e) ms, before it starts at \(s) ms") }
                        lines.append(MelodyLine(startMs: s, endMs: e, text: words ?? ""))
                    }
                    c.lines = lines
                } else if !sawBeat, r.keyEquals(key, "beat_ms") {
                    sawBeat = true
                    guard let b = try number(&r) else { return }
                    guard b > 0 && b <= 60_000 else { throw fail(at, "`beat_ms` \(b) must be a beat length in ms, above 0 and at most 60000") }
                    c.beatMs = b
                } else if !sawScale, r.keyEquals(key, "scale"), r.peek() == 0x22 {
                    sawScale = true
                    if try r.string() == ReferenceMelody.PitchScale.relative.rawValue { c.scale = .relative }
                } else {
                    try r.skipValue()
                }
            }
            guard sawNotes else { throw fail(rootAt, "expected a list of notes, or an object with `notes`") }
        default:
            throw fail(rootAt, "expected a list of notes, or an object with `notes`")
        }
        return c
    }

    private static func notes(_ r: inout JSONReader, into c: inout Contents, fail: (Int, String) -> ScoreError) throws {
        try r.forEachElement { r in
            let k = c.notes.count
            r.skipSpace()
            let noteAt = r.offset
            var start: Int??, duration: Int??, line: Int??
            var cents: Double??            // .some(nil): `midi` null
            var midiAt = noteAt
            var word: String?, kind: MelodyNote.Kind?
            guard r.peek() == 0x7B else { throw fail(noteAt, "notes[\(k)] needs non-negative integers `start_ms` and `duration_ms`") }
            try r.forEachMember { r, key in
                r.skipSpace()
                if start == nil, r.keyEquals(key, "start_ms") { start = try integer(&r) }
                else if duration == nil, r.keyEquals(key, "duration_ms") { duration = try integer(&r) }
                else if cents == nil, r.keyEquals(key, "midi") {
                    midiAt = r.offset
                    if r.peek() == 0x6E { try r.literal("null"); cents = .some(nil) }
                    else if let m = try number(&r) { cents = m * 100 }
                    else { throw fail(midiAt, "notes[\(k)].midi must be a MIDI note number or null") }
                } else if line == nil, r.keyEquals(key, "line") { line = try integer(&r) }
                else if word == nil, r.keyEquals(key, "word"), r.peek() == 0x22 { word = try r.string() }
                else if kind == nil, r.keyEquals(key, "kind"), r.peek() == 0x22 { kind = MelodyNote.Kind(rawValue: try r.string()) ?? .normal }
                else { try r.skipValue() }
            }
            guard let s = start ?? nil, let d = duration ?? nil else {
                throw fail(noteAt, "notes[\(k)] needs non-negative integers `start_ms` and `duration_ms`")
            }
            if let p = SongBounds.timeProblem(ms: s) { throw fail(noteAt, "notes[\(k)].start_ms: \(p)") }
            if let p = SongBounds.durationProblem(ms: d) { throw fail(noteAt, "notes[\(k)].duration_ms: \(p)") }
            if let p = SongBounds.timeProblem(ms: s + d) { throw fail(noteAt, "notes[\(k)] ends at \(s + d) ms: \(p)") }
            let pitch = cents ?? nil
            if let p = pitch, !SongBounds.cents.contains(p) { throw fail(midiAt, "notes[\(k)].midi \(p / 100) is outside 0…127") }
            let l = line ?? nil     // a label: notes with the same `line` are one line
            c.anyLine = c.anyLine || l != nil
            c.notes.append(MelodyNote(startMs: s, durationMs: d, cents: pitch, word: word ?? "", line: l ?? 0, kind: kind ?? .normal))
        }
    }

    /// An integer, or an integral number written with a fraction (`1000.0`); nil for anything else,
    /// which is skipped.
    private static func integer(_ r: inout JSONReader) throws -> Int? {
        r.skipSpace()
        guard let b = r.peek(), b == 0x2D || (b >= 0x30 && b <= 0x39) else { try r.skipValue(); return nil }
        let n = try r.number()
        if let i = n.integer { return i }
        return n.double == n.double.rounded() && abs(n.double) < 1e15 ? Int(n.double) : nil
    }

    /// A number (exact when it is an integer), or nil for any other value, which is skipped.
    private static func number(_ r: inout JSONReader) throws -> Double? {
        r.skipSpace()
        guard let b = r.peek(), b == 0x2D || (b >= 0x30 && b <= 0x39) else { try r.skipValue(); return nil }
        let n = try r.number()
        if let i = n.integer { return Double(i) }
        return n.double
    }
}
