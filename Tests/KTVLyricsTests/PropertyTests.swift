import Testing
import KTVCore
@testable import KTVLyrics

/// Random models → write → parse → the same model, for every format ktv writes as text it reads back.
/// Each format gets the models it can represent (plain LRC has no word timing or overlaps, etc.).
@Suite struct RoundTripPropertyTests {
    static let alphabet: [String] = ["la", "na", "星", "光", "夜", "Oh", "yeah", ":", "(", ")", "你", "é", "🎤", "'", "-", ",", "梦"]

    /// What survives a round trip: everything but where the lines came from and the format name.
    struct Shape: Equatable {
        var tags: [LyricTag]
        var lines: [[String]]
    }

    static func shape(_ l: Lyrics) -> Shape {
        Shape(tags: l.tags, lines: l.lines.map { line in
            ["\(line.startMs)", "\(line.durationMs)", line.text, line.translation ?? "-", line.voice ?? "-"]
                + line.words.map { "\($0.startMs)+\($0.durationMs):\($0.text)|\($0.romanization ?? "-")|\($0.krcField)\($0.background ? "|bg" : "")" }
        })
    }

    static func text(_ rng: inout SeededGenerator, words: Int) -> String {
        (0..<words).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] }.joined()
    }

    struct Constraints {
        var words: Bool
        var overlaps: Bool
        var translation: Bool
        var spaces: Bool
        /// KRC's third unit field (KRC and YRC keep it).
        var krcField: Bool = true
        /// The format keeps no line times of its own, only its words' (Migu XML), and only title and artist tags.
        var wordSpan = false
        /// Times to the centisecond, lines ending at or after their last word, the title the only tag,
        /// no per-word romanization (ASS).
        var subtitle = false
        /// Duet voices on lines and background words (ktv JSON, TTML, Lyricify Syllable).
        var duet = false
    }

    static func model(_ rng: inout SeededGenerator, _ c: Constraints) -> Lyrics {
        var tags = [LyricTag(key: "ti", value: text(&rng, words: 3)), LyricTag(key: "ar", value: "Artist " + text(&rng, words: 1))]
        if Bool.random(using: &rng), !c.wordSpan { tags.append(LyricTag(key: "by", value: "")) }
        if c.subtitle { tags = [tags[0]] }
        let unit = c.subtitle ? 10 : 1
        var lines: [LyricLine] = []
        var t = Int.random(in: 0...5000, using: &rng) / unit * unit
        for _ in 0..<Int.random(in: 1...12, using: &rng) {
            var words: [LyricWord] = []
            var wt = t + (c.overlaps && !c.wordSpan ? Int.random(in: 0...30, using: &rng) : 0)
            if c.words {
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    var s = text(&rng, words: Int.random(in: 1...2, using: &rng))
                    if c.spaces, Int.random(in: 0..<4, using: &rng) == 0 { s += " " }
                    let d = Int.random(in: 0...900, using: &rng) / unit * unit
                    var w = LyricWord(startMs: wt, durationMs: d, text: s)
                    if c.translation, !c.subtitle, Int.random(in: 0..<3, using: &rng) == 0 { w.romanization = "ro" + text(&rng, words: 1) }
                    if c.overlaps, c.krcField, Int.random(in: 0..<20, using: &rng) == 0 { w.krcField = Int.random(in: 1...9, using: &rng) }
                    if c.duet, Int.random(in: 0..<5, using: &rng) == 0 { w.background = true }
                    words.append(w)
                    wt += d + Int.random(in: 0...300, using: &rng) / unit * unit
                }
            }
            let lastEnd = words.last?.endMs ?? t
            let end = c.wordSpan ? lastEnd : c.subtitle ? lastEnd + Int.random(in: 0...40, using: &rng) * 10
                : max(t, lastEnd + (Bool.random(using: &rng) ? 0 : Int.random(in: -50...400, using: &rng)))
            var line = LyricLine(startMs: t, durationMs: end - t,
                                 text: c.words ? words.map(\.text).joined() : text(&rng, words: Int.random(in: 1...5, using: &rng)),
                                 words: words)
            if c.translation, Bool.random(using: &rng) { line.translation = "tr " + text(&rng, words: 2) }
            if c.duet, Int.random(in: 0..<3, using: &rng) > 0 { line.voice = ["v1", "v2", "v1000"][Int.random(in: 0..<3, using: &rng)] }
            lines.append(line)
            // Next line: after this one (LRC), or possibly overlapping it by up to 300 ms (KRC, YRC).
            let gap = Int.random(in: 0...2000, using: &rng)
            t = c.overlaps ? max(t + 1, end + gap - Int.random(in: 0...300, using: &rng)) : c.subtitle ? end + gap / 10 * 10 + 10 : end + gap + 1
        }
        return Lyrics(format: .json, tags: tags, lines: lines)
    }

    static func roundTrip(_ m: Lyrics, _ format: LyricsOutputFormat) throws -> Lyrics {
        let bytes = try LyricsWriter.write(m, as: format).bytes
        let parsed = try LyricsReader.read(bytes)
        #expect(!parsed.diagnostics.hasErrors, "\(format): \(parsed.diagnostics)")
        return parsed.lyrics
    }

    @Test(arguments: [
        (LyricsOutputFormat.krc, LyricFormat.krc, Constraints(words: true, overlaps: true, translation: true, spaces: true)),
        (.krcText, .krcText, Constraints(words: true, overlaps: true, translation: true, spaces: true)),
        (.yrc, .yrc, Constraints(words: true, overlaps: true, translation: false, spaces: true)),
        (.lrc, .lrc, Constraints(words: false, overlaps: false, translation: false, spaces: false)),
        (.elrc, .enhancedLRC, Constraints(words: true, overlaps: false, translation: false, spaces: true)),
        (.json, .json, Constraints(words: true, overlaps: true, translation: true, spaces: true, duet: true)),
        (.qrc, .qrc, Constraints(words: true, overlaps: true, translation: false, spaces: true, krcField: false)),
        (.qrcXML, .qrcXML, Constraints(words: true, overlaps: true, translation: false, spaces: true, krcField: false)),
        (.xml, .miguXML, Constraints(words: true, overlaps: true, translation: false, spaces: false, krcField: false, wordSpan: true)),
        (.ass, .ass, Constraints(words: true, overlaps: false, translation: true, spaces: true, krcField: false, subtitle: true)),
        (.vtt, .webVTT, Constraints(words: true, overlaps: false, translation: true, spaces: true, krcField: false, subtitle: true)),
        (.ttml, .ttml, Constraints(words: true, overlaps: false, translation: true, spaces: true, krcField: false, subtitle: true, duet: true)),
        (.lys, .lyricifySyllable, Constraints(words: true, overlaps: true, translation: false, spaces: true, krcField: false, wordSpan: true)),
    ])
    func randomModelsRoundTrip(format: LyricsOutputFormat, expected: LyricFormat, constraints: Constraints) throws {
        var rng = SeededGenerator(seed: 0x4B54_5600 + UInt64(format.rawValue.count))
        for iteration in 0..<300 {
            let m = Self.model(&rng, constraints)
            let back = try Self.roundTrip(m, format)
            #expect(back.format == expected)
            let same = Self.shape(back) == Self.shape(m)
            #expect(same, "iteration \(iteration) differs after \(format.rawValue):\n\(Self.shape(m))\n\(Self.shape(back))")
            if !same { return }
        }
    }

    @Test func centisecondLRCRoundsWithCarry() throws {
        let m = Lyrics(format: .json, lines: [LyricLine(startMs: 59_995, durationMs: 1_004, text: "a")])
        let out = String(decoding: try LyricsWriter.write(m, as: .lrc, options: LyricsWriteOptions(lrcFractionDigits: 2)).bytes, as: UTF8.self)
        #expect(out == "[01:00.00]a\n[01:01.00]\n")
    }
}
