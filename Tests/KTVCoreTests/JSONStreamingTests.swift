import Foundation
import Testing
import KTVCore

/// JSON written as bytes, in pieces, with arrays made as they are written and text passed through.
@Suite struct JSONStreamingTests {
    static let sample = JSONValue.object([
        ("s", .string("a\"b\\c\n\r\t\u{08}\u{0C}\u{01}\u{1F}é在\u{FEFF}x\u{2028}")), ("i", .int(-3)), ("d", .double(2.5)), ("w", .double(7)),
        ("inf", .double(.infinity)), ("b", .bool(true)), ("n", .null), ("e", .array([])), ("o", .object([])),
        ("nested", .array([.object([("k", .array([.int(1), .int(2)]))]), .string("")])),
    ])

    @Test func bytesAreTheTextOfTheStringWriter() {
        #expect(Self.sample.serialized(pretty: false)
                == #"{"s":"a\"b\\c\n\r\t\b\f\u0001\u001fé在\ufeffx"# + "\u{2028}" + #"","i":-3,"d":2.5,"w":7,"inf":null,"b":true,"n":null,"e":[],"o":{},"nested":[{"k":[1,2]},""]}"#)
        #expect(Self.sample.serializedBytes(pretty: true) == Array(Self.sample.serialized(pretty: true).utf8))
        #expect(Self.sample.serialized(pretty: true).hasPrefix("{\n  \"s\": \"a") && Self.sample.serialized().hasSuffix("\n  ]\n}\n"))
    }

    @Test func aGeneratedArrayIsWrittenAsTheArrayOfItsElements() {
        let made = JSONValue.generated(count: 4) { .object([("k", .int($0)), ("sq", .array([.int($0 * $0)]))]) }
        let plain = JSONValue.array((0..<4).map { .object([("k", .int($0)), ("sq", .array([.int($0 * $0)]))]) })
        for pretty in [true, false] { #expect(made.serializedBytes(pretty: pretty) == plain.serializedBytes(pretty: pretty)) }
        #expect(made == plain && made.elements?.count == 4 && JSONValue.generated(count: 0) { _ in .null }.serialized(pretty: false) == "[]")
    }

    @Test func piecesAddUpToTheWholeText() {
        let big = JSONValue.object([("lines", .generated(count: 3000) { .object([("line", .int($0)), ("text", .string("第\($0)行"))]) })])
        for pretty in [true, false] {
            var pieces: [[UInt8]] = []
            big.write(pretty: pretty, chunkBytes: 4096) { pieces.append($0) }
            #expect(pieces.count > 10 && pieces.dropLast().allSatisfy { $0.count >= 4096 && $0.count < 4096 + 200 }, "\(pieces.map(\.count).prefix(5))")
            #expect(Array(pieces.joined()) == big.serializedBytes(pretty: pretty))
        }
    }

    @Test func rawTextPassesThroughAndIsKeptRawWhenAsked() throws {
        let line = Array(#"{"status":"ok","result":{"score":91.5,"lines":[{"w":"在"}]},"score":91.5}"#.utf8)
        let reply = try JSONReader.parse(line, keepingRaw: ["result"])
        #expect(reply["result"] == .raw(Array(#"{"score":91.5,"lines":[{"w":"在"}]}"#.utf8)))
        #expect(reply["score"]?.number == 91.5 && reply["status"]?.string == "ok")
        // Passed on into another line, it is written as it came; and it equals the tree it stands for.
        let out = JSONValue.object([("id", .string("t")), ("result", reply["result"]!)]).serialized(pretty: false)
        #expect(out == #"{"id":"t","result":{"score":91.5,"lines":[{"w":"在"}]}}"#)
        #expect(reply == (try JSONReader.parse(line)))
        // Not an object at the top: read as `parse` reads it; bad text is refused the same way.
        #expect(try JSONReader.parse(Array("[1, 2]".utf8), keepingRaw: ["result"]) == .array([.int(1), .int(2)]))
        #expect(throws: JSONReadError.self) { try JSONReader.parse(Array(#"{"result": [1, }"#.utf8), keepingRaw: ["result"]) }
    }
}
