#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KTVCore

/// Why a JSON text could not be read: the 0-based byte offset in the line and what was expected.
struct ScanError: Error, Sendable {
    var offset: Int
    var message: String
}

/// A number as written: the exact integer when it is one, else the double.
struct ScannedNumber {
    var double: Double
    var integer: Int?
}

/// A forward-only JSON reader over one line's bytes.
///
/// A million-line log must decode in about a second, so events are read straight from the bytes:
/// keys are compared in place, only the strings that are kept become `String`s, and no tree is
/// built except for the free-form `truth` objects. Nesting is limited, so hostile input cannot
/// exhaust the stack.
struct JSONScanner {
    /// A string's bytes between its quotes; `escaped` when it holds a backslash escape.
    typealias StringRange = (start: Int, end: Int, escaped: Bool)

    let p: UnsafeBufferPointer<UInt8>
    var i: Int

    static let maxDepth = 64

    init(_ p: UnsafeBufferPointer<UInt8>) {
        self.p = p
        i = 0
    }

    var atEnd: Bool { i >= p.count }

    @inline(__always)
    mutating func skipSpace() {
        while i < p.count {
            let c = p[i]
            if c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A { i += 1 } else { return }
        }
    }

    @inline(__always)
    mutating func peek() -> UInt8? {
        skipSpace()
        return i < p.count ? p[i] : nil
    }

    @inline(__always)
    mutating func expect(_ c: UInt8, _ what: String) throws(ScanError) {
        skipSpace()
        guard i < p.count, p[i] == c else { throw fail(what) }
        i += 1
    }

    func fail(_ expected: String) -> ScanError {
        if i >= p.count { return ScanError(offset: i, message: "the line ends early; expected \(expected)") }
        let c = p[i]
        let shown = c >= 0x20 && c < 0x7F ? "`\(Character(Unicode.Scalar(c)))`" : "byte 0x\(String(c, radix: 16))"
        return ScanError(offset: i, message: "expected \(expected), found \(shown)")
    }

    /// A string's raw bytes (between the quotes) and whether it has escapes. Positioned at `"`.
    /// Always inlined: it reads every key of every line.
    @inline(__always)
    mutating func stringRange() throws(ScanError) -> (start: Int, end: Int, escaped: Bool) {
        skipSpace()
        guard i < p.count, p[i] == 0x22 else { throw fail("a string") }
        i += 1
        let start = i
        var escaped = false
        while i < p.count {
            let c = p[i]
            if c == 0x22 { let end = i; i += 1; return (start, end, escaped) }
            if c == 0x5C { escaped = true; i += 2; continue }
            if c < 0x20 { throw ScanError(offset: i, message: "a control character inside a string; escape it") }
            i += 1
        }
        i = p.count
        throw ScanError(offset: start - 1, message: "a string is not closed with `\"`")
    }

    func makeString(_ r: (start: Int, end: Int, escaped: Bool)) throws(ScanError) -> String {
        if !r.escaped {
            return String(decoding: UnsafeBufferPointer(rebasing: p[r.start..<r.end]), as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(r.end - r.start)
        var k = r.start
        func hex4(_ at: Int) throws(ScanError) -> UInt32 {
            guard at + 4 <= r.end else { throw ScanError(offset: at, message: "a `\\u` escape needs four hex digits") }
            var v: UInt32 = 0
            for j in at..<(at + 4) {
                let c = p[j]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                default: throw ScanError(offset: j, message: "a `\\u` escape needs four hex digits")
                }
                v = v * 16 + d
            }
            return v
        }
        while k < r.end {
            let c = p[k]
            if c != 0x5C { out.append(c); k += 1; continue }
            guard k + 1 < r.end else { throw ScanError(offset: k, message: "a string ends inside an escape") }
            let e = p[k + 1]
            k += 2
            switch e {
            case 0x22: out.append(0x22)
            case 0x5C: out.append(0x5C)
            case 0x2F: out.append(0x2F)
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var v = try hex4(k)
                k += 4
                if (0xD800...0xDBFF).contains(v), k + 6 <= r.end, p[k] == 0x5C, p[k + 1] == 0x75 {
                    let lo = try hex4(k + 2)
                    if (0xDC00...0xDFFF).contains(lo) {
                        v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
                        k += 6
                    }
                }
                let scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw ScanError(offset: k - 1, message: "unknown escape `\\\(Character(Unicode.Scalar(e)))` in a string")
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    mutating func string() throws(ScanError) -> String { try makeString(try stringRange()) }

    /// Whether the raw key bytes equal `s` (keys with escapes are compared after decoding).
    @inline(__always)
    func keyEquals(_ r: (start: Int, end: Int, escaped: Bool), _ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        if r.escaped { return (try? makeString(r)) == s.description }
        guard r.end - r.start == n else { return false }
        return memcmp(p.baseAddress! + r.start, s.utf8Start, n) == 0
    }

    mutating func number() throws(ScanError) -> ScannedNumber {
        skipSpace()
        let start = i
        var negative = false
        if i < p.count, p[i] == 0x2D { negative = true; i += 1 }
        let digitsStart = i
        var value = 0
        var overflow = false
        while i < p.count, p[i] >= 0x30, p[i] <= 0x39 {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(p[i] - 0x30))
            overflow = overflow || o1 || o2
            value = a
            i += 1
        }
        guard i > digitsStart else { i = start; throw fail("a number") }
        if p[digitsStart] == 0x30, i - digitsStart > 1 {
            throw ScanError(offset: digitsStart, message: "a number with a leading zero")
        }
        var isInteger = true
        if i < p.count, p[i] == 0x2E {
            isInteger = false
            i += 1
            let f = i
            while i < p.count, p[i] >= 0x30, p[i] <= 0x39 { i += 1 }
            guard i > f else { throw fail("digits after the decimal point") }
        }
        if i < p.count, p[i] == 0x65 || p[i] == 0x45 {
            isInteger = false
            i += 1
            if i < p.count, p[i] == 0x2B || p[i] == 0x2D { i += 1 }
            let f = i
            while i < p.count, p[i] >= 0x30, p[i] <= 0x39 { i += 1 }
            guard i > f else { throw fail("digits in the exponent") }
        }
        if isInteger && !overflow {
            let v = negative ? -value : value
            return ScannedNumber(double: Double(v), integer: v)
        }
        // Rare (fractions, exponents, huge values): let the C library do the rounding.
        var text = [CChar](repeating: 0, count: i - start + 1)
        for k in start..<i { text[k - start] = CChar(bitPattern: p[k]) }
        let d = strtod(text, nil)
        return ScannedNumber(double: d, integer: nil)
    }

    /// Skips any value.
    mutating func skipValue(depth: Int = 0) throws(ScanError) {
        guard depth < Self.maxDepth else { throw ScanError(offset: i, message: "values are nested too deeply") }
        guard let c = peek() else { throw fail("a value") }
        switch c {
        case 0x22: _ = try stringRange()
        case 0x7B:
            i += 1
            if peek() == 0x7D { i += 1; return }
            while true {
                _ = try stringRange()
                try expect(0x3A, "`:`")
                try skipValue(depth: depth + 1)
                guard let n = peek() else { throw fail("`,` or `}`") }
                i += 1
                if n == 0x7D { return }
                if n != 0x2C { i -= 1; throw fail("`,` or `}`") }
            }
        case 0x5B:
            i += 1
            if peek() == 0x5D { i += 1; return }
            while true {
                try skipValue(depth: depth + 1)
                guard let n = peek() else { throw fail("`,` or `]`") }
                i += 1
                if n == 0x5D { return }
                if n != 0x2C { i -= 1; throw fail("`,` or `]`") }
            }
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6E: try literal("null")
        default: _ = try number()
        }
    }

    mutating func literal(_ word: StaticString) throws(ScanError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= p.count, memcmp(p.baseAddress! + i, word.utf8Start, n) == 0 else { throw fail("a value") }
        i += n
    }

    /// Reads any value as a tree (for free-form objects).
    mutating func value(depth: Int = 0) throws(ScanError) -> JSONValue {
        guard depth < Self.maxDepth else { throw ScanError(offset: i, message: "values are nested too deeply") }
        guard let c = peek() else { throw fail("a value") }
        switch c {
        case 0x22: return .string(try string())
        case 0x7B:
            i += 1
            var pairs: [(String, JSONValue)] = []
            if peek() == 0x7D { i += 1; return .object(pairs) }
            while true {
                let k = try string()
                try expect(0x3A, "`:`")
                pairs.append((k, try value(depth: depth + 1)))
                guard let n = peek() else { throw fail("`,` or `}`") }
                i += 1
                if n == 0x7D { return .object(pairs) }
                if n != 0x2C { i -= 1; throw fail("`,` or `}`") }
            }
        case 0x5B:
            i += 1
            var items: [JSONValue] = []
            if peek() == 0x5D { i += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                guard let n = peek() else { throw fail("`,` or `]`") }
                i += 1
                if n == 0x5D { return .array(items) }
                if n != 0x2C { i -= 1; throw fail("`,` or `]`") }
            }
        case 0x74: try literal("true"); return .bool(true)
        case 0x66: try literal("false"); return .bool(false)
        case 0x6E: try literal("null"); return .null
        default:
            let n = try number()
            if let v = n.integer { return .int(v) }
            return .double(n.double)
        }
    }

    /// Parses a whole text as one JSON value (scenario files, string-encoded payloads).
    static func parse(_ bytes: [UInt8]) throws(ScanError) -> JSONValue {
        var result: Result<JSONValue, ScanError> = .success(.null)
        bytes.withUnsafeBufferPointer { buf in
            var s = JSONScanner(buf)
            do throws(ScanError) {
                let v = try s.value()
                s.skipSpace()
                if !s.atEnd { throw s.fail("the end of the text") }
                result = .success(v)
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }
}

extension JSONValue {
    /// The value of `key` in an object (the last one when repeated), nil otherwise.
    subscript(key: String) -> JSONValue? {
        guard case let .object(pairs) = self else { return nil }
        return pairs.last { $0.0 == key }?.1
    }

    var number: Double? {
        switch self {
        case let .int(v): return Double(v)
        case let .double(v): return v
        default: return nil
        }
    }

    var string: String? {
        if case let .string(s) = self { return s }
        return nil
    }
}
