import Foundation
import Testing
import KTVCore
import KTVLyrics
@testable import KTVScore

/// References the tests write themselves: a KRC with Agora pitchDatas, a KRC with Agora's binary
/// contour, a pitch track, and notes JSON with an empty line; each scored by a take that sings it.
@Suite struct ReferenceReaderTests {
    let dir: String = {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-ref-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }()

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let p = dir + "/" + name
        try FileIO.writeAtomically(bytes, to: p)
        return p
    }

    /// Two KRC lines of two words each: 1000-1600 ("la", "li"), 2000-2600 ("lo", "lu").
    func krc() throws -> String {
        try write("song.krc", Array("[ti:t]\n[1000,600]<0,300,0>la<300,300,0>li\n[2000,600]<0,300,0>lo<300,300,0>lu\n".utf8))
    }

    /// A take singing MIDI `midis` over the four words, `detune` cents off, every 10 ms.
    func take(_ midis: [Double], detune: Double = 0) -> PitchContour {
        let starts = [1000, 1300, 2000, 2300]
        var t: [Double] = [], f: [Double?] = []
        for ms in stride(from: 0, to: 3000, by: 10) {
            t.append(Double(ms) / 1000)
            let k = starts.lastIndex { ms >= $0 && ms < $0 + 290 }
            f.append(k.map { ReferenceMelody.hz(cents: midis[$0] * 100 + detune) })
        }
        return PitchContour(timesS: t, f0Hz: f)
    }

    func score(_ m: ReferenceMelody, _ take: PitchContour) throws -> ScoreCard {
        try KTVRules().judge(try LatencyAligner(latencyMs: 0).align(take), against: m)
    }

    @Test func krcWithAgoraPitchDatasIsJudgedOnIntervals() throws {
        // Agora's 0-100 scale: 50 52 50 55, offset unknown. A singer at MIDI 62 64 62 67 sings it.
        let pitch = try write("song.pitch", Array("{\"pitchDatas\":[{\"pitch\":50,\"startTime\":1000,\"duration\":300},{\"pitch\":52,\"startTime\":1300,\"duration\":300},{\"pitch\":50,\"startTime\":2000,\"duration\":300},{\"pitch\":55,\"startTime\":2300,\"duration\":300}]}".utf8))
        let m = try ReferenceReader.read(path: pitch, lyricsPath: try krc())
        #expect(m.scale == .relative)
        #expect(m.lines.count == 2)
        #expect(m.notes.map(\.word) == ["la", "li", "lo", "lu"])
        #expect(m.notes.map(\.line) == [0, 0, 1, 1])
        let right = try score(m, take([62, 64, 62, 67]))
        #expect(right.score >= 95)
        #expect(abs(right.keyShiftCents - 1200) < 1)
        let wrongIntervals = try score(m, take([62, 62, 62, 62]))
        #expect(wrongIntervals.score < 50)
    }

    @Test func agoraBinaryContourIsSegmentedIntoNotesOnTheWords() throws {
        // 10 ms frames: 1000-1290 at 220 Hz, 1300-1590 at 247, 2000-2290 at 220, 2300-2590 at 294.
        var values: [Double?] = Array(repeating: nil, count: 300)
        for (start, hz) in [(100, 220.0), (130, 246.94), (200, 220.0), (230, 293.66)] { for k in start..<(start + 29) { values[k] = hz } }
        let bin = try write("song.bin", AgoraPitchFormat.binary(values, intervalMs: 10))
        let m = try ReferenceReader.read(path: bin, lyricsPath: try krc())
        #expect(m.notes.count == 4)
        #expect(m.notes.map(\.word) == ["la", "li", "lo", "lu"])
        #expect(m.notes.map { Int(($0.cents ?? 0).rounded()) } == [5700, 5900, 5700, 6200])
        #expect(try score(m, take([57, 59, 57, 62])).score >= 95)
    }

    @Test func aPitchTrackIsAReferenceToo() throws {
        var csv = "time_s,f0_hz\n"
        for ms in stride(from: 0, to: 3000, by: 10) {
            let hz: Double = (1000..<1290).contains(ms) ? 220 : (2000..<2290).contains(ms) ? 330 : 0
            csv += String(format: "%.2f,%.3f\n", Double(ms) / 1000, hz)
        }
        let m = try ReferenceReader.read(path: try write("ref.csv", Array(csv.utf8)))
        #expect(m.notes.map { Int(($0.cents ?? 0).rounded()) } == [5700, 6402])
        #expect(m.lines.count == 1)  // 710 ms apart: one phrase (lines split at 800 ms silences)
    }

    @Test func linesWithoutNotesAndUnpitchedNotesAreLeftOut() throws {
        let json = """
        {"notes": [{"start_ms": 1000, "duration_ms": 300, "midi": 62, "line": 0}, {"start_ms": 1300, "duration_ms": 300, "midi": null, "line": 0},
                   {"start_ms": 2000, "duration_ms": 300, "midi": 62, "line": 2}, {"start_ms": 2300, "duration_ms": 300, "midi": 67, "line": 2}],
         "lines": [{"start_ms": 1000, "end_ms": 1600, "text": "a"}, {"start_ms": 1700, "end_ms": 1800, "text": ""}, {"start_ms": 2000, "end_ms": 2600, "text": "c"}]}
        """
        let m = try ReferenceReader.read(path: try write("ref.json", Array(json.utf8)))
        let card = try score(m, take([62, 64, 62, 67]))
        #expect(card.lines.count == 3)
        #expect(card.lines[1].score == nil)
        #expect(card.lines[0].notes[1].score == nil)
        #expect(card.score >= 95)
    }

    @Test func referencesWithoutPitchAreRefused() throws {
        let lrc = try write("plain.lrc", Array("[00:01.00]la\n[00:02.00]li\n".utf8))
        #expect(throws: ScoreError.self) { _ = try ReferenceReader.read(path: lrc) }
        let mute = try write("mute.json", Array("[{\"start_ms\": 0, \"duration_ms\": 100}]".utf8))
        #expect(throws: ScoreError.badReference(path: mute, line: nil, detail: "no note has a pitch (`midi`); a reference melody needs pitched notes")) {
            _ = try ReferenceReader.read(path: mute)
        }
    }
}
