import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// `LyricLine` is stored packed; it must read, write and compare exactly like the plain struct it was.
@Suite struct PackedLineTests {
    static let words = [
        LyricWord(startMs: 1000, durationMs: 250, text: "la"),
        LyricWord(startMs: 1250, durationMs: 250, text: "星 ", romanization: "xing", krcField: 3),
        LyricWord(startMs: 1500, durationMs: -20, text: "", pitchHz: 220.5),
    ]

    @Test func fieldsRoundTrip() {
        let line = LyricLine(startMs: 1000, durationMs: 500, text: "la星 ", words: Self.words, translation: "star", sourceLine: 7)
        #expect(line.startMs == 1000)
        #expect(line.durationMs == 500)
        #expect(line.endMs == 1500)
        #expect(line.text == "la星 ")
        #expect(line.words == Self.words)
        #expect(line.wordCount == 3)
        #expect(line.translation == "star")
        #expect(line.sourceLine == 7)
    }

    @Test func textThatIsNotTheJoinIsKept() {
        // Canonically equivalent but not the same bytes: the text is stored, not rebuilt from the words.
        let decomposed = [LyricWord(startMs: 0, durationMs: 1, text: "e\u{301}")]
        let line = LyricLine(startMs: 0, durationMs: 1, text: "\u{E9}", words: decomposed)
        #expect(Array(line.text.unicodeScalars) == ["\u{E9}"])
        #expect(Array(line.words[0].text.unicodeScalars) == ["e", "\u{301}"])
        #expect(LyricLine(startMs: 0, durationMs: 1, text: "  spaced", words: []).text == "  spaced")
        #expect(LyricLine(startMs: 0, durationMs: 1, text: "", words: decomposed).text == "")
    }

    @Test func extremeValuesRoundTrip() {
        let w = [LyricWord(startMs: Int.min, durationMs: Int.max, text: "a", krcField: Int.min),
                 LyricWord(startMs: Int.max, durationMs: Int.min, text: "b", krcField: -1)]
        let line = LyricLine(startMs: Int.max, durationMs: Int.min, text: "ab", words: w, sourceLine: Int.min)
        #expect(line.startMs == Int.max)
        #expect(line.durationMs == Int.min)
        #expect(line.words == w)
        #expect(line.sourceLine == Int.min)
    }

    /// The translation setter splices bytes instead of repacking: the result must be the bytes a
    /// full repack gives, with and without a source line, a voice and a stored text, from and to nil.
    @Test func translationSpliceEqualsRepack() {
        let variants = [
            LyricLine(startMs: 1000, durationMs: 500, text: "la星 ", words: Self.words, sourceLine: 7),
            LyricLine(startMs: -5, durationMs: 500, text: "other text", words: Self.words, translation: "old, longer translation"),
            LyricLine(startMs: 0, durationMs: 0, text: "", words: []),
        ]
        for var line in variants {
            for value in ["星光 star", nil, "", "x", String(repeating: "long ", count: 40)] as [String?] {
                line.voice = value == nil ? "v2" : nil
                line.translation = value
                var repacked = line
                repacked.fields = line.fields
                #expect(line.translation == value)
                #expect(line.packedByteCount == repacked.packedByteCount)
                #expect(line == repacked)
                #expect(line.words == repacked.words && line.text == repacked.text && line.voice == repacked.voice)
            }
        }
    }

    @Test func settersChangeOneFieldOnly() {
        var line = LyricLine(startMs: 1000, durationMs: 500, text: "la星 ", words: Self.words, sourceLine: 2)
        line.startMs = 900
        #expect(line.words == Self.words)
        line.words[1].romanization = nil
        #expect(line.words[1].romanization == nil)
        #expect(line.text == "la星 ")
        // The text stays as it was when the words change, as with a stored property.
        line.words[0].text = "LA"
        #expect(line.text == "la星 ")
        line.translation = "x"
        line.sourceLine = nil
        #expect(line == LyricLine(startMs: 900, durationMs: 500, text: "la星 ",
                                  words: [LyricWord(startMs: 1000, durationMs: 250, text: "LA")] + Self.words.dropFirst().map {
                                      var w = $0
                                      w.romanization = nil
                                      return w
                                  }, translation: "x"))
    }

    @Test func equalityIsFieldEquality() {
        let nan = [LyricWord(startMs: 0, durationMs: 1, text: "a", pitchHz: .nan)]
        // NaN is not equal to itself, as before packing.
        #expect(LyricLine(startMs: 0, durationMs: 1, text: "a", words: nan) != LyricLine(startMs: 0, durationMs: 1, text: "a", words: nan))
        #expect(LyricLine(startMs: 0, durationMs: 1, text: "\u{E9}") == LyricLine(startMs: 0, durationMs: 1, text: "e\u{301}"))
    }

    @Test func timingAgreesWithTheDecodedLine() {
        let texts = ["", " ", "\t \u{3000}", "\u{3000}\u{301}", " a", "\u{3000}x", "\u{2003}"]
        for text in texts {
            for wordTexts in [[], [" "], ["\u{3000}", "\t"], [" ", "b"], [text], ["\u{3000}\u{301}"]] {
                let words = wordTexts.enumerated().map { LyricWord(startMs: 100 * $0.offset, durationMs: 50 - 60 * $0.offset, text: $0.element) }
                let line = LyricLine(startMs: 7, durationMs: 300, text: text, words: words, sourceLine: 3)
                let t = line.timing
                #expect(t.isBlank == (line.text.isBlank && line.words.allSatisfy { $0.text.isBlank }), "\(text.unicodeScalars.map(\.value)) \(wordTexts)")
                #expect(t.words.map(\.startMs) == line.words.map(\.startMs))
                #expect(t.words.map(\.durationMs) == line.words.map(\.durationMs))
                #expect(t.startMs == 7 && t.durationMs == 300 && t.sourceLine == 3)
            }
        }
    }

    @Test func aVoiceAndBackgroundWordsSurvivePacking() {
        var line = LyricLine(startMs: 100, durationMs: 900, text: "ab", words: [LyricWord(startMs: 100, durationMs: 400, text: "a"),
                                                                                 LyricWord(startMs: 500, durationMs: 500, text: "b")])
        let plainSize = line.packedByteCount
        line.voice = "v2"
        var words = line.words
        words[1].background = true
        line.words = words
        #expect(line.voice == "v2" && line.words.map(\.background) == [false, true])
        #expect(line.text == "ab" && line.startMs == 100 && line.durationMs == 900)
        // Two flag bytes (the words are no longer plain) and the voice's length and text.
        #expect(line.packedByteCount == plainSize + 2 + 3)
        line.voice = nil
        #expect(line.voice == nil && line.words[1].background)
    }

    @Test func describedLikeAPlainStruct() {
        let line = LyricLine(startMs: 1, durationMs: 2, text: "a", sourceLine: 3)
        #expect(String(describing: line) == "LyricLine(startMs: 1, durationMs: 2, text: \"a\", words: [], translation: nil, sourceLine: Optional(3), voice: nil)")
    }

    @Test func oneLineCostsAFewBytesMoreThanItsText() {
        let line = LyricLine(startMs: 1_299_998_700, durationMs: 1200, joining: [
            LyricWord(startMs: 1_299_998_700, durationMs: 400, text: "la"),
            LyricWord(startMs: 1_299_999_100, durationMs: 400, text: "lo "),
            LyricWord(startMs: 1_299_999_500, durationMs: 400, text: "星"),
        ], sourceLine: 1_000_003)
        #expect(MemoryLayout<LyricLine>.size == 8)
        #expect(line.text == "lalo 星")
        // flags 1, start 5, duration 2, source line 3, the joined texts 1 + 8, word count 1; per word
        // a start delta of 1 (0) or 2 (400) bytes, duration 2 and text length 1: 4 + 5 + 5.
        #expect(line.packedByteCount == 35)
    }
}

@Suite struct StreamedJSONTests {
    static func streamed(_ lyrics: Lyrics, chunk: Int = 64) -> String {
        var out: [UInt8] = []
        var pieces = 0
        JSONModel.write(lyrics, chunkBytes: chunk) { (piece: [UInt8]) in
            out += piece
            pieces += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func everyFixtureStreamsTheBytesOfTheTree() throws {
        var compared = 0
        for name in try Fixtures.allNames() {
            guard let p = try? Fixtures.read(name) else { continue }
            #expect(Self.streamed(p.lyrics) == JSONModel.value(p.lyrics).serialized(), "\(name)")
            compared += 1
        }
        #expect(compared > 10)
    }

    @Test func edgeCasesStreamTheBytesOfTheTree() {
        let odd = "q\"b\\s\n\r\t\u{08}\u{0C}\u{01}\u{1F}é😀"
        var lyrics = Lyrics(format: .json, tags: [LyricTag(key: "ti", value: odd), LyricTag(key: "ar", value: "a"),
                                                  LyricTag(key: "ti", value: "again"), LyricTag(key: "offset", value: "-5")],
                            appliedShiftMs: 5)
        lyrics.lines = [
            LyricLine(startMs: -3, durationMs: 0, text: odd, words: [
                LyricWord(startMs: 0, durationMs: 1, text: odd, romanization: odd, krcField: -2, pitchHz: 440),
                LyricWord(startMs: 1, durationMs: 1, text: "", pitchHz: 1e300),
                LyricWord(startMs: 2, durationMs: 1, text: "x", pitchHz: .nan),
                LyricWord(startMs: 3, durationMs: 1, text: "y", pitchHz: 0.1),
            ], translation: odd),
            LyricLine(startMs: 5, durationMs: 1, text: "no words"),
        ]
        #expect(Self.streamed(lyrics) == JSONModel.value(lyrics).serialized())
        #expect(Self.streamed(Lyrics(format: .lrc)) == JSONModel.value(Lyrics(format: .lrc)).serialized())
        for pitch in [ReferencePitch.notes(scale: .noteIndex, [.init(startMs: 1, durationMs: 2, value: 50.5)]),
                      .notes(scale: .hz, []), .contour(intervalMs: 10, hz: [nil, 110, 220.25]), .contour(intervalMs: 10, hz: [])] {
            let p = Lyrics(format: .agoraPitchJSON, referencePitch: pitch)
            #expect(Self.streamed(p, chunk: 1) == JSONModel.value(p).serialized())
        }
    }
}
