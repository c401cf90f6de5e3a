import Testing
@testable import KTVLyrics
import KTVCore

/// Word-timed LRC: A2 `<mm:ss.xx>` stamps and the inline `[mm:ss.xx]word` style (FORMATS.md §2.4-2.5).
@Suite struct EnhancedLRCTests {
    @Test func wordEndsAtTheNextStampAndTheClosingStamp() throws {
        let p = try read("[00:01.00]<00:01.00>Hel<00:01.40>lo <00:01.80>there<00:02.50>\n[00:05.00]next\n[00:06.00]\n")
        #expect(p.lyrics.format == .enhancedLRC)
        let line = p.lyrics.lines[0]
        #expect(line.wordSpans == [Span(1000, 1400, "Hel"), Span(1400, 1800, "lo "), Span(1800, 2500, "there")])
        // The closing stamp ends the line, not the next line's start.
        #expect(p.lyrics.lineSpans == [Span(1000, 2500, "Hello there"), Span(5000, 6000, "next")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func missingClosingStampEndsTheLastWordAtTheNextLine() throws {
        let p = try read("[00:01.000]<00:01.000>Tik<00:01.300> tok\n[00:02.000]<00:02.000>Bim<00:02.400> bam\n[00:03.500]\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1300, "Tik"), Span(1300, 2000, " tok")])
        #expect(p.lyrics.lines[1].wordSpans == [Span(2000, 2400, "Bim"), Span(2400, 3500, " bam")])
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "Tik tok"), Span(2000, 3500, "Bim bam")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func missingClosingStampOnTheLastLineLeavesItOpen() throws {
        let p = try read("[00:01.00]<00:01.00>a<00:01.50>b\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1500, "a"), Span(1500, 1500, "b")])
        #expect(p.lyrics.lineSpans == [Span(1000, 1500, "ab")])
        #expect(p.diagnostics.findings == [Finding("unknown-end", .info, line: 1)])
        // The open last word is not reported as zero-duration on top.
        #expect(LyricsValidator.validate(p).findings == [Finding("unknown-end", .info, line: 1)])
    }

    @Test func a2CanonicalSpacing() throws {
        // `[t] <t> word <t> word <t>`: the space after the line stamp is not a word; words keep their spaces.
        let p = try read("[00:03.00] <00:03.00> sha <00:03.25> la <00:03.60>\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(3000, 3250, " sha "), Span(3250, 3600, " la ")])
        #expect(p.lyrics.lineSpans == [Span(3000, 3600, " sha  la ")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func firstWordMayStartAfterTheLineStamp() throws {
        let p = try read("[00:01.00]<00:01.20>a<00:01.50>b<00:02.00>\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "ab")])
        #expect(p.lyrics.lines[0].wordSpans == [Span(1200, 1500, "a"), Span(1500, 2000, "b")])
    }

    @Test func emptyRowAfterAWordLineEndsIt() throws {
        let p = try read("[00:01.00]<00:01.00>a<00:01.50>b\n[00:02.20]\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1500, "a"), Span(1500, 2200, "b")])
        #expect(p.lyrics.lineSpans == [Span(1000, 2200, "ab")])
    }

    @Test func severalLineStampsShiftTheWords() throws {
        let p = try read("[00:01.00][00:11.00]<00:01.00>a<00:01.50>b<00:02.00>\n")
        #expect(p.lyrics.lines.map(\.wordSpans) == [
            [Span(1000, 1500, "a"), Span(1500, 2000, "b")],
            [Span(11_000, 11_500, "a"), Span(11_500, 12_000, "b")],
        ])
    }

    @Test func threeDigitWordStamps() throws {
        let p = try read("[00:06.582]<00:06.582>I<00:06.9> see<00:07.05>\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(6582, 6900, "I"), Span(6900, 7050, " see")])
    }

    @Test func inlineBracketWordsWithClosingStamp() throws {
        let p = try read("[00:51.00]ka[01:29.99]ra[01:48.29]o[02:31.00]ke[02:41.99]\n")
        #expect(p.lyrics.format == .enhancedLRC)
        #expect(p.lyrics.lines[0].wordSpans == [
            Span(51_000, 89_990, "ka"), Span(89_990, 108_290, "ra"),
            Span(108_290, 151_000, "o"), Span(151_000, 161_990, "ke"),
        ])
        #expect(p.lyrics.lineSpans == [Span(51_000, 161_990, "karaoke")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func inlineBracketWordsWithoutClosingStamp() throws {
        let p = try read("[00:08.00]走[00:08.20]啊[00:08.60]走\n[00:09.50]\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(8000, 8200, "走"), Span(8200, 8600, "啊"), Span(8600, 9500, "走")])
        #expect(p.lyrics.lineSpans == [Span(8000, 9500, "走啊走")])
    }

    @Test func inlineBracketWordsWithSpaces() throws {
        // lrc-kit's "foobar2000" style: spaces around the words belong to the words.
        let p = try read("[00:05.000] hello [00:06.000] world\n[00:07.000]\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(5000, 6000, " hello "), Span(6000, 7000, " world")])
    }

    @Test func singleTrailingStampIsTheLineEndOfAPlainLine() throws {
        // `[00:01.10]Hello World[00:06.13]` looks like one inline word; it is a plain line with an end.
        let p = try read("[00:01.10]Hello World[00:06.13]\n[00:07.00]Bye[00:08.00]\n")
        #expect(p.lyrics.format == .lrc)
        #expect(p.lyrics.lineSpans == [Span(1100, 6130, "Hello World"), Span(7000, 8000, "Bye")])
        #expect(p.lyrics.lines.allSatisfy { $0.words.isEmpty })
        #expect(p.diagnostics.isEmpty)
    }

    @Test func plainLineWithATrailingStampAndSpaces() throws {
        let p = try read("[00:01.10]Hello World [00:06.13]  \n")
        #expect(p.lyrics.lineSpans == [Span(1100, 6130, "Hello World")])
        #expect(p.lyrics.lines[0].words.isEmpty)
    }

    @Test func wordStampGoingBackwardsMakesANegativeWord() throws {
        let p = try read("[ti:Backwards]\n[00:02.00]<00:02.00>up<00:01.50>down<00:03.00>\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(2000, 1500, "up"), Span(1500, 3000, "down")])
        #expect(LyricsValidator.validate(p).findings == [
            Finding("negative-duration", .error, line: 2),
            Finding("word-outside-line", .warning, line: 2),
        ])
    }

    @Test func closingStampBeforeTheLineStartMakesANegativeLine() throws {
        let p = try read("[00:05.00]Hello[00:04.00]\n")
        #expect(p.lyrics.lineSpans == [Span(5000, 4000, "Hello")])
        #expect(LyricsValidator.validate(p).findings == [Finding("negative-duration", .error, line: 1)])
    }
}
