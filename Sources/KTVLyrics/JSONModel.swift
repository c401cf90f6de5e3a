import KTVCore

/// ktv's JSON form of the model: keys `format`, `tags`, `offset_ms`, `lines[]` (`start_ms`,
/// `duration_ms`, `text`, `words[]` with `start_ms`, `duration_ms`, `text`, optional `romanization`,
/// `krc_field`, `pitch_hz` and `background: true`), optional `translation` and `voice` (a duet's
/// agent id), and `reference_pitch` for pitch files. It is also read back.
public enum JSONModel {
    public static func value(_ lyrics: Lyrics) -> JSONValue {
        var root: [(String, JSONValue)] = [
            ("format", .string(lyrics.format.rawValue)),
            ("tags", tags(lyrics)),
            ("offset_ms", lyrics.offsetMs.map(JSONValue.int) ?? .null),
            ("applied_shift_ms", .int(lyrics.appliedShiftMs)),
            ("lines", .array(lyrics.lines.map(line))),
        ]
        if let pitch = lyrics.referencePitch { root.append(("reference_pitch", value(pitch))) }
        return .object(root)
    }

    /// The bytes of `value(lyrics).serialized()`, built a line (or pitch value) at a time and handed
    /// to `sink` in pieces of about `chunkBytes`: the JSON of a large file is several times its size,
    /// and neither it nor a tree of every value needs to be in memory at once.
    public static func write<E: Error>(_ lyrics: Lyrics, chunkBytes: Int = 1 << 20,
                                       to sink: ([UInt8]) throws(E) -> Void) throws(E) {
        var out: [UInt8] = []
        out.reserveCapacity(chunkBytes + 64 * 1024)
        func put(_ s: StaticString) { s.withUTF8Buffer { out.append(contentsOf: $0) } }
        func put(_ v: JSONValue, indent: Int) { v.append(to: &out, indent: indent) }
        func pass(force: Bool) throws(E) {
            guard !out.isEmpty, force || out.count >= chunkBytes else { return }
            try sink(out)
            out.removeAll(keepingCapacity: true)
        }
        /// The elements of an array at depth 2 (inside `reference_pitch`).
        func array(_ count: Int, _ element: (Int) -> JSONValue) throws(E) {
            if count == 0 { return put("[]") }
            put("[")
            for k in 0..<count {
                put(k == 0 ? "\n      " : ",\n      ")
                put(element(k), indent: 3)
                try pass(force: false)
            }
            put("\n    ]")
        }
        put("{\n  \"format\": ")
        put(.string(lyrics.format.rawValue), indent: 1)
        put(",\n  \"tags\": ")
        put(tags(lyrics), indent: 1)
        put(",\n  \"offset_ms\": ")
        put(lyrics.offsetMs.map(JSONValue.int) ?? .null, indent: 1)
        put(",\n  \"applied_shift_ms\": ")
        put(.int(lyrics.appliedShiftMs), indent: 1)
        put(",\n  \"lines\": ")
        if lyrics.lines.isEmpty {
            put("[]")
        } else {
            put("[")
            for (k, l) in lyrics.lines.enumerated() {
                put(k == 0 ? "\n    " : ",\n    ")
                appendLine(l.fields, to: &out)
                try pass(force: false)
            }
            put("\n  ]")
        }
        switch lyrics.referencePitch {
        case let .notes(scale, notes)?:
            put(",\n  \"reference_pitch\": {\n    \"kind\": \"notes\",\n    \"scale\": ")
            put(.string(scale.rawValue), indent: 2)
            put(",\n    \"notes\": ")
            try array(notes.count) { note(notes[$0]) }
            put("\n  }")
        case let .contour(c)?:
            put(",\n  \"reference_pitch\": {\n    \"kind\": \"contour\",\n    ")
            if let interval = contourInterval(c) {
                put("\"interval_ms\": ")
                put(.int(interval), indent: 2)
            } else {
                put("\"times_s\": ")
                try array(c.count) { .double(c.timesS[$0]) }
            }
            put(",\n    \"hz\": ")
            try array(c.count) { contourValue(c.f0Hz[$0]) }
            put("\n  }")
        case nil:
            break
        }
        put("\n}\n")
        try pass(force: true)
    }

    /// Tags as an object; a key written twice keeps its last value, at its last place.
    static func tags(_ lyrics: Lyrics) -> JSONValue {
        // Indexed, not searched: a hostile file can carry a million distinct tags.
        var last: [String: Int] = [:]
        for (k, tag) in lyrics.tags.enumerated() { last[tag.key] = k }
        return .object(lyrics.tags.enumerated().compactMap { k, tag in
            last[tag.key] == k ? (tag.key, .string(tag.value)) : nil
        })
    }

    /// Appends `line(l)` exactly as `JSONValue` writes it as an element of `lines` (tests compare
    /// the two), without building the value: building and serializing a `JSONValue` per word was
    /// most of the time `ktv lyrics parse` took.
    static func appendLine(_ l: LinePacking.Fields, to out: inout [UInt8]) {
        func raw(_ s: StaticString) { s.withUTF8Buffer { out.append(contentsOf: $0) } }
        /// `"name": ` on a line of its own, `depth` levels in; the first member opens its object.
        func member(_ name: StaticString, _ depth: Int, first: Bool = false) {
            out += first ? [0x7B, 0x0A] : [0x2C, 0x0A]
            out += repeatElement(0x20, count: 2 * depth)
            out.append(0x22)
            raw(name)
            raw("\": ")
        }
        func int(_ v: Int) { out += String(v).utf8 }
        func string(_ s: String) { JSONValue.escape(s, into: &out) }
        member("start_ms", 3, first: true)
        int(l.startMs)
        member("duration_ms", 3)
        int(l.durationMs)
        member("text", 3)
        string(l.text)
        if let t = l.translation { member("translation", 3); string(t) }
        if let v = l.voice { member("voice", 3); string(v) }
        member("words", 3)
        if l.words.isEmpty {
            raw("[]")
        } else {
            raw("[")
            for (k, w) in l.words.enumerated() {
                raw(k == 0 ? "\n        " : ",\n        ")
                member("start_ms", 5, first: true)
                int(w.startMs)
                member("duration_ms", 5)
                int(w.durationMs)
                member("text", 5)
                string(w.text)
                if let r = w.romanization { member("romanization", 5); string(r) }
                if w.krcField != 0 { member("krc_field", 5); int(w.krcField) }
                if let hz = w.pitchHz { member("pitch_hz", 5); JSONValue.double(hz).append(to: &out, indent: 5) }
                if w.background { member("background", 5); raw("true") }
                raw("\n        }")
            }
            raw("\n      ]")
        }
        raw("\n    }")
    }

    static func line(_ packed: LyricLine) -> JSONValue {
        let l = packed.fields
        var pairs: [(String, JSONValue)] = [
            ("start_ms", .int(l.startMs)), ("duration_ms", .int(l.durationMs)), ("text", .string(l.text)),
        ]
        if let t = l.translation { pairs.append(("translation", .string(t))) }
        if let v = l.voice { pairs.append(("voice", .string(v))) }
        pairs.append(("words", .array(l.words.map { w in
            var p: [(String, JSONValue)] = [
                ("start_ms", .int(w.startMs)), ("duration_ms", .int(w.durationMs)), ("text", .string(w.text)),
            ]
            if let r = w.romanization { p.append(("romanization", .string(r))) }
            if w.krcField != 0 { p.append(("krc_field", .int(w.krcField))) }
            if let hz = w.pitchHz { p.append(("pitch_hz", .double(hz))) }
            if w.background { p.append(("background", .bool(true))) }
            return .object(p)
        })))
        return .object(pairs)
    }

    static func value(_ pitch: ReferencePitch) -> JSONValue {
        switch pitch {
        case let .notes(scale, notes):
            return .object([("kind", .string("notes")), ("scale", .string(scale.rawValue)), ("notes", .array(notes.map(note)))])
        case let .contour(c):
            let grid: (String, JSONValue) = contourInterval(c).map { ("interval_ms", .int($0)) } ?? ("times_s", .array(c.timesS.map(JSONValue.double)))
            return .object([("kind", .string("contour")), grid, ("hz", .array(c.f0Hz.map(contourValue)))])
        }
    }

    static func note(_ n: ReferencePitch.Note) -> JSONValue {
        .object([("start_ms", .int(n.startMs)), ("duration_ms", .int(n.durationMs)), ("value", .double(n.value))])
    }

    /// The contour's interval when its samples sit at k·interval; a contour too short to tell is
    /// written with Agora's 10 ms (its times read back the same).
    static func contourInterval(_ c: PitchContour) -> Int? {
        c.count < 2 ? 10 : c.regularIntervalMs
    }

    /// An unvoiced frame is written as 0 Hz.
    static func contourValue(_ hz: Double?) -> JSONValue { hz.map(JSONValue.double) ?? .double(0) }

    /// Reads ktv's JSON model back, straight from the bytes into the packed lines: a tree of every
    /// value of a 50 MB model took well over a gigabyte. `encoding` is the file's, for byte offsets
    /// in messages. Members the model does not use are skipped; a member written twice keeps its
    /// last value (a tag keeps its first place).
    static func parse(_ text: [UInt8], encoding: TextEncoding = .utf8) throws(LyricsError) -> Lyrics {
        try decode(text, encoding: encoding, what: "invalid JSON") { r in
            let needsLines = LyricsError.malformed(line: nil, detail: "ktv JSON needs a `lines` list")
            var lyrics = Lyrics(format: .json)
            var lines: [LyricLine]?
            guard r.peek() == 0x7B else { throw needsLines }
            try r.forEachMember { r, key in
                if r.keyEquals(key, "lines") {
                    guard r.peek() == 0x5B else { throw needsLines }
                    lines = try Self.lines(&r)
                } else if r.keyEquals(key, "tags") {
                    if let tags = try Self.tags(&r) { lyrics.tags = tags }
                } else if r.keyEquals(key, "reference_pitch") {
                    lyrics.referencePitch = try referencePitch(&r)
                } else {
                    try r.skipValue()
                }
            }
            guard let lines else { throw needsLines }
            lyrics.lines = lines
            return lyrics
        }
    }

    /// The string values of the `tags` object in written order; nil when `tags` is not an object.
    private static func tags(_ r: inout JSONReader) throws -> [LyricTag]? {
        guard r.peek() == 0x7B else { try r.skipValue(); return nil }
        var keys: [String] = []
        var values: [String?] = []
        var index: [String: Int] = [:]
        try r.forEachMember { r, name in
            let key = r.makeString(name)
            let value = try string(&r)
            if let k = index[key] { values[k] = value } else {
                index[key] = keys.count
                keys.append(key)
                values.append(value)
            }
        }
        return zip(keys, values).compactMap { k, v in v.map { LyricTag(key: k, value: $0) } }
    }

    /// The `lines` list.
    private static func lines(_ r: inout JSONReader) throws -> [LyricLine] {
        var lines: [LyricLine] = []
        try r.forEachElement { r in
            let k = lines.count
            var translation: String?, voice: String?
            var words: [LyricWord] = []
            let (start, duration, text) = try timed(&r, "lines[\(k)]") { r, key in
                if r.keyEquals(key, "translation") { translation = try string(&r) }
                else if r.keyEquals(key, "voice") { voice = try string(&r) }
                else if r.keyEquals(key, "words") { words = try self.words(&r, line: k) }
                else { try r.skipValue() }
            }
            var line = LyricLine(startMs: start, durationMs: duration, text: text, words: words, translation: translation)
            if voice != nil { line.voice = voice }
            lines.append(line)
        }
        return lines
    }

    /// A line's `words`; a value that is not a list reads as none.
    private static func words(_ r: inout JSONReader, line: Int) throws -> [LyricWord] {
        var words: [LyricWord] = []
        guard r.peek() == 0x5B else { try r.skipValue(); return words }
        try r.forEachElement { r in
            var romanization: String?, krcField: Int?, pitch: Double?, background = false
            let (start, duration, text) = try timed(&r, "lines[\(line)].words[\(words.count)]") { r, key in
                if r.keyEquals(key, "romanization") { romanization = try string(&r) }
                else if r.keyEquals(key, "krc_field") { krcField = try int(&r) }
                else if r.keyEquals(key, "pitch_hz") { pitch = try number(&r) }
                else if r.keyEquals(key, "background"), r.peek() == UInt8(ascii: "t") { try r.literal("true"); background = true }
                else { try r.skipValue() }
            }
            var word = LyricWord(startMs: start, durationMs: duration, text: text, romanization: romanization,
                                 krcField: krcField ?? 0, pitchHz: pitch)
            word.background = background
            words.append(word)
        }
        return words
    }

    /// A line or word: an object with integers `start_ms`, `duration_ms` and a string `text` (an
    /// error names it `what` when one is missing); `other` reads or skips its other members.
    private static func timed(_ r: inout JSONReader, _ what: @autoclosure () -> String,
                              other: (inout JSONReader, JSONReader.StringRange) throws -> Void) throws -> (Int, Int, String) {
        var start: Int?, duration: Int?, text: String?
        if r.peek() == 0x7B {
            try r.forEachMember { r, key in
                if r.keyEquals(key, "start_ms") { start = try int(&r) }
                else if r.keyEquals(key, "duration_ms") { duration = try int(&r) }
                else if r.keyEquals(key, "text") { text = try string(&r) }
                else { try other(&r, key) }
            }
        }
        guard let start, let duration, let text else {
            throw LyricsError.malformed(line: nil, detail: "\(what()) needs integers `start_ms`, `duration_ms` and a string `text`")
        }
        return (start, duration, text)
    }

    /// `reference_pitch` as `write` puts it: notes with a scale, or a contour (0 Hz = unvoiced).
    /// The lists are read once `kind` is known, wherever it stands among the members.
    private static func referencePitch(_ r: inout JSONReader) throws -> ReferencePitch {
        guard r.peek() == 0x7B else { throw LyricsError.malformed(line: nil, detail: "`reference_pitch` must be an object") }
        var kind: String?, scale: String?, interval: Int?
        var notesAt: JSONReader?, hzAt: JSONReader?, timesAt: JSONReader?
        try r.forEachMember { r, key in
            if r.keyEquals(key, "kind") { kind = try string(&r) }
            else if r.keyEquals(key, "scale") { scale = try string(&r) }
            else if r.keyEquals(key, "interval_ms") { interval = try int(&r) }
            else if r.keyEquals(key, "notes") { notesAt = r.peek() == 0x5B ? r : nil; try r.skipValue() }
            else if r.keyEquals(key, "hz") { hzAt = r.peek() == 0x5B ? r : nil; try r.skipValue() }
            else if r.keyEquals(key, "times_s") { timesAt = r.peek() == 0x5B ? r : nil; try r.skipValue() }
            else { try r.skipValue() }
        }
        switch kind {
        case "notes":
            guard let scale = scale.flatMap(ReferencePitch.Scale.init(rawValue:)), var a = notesAt else {
                throw LyricsError.malformed(line: nil, detail: "`reference_pitch` of kind notes needs a `scale` (hz or note-index) and a `notes` list")
            }
            var notes: [ReferencePitch.Note] = []
            try a.forEachElement { a in
                var start: Int?, duration: Int?, value: Double?
                if a.peek() == 0x7B {
                    try a.forEachMember { a, key in
                        if a.keyEquals(key, "start_ms") { start = try int(&a) }
                        else if a.keyEquals(key, "duration_ms") { duration = try int(&a) }
                        else if a.keyEquals(key, "value") { value = try number(&a) }
                        else { try a.skipValue() }
                    }
                }
                guard let start, let duration, let value else {
                    throw LyricsError.malformed(line: nil, detail: "reference_pitch.notes[\(notes.count)] needs integers `start_ms`, `duration_ms` and a number `value`")
                }
                notes.append(ReferencePitch.Note(startMs: start, durationMs: duration, value: value))
            }
            return .notes(scale: scale, notes)
        case "contour":
            guard interval.map({ $0 > 0 }) ?? (timesAt != nil), var a = hzAt else {
                throw LyricsError.malformed(line: nil, detail: "`reference_pitch` of kind contour needs a positive `interval_ms` (or a `times_s` list) and an `hz` list")
            }
            var hz: [Double?] = []
            try a.forEachElement { a in
                guard let x = try number(&a) else {
                    throw LyricsError.malformed(line: nil, detail: "reference_pitch.hz[\(hz.count)] must be a number (0 for an unvoiced frame)")
                }
                hz.append(x == 0 ? nil : x)
            }
            if let interval { return .contour(intervalMs: interval, hz: hz) }
            var times: [Double] = []
            if var t = timesAt {
                try t.forEachElement { t in
                    guard let x = try number(&t), x.isFinite, x >= 0, times.last.map({ x > $0 }) ?? true else {
                        throw LyricsError.malformed(line: nil, detail: "reference_pitch.times_s[\(times.count)] must be a time in seconds after the previous one")
                    }
                    times.append(x)
                }
            }
            guard times.count == hz.count else {
                throw LyricsError.malformed(line: nil, detail: "reference_pitch has \(times.count) `times_s` and \(hz.count) `hz` values; give one time per value")
            }
            return .contour(PitchContour(timesS: times, f0Hz: hz))
        default:
            throw LyricsError.malformed(line: nil, detail: "`reference_pitch.kind` must be `notes` or `contour`")
        }
    }

    /// The value when it is a string; anything else is skipped and reads as nil.
    static func string(_ r: inout JSONReader) throws -> String? {
        guard r.peek() == 0x22 else { try r.skipValue(); return nil }
        return try r.string()
    }

    /// The value when it is a number; anything else is skipped and reads as nil.
    static func number(_ r: inout JSONReader) throws -> Double? {
        guard let c = r.peek(), c == ASCII.minus || ASCII.isDigit(c) else { try r.skipValue(); return nil }
        return try r.number().double
    }

    /// A whole number of ms: an integer, or a number with no fraction, under 1e15 either way.
    private static func int(_ r: inout JSONReader) throws -> Int? {
        guard let c = r.peek(), c == ASCII.minus || ASCII.isDigit(c) else { try r.skipValue(); return nil }
        let n = try r.number()
        guard n.double == n.double.rounded(), abs(n.double) < 1e15 else { return nil }
        return n.integer ?? Int(n.double)
    }

    /// Checks the text's syntax (an error names its line and byte offset, `what` starting the
    /// message), then decodes it with `body`, whose errors are `LyricsError`s or the reader's.
    static func decode<T>(_ text: [UInt8], encoding: TextEncoding, what: String,
                          _ body: (inout JSONReader) throws -> T) throws(LyricsError) -> T {
        // Foundation read these files before and accepted a trailing comma; so does ktv.
        do { try JSONReader.check(text, allowsTrailingCommas: true) } catch {
            throw .malformed(line: JSONReader.location(of: error.byteOffset, in: text).line,
                             detail: "\(what) at \(position(error.byteOffset, encoding)): \(error.message)")
        }
        do {
            return try text.withUnsafeBufferPointer { buf in
                var r = JSONReader(buf, allowsTrailingCommas: true)
                return try body(&r)
            }
        } catch let e as LyricsError {
            throw e
        } catch {
            // The text was checked, so the reader has nothing left to refuse.
            throw .malformed(line: nil, detail: "\(what): \(error)")
        }
    }

    /// `byte offset N`, counted in the file: a UTF-8 BOM shifts it by 3; other encodings were converted.
    private static func position(_ offset: Int, _ encoding: TextEncoding) -> String {
        switch encoding {
        case .utf8: return "byte offset \(offset)"
        case .utf8BOM: return "byte offset \(offset + 3)"
        default: return "byte offset \(offset) of the text converted from \(encoding.rawValue) to UTF-8"
        }
    }
}
