import KTVCore
import KTVPitch

/// Reads a sung take (a pitch track) into a `PitchContour` on the take's own clock (seconds from
/// the recording's start). Formats:
/// - what `PitchTrackFile` reads: ktv's pitch CSV and JSON, `time f0` text;
/// - with `pitchIntervalMs`: one Hz value per line (0 = unvoiced; CRLF, surrounding spaces and blank
///   lines at the end allowed), as an SDK's pitch callback logs it and Agora's simulated takes hold it.
///   Value k is reported at (k+1)·interval: an SDK reports the pitch of the interval just ended, and
///   Agora's golden harness feeds its first value at 50 ms.
/// A take must have at least one voiced value.
public enum TakeReader {
    public enum Spec {
        public static let pitchIntervalMs = Parameter<Int>("pitchIntervalMs", unit: "ms", range: 1...1000, default: 50,
            "Interval between the values of a take written one Hz value per line (Agora's RTC reports pitch every 50 ms).")
        public static let all: [ParameterInfo] = [pitchIntervalMs.info]
    }

    /// Takes larger than this are refused unread (an hour at 1 ms is 30 MB of text).
    public static let maxBytes = 64 << 20

    /// Reads and parses `path`. Throws `FileIOError` when it cannot be read, `ScoreError` when it is not a take.
    public static func read(path: String, pitchIntervalMs: Int? = nil) throws -> PitchContour {
        try parse(try FileIO.read(path, maxBytes: maxBytes), path: path, pitchIntervalMs: pitchIntervalMs)
    }

    /// Parses the bytes of a take; `path` names it in errors.
    public static func parse(_ bytes: [UInt8], path: String, pitchIntervalMs: Int? = nil) throws(ScoreError) -> PitchContour {
        let contour: PitchContour
        if let pitchIntervalMs {
            do { try Spec.pitchIntervalMs.check(pitchIntervalMs) } catch { throw ScoreError(error) }
            contour = try valuesPerLine(bytes, path: path, intervalMs: pitchIntervalMs)
        } else {
            do { contour = try PitchTrackFile.parse(bytes, path: path) } catch {
                if case let .badTrackFile(_, line, detail) = error {
                    let hint = singleColumn(bytes) ? "; a file of one Hz value per line needs pitchIntervalMs, the interval between its values" : ""
                    throw .badTake(path: path, line: line, detail: detail + hint)
                }
                throw .badTake(path: path, line: nil, detail: error.description)
            }
        }
        if let (i, detail) = contour.songBoundsViolation() {
            throw .badTake(path: path, line: nil, detail: "pitch sample \(i + 1): \(detail)")
        }
        guard contour.voicedCount > 0 else {
            throw .badTake(path: path, line: nil, detail: "no voiced value (every pitch is 0 or unvoiced); nothing was sung")
        }
        return contour
    }

    /// One Hz value per line, value k at (k+1)·interval.
    static func valuesPerLine(_ bytes: [UInt8], path: String, intervalMs: Int) throws(ScoreError) -> PitchContour {
        let text: [UInt8]
        do { text = try TextDecoder.decode(bytes).utf8 } catch { throw .badTake(path: path, line: nil, detail: "\(error)") }
        var rows = split(text)
        while let last = rows.last, last.isEmpty { rows.removeLast() }
        guard !rows.isEmpty else { throw .badTake(path: path, line: nil, detail: "empty: no pitch values") }
        var f0: [Double?] = []
        f0.reserveCapacity(rows.count)
        for (k, row) in rows.enumerated() {
            guard !row.isEmpty else {
                throw .badTake(path: path, line: k + 1, detail: "blank line; each line is one interval, so write 0 for an unvoiced one")
            }
            let s = String(decoding: row, as: UTF8.self)
            guard row.allSatisfy(isNumberByte), let v = Double(s), v.isFinite else {
                throw .badTake(path: path, line: k + 1, detail: "\(quoted(s)) is not a pitch in Hz; expected one number per line (0 = unvoiced)")
            }
            guard v >= 0 else { throw .badTake(path: path, line: k + 1, detail: "pitch \(quoted(s)) is negative; write 0 for an unvoiced interval") }
            if v > 0, let p = SongBounds.pitchProblem(hz: v) { throw .badTake(path: path, line: k + 1, detail: "pitch \(p)") }
            if (k + 1) * intervalMs > SongBounds.maxTimeMs {
                throw .badTake(path: path, line: k + 1, detail: "value \(k + 1) at \(intervalMs) ms each lies past 24 hours; no take is that long")
            }
            f0.append(v > 0 ? v : nil)
        }
        // Whole ms divided once: the nearest Double to each decimal time.
        return PitchContour(timesS: f0.indices.map { Double(($0 + 1) * intervalMs) / 1000 }, f0Hz: f0)
    }

    /// The rows of `text`, spaces trimmed; `\r\n`, `\n` and `\r` end a row.
    static func split(_ text: [UInt8]) -> [ArraySlice<UInt8>] {
        var rows: [ArraySlice<UInt8>] = []
        var start = 0
        var i = 0
        while i <= text.count {
            if i == text.count || text[i] == 0x0A || text[i] == 0x0D {
                if i < text.count || start < i { rows.append(trimmed(text[start..<i])) }
                if i + 1 < text.count, text[i] == 0x0D, text[i + 1] == 0x0A { i += 1 }
                start = i + 1
            }
            i += 1
        }
        return rows
    }

    static func trimmed(_ row: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 }
        guard let first = row.firstIndex(where: { !isSpace($0) }), let last = row.lastIndex(where: { !isSpace($0) }) else { return row[row.endIndex...] }
        return row[first...last]
    }

    /// Digits, sign, point and exponent: what a decimal number is written with (not `nan`, `inf`, hex).
    static func isNumberByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: ".") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
            || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
    }

    /// The first content row is a single field (one value per line, read without an interval).
    static func singleColumn(_ bytes: [UInt8]) -> Bool {
        guard let row = split(bytes).first(where: { !$0.isEmpty && $0.first != UInt8(ascii: "#") }) else { return false }
        return !row.contains(UInt8(ascii: ",")) && !row.contains(0x20) && !row.contains(0x09)
    }
}
