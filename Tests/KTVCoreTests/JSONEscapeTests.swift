import Foundation
import Testing
import KTVCore

@Suite struct JSONEscapeTests {
    /// Found by fuzz-roundtrip: a word `\u{FEFF}` came back empty from ktv's own JSON, because
    /// JSONSerialization on Linux drops a raw U+FEFF at the start of a string.
    @Test func byteOrderMarkCharactersAreEscapedAndReadBack() throws {
        let text = JSONValue.object([("\u{FEFF}k", .string("\u{FEFF}"))]).serialized()
        #expect(!text.unicodeScalars.contains("\u{FEFF}"))
        let back = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        #expect(back == ["\u{FEFF}k": "\u{FEFF}"])
    }
}
