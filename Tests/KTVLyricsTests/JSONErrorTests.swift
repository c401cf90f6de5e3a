import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// JSON syntax errors name the line and the byte offset (JSONSerialization on Linux gives neither).
@Suite struct JSONErrorPositionTests {
    static func error(_ text: String, as format: LyricFormat = .json) -> LyricsError? {
        readError(Array(text.utf8), options: LyricsParseOptions(format: format))
    }

    @Test func missingValueNamesLineAndOffset() {
        let text = "{\n  \"format\": \"json\",\n  \"lines\": [\n    {\"start_ms\": 1, \"duration_ms\": x}\n  ]\n}\n"
        #expect(Self.error(text) == .malformed(line: 4, detail: "invalid JSON at byte offset 70: expected a value (object, array, string, number, true, false or null), found `x}`"))
        #expect(Self.error(text)?.description.hasPrefix("line 4: invalid JSON at byte offset 70:") == true)
    }

    @Test func missingCommaBetweenMembers() {
        let text = "{\"format\": \"json\"\n\"lines\": []}"
        #expect(Self.error(text) == .malformed(line: 2, detail: "invalid JSON at byte offset 18: expected `,` or `}` after an object member, found `\"lines\": []}`"))
    }

    @Test func lineBreakInsideAString() {
        let text = "{\"format\": \"json\",\r\n\"lines\": [],\r\n\"tags\": {\"ti\": \"never closed}\r\n}"
        #expect(Self.error(text) == .malformed(line: 3, detail: "invalid JSON at byte offset 63: a line break inside a string; close the string with `\"` or write it as an escape such as `\\n`"))
    }

    @Test func unclosedString() {
        #expect(Self.error("{\"lines\": [],\n\"tags\": {\"ti\": \"open") == .malformed(line: 2, detail: "invalid JSON at byte offset 29: this string is never closed with `\"`"))
    }

    @Test func unclosedDocument() {
        let text = "{\"format\": \"json\", \"lines\": [\n"
        #expect(Self.error(text) == .malformed(line: 2, detail: "invalid JSON at byte offset 30: expected a value (object, array, string, number, true, false or null), found the end of the text"))
    }

    @Test func trailingCommaIsAcceptedLikeFoundationDoes() throws {
        let p = try read("{\"format\": \"json\", \"tags\": {\"ti\": \"T\",}, \"lines\": [{\"start_ms\": 1, \"duration_ms\": 2, \"text\": \"a\"},]}",
                         options: LyricsParseOptions(format: .json))
        #expect(p.lyrics.lineSpans == [Span(1, 3, "a")])
        #expect(p.lyrics.tags == [LyricTag(key: "ti", value: "T")])
    }

    @Test func numberTooLargeAndBadEscape() {
        #expect(Self.error("{\"lines\": [1e999]}") == .malformed(line: 1, detail: "invalid JSON at byte offset 11: number `1e999` is too large for a double"))
        #expect(Self.error("{\"lines\": [\"a\\qb\"]}") == .malformed(line: 1, detail: "invalid JSON at byte offset 13: invalid escape `\\qb\"]}`; JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"))
        #expect(Self.error("{\"lines\": [\"\\ud800x\"]}") == .malformed(line: 1, detail: "invalid JSON at byte offset 12: `\\uD800` is a high surrogate not followed by a low-surrogate escape `\\uDC00`-`\\uDFFF`"))
    }

    @Test func deepNestingIsReportedWhereItPassesTheLimit() {
        let text = "{\"lines\":\n" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        #expect(Self.error(text) == .malformed(line: 2, detail: "invalid JSON at byte offset 73: arrays and objects are nested too deeply (more than 64 levels)"))
    }

    @Test func quotedInputIsCappedAt80Characters() {
        let junk = String(repeating: "z", count: 200)
        let text = "{\"lines\": [],\n \(junk)}"
        guard case let .malformed(line, detail)? = Self.error(text) else {
            Issue.record("expected malformed")
            return
        }
        #expect(line == 2)
        #expect(detail == "invalid JSON at byte offset 15: expected a member name in double quotes, found `\(String(repeating: "z", count: 80))…`")
    }

    @Test func byteOffsetCountsTheBOM() {
        let text = "\u{FEFF}{\"lines\": [,]}"
        #expect(Self.error(text) == .malformed(line: 1, detail: "invalid JSON at byte offset 14: expected a value (object, array, string, number, true, false or null), found `,]}`"))
    }

    @Test func agoraPitchJSONErrorsHaveLinesToo() {
        let text = "{\"pitchDatas\": [\n  {\"pitch\": 50, \"startTime\": 0, \"duration\": 10},\n  {\"pitch\": 51 \"startTime\": 10}\n]}"
        #expect(Self.error(text, as: .agoraPitchJSON) == .malformed(line: 3, detail: "invalid JSON in Agora pitch file at byte offset 81: expected `,` or `}` after an object member, found `\"startTime\": 10}`"))
        // Detected rather than forced: the same message.
        #expect(readError(Array(text.utf8)) == Self.error(text, as: .agoraPitchJSON))
    }

    @Test func documentsThatAreJSONButNotAModel() {
        #expect(Self.error("3") == .malformed(line: nil, detail: "ktv JSON needs a `lines` list"))
        #expect(Self.error("{\"lines\": []} x") == .malformed(line: 1, detail: "invalid JSON at byte offset 14: expected the end of the text, found `x`"))
    }

    @Test func tagsKeepWrittenOrderAndTheLastValueOfARepeatedKey() throws {
        let text = "{\"ti\": 1, \"tags\": {\"ti\": \"T\", \"a\\u0072\": \"A\", \"al\": \"L\", \"ti\": \"U\"}, \"al\": 2, \"lines\": []}"
        let p = try read(text, options: LyricsParseOptions(format: .json))
        #expect(p.lyrics.tags == [LyricTag(key: "ti", value: "U"), LyricTag(key: "ar", value: "A"), LyricTag(key: "al", value: "L")])
    }
}
