import Foundation
import KTVCore

/// ktv's JSON form of the model: keys `format`, `tags`, `offset_ms`, `lines[]` (`start_ms`,
/// `duration_ms`, `text`, `words[]` with `start_ms`, `duration_ms`, `text`, optional `romanization`),
/// optional `translation`, and `reference_pitch` for pitch files. It is also read back.
public enum JSONModel {
    public static func value(_ lyrics: Lyrics) -> JSONValue {
        var tagPairs: [(String, JSONValue)] = []
        for tag in lyrics.tags {
            tagPairs.removeAll { $0.0 == tag.key }
            tagPairs.append((tag.key, .string(tag.value)))
        }
        var root: [(String, JSONValue)] = [
            ("format", .string(lyrics.format.rawValue)),
            ("tags", .object(tagPairs)),
            ("offset_ms", lyrics.offsetMs.map(JSONValue.int) ?? .null),
            ("applied_shift_ms", .int(lyrics.appliedShiftMs)),
            ("lines", .array(lyrics.lines.map(line))),
        ]
        if let pitch = lyrics.referencePitch { root.append(("reference_pitch", value(pitch))) }
        return .object(root)
    }

    static func line(_ l: LyricLine) -> JSONValue {
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
            return .object([
                ("kind", .string("notes")), ("scale", .string(scale.rawValue)),
                ("notes", .array(notes.map { .object([("start_ms", .int($0.startMs)), ("duration_ms", .int($0.durationMs)), ("value", .double($0.value))]) })),
            ])
        case let .contour(interval, hz):
            return .object([
                ("kind", .string("contour")), ("interval_ms", .int(interval)),
                ("hz", .array(hz.map { $0.map(JSONValue.double) ?? .double(0) })),
            ])
        }
    }

    /// Reads ktv's JSON model back.
    static func parse(_ text: [UInt8]) throws(LyricsError) -> Lyrics {
        let obj: Any
        do { obj = try JSONSerialization.jsonObject(with: Data(text)) } catch {
            throw .malformed(line: errorLine(error, text), detail: "invalid JSON")
        }
        guard let root = obj as? [String: Any], let rawLines = root["lines"] as? [Any] else {
            throw .malformed(line: nil, detail: "ktv JSON needs a `lines` list")
        }
        var lyrics = Lyrics(format: .json)
        if let tags = root["tags"] as? [String: Any] {
            // JSONSerialization loses key order; restore the written order from the text.
            let order = keyOrder(of: tags.keys, in: text)
            lyrics.tags = order.compactMap { k in (tags[k] as? String).map { LyricTag(key: k, value: $0) } }
        }
        for (k, raw) in rawLines.enumerated() {
            guard let d = raw as? [String: Any], let start = int(d["start_ms"]), let dur = int(d["duration_ms"]),
                  let text = d["text"] as? String else {
                throw .malformed(line: nil, detail: "lines[\(k)] needs integers `start_ms`, `duration_ms` and a string `text`")
            }
            var line = LyricLine(startMs: start, durationMs: dur, text: text, translation: d["translation"] as? String)
            for (w, rawWord) in ((d["words"] as? [Any]) ?? []).enumerated() {
                guard let wd = rawWord as? [String: Any], let ws = int(wd["start_ms"]), let wdur = int(wd["duration_ms"]),
                      let wt = wd["text"] as? String else {
                    throw .malformed(line: nil, detail: "lines[\(k)].words[\(w)] needs integers `start_ms`, `duration_ms` and a string `text`")
                }
                line.words.append(LyricWord(startMs: ws, durationMs: wdur, text: wt,
                                            romanization: wd["romanization"] as? String,
                                            krcField: int(wd["krc_field"]) ?? 0,
                                            pitchHz: (wd["pitch_hz"] as? NSNumber)?.doubleValue))
            }
            lyrics.lines.append(line)
        }
        return lyrics
    }

    private static func int(_ v: Any?) -> Int? {
        guard let n = v as? NSNumber else { return nil }
        let d = n.doubleValue
        guard d == d.rounded(), abs(d) < 1e15 else { return nil }
        return n.intValue
    }

    private static func keyOrder(of keys: Dictionary<String, Any>.Keys, in text: [UInt8]) -> [String] {
        let s = String(decoding: text, as: UTF8.self)
        return keys.sorted { a, b in
            let ra = s.range(of: "\"\(a)\"")?.lowerBound, rb = s.range(of: "\"\(b)\"")?.lowerBound
            switch (ra, rb) {
            case let (x?, y?): return x < y
            default: return a < b
            }
        }
    }

    /// Best-effort line number of a JSONSerialization error (it reports a character index).
    static func errorLine(_ error: Error, _ text: [UInt8]) -> Int? {
        let ns = error as NSError
        guard let index = ns.userInfo["NSJSONSerializationErrorIndex"] as? Int, index <= text.count else { return nil }
        return text[0..<index].reduce(1) { $0 + ($1 == ASCII.lf ? 1 : 0) }
    }
}
