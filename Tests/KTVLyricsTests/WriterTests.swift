import Testing
@testable import KTVLyrics
import KTVCore

@Suite struct WriterTests {
    static func text(_ w: WrittenLyrics) -> String { String(decoding: w.bytes, as: UTF8.self) }

    @Test(arguments: [
        (59_995, "01:00.00"), (59_994, "00:59.99"), (1005, "00:01.01"), (1004, "00:01.00"), (1050, "00:01.05"),
        (3_599_995, "60:00.00"), (0, "00:00.00"), (-20, "00:00.00"), (6_000_000, "100:00.00"),
    ])
    func centisecondStampsRoundWithCarry(ms: Int, stamp: String) {
        #expect(LyricsWriter.stamp(ms, digits: 2) == stamp)
    }

    @Test(arguments: [(59_995, "00:59.995"), (1050, "00:01.050"), (3_662_300, "61:02.300")])
    func millisecondStampsAreExact(ms: Int, stamp: String) {
        #expect(LyricsWriter.stamp(ms, digits: 3) == stamp)
    }

    @Test func lrcWithCentiseconds() throws {
        let lyrics = Lyrics(format: .json, tags: [LyricTag(key: "ti", value: "T"), LyricTag(key: "offset", value: "100")], lines: [
            LyricLine(startMs: 59_995, durationMs: 1_000, text: "carry"),
            LyricLine(startMs: 62_000, durationMs: 500, text: "gap"),
        ])
        let w = try LyricsWriter.write(lyrics, as: .lrc, options: LyricsWriteOptions(lrcFractionDigits: 2))
        #expect(Self.text(w) == "[ti:T]\n[01:00.00]carry\n[01:01.00]\n[01:02.00]gap\n[01:02.50]\n")
        #expect(w.notes.isEmpty)
    }

    @Test func lrcDefaultsToMilliseconds() throws {
        let lyrics = Lyrics(format: .json, lines: [
            LyricLine(startMs: 1000, durationMs: 1000, text: "a"), LyricLine(startMs: 2000, durationMs: 1234, text: "b"),
        ])
        #expect(Self.text(try LyricsWriter.write(lyrics, as: .lrc)) == "[00:01.000]a\n[00:02.000]b\n[00:03.234]\n")
    }

    @Test func lrcNotesWhatItCannotCarry() throws {
        let p = try read("[offset:100]\n[1000,1500]<0,1500,0>a\n[2000,500]<0,500,0>b\n")
        let w = try LyricsWriter.write(p.lyrics, as: .lrc)
        #expect(Self.text(w) == "[00:00.900]a\n[00:01.900]b\n[00:02.400]\n")
        #expect(w.notes.map(\.rule) == ["offset-applied", "words-dropped", "overlap-truncated"])
    }

    @Test func enhancedLRCRoundTrip() throws {
        let source = "[ti:W]\n[00:01.000]<00:01.000>Hel<00:01.400>lo<00:02.000>\n[00:03.000]<00:03.000>a<00:03.200><00:03.500>b<00:04.000>\n"
        let first = try read(source)
        let w = try LyricsWriter.write(first.lyrics, as: .elrc)
        #expect(Self.text(w) == source)
        let again = try read(bytes: w.bytes)
        #expect(again.lyrics.lines.map(\.wordSpans) == first.lyrics.lines.map(\.wordSpans))
        #expect(first.lyrics.lines[1].wordSpans == [Span(3000, 3200, "a"), Span(3500, 4000, "b")])
    }

    @Test func krcRoundTripKeepsTranslationRomanizationAndThirdField() throws {
        let payload = krcLanguage(#"{"content":[{"language":0,"type":1,"lyricContent":[["Star"],[" "]]},{"language":0,"type":0,"lyricContent":[["xing ","guang "],["a"]]}],"version":1}"#)
        let source = "[ti:K]\n[language:\(payload)]\n[1000,1000]<0,500,0>星<500,500,3>光\n[2500,500]<0,500,0>啊\n"
        let first = try read(source)
        for format in [LyricsOutputFormat.krcText, .krc] {
            let w = try LyricsWriter.write(first.lyrics, as: format)
            let again = try read(bytes: w.bytes)
            #expect(again.lyrics.format == (format == .krc ? .krc : .krcText))
            #expect(again.lyrics.lines.map(\.wordSpans) == first.lyrics.lines.map(\.wordSpans))
            #expect(again.lyrics.lines.map(\.translation) == ["Star", nil])
            #expect(again.lyrics.lines.map { $0.words.map(\.romanization) } == [["xing ", "guang "], ["a"]])
            #expect(again.lyrics.lines[0].words.map(\.krcField) == [0, 3])
            #expect(again.lyrics.title == "K")
        }
        let plain = try LyricsWriter.write(first.lyrics, as: .krcText).bytes
        #expect(Array(plain.prefix(3)) == [0xEF, 0xBB, 0xBF])
        #expect(String(decoding: plain, as: UTF8.self).contains("[1000,1000]<0,500,0>星<500,500,3>光\r\n"))
    }

    @Test func krcWriterSynthesizesUnitsForPlainLines() throws {
        let lyrics = Lyrics(format: .json, lines: [LyricLine(startMs: 1000, durationMs: 500, text: "whole")])
        let w = try LyricsWriter.write(lyrics, as: .krcText)
        #expect(Self.text(w) == "\u{FEFF}[1000,500]<0,500,0>whole\r\n")
        #expect(w.notes.map(\.rule) == ["words-synthesized"])
    }

    @Test func krcWriterRefusesWhatKRCCannotHold() {
        let before = Lyrics(format: .json, lines: [
            LyricLine(startMs: 1000, durationMs: 500, text: "x", words: [LyricWord(startMs: 900, durationMs: 100, text: "x")]),
        ])
        #expect(throws: LyricsError.self) { try LyricsWriter.write(before, as: .krcText) }
        let header = Lyrics(format: .json, lines: [
            LyricLine(startMs: 0, durationMs: 5, text: "<1,2,3>", words: [LyricWord(startMs: 0, durationMs: 5, text: "<1,2,3>")]),
        ])
        #expect(throws: LyricsError.self) { try LyricsWriter.write(header, as: .krcText) }
    }

    @Test func yrcWritesAbsoluteTimes() throws {
        let p = try read("[1000,1000]<0,500,0>a<500,500,0>b\n")
        let w = try LyricsWriter.write(p.lyrics, as: .yrc)
        #expect(Self.text(w) == "[1000,1000](1000,500,0)a(1500,500,0)b\n")
        #expect(try read(bytes: w.bytes).lyrics.lines.map(\.wordSpans) == p.lyrics.lines.map(\.wordSpans))
    }

    @Test func pitchFilesOnlyBecomeJSON() throws {
        let p = try read(bytes: PitchFileTests.binary([220]))
        #expect(throws: LyricsError.self) { try LyricsWriter.write(p.lyrics, as: .lrc) }
        let json = Self.text(try LyricsWriter.write(p.lyrics, as: .json))
        #expect(json.contains("\"interval_ms\""))
    }
}

/// Round-trip breaks the fuzzer found (fixtures/fuzz/roundtrip), pinned with exact values.
@Suite struct FuzzFoundWriterTests {
    @Test func lrcRefusesStampLikeTextAndLeavesEmptyLinesOut() throws {
        let stampy = try LyricsReader.read(Array("[0,1000](0,500,0)a<0:1>(500,500,0)b\n".utf8), fileName: "x.yrc").lyrics
        for format in [LyricsOutputFormat.lrc, .elrc] {
            #expect(throws: LyricsError.self) { try LyricsWriter.write(stampy, as: format) }
        }
        let withEmpty = try LyricsReader.read(Array("[1000,500]<0,500,0>la\n[2000,500]\n[3000,500]<0,500,0>lo\n".utf8), fileName: "x.krc").lyrics
        let written = try LyricsWriter.write(withEmpty, as: .lrc)
        #expect(written.notes.contains { $0.rule == "empty-lines-dropped" })
        let back = try LyricsReader.read(written.bytes, fileName: "x.lrc").lyrics
        #expect(back.lines.map(\.text) == ["la", "lo"])
        #expect(back.lines.map(\.startMs) == [1000, 3000])
    }

    @Test func jsonKeepsReferencePitchAndLeadingBOMAndLongTags() throws {
        var model = Lyrics(format: .json, tags: [LyricTag(key: "language", value: String(repeating: "\u{0}", count: 3000))],
                           lines: [LyricLine(startMs: 0, durationMs: 500, text: "\u{FEFF}la", words: [])])
        model.referencePitch = .contour(intervalMs: 10, hz: [220, nil, 221.5])
        let written = try LyricsWriter.write(model, as: .json)
        let back = try LyricsReader.read(written.bytes).lyrics
        #expect(back.lines.first?.text == "\u{FEFF}la")
        #expect(back.referencePitch == .contour(intervalMs: 10, hz: [220, nil, 221.5]))
        let notes = Lyrics(format: .json, lines: [], referencePitch: .notes(scale: .noteIndex, [.init(startMs: 0, durationMs: 300, value: 62)]))
        #expect(try LyricsReader.read(LyricsWriter.write(notes, as: .json).bytes).lyrics.referencePitch == notes.referencePitch)
        // A contour off a fixed grid keeps its times.
        let uneven = Lyrics(format: .json, lines: [], referencePitch: .contour(PitchContour(timesS: [0, 0.013, 0.02], f0Hz: [nil, 196, 197.5])))
        let unevenJSON = try LyricsWriter.write(uneven, as: .json).bytes
        #expect(String(decoding: unevenJSON, as: UTF8.self).contains("\"times_s\""))
        #expect(try LyricsReader.read(unevenJSON).lyrics.referencePitch == uneven.referencePitch)
    }
}
