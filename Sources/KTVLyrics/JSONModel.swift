import Foundation
import KTVCore

/// ktv's JSON form of the model: keys `format`, `tags`, `offset_ms`, `lines[]` (`start_ms`,
/// `duration_ms`, `text`, `words[]` with `start_ms`, `duration_ms`, `text`, optional `romanization`),
/// optional `translation`, and `reference_pitch` for pitch files. It is also read back.
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
        func put(_ v: JSONValue, indent: Int) { appendNested(v, indent: indent, to: &out) }
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
        case let .contour(interval, hz)?:
            put(",\n  \"reference_pitch\": {\n    \"kind\": \"contour\",\n    \"interval_ms\": ")
            put(.int(interval), indent: 2)
            put(",\n    \"hz\": ")
            try array(hz.count) { contourValue(hz[$0]) }
            put("\n  }")
        case nil:
            break
        }
        put("\n}\n")
        try pass(force: true)
    }

    /// Appends `v` as `JSONValue.serialized()` writes it inside a container `indent` levels deep:
    /// the same text with every line break followed by that much more indentation (strings escape theirs).
    private static func appendNested(_ v: JSONValue, indent: Int, to out: inout [UInt8]) {
        let text = v.serialized().utf8.dropLast()  // its final line break
        for b in text {
            out.append(b)
            if b == ASCII.lf {
                for _ in 0..<(2 * indent) { out.append(ASCII.space) }
            }
        }
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
        func int(_ v: Int) { out.append(contentsOf: String(v).utf8) }
        raw("{\n      \"start_ms\": ")
        int(l.startMs)
        raw(",\n      \"duration_ms\": ")
        int(l.durationMs)
        raw(",\n      \"text\": ")
        appendString(l.text, to: &out)
        if let t = l.translation {
            raw(",\n      \"translation\": ")
            appendString(t, to: &out)
        }
        raw(",\n      \"words\": ")
        if l.words.isEmpty {
            raw("[]")
        } else {
            raw("[")
            for (k, w) in l.words.enumerated() {
                raw(k == 0 ? "\n        {\n          \"start_ms\": " : ",\n        {\n          \"start_ms\": ")
                int(w.startMs)
                raw(",\n          \"duration_ms\": ")
                int(w.durationMs)
                raw(",\n          \"text\": ")
                appendString(w.text, to: &out)
                if let r = w.romanization {
                    raw(",\n          \"romanization\": ")
                    appendString(r, to: &out)
                }
                if w.krcField != 0 {
                    raw(",\n          \"krc_field\": ")
                    int(w.krcField)
                }
                if let hz = w.pitchHz {
                    raw(",\n          \"pitch_hz\": ")
                    out.append(contentsOf: JSONValue.double(hz).serialized(pretty: false).utf8)
                }
                raw("\n        }")
            }
            raw("\n      ]")
        }
        raw("\n    }")
    }

    /// A JSON string with `JSONValue.escape`'s escapes, byte by byte.
    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        let bytes = Array(s.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            i += 1
            // U+FEFF (EF BB BF) escaped: JSONSerialization on Linux drops a raw one that starts a string.
            if b == 0xEF, i + 1 < bytes.count, bytes[i] == 0xBB, bytes[i + 1] == 0xBF {
                out += Array("\\ufeff".utf8)
                i += 2
                continue
            }
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        out.append(0x22)
    }

    static func line(_ packed: LyricLine) -> JSONValue {
        let l = packed.fields
        var pairs: [(String, JSONValue)] = [
            ("start_ms", .int(l.startMs)), ("duration_ms", .int(l.durationMs)), ("text", .string(l.text)),
        ]
        if let t = l.translation { pairs.append(("translation", .string(t))) }
        pairs.append(("words", .array(l.words.map { w in
            var p: [(String, JSONValue)] = [
                ("start_ms", .int(w.startMs)), ("duration_ms", .int(w.durationMs)), ("text", .string(w.text)),
            ]
            if let r = w.romanization { p.append(("romanization", .string(r))) }
            if w.krcField != 0 { p.append(("krc_field", .int(w.krcField))) }
            if let hz = w.pitchHz { p.append(("pitch_hz", .double(hz))) }
            return .object(p)
        })))
        return .object(pairs)
    }

    static func value(_ pitch: ReferencePitch) -> JSONValue {
        switch pitch {
        case let .notes(scale, notes):
            return .object([("kind", .string("notes")), ("scale", .string(scale.rawValue)), ("notes", .array(notes.map(note)))])
        case let .contour(interval, hz):
            return .object([("kind", .string("contour")), ("interval_ms", .int(interval)), ("hz", .array(hz.map(contourValue)))])
        }
    }

    static func note(_ n: ReferencePitch.Note) -> JSONValue {
        .object([("start_ms", .int(n.startMs)), ("duration_ms", .int(n.durationMs)), ("value", .double(n.value))])
    }

    /// An unvoiced frame is written as 0 Hz.
    static func contourValue(_ hz: Double?) -> JSONValue { hz.map(JSONValue.double) ?? .double(0) }

    /// Reads ktv's JSON model back. `encoding` is the file's, for byte offsets in messages.
    static func parse(_ text: [UInt8], encoding: TextEncoding = .utf8) throws(LyricsError) -> Lyrics {
        let obj = try object(text, encoding: encoding, what: "invalid JSON")
        guard let root = obj as? [String: Any], let rawLines = root["lines"] as? [Any] else {
            throw .malformed(line: nil, detail: "ktv JSON needs a `lines` list")
        }
        var lyrics = Lyrics(format: .json)
        if let tags = root["tags"] as? [String: Any] {
            // JSONSerialization loses key order; restore the written order from the text.
            let written = JSONSyntax.keys(ofObjectAt: "tags", in: text) ?? []
            let known = Set(written)
            let order = written.filter { tags[$0] != nil } + tags.keys.filter { !known.contains($0) }.sorted()
            lyrics.tags = order.compactMap { k in (tags[k] as? String).map { LyricTag(key: k, value: $0) } }
        }
        for (k, raw) in rawLines.enumerated() {
            guard let d = raw as? [String: Any], let start = int(d["start_ms"]), let dur = int(d["duration_ms"]),
                  let text = d["text"] as? String else {
                throw .malformed(line: nil, detail: "lines[\(k)] needs integers `start_ms`, `duration_ms` and a string `text`")
            }
            var words: [LyricWord] = []
            for (w, rawWord) in ((d["words"] as? [Any]) ?? []).enumerated() {
                guard let wd = rawWord as? [String: Any], let ws = int(wd["start_ms"]), let wdur = int(wd["duration_ms"]),
                      let wt = wd["text"] as? String else {
                    throw .malformed(line: nil, detail: "lines[\(k)].words[\(w)] needs integers `start_ms`, `duration_ms` and a string `text`")
                }
                words.append(LyricWord(startMs: ws, durationMs: wdur, text: wt,
                                       romanization: wd["romanization"] as? String,
                                       krcField: int(wd["krc_field"]) ?? 0,
                                       pitchHz: (wd["pitch_hz"] as? NSNumber)?.doubleValue))
            }
            lyrics.lines.append(LyricLine(startMs: start, durationMs: dur, text: text, words: words,
                                          translation: d["translation"] as? String))
        }
        if let rp = root["reference_pitch"] { lyrics.referencePitch = try referencePitch(rp) }
        return lyrics
    }

    /// `reference_pitch` as `write` puts it: notes with a scale, or a contour (0 Hz = unvoiced).
    private static func referencePitch(_ raw: Any) throws(LyricsError) -> ReferencePitch {
        guard let d = raw as? [String: Any] else { throw .malformed(line: nil, detail: "`reference_pitch` must be an object") }
        switch d["kind"] as? String {
        case "notes":
            guard let scale = (d["scale"] as? String).flatMap(ReferencePitch.Scale.init(rawValue:)), let raw = d["notes"] as? [Any] else {
                throw .malformed(line: nil, detail: "`reference_pitch` of kind notes needs a `scale` (hz or note-index) and a `notes` list")
            }
            var notes: [ReferencePitch.Note] = []
            for (k, n) in raw.enumerated() {
                guard let o = n as? [String: Any], let start = int(o["start_ms"]), let dur = int(o["duration_ms"]),
                      let value = (o["value"] as? NSNumber)?.doubleValue, value.isFinite else {
                    throw .malformed(line: nil, detail: "reference_pitch.notes[\(k)] needs integers `start_ms`, `duration_ms` and a number `value`")
                }
                notes.append(ReferencePitch.Note(startMs: start, durationMs: dur, value: value))
            }
            return .notes(scale: scale, notes)
        case "contour":
            guard let interval = int(d["interval_ms"]), interval > 0, let raw = d["hz"] as? [Any] else {
                throw .malformed(line: nil, detail: "`reference_pitch` of kind contour needs a positive `interval_ms` and an `hz` list")
            }
            var hz: [Double?] = []
            hz.reserveCapacity(raw.count)
            for (k, v) in raw.enumerated() {
                guard let x = (v as? NSNumber)?.doubleValue, x.isFinite else {
                    throw .malformed(line: nil, detail: "reference_pitch.hz[\(k)] must be a number (0 for an unvoiced frame)")
                }
                hz.append(x == 0 ? nil : x)
            }
            return .contour(intervalMs: interval, hz: hz)
        default:
            throw .malformed(line: nil, detail: "`reference_pitch.kind` must be `notes` or `contour`")
        }
    }

    private static func int(_ v: Any?) -> Int? {
        guard let n = v as? NSNumber else { return nil }
        let d = n.doubleValue
        guard d == d.rounded(), abs(d) < 1e15 else { return nil }
        return n.intValue
    }

    /// The document parsed by JSONSerialization; when it is refused, a `.malformed` error at the
    /// line and byte offset of the first syntax error (`what` starts the message).
    static func object(_ text: [UInt8], encoding: TextEncoding, what: String) throws(LyricsError) -> Any {
        do { return try JSONSerialization.jsonObject(with: Data(text)) } catch {
            if let f = JSONSyntax.firstError(in: text) {
                throw .malformed(line: f.line, detail: "\(what) at \(position(f.byteOffset, encoding)): \(f.message)")
            }
            // Not a syntax error the scanner knows: Foundation's own words, and its position when it gives one.
            let said = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? "\(error)"
            if let at = foundationOffset(error, said), at <= text.count {
                throw .malformed(line: JSONSyntax.line(of: at, in: text),
                                 detail: "\(what) at \(position(at, encoding)): \(Scan.capped(said))")
            }
            throw .malformed(line: nil, detail: "\(what): \(Scan.capped(said))")
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

    /// The index JSONSerialization reports: `NSJSONSerializationErrorIndex`, or "around character N".
    private static func foundationOffset(_ error: Error, _ said: String) -> Int? {
        if let index = (error as NSError).userInfo["NSJSONSerializationErrorIndex"] as? Int { return index }
        guard let r = said.range(of: "around character ") else { return nil }
        return Int(said[r.upperBound...].prefix { $0.isASCII && $0.isNumber })
    }
}
