/// A small JSON syntax scanner. `JSONSerialization` on Linux says "Invalid value around character 15"
/// at best, with no line, so a document it refuses is scanned again here to say where and why.
/// It accepts what Foundation accepts: RFC 8259 plus one trailing comma before `]` or `}`, at most
/// 512 levels of nesting, numbers that fit a Double, and `\u` escapes that pair surrogates properly.
/// The same scanner gives the key order of an object (JSONSerialization loses it).
enum JSONSyntax {
    /// Where a document stops being JSON: byte offset and 1-based line in the scanned text.
    struct Failure: Error, Equatable {
        var byteOffset: Int
        var line: Int
        var message: String
    }

    /// Foundation's nesting limit.
    static let maxDepth = 512

    /// The first syntax error, or nil when the text is JSON that Foundation would read.
    static func firstError(in text: [UInt8]) -> Failure? {
        var s = Scanner(text, checkNumbers: true)
        do throws(Scanner.Stop) {
            try s.document()
            return nil
        } catch {
            return s.failure(error)
        }
    }

    /// The keys of the object that is the value of `key` in the root object, in written order
    /// (first occurrence of each); nil when there is no such object or the text is not JSON.
    static func keys(ofObjectAt key: String, in text: [UInt8]) -> [String]? {
        var s = Scanner(text, checkNumbers: false)
        s.target = Array(key.utf8)
        do throws(Scanner.Stop) { try s.document() } catch {
            if case .found = error { return s.collected }
            return nil
        }
        return s.collected
    }

    /// 1-based line of a byte offset; CRLF, LF and a lone CR each end a line, as in `Scan.lines`.
    static func line(of offset: Int, in b: [UInt8]) -> Int {
        var line = 1
        var k = 0
        while k < offset, k < b.count {
            if b[k] == ASCII.lf {
                line += 1
            } else if b[k] == ASCII.cr {
                if k + 1 < b.count, b[k + 1] == ASCII.lf, k + 1 < offset { k += 1 }
                line += 1
            }
            k += 1
        }
        return line
    }

    /// The rest of the line from `offset`, capped at `limit` characters, for "found `…`".
    static func excerpt(_ text: [UInt8], at offset: Int, limit: Int = 80) -> String {
        var end = offset
        while end < text.count, text[end] != ASCII.lf, text[end] != ASCII.cr, end - offset < limit * 4 { end += 1 }
        return Scan.capped(String(decoding: text[offset..<end], as: UTF8.self), limit: limit)
    }


    private struct Scanner {
        enum Stop: Error {
            case error(at: Int, String)
            /// The collected keys are complete (only when collecting).
            case found
        }

        let b: [UInt8]
        var i = 0
        var depth = 0
        let checkNumbers: Bool
        /// Key-order mode: the root member whose object's keys are wanted.
        var target: [UInt8]?
        var collected: [String]?

        init(_ b: [UInt8], checkNumbers: Bool) {
            self.b = b
            self.checkNumbers = checkNumbers
        }

        func failure(_ stop: Stop) -> Failure {
            guard case let .error(at, message) = stop else { return Failure(byteOffset: 0, line: 1, message: "") }
            return Failure(byteOffset: at, line: JSONSyntax.line(of: at, in: b), message: message)
        }

        func found(_ at: Int) -> String {
            at >= b.count ? "the end of the file" : "`\(JSONSyntax.excerpt(b, at: at))`"
        }

        mutating func skipSpace() {
            while i < b.count, b[i] == ASCII.space || b[i] == ASCII.tab || b[i] == ASCII.lf || b[i] == ASCII.cr { i += 1 }
        }

        mutating func document() throws(Stop) {
            skipSpace()
            guard i < b.count else { throw .error(at: i, "the document is empty; expected `{` or `[`") }
            guard b[i] == ASCII.lbrace || b[i] == ASCII.lbracket else {
                throw .error(at: i, "a JSON document must start with `{` or `[`, found \(found(i))")
            }
            try value(collect: false)
            skipSpace()
            if i < b.count { throw .error(at: i, "unexpected text after the end of the JSON document: \(found(i))") }
        }

        mutating func value(collect: Bool) throws(Stop) {
            skipSpace()
            guard i < b.count else {
                throw .error(at: i, "the document ends early: expected a value (object, array, string, number, true, false or null)")
            }
            switch b[i] {
            case ASCII.lbrace: try object(collect: collect)
            case ASCII.lbracket: try array()
            case 0x22: _ = try string()
            case ASCII.minus, ASCII.zero...ASCII.nine: try number()
            case 0x74: try literal("true")
            case 0x66: try literal("false")
            case 0x6E: try literal("null")
            default:
                throw .error(at: i, "expected a value (object, array, string, number, true, false or null), found \(found(i))")
            }
        }

        mutating func enter() throws(Stop) {
            depth += 1
            if depth > JSONSyntax.maxDepth {
                throw .error(at: i, "arrays and objects nest deeper than \(JSONSyntax.maxDepth) levels")
            }
        }

        mutating func object(collect: Bool) throws(Stop) {
            try enter()
            i += 1
            if collect { collected = [] }
            var seen = Set<String>()
            skipSpace()
            if i < b.count, b[i] == 0x7D { i += 1; depth -= 1; return }
            while true {
                skipSpace()
                guard i < b.count, b[i] == 0x22 else {
                    throw .error(at: i, "expected a member name in double quotes, found \(found(i))")
                }
                let key = try string()
                if collect {
                    let name = decode(key)
                    if seen.insert(name).inserted { collected?.append(name) }
                }
                skipSpace()
                guard i < b.count, b[i] == ASCII.colon else {
                    throw .error(at: i, "expected `:` after the member name, found \(found(i))")
                }
                i += 1
                let wanted = depth == 1 && target != nil && collected == nil && b[key].elementsEqual(target ?? [])
                try value(collect: wanted)
                if wanted { throw .found }
                skipSpace()
                guard i < b.count else { throw .error(at: i, "the document ends early: an object is never closed with `}`") }
                if b[i] == 0x7D { i += 1; break }
                guard b[i] == ASCII.comma else {
                    throw .error(at: i, "expected `,` or `}` after an object member, found \(found(i))")
                }
                i += 1
                skipSpace()
                // Foundation accepts one trailing comma.
                if i < b.count, b[i] == 0x7D { i += 1; break }
            }
            depth -= 1
        }

        mutating func array() throws(Stop) {
            try enter()
            i += 1
            skipSpace()
            if i < b.count, b[i] == ASCII.rbracket { i += 1; depth -= 1; return }
            while true {
                try value(collect: false)
                skipSpace()
                guard i < b.count else { throw .error(at: i, "the document ends early: an array is never closed with `]`") }
                if b[i] == ASCII.rbracket { i += 1; break }
                guard b[i] == ASCII.comma else {
                    throw .error(at: i, "expected `,` or `]` after an array element, found \(found(i))")
                }
                i += 1
                skipSpace()
                if i < b.count, b[i] == ASCII.rbracket { i += 1; break }
            }
            depth -= 1
        }

        /// A string at `i` (on its opening quote); returns the range of its raw contents.
        mutating func string() throws(Stop) -> Range<Int> {
            let open = i
            i += 1
            let start = i
            while i < b.count {
                let c = b[i]
                if c == 0x22 {
                    i += 1
                    return start..<(i - 1)
                }
                if c < 0x20 {
                    let what = c == ASCII.lf || c == ASCII.cr ? "a line break" : "control character U+00\(Self.hex2(c))"
                    throw .error(at: i, "\(what) inside a string; close the string with `\"` or write it as an escape such as `\\n`")
                }
                if c == 0x5C {
                    try escape()
                } else {
                    i += 1
                }
            }
            throw .error(at: open, "this string is never closed with `\"`")
        }

        /// A backslash escape at `i`.
        mutating func escape() throws(Stop) {
            let at = i
            guard i + 1 < b.count else { throw .error(at: at, "a string ends in the middle of an escape") }
            switch b[i + 1] {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                i += 2
            case 0x75:
                guard let unit = hex4(at: i + 2) else {
                    throw .error(at: at, "`\\u` must be followed by 4 hex digits, found \(found(at))")
                }
                i += 6
                if (0xDC00...0xDFFF).contains(unit) {
                    throw .error(at: at, "`\\u\(Self.hex4Text(unit))` is a low surrogate with no high surrogate before it")
                }
                if (0xD800...0xDBFF).contains(unit) {
                    guard i + 1 < b.count, b[i] == 0x5C, b[i + 1] == 0x75, let low = hex4(at: i + 2), (0xDC00...0xDFFF).contains(low) else {
                        throw .error(at: at, "`\\u\(Self.hex4Text(unit))` is a high surrogate not followed by a low-surrogate escape `\\uDC00`-`\\uDFFF`")
                    }
                    i += 6
                }
            default:
                throw .error(at: at, "invalid escape \(found(at)); JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
            }
        }

        func hex4(at k: Int) -> Int? {
            guard k + 4 <= b.count else { return nil }
            var v = 0
            for j in k..<(k + 4) {
                let c = b[j]
                let d: Int
                switch c {
                case ASCII.zero...ASCII.nine: d = Int(c - ASCII.zero)
                case 0x41...0x46: d = Int(c - 0x41 + 10)
                case 0x61...0x66: d = Int(c - 0x61 + 10)
                default: return nil
                }
                v = v * 16 + d
            }
            return v
        }

        mutating func number() throws(Stop) {
            let start = i
            if b[i] == ASCII.minus { i += 1 }
            guard i < b.count, ASCII.isDigit(b[i]) else {
                throw .error(at: start, "`-` must be followed by digits, found \(found(start))")
            }
            if b[i] == ASCII.zero, i + 1 < b.count, ASCII.isDigit(b[i + 1]) {
                throw .error(at: start, "numbers cannot have a leading zero, found \(found(start))")
            }
            while i < b.count, ASCII.isDigit(b[i]) { i += 1 }
            if i < b.count, b[i] == ASCII.dot {
                i += 1
                guard i < b.count, ASCII.isDigit(b[i]) else {
                    throw .error(at: start, "a number needs digits after its decimal point, found \(found(start))")
                }
                while i < b.count, ASCII.isDigit(b[i]) { i += 1 }
            }
            if i < b.count, b[i] == 0x65 || b[i] == 0x45 {
                i += 1
                if i < b.count, b[i] == ASCII.plus || b[i] == ASCII.minus { i += 1 }
                guard i < b.count, ASCII.isDigit(b[i]) else {
                    throw .error(at: start, "a number needs digits in its exponent, found \(found(start))")
                }
                while i < b.count, ASCII.isDigit(b[i]) { i += 1 }
            }
            if checkNumbers, let v = Double(String(decoding: b[start..<i], as: UTF8.self)), !v.isFinite {
                throw .error(at: start, "number `\(Scan.capped(String(decoding: b[start..<i], as: UTF8.self)))` is too large for a double")
            }
        }

        mutating func literal(_ word: StaticString) throws(Stop) {
            let n = word.utf8CodeUnitCount
            let ok = i + n <= b.count && word.withUTF8Buffer { w in (0..<n).allSatisfy { b[i + $0] == w[$0] } }
            guard ok else {
                throw .error(at: i, "expected a value (object, array, string, number, true, false or null), found \(found(i))")
            }
            i += n
        }

        /// The text of a scanned string's raw contents (escapes already checked).
        func decode(_ r: Range<Int>) -> String {
            guard b[r].contains(0x5C) else { return String(decoding: b[r], as: UTF8.self) }
            var out = String.UnicodeScalarView()
            var k = r.lowerBound
            var plain = k
            func flush(_ upTo: Int) { out.append(contentsOf: String(decoding: b[plain..<upTo], as: UTF8.self).unicodeScalars) }
            while k < r.upperBound {
                guard b[k] == 0x5C else { k += 1; continue }
                flush(k)
                let e = b[k + 1]
                var scalar: Unicode.Scalar?
                var width = 2
                switch e {
                case 0x62: scalar = "\u{08}"
                case 0x66: scalar = "\u{0C}"
                case 0x6E: scalar = "\n"
                case 0x72: scalar = "\r"
                case 0x74: scalar = "\t"
                case 0x75:
                    let unit = hex4(at: k + 2) ?? 0xFFFD
                    width = 6
                    if (0xD800...0xDBFF).contains(unit), let low = hex4(at: k + 8) {
                        scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                        width = 12
                    } else {
                        scalar = Unicode.Scalar(unit)
                    }
                default: scalar = Unicode.Scalar(e)
                }
                out.append(scalar ?? "\u{FFFD}")
                k += width
                plain = k
            }
            flush(r.upperBound)
            return String(out)
        }

        static func hex2(_ c: UInt8) -> String {
            let s = String(c, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }

        static func hex4Text(_ v: Int) -> String {
            let s = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, 4 - s.count)) + s
        }
    }
}
