import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// The committed MusicXML fixtures (fixtures/musicxml, written by hand; the .mxl files zipped from
/// them, see its README.md), read with exact results; hostile variants; the writer read back.
@Suite struct MusicXMLTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/musicxml")

    func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: Self.directory.appendingPathComponent(name))) }

    func read(_ name: String, part: Int? = nil) throws -> ReferenceMelody {
        try ReferenceReader.parse(try bytes(name), path: name, options: ReferenceOptions(part: part))
    }

    func read(text: String, part: Int? = nil) throws -> ReferenceMelody {
        try ReferenceReader.parse(Array(text.utf8), path: "t.musicxml", options: ReferenceOptions(part: part))
    }

    /// What the tenor part of tied-tempo-transposed.musicxml sounds, worked out by hand: 60 quarter
    /// notes a minute for two measures (4 s each), then "half = 60" (500 ms a quarter); written an
    /// octave above sounding; the tie across the barline is one note of 3 s; voice 2's F sounds in
    /// voice 1's rest; the chord gives its top note with the word of its lower; D half-flat is 61.5.
    static let tenor: [MelodyNote] = [
        MelodyNote(startMs: 0, durationMs: 2000, cents: 5500, word: "Hel", line: 0),
        MelodyNote(startMs: 2000, durationMs: 3000, cents: 5700, word: "lo ", line: 0),
        MelodyNote(startMs: 5000, durationMs: 1000, cents: 5300, word: "", line: 0),
        MelodyNote(startMs: 6000, durationMs: 2000, cents: 5900, word: "world ", line: 0),
        MelodyNote(startMs: 8000, durationMs: 500, cents: 6400, word: "sing", line: 1),
        MelodyNote(startMs: 8500, durationMs: 500, cents: 6200, word: "ing ", line: 1),
        MelodyNote(startMs: 9000, durationMs: 500, cents: 6100, word: "la ", line: 1),
        MelodyNote(startMs: 9500, durationMs: 500, cents: 6150, word: "end ", line: 1),
    ]

    @Test func tenorPartIsReadWithTiesTempoChangeAndTransposition() throws {
        let m = try read("tied-tempo-transposed.musicxml")
        #expect(m.notes == Self.tenor)
        // Breath marks end the lines.
        #expect(m.lines == [MelodyLine(startMs: 0, endMs: 8000, text: "Hello world"), MelodyLine(startMs: 8000, endMs: 10000, text: "singing la end")])
        #expect(m.scale == .absolute)
        #expect(m.beatMs == nil)
    }

    @Test func otherPartsByNumber() throws {
        // The clarinet sounds a tone below written: A4 → G4, E5 → D5; the tempo marks come from the piano.
        let clarinet = try read("tied-tempo-transposed.musicxml", part: 3)
        #expect(clarinet.notes.map { [$0.startMs, $0.endMs, Int($0.cents ?? -1)] } == [[0, 4000, 6700], [8000, 9000, 7400]])
        // The piano's chords give their top notes.
        let piano = try read("tied-tempo-transposed.musicxml", part: 1)
        #expect(piano.notes.map { [$0.startMs, $0.endMs, Int($0.cents ?? -1)] } == [[0, 4000, 6700], [8000, 10000, 5700]])
        #expect(throws: ScoreError.self) { try read("tied-tempo-transposed.musicxml", part: 4) }
        do {
            _ = try read("tied-tempo-transposed.musicxml", part: 4)
        } catch {
            #expect("\(error)".contains("part 4 does not exist; the score has 3 parts: 1 `Piano`, 2 `Tenor`, 3 `Clarinet in B♭`"), "\(error)")
        }
    }

    @Test func compressedScoreIsTheSame() throws {
        #expect(try read("tied-tempo-transposed.mxl") == read("tied-tempo-transposed.musicxml"))
        // Without META-INF/container.xml, the first .xml entry.
        #expect(try read("no-container.mxl") == read("repeat-verses.musicxml"))
    }

    @Test func zipBombStopsAtTheCap() throws {
        // 2 MiB of spaces in 2.4 KB, read with a 1 MiB cap.
        do {
            _ = try MusicXMLFile.read(try bytes("bomb-2mib.mxl"), path: "bomb.mxl", maxBytes: 1_048_576)
            Issue.record("a 2 MiB entry was read under a 1 MiB cap")
        } catch {
            #expect("\(error)".contains("`big.musicxml` unpacks to more than 1 MiB"), "\(error)")
        }
    }

    @Test func brokenZipIsRefused() throws {
        var zip = try bytes("tied-tempo-transposed.mxl")
        zip.removeLast(200)   // the central directory is gone
        #expect(throws: ScoreError.self) { try MusicXMLFile.read(zip, path: "cut.mxl") }
        var flipped = try bytes("tied-tempo-transposed.mxl")
        if let k = flipped.indices.dropFirst(400).first { flipped[k] ^= 0xFF }   // inside the score's compressed data
        #expect(throws: ScoreError.self) { try MusicXMLFile.read(flipped, path: "flipped.mxl") }
    }

    @Test func repeatsAndEndingsArePlayedOutWithTheVerseOfEachPass() throws {
        let m = try read("repeat-verses.musicxml")
        #expect(m.notes.map(\.startMs) == [0, 2000, 4000, 6000, 8000])
        #expect(m.notes.map { $0.cents ?? -1 } == [6000, 6200, 6000, 6400, 6500])
        #expect(m.notes.map(\.word) == ["one ", "a ", "two ", "b ", "end "])
        #expect(m.lines == [MelodyLine(startMs: 0, endMs: 10000, text: "one a two b end")])
    }

    @Test func utf16AndByteOrderMarksAreRead() throws {
        let text = String(decoding: try bytes("repeat-verses.musicxml"), as: UTF8.self)
        let utf16: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(try ReferenceReader.parse(utf16, path: "u.musicxml") == read("repeat-verses.musicxml"))
        #expect(try ReferenceReader.parse([0xEF, 0xBB, 0xBF] + Array(text.utf8), path: "b.musicxml") == read("repeat-verses.musicxml"))
    }

    /// A two-part score, partwise and the same timewise.
    static let duo = (partwise: """
        <score-partwise><part-list><score-part id="A"/><score-part id="B"/></part-list>
        <part id="A"><measure number="1"><attributes><divisions>1</divisions></attributes>
          <note><pitch><step>C</step><octave>5</octave></pitch><duration>2</duration></note>
          <note><pitch><step>D</step><octave>5</octave></pitch><duration>2</duration></note></measure></part>
        <part id="B"><measure number="1"><attributes><divisions>2</divisions></attributes>
          <direction><sound tempo="60"/></direction>
          <note><pitch><step>E</step><octave>4</octave></pitch><duration>8</duration><lyric><text>la</text></lyric></note></measure></part>
        </score-partwise>
        """, timewise: """
        <score-timewise><part-list><score-part id="A"/><score-part id="B"/></part-list>
        <measure number="1">
          <part id="A"><attributes><divisions>1</divisions></attributes>
            <note><pitch><step>C</step><octave>5</octave></pitch><duration>2</duration></note>
            <note><pitch><step>D</step><octave>5</octave></pitch><duration>2</duration></note></part>
          <part id="B"><attributes><divisions>2</divisions></attributes>
            <direction><sound tempo="60"/></direction>
            <note><pitch><step>E</step><octave>4</octave></pitch><duration>8</duration><lyric><text>la</text></lyric></note></part>
        </measure>
        </score-timewise>
        """)

    @Test func timewiseScoresAreRegroupedIntoParts() throws {
        // Part B has the lyrics, so it is the default; its tempo mark (60) sets the clock of part A too.
        let b = try read(text: Self.duo.partwise)
        #expect(b.notes == [MelodyNote(startMs: 0, durationMs: 4000, cents: 6400, word: "la ", line: 0)])
        let a = try read(text: Self.duo.partwise, part: 1)
        #expect(a.notes.map { [$0.startMs, $0.endMs] } == [[0, 2000], [2000, 4000]])
        #expect(try read(text: Self.duo.timewise) == b)
        #expect(try read(text: Self.duo.timewise, part: 1) == a)
    }

    /// Each hostile or broken score, with the line and words its error must carry.
    @Test(arguments: [
        ("<score-partwise><part id=\"P\"><measure><note><pitch><step>C</step><octave>4</octave></pitch><duration>1</duration></note></measure></part></score-partwise>",
         "t.musicxml:1: a note comes before any `<divisions>`"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>1</divisions></attributes>\n<note><pitch><step>H</step><octave>4</octave></pitch><duration>1</duration></note></measure></part></score-partwise>",
         "t.musicxml:2: `<step>` is `H`"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>0</divisions></attributes></measure></part></score-partwise>",
         "`<divisions>` is `0`"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>1</divisions></attributes><sound tempo=\"-5\"/></measure></part></score-partwise>",
         "a tempo is quarter notes a minute, above 0"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>1</divisions></attributes><backup><duration>3</duration></backup></measure></part></score-partwise>",
         "`<backup>` goes back before the start of measure 1"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>1</divisions></attributes><note><duration>1</duration></note></measure></part></score-partwise>",
         "a note with neither `<pitch>`, `<unpitched>` nor `<rest>`"),
        ("<score-partwise><part id=\"P\"><measure><barline><repeat direction=\"backward\" times=\"99999999\"/></barline></measure></part></score-partwise>",
         "the repeats play out to more than 100000 measures"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>1</divisions></attributes><note><rest/><duration>4</duration></note></measure></part></score-partwise>",
         "part 1 (`P`) has no note to sing"),
        ("<score-partwise></score-partwise>", "the score has no `<part>`"),
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>1e-300</divisions></attributes><note><pitch><step>C</step><octave>4</octave></pitch><duration>1e9</duration></note></measure></part></score-partwise>",
         "this note lies past 24 hours"),   // the position overflows to infinity
        ("<score-partwise><part id=\"P\"><measure><attributes><divisions>0.001</divisions></attributes><note><pitch><step>C</step><octave>4</octave></pitch><duration>1e9</duration></note></measure></part></score-partwise>",
         "this note lies past 24 hours"),
        ("<score-partwise><part id=\"P\"><measure>\n<note>", "t.musicxml:2: not well-formed XML: element `<note>` is never closed"),
    ])
    func brokenScoresAreRefusedWithTheirLine(text: String, expected: String) throws {
        do {
            let m = try read(text: text)
            Issue.record("read \(m.notes.count) notes from a broken score; expected \(expected)")
        } catch {
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    /// Seeded random melodies (notes crossing barlines and lasting several measures, fractions of a
    /// semitone, unpitched notes, syllables and whole words, several lines) written and read back.
    @Test func writtenScoresReadBackTheSame() throws {
        var rng = SeededGenerator(seed: 22)
        for _ in 0..<50 {
            var notes: [MelodyNote] = []
            var t = Int(rng.next() % 3000), line = 0
            for k in 0..<Int(rng.next() % 40 + 1) {
                if k > 0, rng.next() % 6 == 0 { line += 1; t += 900 + Int(rng.next() % 2000) }
                let d = Int(rng.next() % 5000) + 1
                let cents: Double? = rng.next() % 10 == 0 ? nil : Double(4000 + Int(rng.next() % 4000)) + (rng.next() % 3 == 0 ? Double(rng.next() % 100) : 0)
                let words = ["la", "li ", "", "ok ", "字", "&<\"x\" "]
                notes.append(MelodyNote(startMs: t, durationMs: d, cents: cents, word: words[Int(rng.next() % 6)], line: line))
                t += d + (rng.next() % 3 == 0 ? Int(rng.next() % 700) : 0)
            }
            if !notes.contains(where: { $0.cents != nil }) { notes[0].cents = 6000 }
            let melody = ReferenceReader.grouped(notes, scale: .absolute)
            let back = try ReferenceReader.parse(MusicXMLFile.write(melody, title: "t"), path: "w.musicxml")
            #expect(back.notes.map(\.startMs) == melody.notes.map(\.startMs))
            #expect(back.notes.map(\.durationMs) == melody.notes.map(\.durationMs))
            for (a, b) in zip(back.notes, melody.notes) {
                #expect(abs((a.cents ?? -1) - (b.cents ?? -1)) < 0.006)
                #expect(a.word.trimmingCharacters(in: .whitespaces) == b.word.trimmingCharacters(in: .whitespaces))
            }
            // A line of unpitched, wordless notes only still reads back as its own line.
            #expect(back.lines.map(\.text) == melody.lines.map(\.text))
            #expect(back.lines.map(\.startMs) == melody.lines.map(\.startMs))
        }
    }

    /// Chinese lyrics as Chinese scores write them: a `single` syllable per character (no hyphens
    /// between them in a notation program), `end` where a space follows; read back as written.
    @Test func chineseCharactersAreSingleSyllables() throws {
        let words = ["我", "不", "会", "发", "现 ", "我", "难", "受"]
        let notes = words.enumerated().map { MelodyNote(startMs: 1000 + $0.offset * 400, durationMs: 300, cents: 6000, word: $0.element, line: 0) }
        let melody = ReferenceReader.grouped(notes, scale: .absolute)
        let xml = String(decoding: MusicXMLFile.write(melody), as: UTF8.self)
        #expect(xml.components(separatedBy: "<syllabic>single</syllabic>").count - 1 == 7)
        #expect(xml.contains("<syllabic>end</syllabic><text>现</text>"))
        let back = try ReferenceReader.parse(Array(xml.utf8), path: "zh.musicxml")
        #expect(back.lines.map(\.text) == ["我不会发现 我难受"])
    }

    /// The issue's check: the MusicXML score and the same melody given note by note score a take
    /// alike, under each rule set, for a take that sings it well and one that sings it badly.
    @Test func musicXMLScoresATakeAsItsNotesDo() throws {
        let xml = try read("tied-tempo-transposed.musicxml")
        let notes = ReferenceMelody(notes: Self.tenor, lines: [MelodyLine(startMs: 0, endMs: 8000, text: "Hello world"),
                                                              MelodyLine(startMs: 8000, endMs: 10000, text: "singing la end")])
        for (detune, spread) in [(0.0, 10.0), (60.0, 80.0)] {
            var rng = SeededGenerator(seed: 7)
            var t: [Double] = [], f: [Double?] = []
            for ms in stride(from: 0, to: 10_500, by: 10) {
                t.append(Double(ms) / 1000)
                let n = Self.tenor.last { $0.startMs <= ms && ms < $0.endMs - 40 }
                let wobble = (Double(rng.next() % 1000) / 1000 - 0.5) * spread
                f.append(n.map { ReferenceMelody.hz(cents: ($0.cents ?? 0) + detune + wobble) })
            }
            let take = try LatencyAligner(latencyMs: 0).align(PitchContour(timesS: t, f0Hz: f))
            for rules in [KTVRules() as any ScoringRules, AgoraRules(), UltraStarRules()] {
                let a = try rules.judge(take, against: xml).score, b = try rules.judge(take, against: notes).score
                #expect(abs(a - b) <= 1, "\(rules.name): \(a) vs \(b)")
            }
        }
    }
}
