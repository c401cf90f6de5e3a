import KTVCore

/// Agora's reference-pitch files, read and written here only (docs/lyric-formats.md §3.4): the `.pitch`
/// JSON note list `{"pitchDatas":[{"pitch":50,"startTime":15203,"duration":241}]}` (0-100 note index,
/// ms) and the binary contour v1: int32 LE version (1), int32 LE interval ms, int32 LE reserved, then
/// float64 LE Hz per interval (0 = unvoiced). Sample k of the contour is at k·interval.
public enum AgoraPitchFormat {
    /// The binary contour v1 of `f0Hz`, one value every `intervalMs`; unvoiced is written as 0 Hz.
    public static func binary(_ f0Hz: [Double?], intervalMs: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12 + 8 * f0Hz.count)
        func int32(_ v: Int32) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        int32(1)
        int32(Int32(clamping: intervalMs))
        int32(0)
        for f in f0Hz {
            withUnsafeBytes(of: (f ?? 0).bitPattern.littleEndian) { out.append(contentsOf: $0) }
        }
        return out
    }

    /// The `pitchDatas` JSON of notes on Agora's 0-100 scale (MIDI note numbers), times in whole ms.
    public static func json(_ notes: [ReferencePitch.Note]) -> JSONValue {
        .object([("pitchDatas", .array(notes.map { n in
            .object([("pitch", n.value == n.value.rounded() ? .int(Int(n.value)) : .double(n.value)),
                     ("startTime", .int(n.startMs)), ("duration", .int(n.durationMs))])
        }))])
    }

    static func isBinaryV1(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 12, (bytes.count - 12) % 8 == 0 else { return false }
        return int32(bytes, 0) == 1 && int32(bytes, 4) > 0 && int32(bytes, 4) <= 1000 && int32(bytes, 8) == 0
    }

    static func parseBinary(_ bytes: [UInt8]) throws(LyricsError) -> Lyrics {
        guard bytes.count >= 12 else {
            throw .malformed(line: nil, detail: "Agora binary pitch file is \(bytes.count) bytes; the header alone is 12")
        }
        let version = int32(bytes, 0)
        guard version == 1 else {
            throw .unsupported(detail: "Agora binary pitch version \(version); only version 1 is known")
        }
        let interval = Int(int32(bytes, 4))
        guard interval > 0 else {
            throw .malformed(line: nil, detail: "byte offset 4: Agora binary pitch interval is \(interval) ms; it must be positive")
        }
        guard (bytes.count - 12) % 8 == 0 else {
            throw .badContainer(byteOffset: bytes.count - (bytes.count - 12) % 8,
                                detail: "Agora binary pitch data is not a whole number of float64 values (\(bytes.count - 12) bytes after the header); the file is truncated")
        }
        var values: [Double?] = []
        values.reserveCapacity((bytes.count - 12) / 8)
        var k = 12
        while k < bytes.count {
            var bits: UInt64 = 0
            for j in 0..<8 { bits |= UInt64(bytes[k + j]) << (8 * UInt64(j)) }
            let v = Double(bitPattern: bits)
            guard v.isFinite, v >= 0 else {
                throw .badContainer(byteOffset: k, detail: "pitch value \(v) is not a frequency in Hz (negative or not finite)")
            }
            values.append(v > 0 ? v : nil)
            k += 8
        }
        return Lyrics(format: .agoraPitchBinary, referencePitch: .contour(intervalMs: interval, hz: values))
    }

    static func parseJSON(_ text: [UInt8], encoding: TextEncoding = .utf8) throws(LyricsError) -> Lyrics {
        let needsList = LyricsError.malformed(line: nil, detail: "Agora pitch JSON needs a `pitchDatas` list of `{pitch, startTime, duration}`")
        let notes = try JSONModel.decode(text, encoding: encoding, what: "invalid JSON in Agora pitch file") { r in
            var notes: [ReferencePitch.Note]?
            guard r.peek() == 0x7B else { throw needsList }
            try r.forEachMember { r, key in
                if r.keyEquals(key, "pitchDatas"), r.peek() == 0x5B { notes = try Self.notes(&r) } else { try r.skipValue() }
            }
            guard let notes else { throw needsList }
            return notes
        }
        return Lyrics(format: .agoraPitchJSON, referencePitch: .notes(scale: .noteIndex, notes))
    }

    /// The `pitchDatas` list.
    private static func notes(_ r: inout JSONReader) throws -> [ReferencePitch.Note] {
        var notes: [ReferencePitch.Note] = []
        try r.forEachElement { r in
            let k = notes.count
            var pitch: Double?, start: Double?, duration: Double?
            if r.peek() == 0x7B {
                try r.forEachMember { r, key in
                    if r.keyEquals(key, "pitch") { pitch = try JSONModel.number(&r) }
                    else if r.keyEquals(key, "startTime") { start = try JSONModel.number(&r) }
                    else if r.keyEquals(key, "duration") { duration = try JSONModel.number(&r) }
                    else { try r.skipValue() }
                }
            }
            // Whole ms, a fraction dropped; beyond ±9e15 ms a time is nonsense, not a number to clamp.
            guard let pitch, let start, let duration, abs(start) < 9e15, abs(duration) < 9e15 else {
                throw LyricsError.malformed(line: nil, detail: "pitchDatas[\(k)] needs numbers `pitch`, `startTime` and `duration` (ms)")
            }
            let startMs = Int(start), durationMs = Int(duration)
            guard startMs >= 0, durationMs >= 0 else {
                throw LyricsError.malformed(line: nil, detail: "pitchDatas[\(k)] has a negative `startTime` or `duration`")
            }
            notes.append(.init(startMs: startMs, durationMs: durationMs, value: pitch))
        }
        return notes
    }

    private static func int32(_ b: [UInt8], _ at: Int) -> Int32 {
        Int32(bitPattern: UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24)
    }
}
