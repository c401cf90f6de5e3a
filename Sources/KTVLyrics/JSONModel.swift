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
            let order = written.filter { tags[$0] != nil } + tags.keys.filter { !written.contains($0) }.sorted()
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
                                 detail: "\(what) at \(position(at, encoding)): \(JSONSyntax.capped(said))")
            }
            throw .malformed(line: nil, detail: "\(what): \(JSONSyntax.capped(said))")
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
