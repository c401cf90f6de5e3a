import Testing
@testable import KTVLyrics
import KTVCore

/// Simple LRC: stamps, fractions, tags, `[offset:]`, multi-stamp rows, end markers (FORMATS.md §2.1-2.3).
@Suite struct LRCStampTests {
    /// The fraction is a decimal fraction of a second, rounded half up past the third digit (§2.2).
    @Test(arguments: [
        ("5", 500), ("05", 50), ("050", 50), ("123", 123), ("1234", 123), ("1235", 124),
        ("1", 100), ("99", 990), ("999", 999), ("0005", 1), ("0004", 0),
    ])
    func fractionRounding(fraction: String, ms: Int) throws {
        let p = try read("[00:07.\(fraction)]x\n[00:20.00]\n")
        #expect(p.lyrics.lines.map(\.startMs) == [7000 + ms])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func fractionThatRoundsUpToAWholeSecondCarries() throws {
        // .9995 s rounds to 1000 ms: the stamp is exactly one second later, not 999 or 1999.
        let p = try read("[00:07.9995]x\n[00:20.00]\n")
        #expect(p.lyrics.lines.map(\.startMs) == [8000])
    }

    @Test func fractionHelperDirectly() {
        func ms(_ s: String) -> Int? { LRCParser.fraction(Array(s.utf8)[...], 0)?.ms }
        #expect(ms("5") == 500)
        #expect(ms("05") == 50)
        #expect(ms("050") == 50)
        #expect(ms("123") == 123)
        #expect(ms("1234") == 123)
        #expect(ms("1235") == 124)
        #expect(ms("") == nil)
        #expect(ms("1234567890") == nil)  // more than 9 digits is not a time
    }

    @Test func stampWithoutFraction() throws {
        let p = try read("[00:01]one\n[03:07]two\n[03:08]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 187_000, "one"), Span(187_000, 188_000, "two")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func minutesOfSixtyAndMore() throws {
        let p = try read("[59:59.99]a\n[61:02.30]b\n[100:00.00]c\n[100:01.00]\n")
        #expect(p.lyrics.lineSpans == [
            Span(3_599_990, 3_662_300, "a"),
            Span(3_662_300, 6_000_000, "b"),
            Span(6_000_000, 6_001_000, "c"),
        ])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func singleDigitSecondsFromBrokenConverters() throws {
        // `[00:0.11]` is real converter output (FORMATS.md §2.1); it means 110 ms.
        let p = try read("[00:0.11]x\n[00:01.00]\n")
        #expect(p.lyrics.lines.map(\.startMs) == [110])
    }

    @Test func threeFieldStampIsMinutesSecondsCentisecondsWithWarning() throws {
        let p = try read("[ti:t]\n[00:12:34]mm ss cc\n[00:13.00]\n")
        #expect(p.lyrics.lineSpans == [Span(12_340, 13_000, "mm ss cc")])
        #expect(p.diagnostics.findings == [Finding("ambiguous-timestamp", .warning, line: 2)])
    }

    @Test func threeFieldStampLikeAMLL() throws {
        // AMLL's unit test: [168:10:254] = 10 090 254 ms (FORMATS.md §2.1).
        let p = try read("[168:10:254]x\n[168:11.00]\n")
        #expect(p.lyrics.lines.map(\.startMs) == [10_090_254])
        #expect(p.diagnostics.findings == [Finding("ambiguous-timestamp", .warning, line: 1)])
    }

    @Test func hoursMinutesSecondsFraction() throws {
        let p = try read("[01:02:03.45]hh mm ss\n[01:02:04.5]\n")
        #expect(p.lyrics.lineSpans == [Span(3_723_450, 3_724_500, "hh mm ss")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func secondsOverFiftyNineAreReadButWarned() throws {
        let p = try read("[00:75.00]x\n[01:20.00]\n")
        #expect(p.lyrics.lines.map(\.startMs) == [75_000])
        #expect(p.diagnostics.findings == [Finding("invalid-timestamp", .warning, line: 1)])
    }

    @Test func negativeStampIsDroppedWithWarning() throws {
        let p = try read("[-00:02.50]gone\n[-00:01.00][00:03.00]kept\n[00:04.00]\n")
        #expect(p.lyrics.lineSpans == [Span(3000, 4000, "kept")])
        #expect(p.diagnostics.findings == [
            Finding("negative-timestamp", .warning, line: 1),
            Finding("negative-timestamp", .warning, line: 2),
        ])
    }

    @Test func stampFollowedByJunkIsUnparsable() throws {
        let p = try read("[00:01.00]la\n[00:02.00.50]li\n[00:03.00]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 3000, "la")])
        #expect(p.diagnostics.findings == [Finding("unparsable-line", .error, line: 2)])
    }

    @Test func rowNotStartingWithBracketIsUnparsable() throws {
        let p = try read("[00:01.00]la\nloose words\n[00:02.00]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "la")])
        #expect(p.diagnostics.findings == [Finding("unparsable-line", .error, line: 2)])
    }
}

@Suite struct LRCRowTests {
    @Test func severalStampsExpandToOneLineEachAndAreSorted() throws {
        let p = try read("""
            [00:10.00][00:30.00]Chorus
            [00:20.00]Verse
            [00:40.00]
            """)
        #expect(p.lyrics.lineSpans == [
            Span(10_000, 20_000, "Chorus"), Span(20_000, 30_000, "Verse"), Span(30_000, 40_000, "Chorus"),
        ])
        #expect(p.lyrics.lines.map(\.sourceLine) == [1, 2, 1])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func stampsOfOneRowInAnyOrder() throws {
        // The row's stamps are 30 s and 10 s; the next row (20 s) is after one of them, so it is
        // not out of order.
        let p = try read("[00:30.00][00:10.00]Chorus\n[00:20.00]Verse\n[00:40.00]\n")
        #expect(p.lyrics.lineSpans == [
            Span(10_000, 20_000, "Chorus"), Span(20_000, 30_000, "Verse"), Span(30_000, 40_000, "Chorus"),
        ])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func spacesBetweenLeadingStamps() throws {
        let p = try read("[00:01.00] [00:02.00]  both\n[00:03.00]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "both"), Span(2000, 3000, "both")])
    }

    @Test func rowsOutOfOrderAreSortedAndWarnedOnce() throws {
        let p = try read("[00:05.00]b\n[00:03.00]a\n[00:01.00]z\n[00:07.00]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 3000, "z"), Span(3000, 5000, "a"), Span(5000, 7000, "b")])
        #expect(p.diagnostics.findings == [Finding("lines-out-of-order", .warning, line: 2)])
    }

    @Test func emptyStampedRowEndsThePreviousLine() throws {
        let p = try read("[00:01.00]la\n[00:02.50]\n[00:04.00]li\n[00:05.00]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2500, "la"), Span(4000, 5000, "li")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func emptyStampedRowWithNothingToEndIsWarned() throws {
        let p = try read("[00:00.50]\n[00:01.00]la\n[00:02.00]\n[00:03.00]\n[00:04.00]li\n[00:05.00]\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "la"), Span(4000, 5000, "li")])
        #expect(p.diagnostics.findings == [
            Finding("empty-line", .warning, line: 1),
            Finding("empty-line", .warning, line: 4),
        ])
    }

    @Test func lastLineWithoutEndIsOpen() throws {
        let p = try read("[00:01.00]first\n[00:02.00]last\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "first"), Span(2000, 2000, "last")])
        #expect(p.diagnostics.findings == [Finding("unknown-end", .info, line: 2)])
        // An open end is not also a zero-duration line.
        #expect(LyricsValidator.validate(p).findings == [Finding("unknown-end", .info, line: 2)])
    }

    @Test func lastLineEndsAtTotal() throws {
        let p = try read("[total:5000]\n[00:01.00]first\n[00:02.00]last\n")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "first"), Span(2000, 5000, "last")])
        #expect(p.lyrics.totalMs == 5000)
        #expect(p.diagnostics.isEmpty)
    }

    @Test func textKeepsBracketsThatAreNotStamps() throws {
        let p = try read("[00:01.00][Chorus] la\n[00:02.00]   spaced out  \n[00:03.00]\n")
        #expect(p.lyrics.lines.map(\.text) == ["[Chorus] la", "spaced out"])
    }

    @Test func crlfAndBOM() throws {
        let p = try read(bytes: [0xEF, 0xBB, 0xBF] + Array("[ti:T]\r\n[00:01.00]a\r\n\r\n[00:02.00]b\r\n[00:03.00]\r\n".utf8))
        #expect(p.encoding == .utf8BOM)
        #expect(p.lyrics.title == "T")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "a"), Span(2000, 3000, "b")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [2, 4])
    }

    @Test func loneCRAndDoubledLineBreaks() throws {
        // Old Mac files end lines with CR alone; a broken converter writes `\r\n\n` (FORMATS.md §1.7).
        let cr = try read("[00:01.00]a\r[00:02.00]b\r[00:03.00]\r")
        #expect(cr.lyrics.lineSpans == [Span(1000, 2000, "a"), Span(2000, 3000, "b")])
        #expect(cr.lyrics.lines.map(\.sourceLine) == [1, 2])
        let doubled = try read("[00:01.00]a\r\n\n[00:02.00]b\r\n\n[00:03.00]\r\n\n")
        #expect(doubled.lyrics.lineSpans == [Span(1000, 2000, "a"), Span(2000, 3000, "b")])
        #expect(doubled.lyrics.lines.map(\.sourceLine) == [1, 3])
        #expect(doubled.diagnostics.isEmpty)
    }

    @Test func tagsAreKeptInOrderAndLookedUpCaseInsensitively() throws {
        let p = try read("[AR:Someone]\n[ ti : Spaced ]\n[al:]\n[ti:Song [Live]]\n[00:01.00]x\n[00:02.00]\n")
        #expect(p.lyrics.tags == [
            LyricTag(key: "AR", value: "Someone"), LyricTag(key: "ti", value: "Spaced"),
            LyricTag(key: "al", value: ""), LyricTag(key: "ti", value: "Song [Live]"),
        ])
        #expect(p.lyrics.artist == "Someone")
        #expect(p.lyrics.title == "Song [Live]")  // the last one wins
        #expect(p.lyrics.album == "")
        #expect(p.lyrics.tag("ar") == "Someone")
        #expect(p.lyrics.tag("Ar") == "Someone")
        #expect(p.lyrics.tag("TI") == "Song [Live]")
        #expect(p.lyrics.tag("by") == nil)
        #expect(p.diagnostics.isEmpty)
    }

    @Test func textAfterATagIsUnparsableNotUnterminated() throws {
        let p = try read("[ti:abc]junk\n[total:5000] x\n[00:01.00]a\n[00:02.00]\n")
        #expect(p.lyrics.tags.isEmpty)
        #expect(p.lyrics.totalMs == nil)
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "a")])
        #expect(p.diagnostics.findings == [
            Finding("unparsable-line", .error, line: 1), Finding("unparsable-line", .error, line: 2),
        ])
    }

    @Test func unterminatedTag() throws {
        let p = try read("[ti:Open Tag\n[00:01.00]la\n[00:02.00]\n")
        #expect(p.lyrics.title == "Open Tag")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "la")])
        #expect(p.diagnostics.findings == [Finding("unterminated-tag", .error, line: 1)])
    }
}

@Suite struct LRCOffsetTests {
    static let text = "[ti:Offset]\n[offset:+500]\n[00:01.00]early\n[00:03.00]later\n[00:05.00]\n"

    @Test func positiveOffsetIsSubtractedByDefault() throws {
        let p = try read(Self.text)
        #expect(p.lyrics.lineSpans == [Span(500, 2500, "early"), Span(2500, 4500, "later")])
        #expect(p.lyrics.offsetMs == 500)
        #expect(p.lyrics.appliedShiftMs == -500)
        #expect(p.diagnostics.isEmpty)
    }

    @Test func offsetCanBeAdded() throws {
        let p = try read(Self.text, options: LyricsParseOptions(offsetSign: .add))
        #expect(p.lyrics.lineSpans == [Span(1500, 3500, "early"), Span(3500, 5500, "later")])
        #expect(p.lyrics.offsetMs == 500)
        #expect(p.lyrics.appliedShiftMs == 500)
    }

    @Test func negativeOffsetWithSpaces() throws {
        let p = try read("[offset: -250 ]\n[00:01.00]a\n[00:02.00]\n")
        #expect(p.lyrics.offsetMs == -250)
        #expect(p.lyrics.appliedShiftMs == 250)
        #expect(p.lyrics.lineSpans == [Span(1250, 2250, "a")])
    }

    @Test func zeroOrMissingOffsetShiftsNothing() throws {
        let zero = try read("[offset:0]\n[00:01.00]a\n[00:02.00]\n")
        #expect(zero.lyrics.offsetMs == 0)
        #expect(zero.lyrics.appliedShiftMs == 0)
        let none = try read("[00:01.00]a\n[00:02.00]\n")
        #expect(none.lyrics.offsetMs == nil)
        #expect(none.lyrics.appliedShiftMs == 0)
    }

    @Test func offsetAppliesToWordStamps() throws {
        let p = try read("[offset:1000]\n[00:03.00]<00:03.00>a<00:03.50>b<00:04.00>\n")
        #expect(p.lyrics.lines[0].wordSpans == [Span(2000, 2500, "a"), Span(2500, 3000, "b")])
        #expect(p.lyrics.lineSpans == [Span(2000, 3000, "ab")])
    }

    @Test func invalidOffsetIsIgnoredWithWarning() throws {
        let p = try read("[ti:x]\n[offset:abc]\n[00:01.00]a\n[00:02.00]\n")
        #expect(p.lyrics.offsetMs == nil)
        #expect(p.lyrics.appliedShiftMs == 0)
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "a")])
        #expect(p.diagnostics.findings == [Finding("invalid-offset", .warning, line: 2)])
    }

    @Test func offsetBeforeZeroIsClippedWithWarning() throws {
        let p = try read("[offset:+1500]\n[00:01.00]a\n[00:03.00]b\n[00:04.00]\n")
        #expect(p.lyrics.lineSpans == [Span(0, 1500, "a"), Span(1500, 2500, "b")])
        #expect(p.diagnostics.findings == [Finding("negative-time", .warning, line: 2)])
    }

    @Test func lineEndedByTotalStillEndsThereAfterTheOffset() throws {
        // `[total:]` is the song's length, not a stamp: the offset moves the stamps, not the song's end.
        let later = try read("[total:5000]\n[offset:-500]\n[00:01.00]a\n[00:04.00]last\n")
        #expect(later.lyrics.lineSpans == [Span(1500, 4500, "a"), Span(4500, 5000, "last")])
        #expect(LyricsValidator.validate(later).isEmpty)
        let sooner = try read("[total:5000]\n[offset:500]\n[00:01.00]a\n[00:04.00]last\n")
        #expect(sooner.lyrics.lineSpans == [Span(500, 3500, "a"), Span(3500, 5000, "last")])
    }

    @Test func parseOffsetGrammar() {
        #expect(LyricTags.parseOffset("+500") == 500)
        #expect(LyricTags.parseOffset("-500") == -500)
        #expect(LyricTags.parseOffset(" 42 ") == 42)
        #expect(LyricTags.parseOffset("") == nil)
        #expect(LyricTags.parseOffset("+") == nil)
        #expect(LyricTags.parseOffset("1.5") == nil)
        #expect(LyricTags.parseOffset("abc") == nil)
    }
}
