import KTVCore

/// Reads pitch-track files (references and estimates) into a `PitchContour`.
///
/// Text: one frame per row, `time,f0` (CSV, with or without a header row such as `time,f0`) or
/// `time f0` (spaces or tabs), time in seconds, f0 in Hz; rows starting with `#` and blank rows are
/// skipped. The CSV `ktv pitch` writes (header `time_s,f0_hz,confidence`) is read too: a third
/// column is accepted only under a header naming it `confidence`, and is ignored. f0 = 0 is unvoiced; a negative f0 is unvoiced with |f0| as a pitch guess (mir_eval's
/// convention). Times must be finite, ≥ 0 and strictly increasing.
///
/// JSON (what `ktv pitch --format json` writes): an object with
/// `"frames": [{"time_s": 0.01, "f0_hz": 220.5 | null, "confidence": 0.9}, …]`; null f0 is
/// unvoiced, other keys are ignored.
///
/// Errors are `PitchError.badTrackFile` with the 1-based line and what is wrong.
public enum PitchTrackFile {
    /// Reads and parses a file. Throws `FileIOError` when it cannot be read, `PitchError` when
    /// its content is not a pitch track.
    public static func read(path: String) throws -> PitchContour {
        let bytes = try FileIO.read(path)
        return try parse(bytes, path: path)
    }

    /// Parses the bytes of a pitch-track file; `path` names the file in error messages.
    public static func parse(_ bytes: [UInt8], path: String) throws(PitchError) -> PitchContour {
        let text: [UInt8]
        do { text = try TextDecoder.decode(bytes).utf8 } catch {
            throw .badTrackFile(path: path, line: nil, detail: "\(error)")
        }
        if let first = text.first(where: { !isSpace($0) && $0 != 0x0A && $0 != 0x0D }), first == UInt8(ascii: "{") {
            return try parseJSON(text, path: path)
        }
        return try parseText(text, path: path)
    }

    // MARK: - Text

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0B || b == 0x0C }

    private static func parseText(_ text: [UInt8], path: String) throws(PitchError) -> PitchContour {
        var times: [Double] = []
        var freqs: [Double] = []
        // The previous frame's row (bytes and line), for the message when times do not increase.
        var previousRow: (range: Range<Int>, line: Int)?
        var sawContent = false
        var columns = 2
        var lineNumber = 0
        var start = 0
        let n = text.count
        while start < n || (start == n && lineNumber == 0) {
            lineNumber += 1
            var end = start
            while end < n, text[end] != 0x0A, text[end] != 0x0D { end += 1 }
            let row = text[start..<end]
            // \r\n, \n and \r all end a row.
            if end < n, text[end] == 0x0D, end + 1 < n, text[end + 1] == 0x0A { start = end + 2 } else { start = end + 1 }

            // Most rows are plain `1.230,220.500`: read them straight from the bytes.
            if sawContent, let (t, f) = fastRow(text, row.startIndex, row.endIndex, columns: columns),
               t > (times.last ?? -1), boundsProblem(time: t, f0: f) == nil {
                previousRow = (row.startIndex..<row.endIndex, lineNumber)
                times.append(t)
                freqs.append(f)
                continue
            }
            let trimmed = row.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
            if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { continue }
            let line = String(decoding: trimmed, as: UTF8.self)
            let fields: [String]
            if line.contains(",") {
                fields = line.split(separator: ",", omittingEmptySubsequences: false)
                    .map { String($0).trimmingSpaces() }
            } else {
                fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            }
            let isFirstContent = !sawContent
            sawContent = true
            if isFirstContent, isHeader(fields) {
                if fields.count == 3, fields[2].lowercased() == "confidence" {
                    columns = 3 // the CSV `ktv pitch` writes: time_s,f0_hz,confidence
                } else if fields.count != 2 {
                    throw .badTrackFile(path: path, line: lineNumber,
                                        detail: "header has \(fields.count) columns (\(quoted(line))); expected 2: time and f0 (or time, f0, confidence)")
                }
                continue
            }
            guard fields.count == columns else {
                let names = columns == 2 ? "time and f0" : "time, f0 and confidence"
                throw .badTrackFile(path: path, line: lineNumber,
                                    detail: "expected \(columns) columns (\(names)), found \(fields.count): \(quoted(line))")
            }
            let t: Double, f: Double
            switch number(fields[0], name: "time") {
            case let .success(v): t = v
            case let .failure(detail): throw .badTrackFile(path: path, line: lineNumber, detail: detail)
            }
            switch number(fields[1], name: "f0") {
            case let .success(v): f = v
            case let .failure(detail): throw .badTrackFile(path: path, line: lineNumber, detail: detail)
            }
            if t < 0 {
                throw .badTrackFile(path: path, line: lineNumber, detail: "time \(quoted(fields[0])) is negative; times are seconds from 0")
            }
            if let previousRow, !(t > times[times.count - 1]) {
                let before = firstField(String(decoding: text[previousRow.range], as: UTF8.self))
                throw .badTrackFile(path: path, line: lineNumber,
                                    detail: "time \(quoted(fields[0])) is not after the previous time \(quoted(before)) (line \(previousRow.line)); times must increase")
            }
            if let problem = boundsProblem(time: t, f0: f) { throw .badTrackFile(path: path, line: lineNumber, detail: problem) }
            if columns == 3, case let .failure(detail) = number(fields[2], name: "confidence") {
                throw .badTrackFile(path: path, line: lineNumber, detail: detail)
            }
            previousRow = (row.startIndex..<row.endIndex, lineNumber)
            times.append(t)
            freqs.append(f)
        }
        guard !times.isEmpty else {
            throw .badTrackFile(path: path, line: nil, detail: "no frames; expected rows of `time,f0` or `time f0` (seconds, Hz)")
        }
        return PitchContour(timesS: times, signedHz: freqs)
    }

    /// A row of plain decimals (`digits[.digits]`, at most 15 significant digits) separated by one
    /// comma or by spaces/tabs, with `columns` fields: (time, f0). Exact: the mantissa and the power
    /// of ten are both exact doubles, so one division rounds correctly (Clinger's fast path). Any
    /// other row (a sign, an exponent, a header, a comment, an error) returns nil and takes the
    /// general path, which also words the errors.
    @inline(__always)
    private static func fastRow(_ b: [UInt8], _ start: Int, _ end: Int, columns: Int) -> (Double, Double)? {
        var i = start
        var values = (0.0, 0.0)
        var comma = false
        for field in 0..<columns {
            while i < end, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
            var mantissa = 0, digits = 0, fraction = 0
            while i < end, b[i] >= 0x30, b[i] <= 0x39 { mantissa = mantissa &* 10 &+ Int(b[i] &- 0x30); digits += 1; i += 1 }
            if i < end, b[i] == 0x2E {
                i += 1
                while i < end, b[i] >= 0x30, b[i] <= 0x39 { mantissa = mantissa &* 10 &+ Int(b[i] &- 0x30); digits += 1; fraction += 1; i += 1 }
            }
            guard digits > 0, digits <= 15 else { return nil }
            let v = Double(mantissa) / pow10[fraction]
            if field == 0 { values.0 = v } else if field == 1 { values.1 = v }
            while i < end, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
            if field + 1 < columns {
                if i < end, b[i] == 0x2C {
                    if field > 0, !comma { return nil }
                    comma = true
                    i += 1
                } else if comma || i == end {
                    return nil
                }
            }
        }
        return i == end ? values : nil
    }

    private static let pow10: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

    /// The first field of a row, as the general path splits it.
    private static func firstField(_ line: String) -> String {
        let trimmed = line.trimmingSpaces()
        if trimmed.contains(",") { return String(trimmed.split(separator: ",", omittingEmptySubsequences: false).first ?? "").trimmingSpaces() }
        return String(trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }

    /// A first row whose fields are all names (start with a letter), such as `time,f0`.
    private static func isHeader(_ fields: [String]) -> Bool {
        !fields.isEmpty && fields.allSatisfy { f in
            guard let c = f.unicodeScalars.first else { return false }
            let lower = f.lowercased()
            let special = ["nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"]
            return (c.properties.isAlphabetic || c == "_") && !special.contains(lower)
        }
    }

    /// What no pitch track holds (`SongBounds`): a time past 24 hours. Nil when the frame is fine.
    /// (Pitches are the scorer's to bound: `pitch eval` compares any positive f0, as mir_eval does.)
    private static func boundsProblem(time t: Double, f0 f: Double) -> String? {
        SongBounds.timeProblem(s: t).map { "time \($0)" }
    }

    private enum NumberResult { case success(Double), failure(String) }

    /// A decimal number: `[+-]digits[.digits][e[+-]digits]`; NaN and infinities are named.
    private static func number(_ s: String, name: String) -> NumberResult {
        if s.isEmpty { return .failure("\(name) is empty") }
        let lower = s.lowercased()
        if ["nan", "+nan", "-nan"].contains(lower) {
            return .failure(name == "f0" ? "f0 is NaN; write 0 for an unvoiced frame" : "time is NaN")
        }
        if ["inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"].contains(lower) {
            return .failure("\(name) is infinite")
        }
        guard isDecimal(Array(s.utf8)), let v = Double(s), v.isFinite else {
            return .failure("\(name) \(quoted(s)) is not a number")
        }
        return .success(v)
    }

    private static func isDecimal(_ b: [UInt8]) -> Bool {
        var i = 0
        let n = b.count
        func digits() -> Int {
            let s = i
            while i < n, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            return i - s
        }
        if i < n, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
        var mantissa = digits()
        if i < n, b[i] == UInt8(ascii: ".") {
            i += 1
            mantissa += digits()
        }
        if mantissa == 0 { return false }
        if i < n, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < n, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            if digits() == 0 { return false }
        }
        return i == n
    }

    // MARK: - JSON

    private static func parseJSON(_ text: [UInt8], path: String) throws(PitchError) -> PitchContour {
        // Syntax first, over the whole text; then the frames, each error at the line of its value.
        try JSONReader.decodeChecked(text, invalid: { PitchError.badTrackFile(path: path, line: $0, detail: $1) }) { r in
            try frames(&r, path: path)
        }
    }

    /// The `frames` of the root object (the first `frames` member; other members are skipped).
    private static func frames(_ r: inout JSONReader, path: String) throws -> PitchContour {
        let bytes = r.bytes
        func fail(_ at: Int, _ detail: String) -> PitchError {
            .badTrackFile(path: path, line: JSONReader.location(of: at, in: bytes).line, detail: detail)
        }
        r.skipSpace()
        let rootAt = r.offset
        var times: [Double] = []
        var freqs: [Double] = []
        var framesAt: Int?
        try r.forEachMember { r, key in
            guard framesAt == nil, r.keyEquals(key, "frames") else { return try r.skipValue() }
            r.skipSpace()
            framesAt = r.offset
            guard r.peek() == 0x5B else { throw fail(r.offset, "`frames` must be an array of frame objects") }
            try r.forEachElement { r in
                let here = times.count
                r.skipSpace()
                let frameAt = r.offset
                guard r.peek() == 0x7B else { throw fail(frameAt, "frames[\(here)] must be an object with `time_s` and `f0_hz`") }
                // The first `time_s` and `f0_hz`: where each is, and its number, or the kind it is instead.
                var time: (at: Int, value: Double?, kind: String)?
                var f0: (at: Int, value: Double?, kind: String)?
                try r.forEachMember { r, key in
                    if time == nil, r.keyEquals(key, "time_s") { time = try numberOrKind(&r) }
                    else if f0 == nil, r.keyEquals(key, "f0_hz") { f0 = try numberOrKind(&r) }
                    else { try r.skipValue() }
                }
                guard let time else { throw fail(frameAt, "frames[\(here)]: `time_s` is missing") }
                guard let t = time.value else { throw fail(time.at, "frames[\(here)]: `time_s` must be a number, not \(time.kind)") }
                guard let f0 else { throw fail(frameAt, "frames[\(here)]: `f0_hz` is missing (null for an unvoiced frame)") }
                guard let f = f0.value ?? (f0.kind == "null" ? 0 : nil) else {
                    throw fail(f0.at, "frames[\(here)]: `f0_hz` must be a number or null, not \(f0.kind)")
                }
                if t < 0 { throw fail(time.at, "frames[\(here)]: `time_s` \(t) is negative; times are seconds from 0") }
                if let problem = boundsProblem(time: t, f0: f) { throw fail(time.at, "frames[\(here)]: \(problem)") }
                if let last = times.last, !(t > last) {
                    throw fail(time.at, "frames[\(here)]: `time_s` \(t) is not after the previous frame's \(last); times must increase")
                }
                times.append(t)
                freqs.append(f)
            }
        }
        guard let framesAt else { throw fail(rootAt, "no `frames` array in the JSON object") }
        guard !times.isEmpty else { throw fail(framesAt, "`frames` is empty") }
        return PitchContour(timesS: times, signedHz: freqs)
    }

    /// A value's offset, and its number or else what kind of value it is, for messages.
    private static func numberOrKind(_ r: inout JSONReader) throws -> (at: Int, value: Double?, kind: String) {
        let c = r.peek()
        let at = r.offset
        switch c {
        case let b? where b == 0x2D || (b >= 0x30 && b <= 0x39): return (at, try r.number().double, "a number")
        default:
            try r.skipValue()
            let kind = switch c {
            case 0x22?: "a string"
            case 0x7B?: "an object"
            case 0x5B?: "an array"
            case 0x6E?: "null"
            default: "a boolean"
            }
            return (at, nil, kind)
        }
    }
}

private extension String {
    func trimmingSpaces() -> String {
        var u = Substring(self).unicodeScalars[...]
        while let c = u.first, c == " " || c == "\t" { u.removeFirst() }
        while let c = u.last, c == " " || c == "\t" { u.removeLast() }
        return String(u)
    }
}
