import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// Writes `bytes` to a fresh temporary file named `name` and reads it as a reference.
func readReference(_ bytes: [UInt8], name: String, options: ReferenceOptions = ReferenceOptions()) throws -> ReferenceMelody {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-score-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent(name).path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return try ReferenceReader.read(path: path, options: options)
}

func ultraStar(_ text: String, player: Int = 1) throws -> ReferenceMelody {
    try UltraStarFile.read(Array(text.utf8), path: "song.txt", player: player)
}

/// The `ScoreError.badReference` a throwing call ends in, or nil.
func referenceError(_ body: () throws -> Void) -> (line: Int?, detail: String)? {
    do { try body() } catch let ScoreError.badReference(_, line, detail) { return (line, detail) } catch { return nil }
    return nil
}

/// A take sung every 10 ms from 0 to 1 s past the last note: inside each note `pitch(note)`
/// (nil = silent), silent between notes.
func take(_ m: ReferenceMelody, pitch: (MelodyNote) -> Double?) throws -> SungTake {
    var times: [Double] = [], hz: [Double?] = []
    let endMs = (m.notes.map(\.endMs).max() ?? 0) + 1000
    var t = 0
    var k = 0
    let notes = m.notes.sorted { $0.startMs < $1.startMs }
    while t < endMs {
        while k < notes.count, notes[k].endMs <= t { k += 1 }
        let cents = k < notes.count && notes[k].startMs <= t ? pitch(notes[k]) : nil
        times.append(Double(t) / 1000)
        hz.append(cents.map { ReferenceMelody.hz(cents: $0) })
        t += 10
    }
    return try LatencyAligner(latencyMs: 0).align(PitchContour(timesS: times, f0Hz: hz))
}

let everyNoteType = """
    #TITLE:Test
    #ARTIST:Someone
    #MP3:test.mp3
    #BPM:300
    #GAP:1000
    : 0 4 0 Hel
    * 4 4 2 lo\u{20}
    F 8 2 5 free
    R 10 2 7 rap
    G 12 2 -3 gold
    - 14
    : 16 4 12 world
    E
    : 99 1 1 after the end
    """

@Suite struct UltraStarFileTests {
    @Test func readsEveryNoteType() throws {
        let m = try ultraStar(everyNoteType)
        #expect(m.beatMs == 50)
        #expect(m.notes == [
            MelodyNote(startMs: 1000, durationMs: 200, cents: 6000, word: "Hel", line: 0, kind: .normal),
            MelodyNote(startMs: 1200, durationMs: 200, cents: 6200, word: "lo ", line: 0, kind: .golden),
            MelodyNote(startMs: 1400, durationMs: 100, cents: nil, word: "free", line: 0, kind: .freestyle),
            MelodyNote(startMs: 1500, durationMs: 100, cents: nil, word: "rap", line: 0, kind: .rap),
            MelodyNote(startMs: 1600, durationMs: 100, cents: nil, word: "gold", line: 0, kind: .goldenRap),
            MelodyNote(startMs: 1800, durationMs: 200, cents: 7200, word: "world", line: 1, kind: .normal),
        ])
        #expect(m.lines == [MelodyLine(startMs: 1000, endMs: 1700, text: "Hello freerapgold"), MelodyLine(startMs: 1800, endMs: 2000, text: "world")])
    }

    @Test func bpmAndGapAreExactToTheMillisecond() throws {
        // One beat is 15000/284.5 ms; #GAP 1234,25 ms; times rounded to the nearest ms.
        let m = try ultraStar("#TITLE:x\n#BPM:284,5\n#GAP:1234,25\n: 0 4 0 a\n: 100 7 0 b\n: 2999 13 0 c\nE\n")
        #expect(m.beatMs == 15_000 / 284.5)
        #expect(m.notes.map(\.startMs) == [1234, 6507, 159_354])
        #expect(m.notes.map(\.durationMs) == [211, 369, 685])
        // A decimal point reads the same; #VERSION 2 does not quadruple the BPM (120 → 500 ms beats).
        #expect(try ultraStar("#TITLE:x\n#BPM:284.5\n#GAP:1234.25\n: 100 7 0 b\n").notes[0].startMs == 6507)
        let v2 = try ultraStar("#VERSION:2.0.0\n#TITLE:x\n#BPM:120\n#GAP:500\n: 3 2 0 a\n")
        #expect(v2.beatMs == 500)
        #expect(v2.notes[0].startMs == 2000 && v2.notes[0].durationMs == 1000)
    }

    @Test func relativeModeMovesEachLineOn() throws {
        let m = try ultraStar("#TITLE:x\n#BPM:300\n#GAP:0\n#RELATIVE:yes\n: 0 2 0 a\n: 4 2 0 b\n- 8 10\n: 0 2 0 c\n- 4 6\n: 1 2 0 d\n")
        #expect(m.notes.map(\.startMs) == [0, 200, 500, 850])
        #expect(m.notes.map(\.line) == [0, 0, 1, 2])
        let e = referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n#RELATIVE:YES\n: 0 2 0 a\n- 8\n: 0 2 0 c\n") }
        #expect(e?.line == 5 && e?.detail.contains("relative mode") == true)
    }

    @Test func readsEachVoiceOfADuet() throws {
        let duet = "#TITLE:x\n#BPM:300\n#GAP:0\n#P1:Ann\n#P2:Bob\nP1\n: 0 4 0 one\n- 4\n: 8 4 2 two\nP2\n: 0 4 5 three\n- 4\n: 10 4 7 four\nP3\n: 20 2 9 both\nE\n"
        let one = try ultraStar(duet), two = try ultraStar(duet, player: 2)
        #expect(one.notes.map(\.word) == ["one", "two", "both"])
        #expect(one.lines.map(\.text) == ["one", "twoboth"])
        #expect(two.notes.map(\.word) == ["three", "four", "both"])
        #expect(two.notes.map(\.startMs) == [0, 500, 1000])
        #expect(two.notes.map(\.cents) == [6500, 6700, 6900])
        let notDuet = referenceError { _ = try ultraStar(everyNoteType, player: 2) }
        #expect(notDuet?.detail.contains("not a duet") == true)
        // Through the reader, with the player option.
        #expect(try readReference(Array(duet.utf8), name: "duet.txt", options: ReferenceOptions(player: 2)).notes.count == 3)
    }

    @Test func readsEncodingsAndLineEndings() throws {
        // CP1252 by #ENCODING, CRLF line ends, and a CP1252 file that does not say so.
        var cp1252 = Array("#ENCODING:CP1252\r\n#TITLE:x\r\n#BPM:300\r\n: 0 4 0 Caf".utf8) + [0xE9] + Array("\r\nE\r\n".utf8)
        #expect(try UltraStarFile.read(cp1252, path: "a.txt").notes[0].word == "Café")
        cp1252.removeFirst("#ENCODING:CP1252\r\n".utf8.count)
        #expect(try UltraStarFile.read(cp1252, path: "a.txt").notes[0].word == "Café")
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("#TITLE:x\n#BPM:300\n: 0 4 0 Grüß\n".utf8)
        #expect(UltraStarFile.looksLike(bom))
        #expect(try UltraStarFile.read(bom, path: "a.txt").notes[0].word == "Grüß")
    }

    @Test func badInputNamesTheLine() throws {
        let noBPM = referenceError { _ = try ultraStar("#TITLE:x\n#GAP:10\n\n: 0 4 0 a\n") }
        #expect(noBPM?.line == 4 && noBPM?.detail.contains("#BPM") == true)
        let notNumbers = referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n: 0 4 0 a\n: 4 x2 0 b\n") }
        #expect(notNumbers?.line == 4 && notNumbers?.detail.contains("length `x2` is not a whole number") == true)
        let missing = referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n: 0 4\n") }
        #expect(missing?.line == 3 && missing?.detail.contains("pitch is missing") == true)
        #expect(referenceError { _ = try ultraStar("#TITLE:x\n#BPM:0\n: 0 4 0 a\n") }?.line == 2)
        #expect(referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n: 0 4 90 a\n") }?.detail.contains("outside MIDI") == true)
        #expect(referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n: 0 4 0 a\nB 10 200\n") }?.line == 4)
        #expect(referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n#GAP:-5000\n: 0 4 0 a\n") }?.detail.contains("outside the audio") == true)
        #expect(referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\n: 99999999999 4 0 a\n") }?.line == 3)
        #expect(referenceError { _ = try ultraStar("#TITLE:x\n#BPM:300\nE\n") }?.detail.contains("no notes") == true)
    }

    @Test func writesWhatItReads() throws {
        // A song on a 50 ms beat, written and read back: the same melody, to the ms.
        let m = try ultraStar(everyNoteType)
        let text = String(decoding: UltraStarFile.write(m, title: "Test", artist: "Someone"), as: UTF8.self)
        #expect(text.contains("#BPM:300\n#GAP:1000\n"))
        #expect(try ultraStar(text) == m)
        // A song on an odd beat keeps it (every boundary within 1 ms).
        let odd = try ultraStar("#TITLE:x\n#BPM:284,5\n#GAP:1234,25\n: 0 4 0 a\n: 100 7 3 b\n- 107\n* 2999 13 5 c\nE\n")
        let back = try ultraStar(String(decoding: UltraStarFile.write(odd, title: "x", artist: "y"), as: UTF8.self))
        #expect(back.lines.map(\.text) == odd.lines.map(\.text) && back.notes.map(\.kind) == odd.notes.map(\.kind))
        for (a, b) in zip(back.notes, odd.notes) {
            #expect(abs(a.startMs - b.startMs) <= 1 && abs(a.endMs - b.endMs) <= 1 && a.cents == b.cents)
        }
    }

    @Test func writesMelodiesFromOtherReferencesOnAnExactGrid() throws {
        // Times on a 20 ms grid: the beat is 20 ms (BPM 750) and every boundary is exact.
        var notes: [MelodyNote] = []
        var t = 980
        var rng = SeededGenerator(seed: 11)
        for k in 0..<24 {
            let dur = 20 * Int.random(in: 5...30, using: &rng)
            notes.append(MelodyNote(startMs: t, durationMs: dur, cents: Double(Int.random(in: 48...80, using: &rng)) * 100, word: "w\(k) ", line: k / 6,
                                    kind: k % 7 == 3 ? .golden : .normal))
            t += dur + (k % 6 == 5 ? 1000 : 40)
        }
        let m = ReferenceReader.grouped(notes, scale: .absolute)
        let text = String(decoding: UltraStarFile.write(m, title: "t", artist: "a"), as: UTF8.self)
        #expect(text.contains("#BPM:750\n#GAP:980\n"))
        var back = try ultraStar(text)
        #expect(back.beatMs == 20)
        back.beatMs = nil
        #expect(back == m)
        // A beat the format cannot say (1 ms is BPM 15000) is not kept.
        var fine = m
        fine.beatMs = 1
        #expect(try ultraStar(String(decoding: UltraStarFile.write(fine, title: "t", artist: "a"), as: UTF8.self)).notes.count == m.notes.count)
        // Times off any grid: 10 ms beats (BPM 1500), each boundary within 5 ms.
        let loose = ReferenceReader.grouped([MelodyNote(startMs: 1003, durationMs: 297, cents: 6000), MelodyNote(startMs: 1312, durationMs: 141, cents: 6100)],
                                            scale: .absolute)
        let looseText = String(decoding: UltraStarFile.write(loose, title: "t", artist: "a"), as: UTF8.self)
        #expect(looseText.contains("#BPM:1500\n"))
        for (a, b) in zip(try ultraStar(looseText).notes, loose.notes) { #expect(abs(a.startMs - b.startMs) <= 5 && abs(a.endMs - b.endMs) <= 5) }
        // Unpitched notes become freestyle.
        let unpitched = ReferenceReader.grouped([MelodyNote(startMs: 0, durationMs: 100, cents: 6000), MelodyNote(startMs: 100, durationMs: 100, cents: nil)], scale: .absolute)
        #expect(String(decoding: UltraStarFile.write(unpitched, title: "t", artist: "a"), as: UTF8.self).contains("\nF 2 2 0 \n"))
    }

    @Test func theReaderFindsUltraStarByItsHeaders() throws {
        let m = try readReference(Array(everyNoteType.utf8), name: "song.txt")
        #expect(m == (try ultraStar(everyNoteType)))
        #expect(!UltraStarFile.looksLike(Array("[00:01.00]hello\n".utf8)))
        #expect(!UltraStarFile.looksLike(Array("#EXTM3U\nfoo\n".utf8)))
    }
}

@Suite struct UltraStarRulesTests {
    /// Two lines: a normal note (8 beats) and a golden note (4 beats, worth 8), then a freestyle
    /// note, a rap note and a normal note (4 beats each).
    let song = """
        #TITLE:Rules
        #BPM:300
        #GAP:500
        : 0 8 0 nor
        * 10 4 4 gold
        - 16
        F 20 4 7 free
        R 24 4 0 rap
        : 30 4 -5 low
        E
        """

    func judge(_ m: ReferenceMelody, _ t: SungTake, _ difficulty: UltraStarRulesConfiguration.Difficulty = .medium) throws -> ScoreCard {
        try UltraStarRules(configuration: UltraStarRulesConfiguration(difficulty: difficulty)).judge(t, against: m)
    }

    @Test func aPerfectTakeScores10000() throws {
        let m = try ultraStar(song)
        let card = try judge(m, try take(m) { $0.cents ?? 5500 })
        #expect(card.score == 10_000 && card.maxScore == 10_000)
        #expect(card.lines.map(\.score) == [100, 100])
        #expect(card.judgedShare == 1)
        #expect(card.rules == "ultrastar")
        // Freestyle is not judged: singing it wrong, or not at all, changes nothing.
        let wrongFreestyle = try judge(m, try take(m) { $0.kind == .freestyle ? 4000 : $0.cents ?? 5500 })
        #expect(wrongFreestyle.score == 10_000)
        #expect(wrongFreestyle.lines[1].notes[0].score == nil)
    }

    @Test func goldenNotesCountDouble() throws {
        let m = try ultraStar(song)
        // Value: normal 8 + golden 4×2 + rap 4 + normal 4 = 24 beats' worth; 375 points each.
        let goldOnly = try judge(m, try take(m) { $0.kind == .golden ? $0.cents : nil })
        let normalOnly = try judge(m, try take(m) { $0.word == "nor" ? $0.cents : nil })
        // 8 × 375 = 3000 note points each; line 1 bonus (500) × perfection 3000 / (6000 − 2).
        let goldExpected: Double = 3000 + 500 * 3000 / 5998
        #expect(goldOnly.score == goldExpected.rounded())
        #expect(normalOnly.score == goldOnly.score)
        #expect(goldOnly.lines[0].score == 50)
        // The rap note: any voiced beat hits, whatever its pitch.
        let rapOnly = try judge(m, try take(m) { $0.kind == .rap ? 3000 : nil })
        #expect(rapOnly.lines[1].notes[1].score == 100)
        let rapExpected: Double = 1500 + 500 * 1500 / 2998
        #expect(rapOnly.score == rapExpected.rounded())
    }

    @Test func toleranceFollowsTheDifficulty() throws {
        let m = try ultraStar(song)
        func score(_ offsetCents: Double, _ d: UltraStarRulesConfiguration.Difficulty) throws -> Double {
            try judge(m, try take(m) { $0.kind == .rap ? 6000 : $0.cents.map { $0 + offsetCents } }, d).score
        }
        // Semitones are rounded as the game detects them: +149 cents is one semitone, +151 two.
        #expect(try score(49, .hard) == 10_000)
        #expect(try score(51, .hard) < 2_000)
        #expect(try score(149, .medium) == 10_000)
        #expect(try score(151, .medium) < 2_000)
        #expect(try score(-149, .medium) == 10_000)
        #expect(try score(249, .easy) == 10_000)
        #expect(try score(251, .easy) < 2_000)
        #expect(try score(-251, .easy) < 2_000)
    }

    @Test func anOctaveOffIsInKey() throws {
        let m = try ultraStar(song)
        #expect(try judge(m, try take(m) { $0.cents.map { $0 - 1200 } ?? 6000 }, .hard).score == 10_000)
        #expect(try judge(m, try take(m) { $0.cents.map { $0 + 2400 } ?? 6000 }, .hard).score == 10_000)
        // A tritone is as far as folding goes: it misses at every level.
        #expect(try judge(m, try take(m) { $0.cents.map { $0 + 600 } ?? 6000 }, .easy).lines[0].score == 0)
    }

    @Test func referencesWithoutBeatsAreJudgedOn50MsBeats() throws {
        let m = ReferenceReader.grouped([MelodyNote(startMs: 1000, durationMs: 500, cents: 6000), MelodyNote(startMs: 1600, durationMs: 520, cents: 6200)],
                                        scale: .absolute)
        // The first note sung only in its first 250 ms: 5 of its 10 beats.
        let card = try judge(m, try take(m) { n in n.startMs == 1000 ? nil : n.cents })
        #expect(card.lines[0].notes[0].score == 0)
        let half = try UltraStarRules().judge(try take(m) { $0.cents }, against: m)
        #expect(half.score == 10_000)
        var partial = try take(m) { $0.cents }
        partial.contour.f0Hz = zip(partial.contour.timesS, partial.contour.f0Hz).map { t, f in t >= 1.25 && t < 1.5 ? nil : f }
        let card2 = try UltraStarRules().judge(partial, against: m)
        #expect(card2.lines[0].notes[0].score == 50)
        #expect(card2.lines[0].notes[1].score == 100)
    }

    @Test func aRelativeScaleIsJudgedInTheKeySung() throws {
        // Agora's 0-100 scale has no key: a take 7 semitones above it throughout is in tune.
        var m = try ultraStar(song)
        m.scale = .relative
        let card = try judge(m, try take(m) { $0.cents.map { $0 + 700 } ?? 6000 }, .hard)
        #expect(card.keyShiftCents == 700 && card.score == 10_000)
        m.scale = .absolute
        #expect(try judge(m, try take(m) { $0.cents.map { $0 + 700 } ?? 6000 }, .hard).keyShiftCents == 0)
    }

    @Test func outOfRangeSettingsAreRefused() {
        var c = UltraStarRulesConfiguration()
        c.defaultBeatMs = 5
        #expect(throws: ScoreError.self) { try c.validated() }
        #expect(UltraStarRulesConfiguration.Spec.difficulty.help.contains("easy…hard"))
    }
}
