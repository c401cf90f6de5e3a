import Foundation
import KTVCore
@testable import KTVLyrics
import Testing

/// QRC, QRC in its wrapper, Migu XML, ASS, WebVTT, TTML and LYS written from every lyric fixture and read back
/// (issue 22): the same lines and words, times exact to the format's resolution; an ASS line's
/// `\k` tags sum to its duration.
@Suite struct NewWritersTests {
    /// The fixtures that read without errors and have lyric lines.
    func models() throws -> [(String, Lyrics)] {
        try Fixtures.allNames().compactMap { name in
            guard let parsed = try? Fixtures.read(name), !parsed.diagnostics.hasErrors, !parsed.lyrics.lines.isEmpty,
                  // (A word with a negative duration, kept with a warning, is written by no format.)
                  !parsed.lyrics.lines.contains(where: { $0.words.contains { $0.durationMs < 0 } }) else { return nil }
            return (name, parsed.lyrics)
        }
    }

    func words(_ l: Lyrics, resolutionMs: Int) -> [[String]] {
        func r(_ ms: Int) -> Int { (ms + resolutionMs / 2) / resolutionMs * resolutionMs }
        return l.lines.map { line in
            (line.words.isEmpty ? [LyricWord(startMs: line.startMs, durationMs: line.durationMs, text: line.text)] : line.words)
                .map { "\(r($0.startMs))-\(r($0.endMs)):\($0.text)" }
        }
    }

    @Test func everyFixtureRoundTripsThroughQRCXMLAndASS() throws {
        let all = try models()
        #expect(all.count >= 15)
        for (name, model) in all {
            for format in [LyricsOutputFormat.qrc, .qrcXML, .xml, .ass, .vtt, .ttml, .lys] {
                let written: WrittenLyrics
                do { written = try LyricsWriter.write(model, as: format) } catch {
                    Issue.record("\(name) → \(format.rawValue): \(error)")
                    continue
                }
                let back = try LyricsReader.read(written.bytes, fileName: "x")
                #expect(!back.diagnostics.hasErrors, "\(name) → \(format.rawValue): \(back.diagnostics)")
                let resolution = format == .ass ? 10 : 1
                // ASS syllables follow each other: overlapping words were moved, and the note says so.
                // (LYS writes background words as a row of their own: tested with their own words below.)
                if written.notes.contains(where: { $0.rule == "words-moved" || $0.rule == "background-split" }) { continue }
                // Migu XML keeps words' text trimmed at the line's ends; compare what it keeps.
                let a = words(model, resolutionMs: resolution), b = words(back.lyrics, resolutionMs: resolution)
                if format == .xml {
                    #expect(a.map { $0.map { $0.trimmingSpaces } } == b.map { $0.map { $0.trimmingSpaces } }, "\(name) → xml")
                } else {
                    #expect(a == b, "\(name) → \(format.rawValue)")
                }
            }
        }
    }

    @Test func anASSLinesKaraokeTagsSumToItsDuration() throws {
        for (name, model) in try models() {
            let text = String(decoding: try LyricsWriter.write(model, as: .ass).bytes, as: UTF8.self)
            for row in text.split(separator: "\n") where row.hasPrefix("Dialogue:") && row.contains(",Default,") {
                let fields = row.dropFirst("Dialogue: ".count).split(separator: ",", maxSplits: 9, omittingEmptySubsequences: false)
                guard let start = ASSParser.time(String(fields[1])), let end = ASSParser.time(String(fields[2])) else {
                    Issue.record("\(name): \(row)"); continue
                }
                let tags = fields[9].components(separatedBy: "{\\k").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
                if !tags.isEmpty { #expect(tags.reduce(0, +) * 10 == end - start, "\(name): \(row)") }
            }
        }
        // Rounding with carry: 3 words of 333 ms from 1,005 ms (boundaries 100.5, 133.8, 167.1 and
        // 200.5 cs, rounded 101, 134, 167, 201) sum to the line's 100 cs.
        let line = LyricLine(startMs: 1005, durationMs: 1000, text: "abc",
                             words: [LyricWord(startMs: 1005, durationMs: 333, text: "a"), LyricWord(startMs: 1338, durationMs: 333, text: "b"),
                                     LyricWord(startMs: 1671, durationMs: 334, text: "c")])
        let out = String(decoding: try LyricsWriter.write(Lyrics(format: .json, lines: [line]), as: .ass).bytes, as: UTF8.self)
        #expect(out.contains("Dialogue: 0,0:00:01.01,0:00:02.01,Default,,0,0,0,karaoke,{\\k33}a{\\k33}b{\\k34}c\n"))
    }

    @Test func textASSCannotHoldIsRefusedAndQRCTimingsInWordsToo() {
        let braces = Lyrics(format: .json, lines: [LyricLine(startMs: 0, durationMs: 100, text: "{\\b1}x")])
        #expect(throws: LyricsError.self) { try LyricsWriter.write(braces, as: .ass) }
        let timing = Lyrics(format: .json, lines: [LyricLine(startMs: 0, durationMs: 100, text: "a(1,2)", words: [LyricWord(startMs: 0, durationMs: 100, text: "a(1,2)")])])
        #expect(throws: LyricsError.self) { try LyricsWriter.write(timing, as: .qrc) }
    }

    /// Lyricify's rows (what the issue calls mixed QRC rows, `[4]It's (18115,649)…`): the property
    /// digit is the side and whether the row is background vocals; TTML's duet and background
    /// words go through LYS and back.
    @Test func lyricifySyllableRowsCarryTheSideAndTheBackground() throws {
        let lys = "[ti:Mixed]\n[4]It's (18115,649)every(18764,300)one(19064,400)\n[8]ooh (19500,500)ah(20000,300)\n[0]la(21000,100)\n[3]na(21200,100)\n"
        let p = try LyricsReader.read(Array(lys.utf8), fileName: "m.lys")
        #expect(p.lyrics.format == .lyricifySyllable && !p.diagnostics.hasErrors)
        #expect(p.lyrics.lines.map(\.voice) == ["v1", "v2", nil, nil])
        #expect(p.lyrics.lines.map { $0.words.allSatisfy(\.background) } == [false, true, false, false])
        #expect(p.lyrics.lines[0].wordSpans == [Span(18115, 18764, "It's "), Span(18764, 19064, "every"), Span(19064, 19464, "one")])
        #expect(String(decoding: try LyricsWriter.write(p.lyrics, as: .lys).bytes, as: UTF8.self) == lys.replacingOccurrences(of: "[3]na", with: "[0]na"))
        // TTML's line with background words becomes a lead row and a background row, and reads back with both.
        let duet = try Fixtures.read("ttml-duet.ttml").lyrics
        let written = try LyricsWriter.write(duet, as: .lys)
        #expect(written.notes.contains { $0.rule == "background-split" })
        let back = try LyricsReader.read(written.bytes).lyrics
        #expect(back.lines.map(\.voice) == ["v1", "v2", "v2", "v1"])
        #expect(back.lines[2].words.map(\.text) == ["(ooh)"] && back.lines[2].words[0].background)
    }

    @Test func assFromOtherToolsReads() throws {
        // As Aegisub writes it: \kf fill tags, a comment, another style name, \N in a line, a Comment row.
        let ass = """
        [Script Info]
        Title: Song
        ScriptType: v4.00+

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
        Comment: 0,0:00:00.00,0:00:01.00,Default,,0,0,0,,ignored
        Dialogue: 0,0:00:01.00,0:00:03.00,Romaji,,0,0,0,,{\\kf50}Hel{\\kf50}lo, {\\ko100}world
        Dialogue: 0,0:00:04.00,0:00:05.00,Default,,0,0,0,,no karaoke\\Nhere
        """
        let parsed = try LyricsReader.read(Array(ass.utf8), fileName: "a.ass")
        #expect(parsed.lyrics.format == .ass && parsed.lyrics.title == "Song")
        #expect(parsed.lyrics.lines.map(\.text) == ["Hello, world", "no karaoke here"])
        #expect(parsed.lyrics.lines[0].words.map { "\($0.startMs)+\($0.durationMs):\($0.text)" } == ["1000+500:Hel", "1500+500:lo, ", "2000+1000:world"])
    }
}
