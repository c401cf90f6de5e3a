/// Why a JSON text could not be read: the 0-based byte offset and what was expected there.
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var byteOffset: Int
    public var message: String

    public init(byteOffset: Int, message: String) {
        self.byteOffset = byteOffset
        self.message = message
    }

    public var description: String { "byte offset \(byteOffset): \(message)" }
}

/// A number as written: the exact integer when it is one (no fraction or exponent, fits in `Int`),
/// and always the correctly rounded double.
public struct JSONNumber: Sendable, Equatable {
    public var double: Double
    public var integer: Int?

    @inlinable
    public init(double: Double, integer: Int?) {
        self.double = double
        self.integer = integer
    }

    /// `.int` for an integer, else `.double`.
    @inlinable
    public var value: JSONValue { integer.map(JSONValue.int) ?? .double(double) }
}

/// ktv's one JSON reader: a forward-only scanner over bytes (RFC 8259).
///
/// A million-line progress log must decode in about a second and a 50 MB lyric model must not
/// become a tree of every value, so callers read straight from the bytes: keys are compared in
/// place (`keyEquals`), only the strings that are kept become `String`s (`makeString`), and a tree
/// (`value()`, `parse`) is built only where the shape is free-form. Strings, escapes and numbers are
/// checked as they are passed, so skipping a value (`skipValue`) validates it too. Nesting is limited
/// to `maxDepth`, so hostile input cannot exhaust the stack. Errors carry the byte offset and say
/// `expected X, found Y`; `location(of:)` turns an offset into a line and column.
///
/// Members and elements are read with `enterObject`/`memberName`/`nextMember` and
/// `enterArray`/`nextElement`, which keep the depth and the trailing-comma rule in one place:
///
///     if try r.enterObject() {
///         repeat {
///             let key = try r.memberName()
///             if r.keyEquals(key, "lines") { … } else { try r.skipValue() }
///         } while try r.nextMember()
///     }
public struct JSONReader {
    /// A string's bytes between its quotes; `escaped` when it holds a backslash escape.
    public typealias StringRange = (start: Int, end: Int, escaped: Bool)

    /// Arrays and objects nest at most this deep.
    public static let maxDepth = 64

    public let bytes: UnsafeBufferPointer<UInt8>
    /// The byte offset of the next byte to read.
    public var offset: Int
    /// Arrays and objects entered and not yet closed.
    public var depth = 0
    /// Accepts one comma before `]` or `}`: ktv's lyric JSON was read by Foundation, which does.
    public var allowsTrailingCommas: Bool

    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>, allowsTrailingCommas: Bool = false) {
        self.bytes = bytes
        self.offset = 0
        self.allowsTrailingCommas = allowsTrailingCommas
    }

    @inlinable
    public var atEnd: Bool { offset >= bytes.count }

    @inlinable @inline(__always)
    public mutating func skipSpace() {
        while offset < bytes.count {
            let c = bytes[offset]
            if c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A { offset += 1 } else { return }
        }
    }

    /// The next byte after white space, nil at the end.
    @inlinable @inline(__always)
    public mutating func peek() -> UInt8? {
        skipSpace()
        return offset < bytes.count ? bytes[offset] : nil
    }

    /// Reads the byte `c` after white space; else fails with `expected what`.
    @inlinable @inline(__always)
    public mutating func expect(_ c: UInt8, _ what: String) throws(JSONReadError) {
        skipSpace()
        guard offset < bytes.count, bytes[offset] == c else { throw fail(what) }
        offset += 1
    }

    /// Fails unless only white space is left.
    public mutating func expectEnd(_ what: String = "the end of the text") throws(JSONReadError) {
        skipSpace()
        if !atEnd { throw fail(what) }
    }

    // MARK: errors

    /// `expected <expected>, found <what is at the offset>`.
    public func fail(_ expected: String) -> JSONReadError {
        JSONReadError(byteOffset: offset, message: "expected \(expected), found \(found(at: offset))")
    }

    /// What is at `k` for a message: the rest of its line, capped, or the end of the text.
    public func found(at k: Int) -> String {
        k >= bytes.count ? "the end of the text" : Self.excerpt(bytes, at: k)
    }

    /// The rest of the line from `offset` in backticks, cut to `limit` characters (`quoted`): a
    /// 1 MB bad token must not become a 1 MB message.
    public static func excerpt(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, limit: Int = 80) -> String {
        let start = min(max(offset, 0), bytes.count)
        var end = start
        while end < bytes.count, bytes[end] != 0x0A, bytes[end] != 0x0D, end - start < limit * 4 { end += 1 }
        return quoted(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self), limit: limit)
    }

    /// The 1-based line and column (in bytes) of a byte offset; CRLF, LF and a lone CR each end a line.
    public static func location(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        var k = 0
        let end = min(offset, bytes.count)
        while k < end {
            let c = bytes[k]
            if c == 0x0A || c == 0x0D {
                if c == 0x0D, k + 1 < end, bytes[k + 1] == 0x0A { k += 1 }
                line += 1
                lineStart = k + 1
            }
            k += 1
        }
        return (line, offset - lineStart + 1)
    }

    public static func location(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        bytes.withUnsafeBufferPointer { location(of: offset, in: $0) }
    }

    public func location(of offset: Int) -> (line: Int, column: Int) { Self.location(of: offset, in: bytes) }

    // MARK: containers

    /// Reads `{` (else fails with `expected what`); true when a member follows, false when the
    /// object is empty and already closed.
    @inlinable @inline(__always)
    public mutating func enterObject(_ what: String = "an object") throws(JSONReadError) -> Bool {
        try expect(0x7B, what)
        return try entered(closing: 0x7D)
    }

    /// Reads `[` (else fails with `expected what`); true when an element follows, false when the
    /// array is empty and already closed.
    @inlinable @inline(__always)
    public mutating func enterArray(_ what: String = "an array") throws(JSONReadError) -> Bool {
        try expect(0x5B, what)
        return try entered(closing: 0x5D)
    }

    @inlinable @inline(__always)
    mutating func entered(closing: UInt8) throws(JSONReadError) -> Bool {
        depth += 1
        if depth > Self.maxDepth { throw tooDeep() }
        skipSpace()
        if offset < bytes.count, bytes[offset] == closing {
            offset += 1
            depth -= 1
            return false
        }
        return true
    }

    @usableFromInline
    func tooDeep() -> JSONReadError {
        JSONReadError(byteOffset: offset - 1, message: "arrays and objects are nested too deeply (more than \(Self.maxDepth) levels)")
    }

    /// A member's name and its `:`; the value is next.
    @inlinable @inline(__always)
    public mutating func memberName() throws(JSONReadError) -> StringRange {
        skipSpace()
        guard offset < bytes.count, bytes[offset] == 0x22 else { throw fail("a member name in double quotes") }
        let key = try stringRange()
        try expect(0x3A, "`:` after the member name")
        return key
    }

    /// After a member's value: true when `,` and another member follow, false when `}` closes the object.
    @inlinable @inline(__always)
    public mutating func nextMember() throws(JSONReadError) -> Bool {
        try next(closing: 0x7D, "`,` or `}` after an object member")
    }

    /// After an element: true when `,` and another element follow, false when `]` closes the array.
    @inlinable @inline(__always)
    public mutating func nextElement() throws(JSONReadError) -> Bool {
        try next(closing: 0x5D, "`,` or `]` after an array element")
    }

    @inlinable @inline(__always)
    mutating func next(closing: UInt8, _ what: String) throws(JSONReadError) -> Bool {
        skipSpace()
        guard offset < bytes.count else { throw fail(what) }
        let c = bytes[offset]
        if c == 0x2C {
            offset += 1
            if allowsTrailingCommas {
                skipSpace()
                if offset < bytes.count, bytes[offset] == closing { offset += 1; depth -= 1; return false }
            }
            return true
        }
        if c == closing { offset += 1; depth -= 1; return false }
        throw fail(what)
    }

    /// Reads an object, calling `member` with each member's name and the reader at its value, which
    /// `member` must read or skip; for decoders whose own errors (of shape) pass through untouched.
    @inlinable
    public mutating func forEachMember(_ what: String = "an object",
                                       _ member: (inout JSONReader, StringRange) throws -> Void) throws {
        guard try enterObject(what) else { return }
        repeat {
            let key = try memberName()
            try member(&self, key)
        } while try nextMember()
    }

    /// Reads an array, calling `element` with the reader at each element, which it must read or skip.
    @inlinable
    public mutating func forEachElement(_ what: String = "an array", _ element: (inout JSONReader) throws -> Void) throws {
        guard try enterArray(what) else { return }
        repeat { try element(&self) } while try nextElement()
    }

    // MARK: strings

    /// A string's raw bytes (between the quotes) and whether it has escapes, after white space.
    /// Escapes are checked here, so `makeString` cannot fail. Always inlined: it reads every key.
    @inlinable @inline(__always)
    public mutating func stringRange() throws(JSONReadError) -> StringRange {
        skipSpace()
        guard offset < bytes.count, bytes[offset] == 0x22 else { throw fail("a string") }
        offset += 1
        let start = offset
        var escaped = false
        while offset < bytes.count {
            let c = bytes[offset]
            if c == 0x22 { let end = offset; offset += 1; return (start, end, escaped) }
            if c == 0x5C {
                escaped = true
                offset = try escapeEnd(offset)
                continue
            }
            if c < 0x20 { throw controlCharacter(offset) }
            offset += 1
        }
        throw JSONReadError(byteOffset: start - 1, message: "this string is never closed with `\"`")
    }

    @usableFromInline
    func controlCharacter(_ k: Int) -> JSONReadError {
        let c = bytes[k]
        let what = c == 0x0A || c == 0x0D ? "a line break" : "control character U+00\(Self.hex(Int(c), digits: 2))"
        return JSONReadError(byteOffset: k, message: "\(what) inside a string; close the string with `\"` or write it as an escape such as `\\n`")
    }

    /// Checks the escape at `k` (a backslash) and returns the offset after it (after both halves
    /// of a surrogate pair).
    @usableFromInline
    func escapeEnd(_ k: Int) throws(JSONReadError) -> Int {
        guard k + 1 < bytes.count else { throw JSONReadError(byteOffset: k, message: "a string ends in the middle of an escape") }
        switch bytes[k + 1] {
        case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
            return k + 2
        case 0x75:
            guard let unit = hex4(k + 2) else {
                throw JSONReadError(byteOffset: k, message: "`\\u` must be followed by 4 hex digits, found \(found(at: k))")
            }
            if (0xDC00...0xDFFF).contains(unit) {
                throw JSONReadError(byteOffset: k, message: "`\\u\(Self.hex(unit, digits: 4))` is a low surrogate with no high surrogate before it")
            }
            guard (0xD800...0xDBFF).contains(unit) else { return k + 6 }
            guard k + 7 < bytes.count, bytes[k + 6] == 0x5C, bytes[k + 7] == 0x75, let low = hex4(k + 8), (0xDC00...0xDFFF).contains(low) else {
                throw JSONReadError(byteOffset: k, message: "`\\u\(Self.hex(unit, digits: 4))` is a high surrogate not followed by a low-surrogate escape `\\uDC00`-`\\uDFFF`")
            }
            return k + 12
        default:
            throw JSONReadError(byteOffset: k, message: "invalid escape \(found(at: k)); JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
        }
    }

    func hex4(_ k: Int) -> Int? {
        guard k + 4 <= bytes.count else { return nil }
        var v = 0
        for j in k..<(k + 4) {
            let c = bytes[j]
            let d: Int
            switch c {
            case 0x30...0x39: d = Int(c - 0x30)
            case 0x41...0x46: d = Int(c - 0x41 + 10)
            case 0x61...0x66: d = Int(c - 0x61 + 10)
            default: return nil
            }
            v = v * 16 + d
        }
        return v
    }

    static func hex(_ v: Int, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    /// The text of a string read by `stringRange` (its escapes are already checked).
    public func makeString(_ r: StringRange) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[r.start..<r.end])
        if !r.escaped { return String(decoding: raw, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var k = r.start
        while k < r.end {
            let c = bytes[k]
            if c != 0x5C { out.append(c); k += 1; continue }
            let e = bytes[k + 1]
            k += 2
            switch e {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var v = hex4(k) ?? 0xFFFD
                k += 4
                if (0xD800...0xDBFF).contains(v) {
                    v = 0x10000 + ((v - 0xD800) << 10) + ((hex4(k + 2) ?? 0xDC00) - 0xDC00)
                    k += 6
                }
                let scalar = Unicode.Scalar(UInt32(v)) ?? "\u{FFFD}"
                out.append(contentsOf: String(scalar).utf8)
            default: out.append(e)  // `"`, `\`, `/`
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public mutating func string() throws(JSONReadError) -> String { makeString(try stringRange()) }

    /// Whether the string equals `s` (keys with escapes are compared after decoding).
    @inlinable @inline(__always)
    public func keyEquals(_ r: StringRange, _ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        if r.escaped { return makeString(r) == s.description }
        guard r.end - r.start == n else { return false }
        let p = s.utf8Start
        for j in 0..<n where bytes[r.start + j] != p[j] { return false }
        return true
    }

    // MARK: numbers and literals

    /// A number, after white space. Integers are read here; a fraction, an exponent or an integer
    /// too large for `Int` goes to the correctly rounded decimal conversion.
    @inlinable @inline(__always)
    public mutating func number() throws(JSONReadError) -> JSONNumber {
        skipSpace()
        let start = offset
        var negative = false
        if offset < bytes.count, bytes[offset] == 0x2D { negative = true; offset += 1 }
        let digitsStart = offset
        // Accumulated negatively so that Int.min fits.
        var value = 0
        var overflow = false
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.subtractingReportingOverflow(Int(bytes[offset] &- 0x30))
            overflow = overflow || o1 || o2
            value = a
            offset += 1
        }
        if offset == digitsStart || (bytes[digitsStart] == 0x30 && offset - digitsStart > 1) || overflow
            || (offset < bytes.count && (bytes[offset] == 0x2E || bytes[offset] == 0x65 || bytes[offset] == 0x45))
            || (!negative && value == Int.min) {
            return try decimal(from: start)
        }
        let v = negative ? value : -value
        return JSONNumber(double: Double(v), integer: v)
    }

    /// The rest of `number()`: checks the grammar from `start` and converts the text with Swift's
    /// `Double(_:)`, which rounds correctly (Foundation's JSONSerialization on Linux is an ulp off
    /// for some 17-digit numbers) and does not depend on the C locale.
    @usableFromInline
    mutating func decimal(from start: Int) throws(JSONReadError) -> JSONNumber {
        func fail(_ message: String) -> JSONReadError {
            JSONReadError(byteOffset: start, message: "\(message), found \(found(at: start))")
        }
        func digits() -> Int {
            let s = offset
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
            return offset - s
        }
        offset = start
        if bytes[offset] == 0x2D { offset += 1 }
        guard offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 else {
            if offset == start { throw self.fail("a value (object, array, string, number, true, false or null)") }
            throw fail("`-` must be followed by digits")
        }
        if bytes[offset] == 0x30, offset + 1 < bytes.count, bytes[offset + 1] >= 0x30, bytes[offset + 1] <= 0x39 {
            throw fail("numbers cannot have a leading zero")
        }
        var isInteger = true
        _ = digits()
        if offset < bytes.count, bytes[offset] == 0x2E {
            isInteger = false
            offset += 1
            guard digits() > 0 else { throw fail("a number needs digits after its decimal point") }
        }
        if offset < bytes.count, bytes[offset] == 0x65 || bytes[offset] == 0x45 {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == 0x2B || bytes[offset] == 0x2D { offset += 1 }
            guard digits() > 0 else { throw fail("a number needs digits in its exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, let v = Int(text) { return JSONNumber(double: Double(v), integer: v) }
        guard let d = Double(text), d.isFinite else {
            throw JSONReadError(byteOffset: start, message: "number \(quoted(text)) is too large for a double")
        }
        return JSONNumber(double: d, integer: nil)
    }

    /// Reads `true`, `false` or `null` (the one given).
    @inlinable
    public mutating func literal(_ word: StaticString) throws(JSONReadError) {
        skipSpace()
        let n = word.utf8CodeUnitCount
        guard offset + n <= bytes.count else { throw fail("a value (object, array, string, number, true, false or null)") }
        let p = word.utf8Start
        for j in 0..<n where bytes[offset + j] != p[j] {
            throw fail("a value (object, array, string, number, true, false or null)")
        }
        offset += n
    }

    // MARK: whole values

    /// Skips any value, checking it.
    public mutating func skipValue() throws(JSONReadError) {
        guard let c = peek() else { throw fail("a value (object, array, string, number, true, false or null)") }
        switch c {
        case 0x22: _ = try stringRange()
        case 0x7B:
            if try enterObject() {
                repeat {
                    _ = try memberName()
                    try skipValue()
                } while try nextMember()
            }
        case 0x5B:
            if try enterArray() {
                repeat { try skipValue() } while try nextElement()
            }
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6E: try literal("null")
        default: _ = try number()
        }
    }

    /// Reads any value as a tree; objects keep their members in written order, repeats included.
    public mutating func value() throws(JSONReadError) -> JSONValue {
        guard let c = peek() else { throw fail("a value (object, array, string, number, true, false or null)") }
        switch c {
        case 0x22: return .string(try string())
        case 0x7B:
            var pairs: [(String, JSONValue)] = []
            if try enterObject() {
                repeat {
                    let k = makeString(try memberName())
                    pairs.append((k, try value()))
                } while try nextMember()
            }
            return .object(pairs)
        case 0x5B:
            var items: [JSONValue] = []
            if try enterArray() {
                repeat { items.append(try value()) } while try nextElement()
            }
            return .array(items)
        case 0x74: try literal("true"); return .bool(true)
        case 0x66: try literal("false"); return .bool(false)
        case 0x6E: try literal("null"); return .null
        default: return try number().value
        }
    }

    /// Parses a whole text as one JSON value.
    public static func parse(_ bytes: [UInt8], allowsTrailingCommas: Bool = false) throws(JSONReadError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buf throws(JSONReadError) in
            var r = JSONReader(buf, allowsTrailingCommas: allowsTrailingCommas)
            let v = try r.value()
            try r.expectEnd()
            return v
        }
    }

    /// Parses a whole text as `parse` does, except that the members of a top-level object named in
    /// `raw` are kept as their text (`JSONValue.raw`), checked but not read into a tree: a worker's
    /// reply carries a whole score card that the batch only passes on into its results.
    public static func parse(_ bytes: [UInt8], keepingRaw raw: Set<String>) throws(JSONReadError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buf throws(JSONReadError) in
            var r = JSONReader(buf)
            guard r.peek() == 0x7B else {
                let v = try r.value()
                try r.expectEnd()
                return v
            }
            var pairs: [(String, JSONValue)] = []
            if try r.enterObject() {
                repeat {
                    let key = r.makeString(try r.memberName())
                    r.skipSpace()
                    if raw.contains(key) {
                        let start = r.offset
                        try r.skipValue()
                        pairs.append((key, .raw(Array(buf[start..<r.offset]))))
                    } else {
                        pairs.append((key, try r.value()))
                    }
                } while try r.nextMember()
            }
            try r.expectEnd()
            return .object(pairs)
        }
    }

    /// A decoder's whole run over a text: the syntax checked first (`check`, so a syntax error
    /// anywhere is reported before an error of shape, as a parser that builds the tree first would),
    /// then `decode` reading straight from the bytes. A UTF-8 byte-order mark is skipped with
    /// `skippingBOM`. A syntax error becomes `invalid(line, message)`; the decoder's own `E` errors
    /// pass through; any other error is `invalid(nil, description)`.
    public static func decodeChecked<T, E: Error>(_ bytes: [UInt8], skippingBOM: Bool = false,
                                                  invalid: (_ line: Int?, _ message: String) -> E,
                                                  _ decode: (inout JSONReader) throws -> T) throws(E) -> T {
        let skip = skippingBOM && bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let outcome: Result<T, E> = bytes.withUnsafeBufferPointer { whole in
            let text = UnsafeBufferPointer(rebasing: whole[skip...])
            var check = JSONReader(text)
            do {
                try check.skipValue()
                try check.expectEnd()
            } catch let error as JSONReadError {
                return .failure(invalid(location(of: error.byteOffset, in: text).line, "invalid JSON: \(error.message)"))
            } catch {
                return .failure(invalid(nil, "invalid JSON: \(error)"))
            }
            var r = JSONReader(text)
            do { return .success(try decode(&r)) } catch let e as E { return .failure(e) } catch {
                return .failure(invalid(nil, "invalid JSON: \(error)"))
            }
        }
        return try outcome.get()
    }

    /// Checks that the text is one JSON value and nothing more. A caller that decodes as it reads
    /// checks first, so that a syntax error anywhere is reported before an error of shape, as it
    /// would be by a parser that builds the whole tree first.
    public static func check(_ bytes: [UInt8], allowsTrailingCommas: Bool = false) throws(JSONReadError) {
        try bytes.withUnsafeBufferPointer { buf throws(JSONReadError) in
            var r = JSONReader(buf, allowsTrailingCommas: allowsTrailingCommas)
            try r.skipValue()
            try r.expectEnd()
        }
    }
}

extension JSONValue {
    /// The value of `key` in an object (the last one when repeated), nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(pairs) = self else { return nil }
        return pairs.last { $0.0 == key }?.1
    }

    public var number: Double? {
        switch self {
        case let .int(v): return Double(v)
        case let .double(v): return v
        default: return nil
        }
    }

    public var string: String? {
        if case let .string(s) = self { return s }
        return nil
    }
}
