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
        var previousTime: (text: String, line: Int)?
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
            if let previousTime, !(t > times[times.count - 1]) {
                throw .badTrackFile(path: path, line: lineNumber,
                                    detail: "time \(quoted(fields[0])) is not after the previous time \(quoted(previousTime.text)) (line \(previousTime.line)); times must increase")
            }
            if columns == 3, case let .failure(detail) = number(fields[2], name: "confidence") {
                throw .badTrackFile(path: path, line: lineNumber, detail: detail)
            }
            previousTime = (fields[0], lineNumber)
            times.append(t)
            freqs.append(f)
        }
        guard !times.isEmpty else {
            throw .badTrackFile(path: path, line: nil, detail: "no frames; expected rows of `time,f0` or `time f0` (seconds, Hz)")
        }
        return PitchContour(timesS: times, signedHz: freqs)
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
        var parser = PitchTrackJSON(bytes: text)
        let root: PitchTrackJSON.Node
        do { root = try parser.document() } catch {
            throw .badTrackFile(path: path, line: error.line, detail: "invalid JSON: \(error.detail)")
        }
        guard case let .object(members) = root.value else {
            throw .badTrackFile(path: path, line: root.line, detail: "expected a JSON object with `frames`")
        }
        guard let framesNode = members.first(where: { $0.key == "frames" })?.value else {
            throw .badTrackFile(path: path, line: root.line, detail: "no `frames` array in the JSON object")
        }
        guard case let .array(frames) = framesNode.value else {
            throw .badTrackFile(path: path, line: framesNode.line, detail: "`frames` must be an array of frame objects")
        }
        var times: [Double] = []
        var freqs: [Double] = []
        for (k, frame) in frames.enumerated() {
            let here = "frames[\(k)]"
            guard case let .object(fields) = frame.value else {
                throw .badTrackFile(path: path, line: frame.line, detail: "\(here) must be an object with `time_s` and `f0_hz`")
            }
            guard let timeNode = fields.first(where: { $0.key == "time_s" })?.value else {
                throw .badTrackFile(path: path, line: frame.line, detail: "\(here): `time_s` is missing")
            }
            guard case let .number(t) = timeNode.value else {
                throw .badTrackFile(path: path, line: timeNode.line, detail: "\(here): `time_s` must be a number, not \(timeNode.value.kind)")
            }
            guard let f0Node = fields.first(where: { $0.key == "f0_hz" })?.value else {
                throw .badTrackFile(path: path, line: frame.line, detail: "\(here): `f0_hz` is missing (null for an unvoiced frame)")
            }
            let f: Double
            switch f0Node.value {
            case let .number(v): f = v
            case .null: f = 0
            default:
                throw .badTrackFile(path: path, line: f0Node.line, detail: "\(here): `f0_hz` must be a number or null, not \(f0Node.value.kind)")
            }
            guard t.isFinite, f.isFinite else {
                throw .badTrackFile(path: path, line: frame.line, detail: "\(here): value out of range")
            }
            if t < 0 {
                throw .badTrackFile(path: path, line: timeNode.line, detail: "\(here): `time_s` \(t) is negative; times are seconds from 0")
            }
            if let last = times.last, !(t > last) {
                throw .badTrackFile(path: path, line: timeNode.line,
                                    detail: "\(here): `time_s` \(t) is not after the previous frame's \(last); times must increase")
            }
            times.append(t)
            freqs.append(f)
        }
        guard !times.isEmpty else {
            throw .badTrackFile(path: path, line: framesNode.line, detail: "`frames` is empty")
        }
        return PitchContour(timesS: times, signedHz: freqs)
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

/// A small JSON reader that remembers the line each value starts on, for precise messages.
fileprivate struct PitchTrackJSON {
    struct Failure: Error { var line: Int; var detail: String }

    indirect enum Value {
        case null, bool(Bool), number(Double), string(String), array([Node]), object([(key: String, value: Node)])

        var kind: String {
            switch self {
            case .null: return "null"
            case .bool: return "a boolean"
            case .number: return "a number"
            case .string: return "a string"
            case .array: return "an array"
            case .object: return "an object"
            }
        }
    }

    struct Node { var value: Value; var line: Int }

    let bytes: [UInt8]
    var i = 0
    var line = 1
    var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func document() throws(Failure) -> Node {
        let node = try value()
        skipSpace()
        if i < bytes.count { throw Failure(line: line, detail: "unexpected text after the JSON value") }
        return node
    }

    private mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x0A: line += 1; i += 1
            case 0x20, 0x09, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws(Failure) {
        skipSpace()
        guard i < bytes.count, bytes[i] == c else { throw Failure(line: line, detail: "expected \(what)") }
        i += 1
    }

    private mutating func value() throws(Failure) -> Node {
        skipSpace()
        guard i < bytes.count else { throw Failure(line: line, detail: "unexpected end of file") }
        let at = line
        switch bytes[i] {
        case UInt8(ascii: "{"):
            depth += 1
            guard depth <= 512 else { throw Failure(line: line, detail: "nested too deeply") }
            defer { depth -= 1 }
            i += 1
            var members: [(key: String, value: Node)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return Node(value: .object(members), line: at) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Failure(line: line, detail: "expected a quoted key") }
                let key = try string()
                try expect(UInt8(ascii: ":"), "`:` after a key")
                members.append((key, try value()))
                skipSpace()
                guard i < bytes.count else { throw Failure(line: line, detail: "unexpected end of file in an object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return Node(value: .object(members), line: at) }
                throw Failure(line: line, detail: "expected `,` or `}` in an object")
            }
        case UInt8(ascii: "["):
            depth += 1
            guard depth <= 512 else { throw Failure(line: line, detail: "nested too deeply") }
            defer { depth -= 1 }
            i += 1
            var items: [Node] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return Node(value: .array(items), line: at) }
            while true {
                items.append(try value())
                skipSpace()
                guard i < bytes.count else { throw Failure(line: line, detail: "unexpected end of file in an array") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return Node(value: .array(items), line: at) }
                throw Failure(line: line, detail: "expected `,` or `]` in an array")
            }
        case UInt8(ascii: "\""):
            return Node(value: .string(try string()), line: at)
        case UInt8(ascii: "t"): try literal("true"); return Node(value: .bool(true), line: at)
        case UInt8(ascii: "f"): try literal("false"); return Node(value: .bool(false), line: at)
        case UInt8(ascii: "n"): try literal("null"); return Node(value: .null, line: at)
        default:
            return Node(value: .number(try number()), line: at)
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else {
            throw Failure(line: line, detail: "unexpected character")
        }
        i += w.count
    }

    private mutating func number() throws(Failure) -> Double {
        let start = i
        while i < bytes.count, "+-0123456789.eE".utf8.contains(bytes[i]) { i += 1 }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard !text.isEmpty, let v = Double(text), v.isFinite,
              text.first != "+", !text.hasPrefix("."), !text.hasPrefix("-.") else {
            throw Failure(line: line, detail: text.isEmpty ? "unexpected character" : "\(quoted(text)) is not a JSON number")
        }
        return v
    }

    private mutating func string() throws(Failure) -> String {
        i += 1 // opening quote
        var out: [UInt8] = []
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; return String(decoding: out, as: UTF8.self) }
            if b == 0x0A { throw Failure(line: line, detail: "unterminated string") }
            if b == UInt8(ascii: "\\") {
                guard i + 1 < bytes.count else { break }
                let e = bytes[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard i + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16) else {
                        throw Failure(line: line, detail: "bad \\u escape")
                    }
                    i += 4
                    // Keys and values used here are ASCII; other code points are kept when valid.
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    out += Array(String(Character(scalar)).utf8)
                default: out.append(e)
                }
                continue
            }
            out.append(b)
            i += 1
        }
        throw Failure(line: line, detail: "unterminated string")
    }
}
