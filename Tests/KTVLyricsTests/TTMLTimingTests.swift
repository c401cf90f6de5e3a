import Testing
import KTVCore
@testable import KTVLyrics

/// TTML's word times (issue 31 A): TTML counts a span's `begin` from its `<p>`'s; ktv wrote the
/// song's clock there, which W3C readers (ttconv) put a line's start too late. ktv now writes
/// relative times by default (absolute on request, for Apple Music and AMLL) and reads both.
@Suite struct TTMLTimingTests {
    static let model = Lyrics(format: .json, lines: [
        LyricLine(startMs: 12_000, durationMs: 2_000, text: "Hello world", words: [
            LyricWord(startMs: 12_000, durationMs: 500, text: "Hello "), LyricWord(startMs: 12_600, durationMs: 1_400, text: "world"),
        ]),
        LyricLine(startMs: 75_250, durationMs: 1_750, text: "again", words: [
            LyricWord(startMs: 75_300, durationMs: 700, text: "a"), LyricWord(startMs: 76_000, durationMs: 1_000, text: "gain"),
        ]),
    ])

    static func text(_ l: Lyrics, _ timing: TTMLTiming) throws -> String {
        String(decoding: try LyricsWriter.write(l, as: .ttml, options: LyricsWriteOptions(ttmlTiming: timing)).bytes, as: UTF8.self)
    }

    @Test func spansAreWrittenRelativeToTheirLineByDefault() throws {
        let out = String(decoding: try LyricsWriter.write(Self.model, as: .ttml).bytes, as: UTF8.self)
        #expect(out.contains("<p begin=\"00:00:12.000\" end=\"00:00:14.000\" itunes:key=\"L1\"><span begin=\"00:00:00.000\" end=\"00:00:00.500\">Hello </span><span begin=\"00:00:00.600\" end=\"00:00:02.000\">world</span></p>"), "\(out)")
        #expect(out.contains("<p begin=\"00:01:15.250\" end=\"00:01:17.000\" itunes:key=\"L2\"><span begin=\"00:00:00.050\" end=\"00:00:00.750\">a</span><span begin=\"00:00:00.750\" end=\"00:00:01.750\">gain</span></p>"), "\(out)")
    }

    @Test func absoluteSpansOnRequest() throws {
        let out = try Self.text(Self.model, .absolute)
        #expect(out.contains("<p begin=\"00:01:15.250\" end=\"00:01:17.000\" itunes:key=\"L2\"><span begin=\"00:01:15.300\" end=\"00:01:16.000\">a</span>"), "\(out)")
    }

    @Test(arguments: TTMLTiming.allCases)
    func bothDialectsReadBackExactly(timing: TTMLTiming) throws {
        let back = try read(try Self.text(Self.model, timing))
        #expect(back.lyrics.lineSpans == [Span(12_000, 14_000, "Hello world"), Span(75_250, 77_000, "again")])
        #expect(back.lyrics.lines[0].wordSpans == [Span(12_000, 12_500, "Hello "), Span(12_600, 14_000, "world")])
        #expect(back.lyrics.lines[1].wordSpans == [Span(75_300, 76_000, "a"), Span(76_000, 77_000, "gain")])
        #expect(!back.diagnostics.hasErrors)
    }

    /// An Apple Music file: song times in every element, the `<div>`s timed as song parts.
    @Test func appleStyleAbsoluteSpansReadExactly() throws {
        let apple = """
        <tt xmlns="http://www.w3.org/ns/ttml" xmlns:itunes="http://music.apple.com/lyric-ttml-internal" xmlns:ttm="http://www.w3.org/ns/ttml#metadata" itunes:timing="Word" xml:lang="en"><head><metadata><ttm:agent type="person" xml:id="v1"/></metadata></head><body dur="3:10.500"><div begin="17.480" end="1:02.100" itunes:songPart="Verse"><p begin="17.480" end="21.200" itunes:key="L1" ttm:agent="v1"><span begin="17.480" end="17.900">Some</span> <span begin="17.900" end="18.350">where</span> <span begin="18.350" end="21.200">far</span></p><p begin="58.010" end="1:02.100" itunes:key="L2" ttm:agent="v1"><span begin="58.010" end="59.000">a</span><span ttm:role="x-bg"><span begin="1:00.500" end="1:02.100">(ooh)</span></span></p></div></body></tt>
        """
        #expect(TTMLParser.dialect(of: try MiniXML.parse(Array(apple.utf8)).child("body")!) == .absolute)
        let p = try read(apple)
        #expect(p.lyrics.lineSpans == [Span(17_480, 21_200, "Some where far"), Span(58_010, 62_100, "a(ooh)")])
        #expect(p.lyrics.lines[0].wordSpans == [Span(17_480, 17_900, "Some "), Span(17_900, 18_350, "where "), Span(18_350, 21_200, "far")])
        #expect(p.lyrics.lines[1].wordSpans == [Span(58_010, 59_000, "a"), Span(60_500, 62_100, "(ooh)")])
        #expect(p.lyrics.lines[1].words.map(\.background) == [false, true])
    }

    /// W3C TTML as other tools write it: the `<div>`'s begin moves its paragraphs, a `<p>`'s its
    /// spans, a timed background span its words.
    @Test func standardRelativeTimesAddUpThroughTheTree() throws {
        let ttml = """
        <tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttm="http://www.w3.org/ns/ttml#metadata"><body><div begin="10s"><p begin="2s" end="5s"><span begin="0s" end="1s">one</span><span begin="1.5s" end="3s">two</span></p><p begin="6s" dur="4s"><span begin="0ms" end="500ms">three</span><span ttm:role="x-bg" begin="1s"><span begin="0.25s" end="2s">(four)</span></span></p></div></body></tt>
        """
        let p = try read(ttml)
        #expect(p.lyrics.lineSpans == [Span(12_000, 15_000, "onetwo"), Span(16_000, 20_000, "three(four)")])
        #expect(p.lyrics.lines[0].wordSpans == [Span(12_000, 13_000, "one"), Span(13_500, 15_000, "two")])
        #expect(p.lyrics.lines[1].wordSpans == [Span(16_000, 16_500, "three"), Span(17_250, 19_000, "(four)")])
    }

    /// A word before its line: the relative `<p>` begins at the word (a negative offset is not
    /// TTML), with a note; the word keeps its time.
    @Test func aWordBeforeItsLineMovesTheParagraphStart() throws {
        let early = Lyrics(format: .json, lines: [LyricLine(startMs: 5_000, durationMs: 1_000, text: "ab", words: [
            LyricWord(startMs: 4_900, durationMs: 300, text: "a"), LyricWord(startMs: 5_200, durationMs: 800, text: "b"),
        ])])
        let written = try LyricsWriter.write(early, as: .ttml)
        #expect(written.notes.map(\.rule) == ["line-start-moved"])
        let back = try read(String(decoding: written.bytes, as: UTF8.self)).lyrics
        #expect(back.lineSpans == [Span(4_900, 6_000, "ab")])
        #expect(back.lines[0].wordSpans == [Span(4_900, 5_200, "a"), Span(5_200, 6_000, "b")])
    }

    /// The property test's random models (which write relative TTML) through absolute TTML too:
    /// the values tell the dialect, and each reads back as written.
    @Test func randomModelsRoundTripInAbsoluteTTML() throws {
        var rng = SeededGenerator(seed: 0x7474_6D6C)
        let c = RoundTripPropertyTests.Constraints(words: true, overlaps: false, translation: true, spaces: true, krcField: false, subtitle: true, duet: true)
        for iteration in 0..<300 {
            let m = RoundTripPropertyTests.model(&rng, c)
            let back = try LyricsReader.read(try LyricsWriter.write(m, as: .ttml, options: LyricsWriteOptions(ttmlTiming: .absolute)).bytes).lyrics
            let same = RoundTripPropertyTests.shape(back) == RoundTripPropertyTests.shape(m)
            #expect(same, "iteration \(iteration)")
            if !same { return }
        }
    }
}
