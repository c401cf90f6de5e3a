import Testing
@testable import KTVLyrics
import KTVCore

/// NetEase YRC (FORMATS.md §3.1).
@Suite struct YRCTests {
    @Test func wordTimesAreAbsolute() throws {
        let p = try read("[1000,1500](1000,500,0)Bee(1500,1000,0) bop\n[3000,1000](3000,500,0)Doo(3500,500,0)dah\n")
        #expect(p.lyrics.format == .yrc)
        #expect(p.lyrics.lineSpans == [Span(1000, 2500, "Bee bop"), Span(3000, 4000, "Doodah")])
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1500, "Bee"), Span(1500, 2500, " bop")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func creditRowsLastUntilTheNextRow() throws {
        let p = try read("""
            {"t":0,"c":[{"tx":"作词: "},{"tx":"Nobody"}]}
            {"t":500,"c":[{"tx":"作曲: "},{"tx":"Somebody","li":"http://example.invalid/x.png"}]}
            [1000,1500](1000,500,0)Bee(1500,1000,0) bop
            """)
        #expect(p.lyrics.lineSpans == [
            Span(0, 500, "作词: Nobody"), Span(500, 1000, "作曲: Somebody"), Span(1000, 2500, "Bee bop"),
        ])
        #expect(p.lyrics.lines.map(\.sourceLine) == [1, 2, 3])
        #expect(p.lyrics.lines[0].words.isEmpty)
        #expect(p.diagnostics.isEmpty)
    }

    @Test func trailingCreditRowsHaveNoEnd() throws {
        // NetEase repeats the credits after the lyrics; the last one has nothing after it.
        let p = try read("[1000,1800](1000,1800,0)la\n{\"t\":2500,\"c\":[{\"tx\":\"作词: A\"}]}\n{\"t\":3500,\"c\":[{\"tx\":\"作曲: B\"}]}\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2800, "la"), Span(2500, 3500, "作词: A"), Span(3500, 3500, "作曲: B")])
        #expect(p.diagnostics.findings == [Finding("unknown-end", .info, line: 3)])
        // Not also a zero-duration line; the 300 ms overlap of the last lyric with the credits is info.
        #expect(LyricsValidator.validate(p).findings == [
            Finding("overlapping-lines", .info, line: 1), Finding("unknown-end", .info, line: 3),
        ])
    }

    @Test func zeroDurationPunctuation() throws {
        let p = try read("[1740,1000](1740,0,0),(1740,570,0)I've\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1740, 1740, ","), Span(1740, 2310, "I've")])
        #expect(LyricsValidator.validate(p).findings == [Finding("zero-duration", .warning, line: 1)])
    }

    @Test func nonZeroFlagIsWarned() throws {
        let p = try read("[1000,500](1000,500,3)x\n")
        #expect(p.lyrics.lines[0].words[0].krcField == 3)
        #expect(p.diagnostics.findings == [Finding("yrc-nonzero-field", .warning, line: 1)])
    }

    @Test func relativeLookingWordTimesAreWarnedOnce() throws {
        let p = try read("[5000,1000](0,500,0)a(500,500,0)b\n[7000,1000](0,1000,0)c\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(0, 500, "a"), Span(500, 1000, "b")])
        #expect(p.diagnostics.findings == [Finding("word-times-relative", .warning, line: 1)])
    }

    @Test func brokenRows() throws {
        let p = try read("{\"t\":0,\"c\":[{\"tx\":\"ok\"}]}\n{not json}\n{\"c\":[]}\n[1000,x](1000,1,0)a\nplain\n[ti:open\n[2000,500]lead(2000,500,0)w\n")
        #expect(p.lyrics.lineSpans == [Span(0, 2000, "ok"), Span(2000, 2500, "w")])
        #expect(p.diagnostics.findings == [
            Finding("unparsable-line", .error, line: 2),
            Finding("unparsable-line", .error, line: 3),
            Finding("unparsable-line", .error, line: 4),
            Finding("unparsable-line", .error, line: 5),
            Finding("unterminated-tag", .error, line: 6),
            Finding("unparsable-line", .error, line: 7),
        ])
    }

    @Test func tagsAndOffset() throws {
        let p = try read("[ti:Y]\n[offset:-100]\n[1000,500](1000,500,0)x\n", fileName: "a.yrc")
        #expect(p.lyrics.title == "Y")
        #expect(p.lyrics.appliedShiftMs == 100)
        #expect(p.lyrics.lines[0].wordSpans == [Span(1100, 1600, "x")])
    }
}

/// QQ Music QRC body and XML wrapper (FORMATS.md §3.2).
@Suite struct QRCTests {
    @Test func textBeforeTimingAndParenthesesInText() throws {
        let p = try read("[2740,1644]((2740,274)共(3014,274)同(3288,548)歌(3836,274))(4110,274)\n")
        #expect(p.lyrics.format == .qrc)
        #expect(p.lyrics.lines[0].wordSpans == [
            Span(2740, 3014, "("), Span(3014, 3288, "共"), Span(3288, 3836, "同"),
            Span(3836, 4110, "歌"), Span(4110, 4384, ")"),
        ])
        #expect(p.lyrics.lineSpans == [Span(2740, 4384, "(共同歌)")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func parenthesesRightBeforeTheTiming() throws {
        let p = try read("[1062,42] ((1062,21)NanosizeMir)(1083,21)\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1062, 1083, " ("), Span(1083, 1104, "NanosizeMir)")])
    }

    @Test func emptyTextRow() throws {
        let p = try read("[ti:r]\n[0,410](390,21)\n[500,100]a(500,100)\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(390, 411, "")])
        #expect(LyricsValidator.validate(p).findings == [Finding("empty-line", .warning, line: 2)])
    }

    @Test func textAfterTheLastTimingIsAnError() throws {
        let p = try read("[1000,500]a(1000,500)tail\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1500, "a")])
        #expect(p.diagnostics.findings == [Finding("unparsable-line", .error, line: 1)])
    }

    @Test func xmlWrapperKeepsLineBreaksAndLineNumbers() throws {
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <QrcInfos>
            <QrcHeadInfo SaveTime="12" Version="100"/>
            <LyricInfo LyricCount="1">
            <Lyric_1 LyricType="1" LyricContent="[ti:Wrapped]
            [1000,800]Pa(1000,400)pa(1400,400)
            [2000,500]&quot;Hi&quot;(2000,500)
            [1500,100]late(1500,100)
            "/>
            </LyricInfo>
            </QrcInfos>
            """
        let p = try read(xml)
        #expect(p.lyrics.format == .qrcXML)
        #expect(p.lyrics.title == "Wrapped")
        #expect(p.lyrics.lineSpans == [Span(1000, 1800, "Papa"), Span(1500, 1600, "late"), Span(2000, 2500, "\"Hi\"")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [6, 8, 7])
        #expect(p.diagnostics.findings == [Finding("lines-out-of-order", .warning, line: 8)])
    }

    @Test func xmlWrapperWithRawAmpersandAndQuoteInTheLyric() throws {
        // Real QRC documents carry unescaped `&` and `"` inside LyricContent (FORMATS.md §3.2).
        let xml = "<QrcInfos>\n<Lyric_1 LyricType=\"1\" LyricContent=\"[1000,900]Rock (1000,300)& (1300,300)\"Roll\"(1600,300)\n[2000,300]&amp;(2000,300)\n\"/>\n</QrcInfos>\n"
        let p = try read(xml)
        #expect(p.lyrics.lineSpans == [Span(1000, 1900, "Rock & \"Roll\""), Span(2000, 2300, "&")])
        #expect(p.lyrics.lines[0].wordSpans.map(\.text) == ["Rock ", "& ", "\"Roll\""])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func unescapeStrictAndLenient() throws {
        func run(_ s: String, lenient: Bool) throws(XMLError) -> String {
            try MiniXML.unescape(Array(s.utf8)[...], line: 3, lenient: lenient)
        }
        #expect(try run("a &amp; b &lt;&gt;&quot;&apos;&#x41;&#66;", lenient: false) == "a & b <>\"'AB")
        #expect(try run("R & B &nbsp; &#xZZ; &", lenient: true) == "R & B &nbsp; &#xZZ; &")
        do {
            _ = try run("R & B", lenient: false)
            Issue.record("a bare & must be an error in strict XML")
        } catch {
            #expect(error.line == 3)
        }
    }

    @Test func xmlWrapperWithLRCTranslation() throws {
        let xml = "<QrcInfos>\n<LyricInfo LyricCount=\"1\">\n<Lyric_1 LyricType=\"1\" LyricContent=\"[ti:ts]\n[00:01.00]//\n[00:02.00]hello\n[00:03.00]\n\"/>\n</LyricInfo>\n</QrcInfos>\n"
        let p = try read(xml)
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "//"), Span(2000, 3000, "hello")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [4, 5])
    }

    @Test func xmlWrapperErrors() {
        guard case let .malformed(line, _)? = readError(Array("<QrcInfos><Lyric_1 LyricType=\"1\"/></QrcInfos>".utf8)) else {
            Issue.record("expected malformed")
            return
        }
        #expect(line == nil)
        guard case let .malformed(line2, _)? = readError(Array("<QrcInfos>\n<Lyric_1 LyricContent=\"[1,1]a(1,1)\n".utf8)) else {
            Issue.record("expected malformed")
            return
        }
        #expect(line2 == 2)
    }
}
