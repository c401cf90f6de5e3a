import Testing
import KTVCore

@Suite struct JSONReaderTests {
    func parse(_ text: String, trailingCommas: Bool = false) throws(JSONReadError) -> JSONValue {
        try JSONReader.parse(Array(text.utf8), allowsTrailingCommas: trailingCommas)
    }

    func error(_ text: String) -> JSONReadError? {
        do { _ = try parse(text); return nil } catch { return error }
    }

    @Test func doublesAreCorrectlyRounded() throws {
        let cases: [(String, Double)] = [
            ("0.1", 0.1), ("5e-324", .leastNonzeroMagnitude), ("1.7976931348623157e308", 1.7976931348623157e308),
            ("2.2250738585072014e-308", 2.2250738585072014e-308), ("-0.0", -0.0), ("1E2", 100), ("1.5e+3", 1500),
            // Foundation's JSONSerialization on Linux reads this one an ulp off (found by fuzz-roundtrip).
            ("220.50000023841858", 220.50000023841858),
            ("0.30000000000000004", 0.30000000000000004), ("123456789012345678901234567890", 1.2345678901234568e29),
        ]
        for (text, expected) in cases {
            let v = try parse(text)
            guard case let .double(d) = v else { Issue.record("\(text) read as \(v)"); continue }
            #expect(d.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test func integersStayExact() throws {
        #expect(try parse("0") == .int(0))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("42") == .int(42))
        #expect(try parse("9223372036854775807") == .int(.max))
        #expect(try parse("-9223372036854775808") == .int(.min))
        #expect(try parse("9223372036854775808") == .double(9223372036854775808))
        #expect(try parse("9007199254740993") == .int(9_007_199_254_740_993))  // not a double
        #expect(try parse("1.0") == .double(1))
    }

    @Test func badNumbersSayWhy() {
        #expect(error("1e999") == JSONReadError(byteOffset: 0, message: "number `1e999` is too large for a double"))
        #expect(error("[01]") == JSONReadError(byteOffset: 1, message: "numbers cannot have a leading zero, found `01]`"))
        #expect(error("[1.]") == JSONReadError(byteOffset: 1, message: "a number needs digits after its decimal point, found `1.]`"))
        #expect(error("[1e+]") == JSONReadError(byteOffset: 1, message: "a number needs digits in its exponent, found `1e+]`"))
        #expect(error("[-x]") == JSONReadError(byteOffset: 1, message: "`-` must be followed by digits, found `-x]`"))
        #expect(error("[+1]") == JSONReadError(byteOffset: 1, message: "expected a value (object, array, string, number, true, false or null), found `+1]`"))
        #expect(error("[tru]") == JSONReadError(byteOffset: 1, message: "expected a value (object, array, string, number, true, false or null), found `tru]`"))
    }

    @Test func escapesAndSurrogatePairs() throws {
        #expect(try parse(#""a\n\t\"\\\/\b\f\r\u00e9\ud83d\ude00""#) == .string("a\n\t\"\\/\u{8}\u{C}\r\u{E9}\u{1F600}"))
        #expect(error(#"["\ud800x"]"#) == JSONReadError(byteOffset: 2, message: "`\\uD800` is a high surrogate not followed by a low-surrogate escape `\\uDC00`-`\\uDFFF`"))
        #expect(error(#"["\udc00"]"#) == JSONReadError(byteOffset: 2, message: "`\\uDC00` is a low surrogate with no high surrogate before it"))
        #expect(error(#"["\u12g4"]"#) == JSONReadError(byteOffset: 2, message: "`\\u` must be followed by 4 hex digits, found `\\u12g4\"]`"))
        #expect(error(#"["\q"]"#)?.message.hasPrefix("invalid escape `\\q\"]`; JSON escapes are") == true)
        #expect(error("[\"a\tb\"]") == JSONReadError(byteOffset: 3, message: "control character U+0009 inside a string; close the string with `\"` or write it as an escape such as `\\n`"))
        #expect(error("[\"open") == JSONReadError(byteOffset: 1, message: "this string is never closed with `\"`"))
    }

    @Test func objectsKeepKeyOrderAndRepeats() throws {
        let v = try parse(#"{"b": 1, "a": [true, false, null], "b": "x", "": {}}"#)
        guard case let .object(pairs) = v else { Issue.record("not an object"); return }
        #expect(pairs.map(\.0) == ["b", "a", "b", ""])
        #expect(v["b"] == .string("x"))
        #expect(v["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(v == .object([("b", .int(1)), ("a", .array([.bool(true), .bool(false), .null])), ("b", .string("x")), ("", .object([]))]))
    }

    @Test func nestingIsLimited() throws {
        let ok = String(repeating: "[", count: JSONReader.maxDepth) + String(repeating: "]", count: JSONReader.maxDepth)
        #expect(throws: Never.self) { try parse(ok) }
        #expect(throws: Never.self) { try JSONReader.check(Array(ok.utf8)) }
        let deep = "[" + ok + "]"
        let e = JSONReadError(byteOffset: 64, message: "arrays and objects are nested too deeply (more than 64 levels)")
        #expect(error(deep) == e)
        #expect(throws: e) { try JSONReader.check(Array(deep.utf8)) }
        // A hostile depth fails the same way rather than exhausting the stack.
        #expect(error(String(repeating: "{\"a\":", count: 100_000)) == JSONReadError(byteOffset: 320, message: e.message))
    }

    @Test func errorsNameTheOffsetAndWhatWasFound() {
        #expect(error("{\"a\": 1 \"b\": 2}") == JSONReadError(byteOffset: 8, message: "expected `,` or `}` after an object member, found `\"b\": 2}`"))
        #expect(error("[1 2]") == JSONReadError(byteOffset: 3, message: "expected `,` or `]` after an array element, found `2]`"))
        #expect(error("{\"a\" 1}") == JSONReadError(byteOffset: 5, message: "expected `:` after the member name, found `1}`"))
        #expect(error("{1: 2}") == JSONReadError(byteOffset: 1, message: "expected a member name in double quotes, found `1: 2}`"))
        #expect(error("[1,") == JSONReadError(byteOffset: 3, message: "expected a value (object, array, string, number, true, false or null), found the end of the text"))
        #expect(error("") == JSONReadError(byteOffset: 0, message: "expected a value (object, array, string, number, true, false or null), found the end of the text"))
        #expect(error("{} {}") == JSONReadError(byteOffset: 3, message: "expected the end of the text, found `{}`"))
    }

    @Test func trailingCommasOnlyWhenAllowed() throws {
        #expect(error("[1,]")?.message.hasPrefix("expected a value") == true)
        #expect(error("{\"a\": 1,}")?.message.hasPrefix("expected a member name") == true)
        #expect(try parse("[1,]", trailingCommas: true) == .array([.int(1)]))
        #expect(try parse("{\"a\": [],}", trailingCommas: true) == .object([("a", .array([]))]))
        #expect(throws: JSONReadError.self) { try parse("[1,,]", trailingCommas: true) }
    }

    @Test func excerptsAreCappedAndOneLine() throws {
        let token = String(repeating: "z", count: 1_000_000)
        let e = try #require(error("[" + token + "]"))
        #expect(e.byteOffset == 1)
        #expect(e.message == "expected a value (object, array, string, number, true, false or null), found `\(String(repeating: "z", count: 80))…`")
        #expect(error("[x\n2]")?.message.hasSuffix("found `x`") == true)
    }

    @Test func lineAndColumnOfAnOffset() {
        let text = Array("ab\r\ncd\ref\ngh".utf8)
        #expect(JSONReader.location(of: 0, in: text) == (1, 1))
        #expect(JSONReader.location(of: 2, in: text) == (1, 3))
        #expect(JSONReader.location(of: 4, in: text) == (2, 1))
        #expect(JSONReader.location(of: 5, in: text) == (2, 2))
        #expect(JSONReader.location(of: 7, in: text) == (3, 1))
        #expect(JSONReader.location(of: 10, in: text) == (4, 1))
        #expect(JSONReader.location(of: text.count, in: text) == (4, 3))
        let e = error("{\r\n\"a\": x}")
        #expect(e?.byteOffset == 8)
        #expect(JSONReader.location(of: 8, in: Array("{\r\n\"a\": x}".utf8)) == (2, 6))
    }

    @Test func scanningInPlace() throws {
        let text = Array(#"{"kind": "progress", "k\u0065y": -12, "skip": {"x": [1, "y"]}, "s": "a\"b"}"#.utf8)
        try text.withUnsafeBufferPointer { buf throws(JSONReadError) in
            var r = JSONReader(buf)
            var seen: [String] = []
            if try r.enterObject() {
                repeat {
                    let key = try r.memberName()
                    if r.keyEquals(key, "kind") {
                        let v = try r.stringRange()
                        #expect(r.keyEquals(v, "progress") && !v.escaped)
                        seen.append("kind")
                    } else if r.keyEquals(key, "key") {
                        #expect(key.escaped)
                        #expect(try r.number() == JSONNumber(double: -12, integer: -12))
                        seen.append("key")
                    } else if r.keyEquals(key, "s") {
                        #expect(try r.string() == "a\"b")
                        seen.append("s")
                    } else {
                        try r.skipValue()
                    }
                } while try r.nextMember()
            }
            try r.expectEnd()
            #expect(seen == ["kind", "key", "s"])
            #expect(r.depth == 0)
        }
    }

    @Test func writerOutputReadsBack() throws {
        let v = JSONValue.object([("\u{FEFF}k", .string("\u{FEFF}\u{1}\n")), ("n", .array([.int(-3), .double(0.1), .null]))])
        #expect(try JSONReader.parse(Array(v.serialized().utf8)) == v)
        #expect(try JSONReader.parse(Array(v.serialized(pretty: false).utf8)) == v)
    }
}
