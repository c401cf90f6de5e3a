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
