import KTVCore

/// Byte-level helpers shared by the text parsers. Parsers work on UTF-8 bytes rather than
/// `Character`s: grammar characters are all ASCII, and it keeps validating thousands of files fast.

/// A line of decoded text: 1-based number and its bytes (without the line break).
struct TextLine {
    var number: Int
    var bytes: ArraySlice<UInt8>
}

enum ASCII {
    static let lf: UInt8 = 0x0A, cr: UInt8 = 0x0D, space: UInt8 = 0x20, tab: UInt8 = 0x09
    static let lbracket: UInt8 = 0x5B, rbracket: UInt8 = 0x5D, langle: UInt8 = 0x3C, rangle: UInt8 = 0x3E
    static let lparen: UInt8 = 0x28, rparen: UInt8 = 0x29, comma: UInt8 = 0x2C, colon: UInt8 = 0x3A
    static let dot: UInt8 = 0x2E, minus: UInt8 = 0x2D, plus: UInt8 = 0x2B, lbrace: UInt8 = 0x7B
    static let zero: UInt8 = 0x30, nine: UInt8 = 0x39

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= zero && b <= nine }
    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == space || b == tab }
    @inline(__always) static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
}

enum Scan {
    /// The lines of `text`, split on CRLF, LF or a lone CR. Lazy: a table of a million slices
    /// would cost more than the text itself.
    static func lines(_ text: [UInt8]) -> Lines { Lines(text: text) }

    struct Lines: Sequence {
        let text: [UInt8]

        struct Iterator: IteratorProtocol {
            let text: [UInt8]
            var i = 0
            var number = 1

            mutating func next() -> TextLine? {
                let n = text.count
                guard i < n else { return nil }
                let start = i
                while i < n, text[i] != ASCII.lf, text[i] != ASCII.cr { i += 1 }
                let line = TextLine(number: number, bytes: text[start..<i])
                number += 1
                if i < n {
                    if text[i] == ASCII.cr, i + 1 < n, text[i + 1] == ASCII.lf { i += 1 }
                    i += 1
                }
                return line
            }
        }

        func makeIterator() -> Iterator { Iterator(text: text) }
    }

    /// Parses an unsigned decimal integer of at most 12 digits at `i`; returns value and the index after it.
    @inline(__always)
    static func uint(_ b: ArraySlice<UInt8>, _ i: Int) -> (value: Int, end: Int)? {
        var j = i
        var v = 0
        while j < b.endIndex, ASCII.isDigit(b[j]) {
            if j - i >= 12 { return nil }
            v = v * 10 + Int(b[j] - ASCII.zero)
            j += 1
        }
        return j > i ? (v, j) : nil
    }

    /// Three unsigned integers between `open` and `close`, comma-separated, at `i` (a KRC word
    /// header `<o,d,x>`, a YRC one `(s,d,f)`): the numbers and the index after `close`.
    @inline(__always)
    static func triple(_ b: ArraySlice<UInt8>, _ i: Int, open: UInt8, close: UInt8) -> (Int, Int, Int, Int)? {
        guard i < b.endIndex, b[i] == open,
              let (x, e1) = uint(b, i + 1), e1 < b.endIndex, b[e1] == ASCII.comma,
              let (y, e2) = uint(b, e1 + 1), e2 < b.endIndex, b[e2] == ASCII.comma,
              let (z, e3) = uint(b, e2 + 1), e3 < b.endIndex, b[e3] == close
        else { return nil }
        return (x, y, z, e3 + 1)
    }

    /// The index of the next `triple` at or after `from`: text between may itself hold `open`.
    static func nextTriple(_ b: ArraySlice<UInt8>, from: Int, open: UInt8, close: UInt8) -> Int? {
        var j = from
        while j < b.endIndex {
            if b[j] == open, triple(b, j, open: open, close: close) != nil { return j }
            j += 1
        }
        return nil
    }

    /// Whether `b` starts with `prefix`, ASCII letters compared without case.
    static func hasPrefix(_ b: ArraySlice<UInt8>, caseInsensitive prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { p in
            guard b.count >= p.count else { return false }
            for k in 0..<p.count {
                let c = b[b.startIndex + k], e = p[k]
                if c != e, !(ASCII.isLetter(c) && c | 0x20 == e | 0x20) { return false }
            }
            return true
        }
    }

    static func string(_ b: ArraySlice<UInt8>) -> String { String(decoding: b, as: UTF8.self) }

    static func isBlank(_ b: ArraySlice<UInt8>) -> Bool {
        b.allSatisfy { ASCII.isSpace($0) }
    }

    /// Index of the first non-space byte at or after `i`.
    static func skipSpaces(_ b: ArraySlice<UInt8>, _ i: Int) -> Int {
        var j = i
        while j < b.endIndex, ASCII.isSpace(b[j]) { j += 1 }
        return j
    }

    /// Trims ASCII spaces and tabs at both ends.
    static func trim(_ b: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = b.startIndex, e = b.endIndex
        while s < e, ASCII.isSpace(b[s]) { s += 1 }
        while e > s, ASCII.isSpace(b[e - 1]) { e -= 1 }
        return b[s..<e]
    }

    /// `b` without the spaces, tabs and U+3000 at its ends: `String.trimmingSpaces`, on bytes.
    static func trimSpaces(_ b: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = b.startIndex, e = b.endIndex
        while s < e {
            if ASCII.isSpace(b[s]) { s += 1 } else if s + 2 < e, b[s] == 0xE3, b[s + 1] == 0x80, b[s + 2] == 0x80 { s += 3 } else { break }
        }
        while e > s {
            if ASCII.isSpace(b[e - 1]) { e -= 1 } else if e - 3 >= s, b[e - 3] == 0xE3, b[e - 2] == 0x80, b[e - 1] == 0x80 { e -= 3 } else { break }
        }
        return b[s..<e]
    }

    /// What `Int(String)` reads, on bytes: an optional `+` or `-`, then ASCII digits, nil past `Int`'s range.
    static func integer(_ b: ArraySlice<UInt8>) -> Int? {
        var i = b.startIndex
        var negative = false
        if i < b.endIndex, b[i] == ASCII.plus || b[i] == ASCII.minus { negative = b[i] == ASCII.minus; i += 1 }
        guard i < b.endIndex else { return nil }
        var v = 0
        while i < b.endIndex {
            guard ASCII.isDigit(b[i]) else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(Int(b[i] - ASCII.zero)) : m.addingReportingOverflow(Int(b[i] - ASCII.zero))
            if o1 || o2 { return nil }
            v = a
            i += 1
        }
        return v
    }

    /// Does `b` at `i` start with the ASCII string `s`?
    static func hasPrefix(_ b: ArraySlice<UInt8>, _ i: Int, _ s: StaticString) -> Bool {
        let count = s.utf8CodeUnitCount
        guard b.endIndex - i >= count else { return false }
        return s.withUTF8Buffer { p in
            for k in 0..<count where b[i + k] != p[k] { return false }
            return true
        }
    }
}

/// A `[key:value]` tag row, shared by KRC, LRC and QRC bodies.
enum TagRow {
    enum Result {
        case tag(LyricTag)
        /// `[key:` with no closing bracket: the value runs to the end of the line.
        case unterminated(LyricTag)
        case notATag
    }

    /// `row` must start with `[`. A tag key is a letter followed by letters, digits, `_`, `-` or `#`.
    static func parse(_ row: ArraySlice<UInt8>) -> Result {
        var i = row.startIndex
        guard i < row.endIndex, row[i] == ASCII.lbracket else { return .notATag }
        i += 1
        let keyStart = Scan.skipSpaces(row, i)
        i = keyStart
        guard i < row.endIndex, ASCII.isLetter(row[i]) || row[i] == 0x23 else { return .notATag }
        while i < row.endIndex, ASCII.isLetter(row[i]) || ASCII.isDigit(row[i]) || row[i] == 0x5F || row[i] == ASCII.minus || row[i] == 0x23 {
            i += 1
        }
        let keyEnd = i
        i = Scan.skipSpaces(row, i)
        guard i < row.endIndex, row[i] == ASCII.colon else { return .notATag }
        let key = Scan.string(row[keyStart..<keyEnd])
        let valueStart = i + 1
        // The value runs to the last `]` of the row (values such as `Song [Live]` exist).
        let trimmed = Scan.trim(row[valueStart...])
        if let last = trimmed.last, last == ASCII.rbracket {
            let value = Scan.string(Scan.trim(row[valueStart..<(trimmed.endIndex - 1)]))
            return .tag(LyricTag(key: key, value: value))
        }
        // `[ti:x]junk` is closed but has text after it: not a tag row, and not "missing its `]`".
        if trimmed.contains(ASCII.rbracket) { return .notATag }
        return .unterminated(LyricTag(key: key, value: Scan.string(Scan.trim(row[valueStart...]))))
    }
}

extension Scan {
    static func trimLeading(_ b: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = b.startIndex
        while s < b.endIndex, ASCII.isSpace(b[s]) { s += 1 }
        return b[s...]
    }

    /// `s` cut to `limit` characters, with `…` when something was cut: input quoted in a message
    /// (a word, a JSON excerpt) can be megabytes long.
    static func capped(_ s: String, limit: Int = 80) -> String {
        var end = s.startIndex
        var n = 0
        while end < s.endIndex, n < limit {
            end = s.index(after: end)
            n += 1
        }
        return end == s.endIndex ? s : String(s[..<end]) + "…"
    }

    /// A row as messages quote it: at most 40 characters, control characters escaped (a NUL, an
    /// escape sequence), so what is there shows and the message stays one line.
    static func preview(_ b: ArraySlice<UInt8>) -> String {
        let s = string(b)
        if s.count <= 40 { return escapingControlCharacters(s) }
        return escapingControlCharacters(s.prefix(40)) + "…"
    }
}

/// Tags collected while reading a text format, with the rows of the tags the parsers need again.
struct TagCollector {
    var tags: [LyricTag] = []
    /// Row of the last `[offset:]` and `[language:]` tag, for findings about them.
    var offsetLine: Int?
    var languageLine: Int?

    /// Reads a row that is not a timed row of the format: a tag, an unterminated tag (kept, with an
    /// error), or an unparsable row (`notATag` says what the format expected there).
    mutating func take(_ row: ArraySlice<UInt8>, line: Int, into diags: inout [Diagnostic], notATag: () -> String) {
        switch TagRow.parse(row) {
        case let .tag(tag):
            note(tag, line: line)
            tags.append(tag)
        case let .unterminated(tag):
            diags.append(.error("unterminated-tag", line: line,
                                "tag `[\(tag.key):` has no closing `]`; end it with `]` on the same line"))
            note(tag, line: line)
            tags.append(tag)
        case .notATag:
            diags.append(.error("unparsable-line", line: line, notATag()))
        }
    }

    private mutating func note(_ tag: LyricTag, line: Int) {
        switch tag.key.lowercased() {
        case "offset": offsetLine = line
        case "language": languageLine = line
        default: break
        }
    }
}
