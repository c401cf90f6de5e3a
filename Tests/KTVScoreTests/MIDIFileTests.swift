import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// A track chunk from (delta ticks, event bytes), ended by `FF 2F 00`.
func midiTrack(_ events: [(Int, [UInt8])]) -> [UInt8] {
    var body: [UInt8] = []
    for (delta, bytes) in events { body += MIDIFile.vlq(delta) + bytes }
    body += [0x00, 0xFF, 0x2F, 0x00]
    return Array("MTrk".utf8) + MIDIFile.be32(body.count) + body
}

func midiFile(format: Int, division: Int, _ tracks: [[UInt8]]) -> [UInt8] {
    Array("MThd".utf8) + MIDIFile.be32(6) + [0, UInt8(format), 0, UInt8(tracks.count), UInt8(division >> 8), UInt8(division & 0xFF)] + tracks.flatMap { $0 }
}

func tempo(_ micros: Int) -> [UInt8] { [0xFF, 0x51, 0x03, UInt8(micros >> 16), UInt8(micros >> 8 & 0xFF), UInt8(micros & 0xFF)] }
func lyric(_ text: String) -> [UInt8] { MIDIFile.meta(0x05, Array(text.utf8)) }
func text(_ text: String) -> [UInt8] { MIDIFile.meta(0x01, Array(text.utf8)) }

func midi(_ bytes: [UInt8], track: Int? = nil) throws -> ReferenceMelody {
    try MIDIFile.read(bytes, path: "song.mid", track: track)
}

@Suite struct MIDIFileTests {
    /// Format 0, 96 ticks a quarter: 120 BPM (500 ms a quarter), then from tick 384 (2000 ms)
    /// 240 BPM. A note-on of velocity 0 under running status ends the second note.
    let format0 = midiFile(format: 0, division: 96, [midiTrack([
        (0, tempo(500_000)), (0, lyric("Hel")), (0, [0x90, 60, 100]),
        (96, [0x80, 60, 64]),
        (96, lyric("lo ")), (0, [0x90, 62, 100]),
        (96, [62, 0]),
        (96, tempo(250_000)), (0, lyric("world")), (0, [0x90, 64, 90]),
        (96, [0x80, 64, 0]),
        (96, [0x90, 65, 90]),
        (96, [0x80, 65, 0]),
    ])])

    @Test func readsFormat0WithATempoChange() throws {
        let m = try midi(format0)
        #expect(m.notes.map(\.startMs) == [0, 1000, 2000, 2500])
        #expect(m.notes.map(\.endMs) == [500, 1500, 2250, 2750])
        #expect(m.notes.map(\.cents) == [6000, 6200, 6400, 6500])
        #expect(m.notes.map(\.word) == ["Hel", "lo ", "world", ""])
        // No line marks and no silence of 800 ms: one line.
        #expect(m.lines == [MelodyLine(startMs: 0, endMs: 2750, text: "Hello world")])
        #expect(m.beatMs == nil)
    }

    @Test func readsFormat1KaraokeWithChordsAndLineMarks() throws {
        // 100 ticks a quarter; the tempo track: 600000 µs (6 ms a tick), from tick 400 300000 µs (3 ms).
        let conductor = midiTrack([(0, tempo(600_000)), (400, tempo(300_000))])
        // .kar words: `@` headers, `\` a paragraph, `/` a line.
        let words = midiTrack([(0, text("@KMIDI KARAOKE FILE")), (0, text("@TTwinkle")), (100, text("\\Twin")), (100, text("kle ")),
                               (200, text("/lit")), (100, text("tle"))])
        // A chord (60+64), then 67 over 60 (60 resumes when 67 ends), then single notes.
        let melody = midiTrack([(100, [0x90, 60, 80]), (0, [0x90, 64, 80]),
                                (100, [0x80, 60, 0]), (0, [0x80, 64, 0]), (0, [0x90, 67, 80]), (0, [0x90, 60, 80]),
                                (100, [0x80, 67, 0]),
                                (100, [0x80, 60, 0]), (0, [0x90, 74, 80]),
                                (50, [0x80, 74, 0]),
                                (50, [0x90, 76, 80]),
                                (100, [0x80, 76, 0])])
        let file = midiFile(format: 1, division: 100, [conductor, words, melody])
        let m = try midi(file)
        #expect(m.notes.map(\.cents) == [6400, 6700, 6000, 7400, 7600])
        #expect(m.notes.map(\.startMs) == [600, 1200, 1800, 2400, 2700])
        #expect(m.notes.map(\.endMs) == [1200, 1800, 2400, 2550, 3000])
        #expect(m.notes.map(\.word) == ["Twin", "kle ", "", "lit", "tle"])
        #expect(m.notes.map(\.line) == [0, 0, 0, 1, 1])
        #expect(m.lines.map(\.text) == ["Twinkle", "little"])
        #expect(try midi(file, track: 3) == m)
        let empty = referenceError { _ = try midi(file, track: 2) }
        #expect(empty?.detail == "no notes in track 2; tracks with notes: 3")
        #expect(referenceError { _ = try midi(file, track: 4) }?.detail.contains("track 4 does not exist; the file has 3 tracks") == true)
    }

    @Test func linesSplitAtSilencesWithoutMarks() throws {
        // 500 ms notes; a 900 ms silence splits them, a 500 ms one does not.
        let file = midiFile(format: 0, division: 96, [midiTrack([
            (0, [0x90, 60, 90]), (96, [0x80, 60, 0]), (96, [0x90, 62, 90]), (96, [0x80, 62, 0]),
            (173, [0x90, 64, 90]), (96, [0x80, 64, 0]),
        ])])
        let m = try midi(file)
        #expect(m.notes.map(\.line) == [0, 0, 1])
    }

    @Test func writesAType0FileThatReadsBack() throws {
        var notes: [MelodyNote] = []
        var rng = SeededGenerator(seed: 5)
        var t = 1000
        for k in 0..<20 {
            let dur = Int.random(in: 120...900, using: &rng)
            notes.append(MelodyNote(startMs: t, durationMs: dur, cents: Double(Int.random(in: 45...84, using: &rng)) * 100,
                                    word: k % 5 == 4 ? "end " : "s\(k)", line: k / 5))
            t += dur + Int.random(in: 0...300, using: &rng)
        }
        let m = ReferenceReader.grouped(notes, scale: .absolute)
        let bytes = MIDIFile.write(m, title: "Generated")
        #expect(Array(bytes[8..<14]) == [0, 0, 0, 1, 0x01, 0xE0])  // format 0, one track, 480 a quarter
        #expect(try midi(bytes) == m)
        // Unpitched and zero-length notes are left out; the line mark moves to the next note.
        var gaps = m
        gaps.notes[5].cents = nil
        gaps.notes[6].durationMs = 0
        let back = try midi(MIDIFile.write(gaps))
        #expect(back.notes.count == m.notes.count - 2)
        #expect(back.lines.count == m.lines.count)
    }

    @Test func theReaderFindsMIDIByItsMagic() throws {
        #expect(try readReference(format0, name: "song.bin") == (try midi(format0)))
    }

    @Test func badFilesAreRefusedWithByteOffsets() throws {
        let noNotes = midiFile(format: 1, division: 96, [midiTrack([(0, tempo(500_000))]), midiTrack([(0, lyric("la"))])])
        #expect(referenceError { _ = try midi(noNotes) }?.detail.hasPrefix("no notes in the file") == true)
        #expect(referenceError { _ = try readReference(noNotes, name: "empty.mid") }?.detail.hasPrefix("no notes") == true)
        // A track claiming far more bytes than the file has: refused before anything is read.
        for claim in [1_000_000, 0xFFFF_FFFF] {
            let truncated = Array(format0[0..<14]) + Array("MTrk".utf8) + MIDIFile.be32(claim) + [0x00, 0x90, 60]
            let e = referenceError { _ = try midi(truncated) }
            #expect(e?.detail.hasPrefix("byte offset 14: the MTrk chunk claims \(claim) bytes, only 3 remain") == true, "\(String(describing: e))")
        }
        #expect(referenceError { _ = try midi(Array(format0[0..<10])) }?.detail.contains("the MThd header needs 14 bytes") == true)
        #expect(referenceError { _ = try midi(Array(format0[0..<30])) }?.detail.contains("truncated") == true)
        let smpte = midiFile(format: 0, division: 0xE728, [midiTrack([(0, [0x90, 60, 90]), (10, [0x80, 60, 0])])])
        #expect(referenceError { _ = try midi(smpte) }?.detail == "byte offset 12: SMPTE time division is not supported; save the file with ticks per quarter note")
        let format2 = midiFile(format: 2, division: 96, [midiTrack([(0, [0x90, 60, 90]), (10, [0x80, 60, 0])])])
        #expect(referenceError { _ = try midi(format2) }?.detail.contains("format 2") == true)
        // A data byte where a status belongs, at the track's first event (byte 23).
        let noStatus = midiFile(format: 0, division: 96, [midiTrack([(0, [60, 90])])])
        #expect(referenceError { _ = try midi(noStatus) }?.detail.hasPrefix("byte offset 23: a data byte 0x3C") == true)
        // A meta event longer than its track.
        let longMeta = midiFile(format: 0, division: 96, [Array("MTrk".utf8) + MIDIFile.be32(4) + [0x00, 0xFF, 0x05, 0x7F]])
        #expect(referenceError { _ = try midi(longMeta) }?.detail.contains("a meta event needs 127 bytes, only 0 remain") == true)
    }

    @Test func mutatedFilesAreReadOrRefusedNeverCrash() {
        // Seeded mutations of a MIDI file and an UltraStar song: bytes changed, inserted, cut.
        var rng = SeededGenerator(seed: 99)
        let seeds = [format0, Array(everyNoteType.utf8)]
        var refused = 0
        for seed in seeds {
            for _ in 0..<400 {
                var b = seed
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    let k = Int.random(in: 0..<b.count, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: b[k] = UInt8.random(in: 0...255, using: &rng)
                    case 1: b.insert(UInt8.random(in: 0...255, using: &rng), at: k)
                    case 2: b.removeSubrange(k...)
                    default: b[k] = [0x00, 0x7F, 0x80, 0xFF][Int.random(in: 0..<4, using: &rng)]
                    }
                    if b.isEmpty { b = [0] }
                }
                do { _ = try MIDIFile.read(b, path: "m") } catch { refused += 1 }
                do { _ = try UltraStarFile.read(b, path: "u") } catch { refused += 1 }
            }
        }
        #expect(refused > 0)
    }
}
