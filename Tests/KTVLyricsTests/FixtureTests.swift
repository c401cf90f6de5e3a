import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// The committed files in `fixtures/lyrics` (see its README.md): every one is read with exact results.
@Suite struct FixtureTests {
    @Test func readmeListsEveryFixture() throws {
        let readme = try String(contentsOf: Fixtures.directory.appendingPathComponent("README.md"), encoding: .utf8)
        let names = try Fixtures.allNames()
        #expect(names.count >= 30)
        for name in names {
            #expect(readme.contains("`\(name)`"), "README.md does not list \(name)")
        }
    }

    @Test func krcBomCrlf() throws {
        let p = try Fixtures.read("krc-bom-crlf.krc")
        #expect(p.encoding == .utf8BOM)
        #expect(p.lyrics.format == .krcText)
        #expect(p.lyrics.tags.map(\.key) == ["id", "ar", "ti", "by", "hash", "al", "sign", "qq", "total", "offset"])
        #expect(p.lyrics.tag("by") == "")
        #expect(p.lyrics.totalMs == 9000)
        #expect(p.lyrics.offsetMs == 0)
        #expect(p.lyrics.lineSpans == [
            Span(1000, 3400, "Doo wop doo wah"), Span(3600, 5600, "Sha la la"), Span(6000, 9000, "Bop bop bee"),
        ])
        #expect(p.lyrics.lines[2].wordSpans == [Span(6000, 7000, "Bop "), Span(7000, 8000, "bop "), Span(8000, 9000, "bee")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [11, 12, 13])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func krcEncryptedDecryptsToThePlaintextFixture() throws {
        let enc = try Fixtures.bytes("krc-encrypted.krc")
        #expect(Array(enc.prefix(5)) == Array("krc18".utf8))
        #expect(try KRCContainer.decrypt(enc) == (try Fixtures.bytes("krc-bom-crlf.krc")))
        let p = try Fixtures.read("krc-encrypted.krc")
        let plain = try Fixtures.read("krc-bom-crlf.krc")
        #expect(p.lyrics.format == .krc)
        #expect(p.lyrics.lines == plain.lyrics.lines)
        #expect(p.lyrics.tags == plain.lyrics.tags)
    }

    @Test func krcTruncated() throws {
        let bytes = try Fixtures.bytes("broken-krc-truncated.krc")
        guard case let .badContainer(offset, detail)? = readError(bytes, fileName: "broken-krc-truncated.krc") else {
            Issue.record("expected badContainer")
            return
        }
        #expect(offset == bytes.count)
        #expect(detail.contains("truncated"))
    }

    @Test func krcTagsAnyOrder() throws {
        let p = try Fixtures.read("krc-lf-tags-any-order.krc")
        #expect(p.encoding == .utf8)
        #expect(p.lyrics.tags.map(\.key) == ["total", "ti", "by", "offset", "ar", "id"])
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "Tira"), Span(2500, 4000, "Lori")])
        #expect(p.lyrics.lines[1].wordSpans == [Span(2500, 3250, "Lo"), Span(3250, 4000, "ri")])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func krcLanguage() throws {
        let p = try Fixtures.read("krc-language.krc")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "星光"), Span(2500, 4000, "月亮好"), Span(4500, 5500, "啦")])
        #expect(p.lyrics.lines.map(\.translation) == ["Star light", "The moon is fine", nil])
        #expect(p.lyrics.lines.map { $0.words.map(\.romanization) } == [["xing ", "guang "], ["yue ", "liang ", "hao "], [nil]])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func krcOddText() throws {
        let p = try Fixtures.read("krc-odd-text.krc")
        #expect(p.lyrics.lineSpans == [Span(1000, 3000, "QQ:(lala) a<b"), Span(3500, 4500, "x<1,2>y")])
        #expect(p.lyrics.lines[0].words.map(\.krcField) == [0, 0, 0, 2])
        #expect(LyricsValidator.validate(p).findings == [Finding("krc-nonzero-field", .warning, line: 2)])
    }

    @Test func lrcStamps() throws {
        let p = try Fixtures.read("lrc-stamps.lrc")
        #expect(p.lyrics.format == .lrc)
        #expect(p.lyrics.lineSpans == [
            Span(1000, 2500, "one"), Span(2500, 3050, "two"), Span(3050, 4050, "three"), Span(4050, 5123, "four"),
            Span(5123, 6124, "five"), Span(6124, 3_662_300, "six"), Span(3_662_300, 3_665_000, "late"),
        ])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func lrcAmbiguous() throws {
        let p = try Fixtures.read("lrc-ambiguous.lrc")
        #expect(p.lyrics.lineSpans == [Span(12_340, 3_723_450, "mm ss cc"), Span(3_723_450, 3_780_000, "hh mm ss")])
        #expect(LyricsValidator.validate(p).findings == [Finding("ambiguous-timestamp", .warning, line: 1)])
    }

    @Test func lrcMultiStamp() throws {
        let p = try Fixtures.read("lrc-multi-stamp.lrc")
        #expect(p.lyrics.lineSpans == [
            Span(10_000, 20_000, "Chorus la la"), Span(20_000, 30_000, "Verse one"),
            Span(30_000, 40_000, "Chorus la la"), Span(40_000, 50_000, "Verse two"),
        ])
        #expect(p.lyrics.lines.map(\.sourceLine) == [2, 3, 2, 4])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func lrcOffset() throws {
        let sub = try Fixtures.read("lrc-offset.lrc")
        #expect(sub.lyrics.lineSpans == [Span(500, 2500, "early"), Span(2500, 4500, "later")])
        #expect(sub.lyrics.appliedShiftMs == -500)
        #expect(sub.lyrics.offsetMs == 500)
        let add = try Fixtures.read("lrc-offset.lrc", options: LyricsParseOptions(offsetSign: .add))
        #expect(add.lyrics.lineSpans == [Span(1500, 3500, "early"), Span(3500, 5500, "later")])
        #expect(add.lyrics.appliedShiftMs == 500)
    }

    @Test func lrcClosingStamp() throws {
        let p = try Fixtures.read("lrc-closing-stamp.lrc")
        #expect(p.lyrics.format == .lrc)
        #expect(p.lyrics.lineSpans == [Span(1100, 6130, "Hello World"), Span(7000, 8000, "Bye now")])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func elrcClosing() throws {
        let p = try Fixtures.read("elrc-closing.lrc")
        #expect(p.lyrics.format == .enhancedLRC)
        #expect(p.lyrics.lines.map(\.wordSpans) == [
            [Span(1000, 1400, "Hel"), Span(1400, 1800, "lo "), Span(1800, 2500, "there")],
            [Span(3000, 3250, " sha "), Span(3250, 3600, " la ")],
        ])
        #expect(p.lyrics.lineSpans.map(\.end) == [2500, 3600])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func elrcOpen() throws {
        let p = try Fixtures.read("elrc-open.lrc")
        #expect(p.lyrics.lines.map(\.wordSpans) == [
            [Span(1000, 1300, "Tik"), Span(1300, 2000, " tok")],
            [Span(2000, 2400, "Bim"), Span(2400, 3500, " bam")],
        ])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func lrcInlineWords() throws {
        let p = try Fixtures.read("lrc-inline-words.lrc")
        #expect(p.lyrics.format == .enhancedLRC)
        #expect(p.lyrics.lines.map(\.wordSpans) == [
            [Span(5000, 5400, "ka"), Span(5400, 5900, "ra"), Span(5900, 6300, "o"), Span(6300, 7000, "ke")],
            [Span(8000, 8200, "走"), Span(8200, 8600, "啊"), Span(8600, 9500, "走")],
        ])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func lrcGB18030() throws {
        let p = try Fixtures.read("lrc-gb18030.lrc")
        #expect(p.encoding == .gb18030)
        #expect(p.lyrics.title == "小歌")
        #expect(p.lyrics.lineSpans == [Span(1000, 2500, "小猫跳"), Span(2500, 4000, "大狗叫")])
        // `[ti:` then 小 = D0 A1 (which happens to be valid UTF-8), then 歌 = B8 E8: B8 at offset 6 is not.
        #expect(p.diagnostics == [Diagnostic(rule: "non-utf8", severity: .warning, byteOffset: 6, message: p.diagnostics[0].message)])
        #expect(LyricsValidator.validate(p).findings == [Finding("non-utf8", .warning, line: nil)])
    }

    @Test func lrcUTF16() throws {
        let p = try Fixtures.read("lrc-utf16le-bom.lrc")
        #expect(p.encoding == .utf16LE)
        #expect(p.lyrics.title == "Wide")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "wide la"), Span(2000, 3000, "宽")])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func yrcCredits() throws {
        let p = try Fixtures.read("yrc-credits.yrc")
        #expect(p.lyrics.format == .yrc)
        #expect(p.lyrics.lineSpans == [
            Span(0, 500, "作词: Nobody"), Span(500, 1000, "作曲: Somebody"), Span(1000, 2500, "Bee, bop"), Span(3000, 4000, "Doodah"),
        ])
        #expect(p.lyrics.lines[2].wordSpans == [Span(1000, 1500, "Bee"), Span(1500, 1500, ","), Span(1500, 2500, " bop")])
        #expect(LyricsValidator.validate(p).findings == [Finding("zero-duration", .warning, line: 3)])
    }

    @Test func qrcBody() throws {
        let p = try Fixtures.read("qrc-body.qrc")
        #expect(p.lyrics.format == .qrc)
        #expect(p.lyrics.tags.map(\.key) == ["ti", "ar", "offset"])
        #expect(p.lyrics.lines[0].wordSpans.map(\.text) == ["(", "共", "同", "歌", ")"])
        #expect(p.lyrics.lineSpans == [Span(2740, 4384, "(共同歌)"), Span(5000, 5600, "Ba ba")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [4, 5])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func assKaraoke() throws {
        let p = try Fixtures.read("ass-karaoke.ass")
        #expect(p.lyrics.format == .ass && p.lyrics.title == "Night Song")
        // \kf and \K time as \k does; a lone {\k50} is a pause; \N reads as a space; {\b1} is ignored.
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1300, "星"), Span(1300, 2000, "光"), Span(2500, 3500, "亮")])
        #expect(p.lyrics.lines[1].wordSpans.map(\.text) == ["Hel", "lo,", " world again"])
        #expect(p.lyrics.lineSpans == [Span(1000, 3500, "星光亮"), Span(4000, 6000, "Hello, world again")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [15, 16])
        #expect(!p.diagnostics.hasErrors)
    }

    @Test func vttKaraoke() throws {
        let p = try Fixtures.read("vtt-karaoke.vtt")
        #expect(p.lyrics.format == .webVTT && p.lyrics.tags.map(\.key) == ["ti", "ar"])
        // <v> and <c> dropped, the empty span between 2.000 and 2.500 a pause, entities decoded.
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1300, "星"), Span(1300, 2000, "光"), Span(2500, 3500, "亮")])
        #expect(p.lyrics.lines[0].translation == "Star & light")
        #expect(p.lyrics.lineSpans == [Span(1000, 3500, "星光亮"), Span(4000, 6000, "no timestamps <here>")])
        #expect(p.lyrics.lines[1].words.isEmpty)
        #expect(!p.diagnostics.hasErrors)
    }

    @Test func ttmlDuet() throws {
        let p = try Fixtures.read("ttml-duet.ttml")
        #expect(p.lyrics.format == .ttml && p.lyrics.title == "Night Song" && p.lyrics.tag("artists") == "Nobody")
        #expect(p.lyrics.lines.map(\.voice) == ["v1", "v2", "v1"])
        // The space between spans belongs to the word before; clock, offset (s, ms) and dur times.
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1300, "星"), Span(1300, 2000, "光 "), Span(2500, 3500, "亮")])
        #expect(p.lyrics.lines[0].translation == "Star & light")
        #expect(p.lyrics.lines[1].wordSpans == [Span(4000, 4800, "Hel"), Span(4800, 5200, "lo"), Span(5200, 6000, "(ooh)")])
        #expect(p.lyrics.lines[1].words.map(\.background) == [false, false, true])
        #expect(p.lyrics.lines[1].words.map(\.romanization) == ["hel", "lo", "ooh"])
        #expect(p.lyrics.lineSpans == [Span(1000, 3500, "星光 亮"), Span(4000, 6000, "Hello(ooh)"), Span(6500, 8500, "no word timing")])
        #expect(!p.diagnostics.hasErrors)
        // Through ktv JSON and TTML again: voices and background words kept.
        let again = try LyricsReader.read(try LyricsWriter.write(p.lyrics, as: .ttml).bytes).lyrics
        #expect(again.lines.map(\.voice) == p.lyrics.lines.map(\.voice))
        #expect(again.lines.map { $0.words.map(\.background) } == p.lyrics.lines.map { $0.words.map(\.background) })
    }

    @Test func qrcWrapper() throws {
        let p = try Fixtures.read("qrc-wrapper.xml")
        #expect(p.lyrics.format == .qrcXML)
        #expect(p.lyrics.title == "Wrapped")
        #expect(p.lyrics.lineSpans == [Span(1000, 1800, "Papa"), Span(2000, 2500, "\"Hi\"")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [6, 7])
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func migu() throws {
        let p = try Fixtures.read("migu.xml")
        #expect(p.lyrics.format == .miguXML)
        #expect(p.lyrics.title == "Bird Song")
        #expect(p.lyrics.artist == "Nobody")
        #expect(p.lyrics.lineSpans == [Span(18_487, 20_740, "鸟飞"), Span(21_001, 22_000, "fly away")])
        #expect(p.lyrics.lines.map(\.sourceLine) == [10, 18])
        #expect(p.lyrics.referencePitch == .notes(scale: .hz, [
            .init(startMs: 18_487, durationMs: 172, value: 169),
            .init(startMs: 21_001, durationMs: 499, value: 220),
            .init(startMs: 21_500, durationMs: 500, value: 247),
        ]))
        #expect(LyricsValidator.validate(p).isEmpty)
    }

    @Test func miguBei() throws {
        let p = try Fixtures.read("broken-migu-bei.xml")
        #expect(p.lyrics.lineSpans == [Span(2000, 2500, "")])
        #expect(LyricsValidator.validate(p).findings == [
            Finding("empty-line", .warning, line: 4),
            Finding("invalid-number", .error, line: 5),
            Finding("empty-word", .warning, line: 6),
        ])
    }

    @Test func agoraPitchNotes() throws {
        let p = try Fixtures.read("agora-pitch-notes.pitch")
        #expect(p.lyrics.format == .agoraPitchJSON)
        #expect(p.lyrics.referencePitch == .notes(scale: .noteIndex, [
            .init(startMs: 1200, durationMs: 240, value: 50), .init(startMs: 1440, durationMs: 300, value: 52.5),
        ]))
    }

    @Test func agoraPitchContour() throws {
        let bytes = try Fixtures.bytes("agora-pitch-contour.bin")
        #expect(bytes.count == 12 + 5 * 8)
        #expect(Array(bytes.prefix(12)) == [1, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0])
        let p = try Fixtures.read("agora-pitch-contour.bin")
        #expect(p.lyrics.format == .agoraPitchBinary)
        #expect(p.lyrics.referencePitch == .contour(intervalMs: 10, hz: [nil, 220, 220.5, nil, 440]))
    }

    @Test(arguments: [
        ("broken-unterminated-tag.lrc", [Finding("unterminated-tag", .error, line: 1)]),
        ("broken-unparsable-line.lrc", [Finding("unparsable-line", .error, line: 3), Finding("unparsable-line", .error, line: 4)]),
        ("broken-negative-word.lrc", [Finding("negative-duration", .error, line: 2), Finding("word-outside-line", .warning, line: 2)]),
        ("broken-words-outside.krc", [Finding("word-outside-line", .warning, line: 2), Finding("word-overlap", .warning, line: 4)]),
        ("broken-overlapping-lines.krc", [Finding("overlapping-lines", .info, line: 1), Finding("overlapping-lines", .warning, line: 2)]),
        ("broken-out-of-order.krc", [Finding("lines-out-of-order", .warning, line: 3)]),
        ("broken-after-total.krc", [Finding("after-total", .warning, line: 3), Finding("after-total", .error, line: 4)]),
        ("broken-empty-lines.lrc", [Finding("empty-line", .warning, line: 1), Finding("empty-line", .warning, line: 4)]),
        ("broken-duplicate-stamps.lrc", [Finding("duplicate-timestamp", .warning, line: 2)]),
        ("broken-translation-count.krc", [Finding("translation-count-mismatch", .warning, line: 1),
                                          Finding("romanization-count-mismatch", .warning, line: 2)]),
    ])
    func brokenFiles(name: String, expected: [Finding]) throws {
        #expect(try Fixtures.validate(name).findings == expected)
    }

    @Test func brokenUndecodable() throws {
        guard case let .undecodable(offset, _)? = readError(try Fixtures.bytes("broken-undecodable.lrc")) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(offset == 23)
    }

    @Test func everyReadableFixtureRoundTripsThroughJSON() throws {
        // ktv's JSON model is lossless for lines, words, translations and romanizations.
        for name in try Fixtures.allNames() {
            guard let p = try? Fixtures.read(name), !p.lyrics.lines.isEmpty else { continue }
            let json = try LyricsWriter.write(p.lyrics, as: .json).bytes
            let back = try read(bytes: json)
            #expect(back.lyrics.format == .json, "\(name)")
            #expect(back.lyrics.lineSpans == p.lyrics.lineSpans, "\(name)")
            #expect(back.lyrics.lines.map(\.wordSpans) == p.lyrics.lines.map(\.wordSpans), "\(name)")
            #expect(back.lyrics.lines.map(\.translation) == p.lyrics.lines.map(\.translation), "\(name)")
        }
    }
}
