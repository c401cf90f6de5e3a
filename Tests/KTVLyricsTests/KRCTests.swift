import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// Base64 of a `[language:]` JSON payload.
func krcLanguage(_ json: String) -> String {
    Data(json.utf8).base64EncodedString()
}

/// KRC plaintext rows, tags and `[language:]` (FORMATS.md §1.2-1.6).
@Suite struct KRCTextTests {
    @Test func unitOffsetsAreRelativeToTheLineStart() throws {
        let p = try read("[1000,2400]<0,400,0>Doo <400,400,0>wop <800,800,0>doo <1600,800,0>wah\n[3600,2000]<0,500,0>Sha <500,1500,0>la\n")
        #expect(p.lyrics.format == .krcText)
        #expect(p.lyrics.lineSpans == [Span(1000, 3400, "Doo wop doo wah"), Span(3600, 5600, "Sha la")])
        #expect(p.lyrics.lines[0].wordSpans == [
            Span(1000, 1400, "Doo "), Span(1400, 1800, "wop "), Span(1800, 2600, "doo "), Span(2600, 3400, "wah"),
        ])
        #expect(p.lyrics.lines[1].wordSpans == [Span(3600, 4100, "Sha "), Span(4100, 5600, "la")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [1, 2])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func bomAndCRLF() throws {
        let text = "\u{FEFF}[ar:Lala]\r\n[by:]\r\n[1000,500]<0,500,0>la\r\n[2000,500]<0,500,0>li\r\n"
        let p = try read(text)
        #expect(p.encoding == .utf8BOM)
        #expect(p.lyrics.tags == [LyricTag(key: "ar", value: "Lala"), LyricTag(key: "by", value: "")])
        #expect(p.lyrics.lineSpans == [Span(1000, 1500, "la"), Span(2000, 2500, "li")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [3, 4])
        // CR must not leak into the last unit's text.
        #expect(p.lyrics.lines.flatMap(\.words).map(\.text) == ["la", "li"])
    }

    @Test func tagsMayAppearAnywhereAndBeEmpty() throws {
        let p = try read("[total:5000]\n[1000,1000]<0,500,0>Ti<500,500,0>ra\n[ti:Tira]\n[al:]\n[2500,1500]<0,750,0>Lo<750,750,0>ri\n[id:0]\n")
        #expect(p.lyrics.tags.map(\.key) == ["total", "ti", "al", "id"])
        #expect(p.lyrics.title == "Tira")
        #expect(p.lyrics.album == "")
        #expect(p.lyrics.totalMs == 5000)
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "Tira"), Span(2500, 4000, "Lori")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func lyricTextWithColonParenthesesAndAngleBrackets() throws {
        // A `:` must not make the row a tag; `<` that does not open `<n,n,n>` is text.
        let p = try read("[1000,2000]<0,500,0>QQ:<500,500,0>(la<1000,500,0>la) <1500,500,0>a<b\n[3500,1000]<0,1000,0>x<1,2>y\n")
        #expect(p.lyrics.lines[0].wordSpans == [
            Span(1000, 1500, "QQ:"), Span(1500, 2000, "(la"), Span(2000, 2500, "la) "), Span(2500, 3000, "a<b"),
        ])
        #expect(p.lyrics.lineSpans == [Span(1000, 3000, "QQ:(lala) a<b"), Span(3500, 4500, "x<1,2>y")])
        #expect(p.lyrics.tags.isEmpty)
        #expect(p.diagnostics.isEmpty)
    }

    @Test func nonZeroThirdFieldIsKeptAndWarned() throws {
        let p = try read("[ti:x]\n[1000,1000]<0,500,0>a<500,500,7>b\n")
        #expect(p.lyrics.lines[0].words.map(\.krcField) == [0, 7])
        #expect(p.diagnostics.findings == [Finding("krc-nonzero-field", .warning, line: 2)])
    }

    @Test func zeroDurationUnitsAndRows() throws {
        let p = try read("[846,0]<0,0,0>作\n[1000,1000]<0,500,0>a<500,0,0>,<500,500,0>b\n")
        #expect(p.lyrics.lineSpans == [Span(846, 846, "作"), Span(1000, 2000, "a,b")])
        #expect(LyricsValidator.validate(p).findings == [
            Finding("zero-duration", .warning, line: 1),  // the line
            Finding("zero-duration", .warning, line: 1),  // its unit
            Finding("zero-duration", .warning, line: 2),
        ])
    }

    @Test func rowWithoutUnitsIsAnEmptyLine() throws {
        let p = try read("[1000,500]\n[2000,500]<0,500,0>x\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 1500, ""), Span(2000, 2500, "x")])
        #expect(p.diagnostics.isEmpty)
        #expect(LyricsValidator.validate(p).findings == [Finding("empty-line", .warning, line: 1)])
    }

    @Test func textWithoutUnitsIsAnError() throws {
        let p = try read("[1000,500]<0,500,0>ok\n[2000,500]no units here\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 1500, "ok"), Span(2000, 2500, "no units here")])
        #expect(p.diagnostics.findings == [Finding("unparsable-line", .error, line: 2)])
        // Alone, such a row is no known format at all.
        guard case .unrecognizedFormat? = readError(Array("[1000,500]no units here\n".utf8)) else {
            Issue.record("expected unrecognizedFormat")
            return
        }
    }

    @Test func textBeforeTheFirstUnitIsAnError() throws {
        let p = try read("[1000,500]lead<0,500,0>x\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1500, "x")])
        #expect(p.diagnostics.findings == [Finding("unparsable-line", .error, line: 1)])
    }

    @Test func badRowHeadersAndJunk() throws {
        let p = try read("[ti:x]\n[1000,abc]<0,1,0>a\njunk\n[1000]<0,1,0>b\n[2000,500]<0,500,0>ok\n")
        #expect(p.lyrics.lineSpans == [Span(2000, 2500, "ok")])
        #expect(p.diagnostics.findings == [
            Finding("unparsable-line", .error, line: 2),
            Finding("unparsable-line", .error, line: 3),
            Finding("unparsable-line", .error, line: 4),
        ])
    }

    @Test func truncatedTagOnly() throws {
        // The real malformed Agora file: `[ar:` and a line break, nothing else.
        let p = try read("[ar:\r\n", fileName: "broken.krc")
        #expect(p.lyrics.format == .krcText)
        #expect(p.lyrics.lines.isEmpty)
        #expect(p.diagnostics.findings == [Finding("unterminated-tag", .error, line: 1)])
    }

    @Test func tagRows() {
        func parse(_ s: String) -> String {
            switch TagRow.parse(Array(s.utf8)[...]) {
            case let .tag(t): return "tag \(t.key)=\(t.value)"
            case let .unterminated(t): return "open \(t.key)=\(t.value)"
            case .notATag: return "none"
            }
        }
        #expect(parse("[ar:Lala]") == "tag ar=Lala")
        #expect(parse("[ ar : Lala ]  ") == "tag ar=Lala")
        #expect(parse("[by:]") == "tag by=")
        #expect(parse("[ti:Song [Live]]") == "tag ti=Song [Live]")
        #expect(parse("[x-trans:1]") == "tag x-trans=1")
        #expect(parse("[#:comment]") == "tag #=comment")
        #expect(parse("[ar:") == "open ar=")
        #expect(parse("[ti:Open Tag") == "open ti=Open Tag")
        #expect(parse("[ti:abc]junk") == "none")
        #expect(parse("[1000,500]") == "none")
        #expect(parse("[00:01.00]") == "none")
        #expect(parse("[:x]") == "none")
        #expect(parse("ti:x]") == "none")
    }

    @Test func rowsOutOfOrderAreSorted() throws {
        let p = try read("[ti:Order]\n[3000,1000]<0,1000,0>second\n[1000,1000]<0,1000,0>first\n[5000,1000]<0,1000,0>third\n")
        #expect(p.lyrics.lines.map(\.text) == ["first", "second", "third"])
        #expect(p.lyrics.lines.map(\.sourceLine) == [3, 2, 4])
        #expect(p.diagnostics.findings == [Finding("lines-out-of-order", .warning, line: 3)])
    }

    @Test func offsetTagIsApplied() throws {
        let p = try read("[offset:500]\n[1000,1000]<0,500,0>a<500,500,0>b\n")
        #expect(p.lyrics.appliedShiftMs == -500)
        #expect(p.lyrics.lines[0].wordSpans == [Span(500, 1000, "a"), Span(1000, 1500, "b")])
    }
}

@Suite struct KRCLanguageTests {
    static let payload = krcLanguage("""
        {"content":[{"language":0,"type":1,"lyricContent":[["Star light"],["The moon is fine"],["  "]]},\
        {"language":0,"type":0,"lyricContent":[["xing ","guang "],["yue ","liang ","hao "],[""]]}],"version":1}
        """)

    @Test func translationAndRomanization() throws {
        let p = try read("""
            [language:\(Self.payload)]
            [ti:Xing Guang]
            [1000,1000]<0,500,0>星<500,500,0>光
            [2500,1500]<0,500,0>月<500,500,0>亮<1000,500,0>好
            [4500,1000]<0,1000,0>啦
            """)
        #expect(p.diagnostics.isEmpty)
        #expect(p.lyrics.lines.map(\.translation) == ["Star light", "The moon is fine", nil])
        #expect(p.lyrics.lines.map { $0.words.map(\.romanization) } == [
            ["xing ", "guang "], ["yue ", "liang ", "hao "], [nil],
        ])
        // Once decoded, the base64 is not kept twice: it lives in the lines now.
        #expect(p.lyrics.tags == [LyricTag(key: "ti", value: "Xing Guang")])
    }

    @Test func rowsAreMatchedByFileOrderNotByTime() throws {
        let payload = krcLanguage(#"{"content":[{"language":0,"type":1,"lyricContent":[["written first"],["written second"]]}],"version":1}"#)
        let p = try read("[language:\(payload)]\n[3000,500]<0,500,0>b\n[1000,500]<0,500,0>a\n")
        #expect(p.lyrics.lines.map(\.text) == ["a", "b"])
        #expect(p.lyrics.lines.map(\.translation) == ["written second", "written first"])
    }

    @Test func placeholdersAreNoTranslation() throws {
        let payload = krcLanguage(#"{"content":[{"language":0,"type":1,"lyricContent":[[" "],["//"],["ok"]]}],"version":1}"#)
        let p = try read("[language:\(payload)]\n[1000,500]<0,500,0>a\n[2000,500]<0,500,0>b\n[3000,500]<0,500,0>c\n")
        #expect(p.lyrics.lines.map(\.translation) == [nil, nil, "ok"])
    }

    @Test func emptyContentAndEmptyTag() throws {
        let payload = krcLanguage(#"{"content":[],"version":1}"#)
        let a = try read("[language:\(payload)]\n[1000,500]<0,500,0>a\n")
        #expect(a.diagnostics.isEmpty)
        #expect(a.lyrics.lines[0].translation == nil)
        let b = try read("[language:]\n[1000,500]<0,500,0>a\n")
        #expect(b.diagnostics.isEmpty)
    }

    @Test func translationCountMismatch() throws {
        let payload = krcLanguage(#"{"content":[{"language":0,"type":1,"lyricContent":[["wind"]]},{"language":0,"type":0,"lyricContent":[["ka "],["mi "]]}],"version":1}"#)
        let p = try read("[language:\(payload)]\n[1000,1000]<0,500,0>ka<500,500,0>ze\n[2500,1000]<0,1000,0>mi\n")
        #expect(p.diagnostics.findings == [
            Finding("translation-count-mismatch", .warning, line: 1),
            Finding("romanization-count-mismatch", .warning, line: 2),
        ])
        #expect(p.lyrics.lines.map(\.translation) == ["wind", nil])
        #expect(p.lyrics.lines.map { $0.words.map(\.romanization) } == [["ka ", nil], ["mi "]])
    }

    @Test func romanizationRowCountMismatch() throws {
        let payload = krcLanguage(#"{"content":[{"language":0,"type":0,"lyricContent":[["a "]]}],"version":1}"#)
        let p = try read("[ti:x]\n[language:\(payload)]\n[1000,500]<0,500,0>a\n[2000,500]<0,500,0>b\n")
        #expect(p.diagnostics.findings == [Finding("romanization-count-mismatch", .warning, line: 2)])
    }

    @Test func invalidPayloads() throws {
        let notJSON = krcLanguage("not json")
        let a = try read("[ti:x]\n[language:\(notJSON)]\n[1000,500]<0,500,0>a\n")
        #expect(a.diagnostics.findings == [Finding("invalid-language-tag", .warning, line: 2)])
        let noList = krcLanguage(#"{"content":[{"language":0,"type":1}],"version":1}"#)
        let b = try read("[language:\(noList)]\n[1000,500]<0,500,0>a\n")
        #expect(b.diagnostics.findings == [Finding("invalid-language-tag", .warning, line: 1)])
        let unknown = krcLanguage(#"{"content":[{"language":0,"type":2,"lyricContent":[["?"]]}],"version":1}"#)
        let c = try read("[language:\(unknown)]\n[1000,500]<0,500,0>a\n")
        #expect(c.diagnostics.findings == [Finding("unknown-language-block", .info, line: 1)])
        // What was not understood stays in the tag ("kept in the tag only").
        #expect(a.lyrics.tag("language") == notJSON)
        #expect(b.lyrics.tag("language") == noList)
        #expect(c.lyrics.tag("language") == unknown)
    }

    @Test func unknownBlockNextToATranslationKeepsTheTag() throws {
        let payload = krcLanguage(#"{"content":[{"language":0,"type":1,"lyricContent":[["hi"]]},{"language":0,"type":5,"lyricContent":[["?"]]}],"version":1}"#)
        let p = try read("[language:\(payload)]\n[1000,500]<0,500,0>a\n")
        #expect(p.lyrics.lines[0].translation == "hi")
        #expect(p.lyrics.tag("language") == payload)
        #expect(p.diagnostics.findings == [Finding("unknown-language-block", .info, line: 1)])
    }
}
