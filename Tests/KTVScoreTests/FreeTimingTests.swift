import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// Free timing on generated contours: ten notes of 250-600 ms, sung at other tempos and offsets.
@Suite struct FreeTimingTests {
    let melody: ReferenceMelody = {
        let midis = [60, 62, 64, 65, 67, 69, 67, 65, 64, 62]
        var notes: [MelodyNote] = []
        var t = 500
        for (k, m) in midis.enumerated() {
            let d = [400, 300, 500, 250, 600, 400, 300, 450, 350, 600][k]
            notes.append(MelodyNote(startMs: t, durationMs: d, cents: Double(m) * 100, word: "n\(k)", line: k / 5))
            t += d + 60
        }
        return ReferenceMelody(notes: notes, lines: [MelodyLine(startMs: 500, endMs: 2800, text: "a"), MelodyLine(startMs: 2800, endMs: t, text: "b")])
    }()

    /// The melody sung `tempo` times as long, starting at `offsetS`, `detune` cents off, every 3 ms
    /// (Melodia's hop), with vibrato and short gaps between notes; `note` overrides one note's pitch.
    func sing(tempo: Double = 1, offsetS: Double = 0.8, detune: Double = 0, wrong: (Int, Double)? = nil, skip: Range<Int>? = nil) -> PitchContour {
        var times: [Double] = [], hz: [Double?] = []
        let hop = 128.0 / 44100
        let end = offsetS + tempo * Double(melody.notes.last!.endMs) / 1000 + 1
        var t = 0.0
        while t < end {
            var value: Double?
            let songMs = (t - offsetS) / tempo * 1000
            if let k = melody.notes.firstIndex(where: { Double($0.startMs) <= songMs && songMs < Double($0.endMs) - 30 }), !(skip?.contains(k) ?? false) {
                var c = (melody.notes[k].cents ?? 0) + detune + 25 * sin(2 * .pi * 5 * t)
                if let (w, by) = wrong, w == k { c += by }
                value = ReferenceMelody.hz(cents: c)
            }
            times.append(t)
            hz.append(value)
            t += hop
        }
        return PitchContour(timesS: times, f0Hz: hz)
    }

    func score(_ take: PitchContour, keyShift: KeyShift = .auto) throws -> ScoreCard {
        let aligner = FreeTimingAligner(reference: melody, keyShift: keyShift)
        return try KTVRules(keyShift: keyShift).judge(try aligner.align(take), against: melody)
    }

    @Test(arguments: [0.7, 0.85, 1.0, 1.2, 1.4])
    func theReferenceSungAtAnyTempoAndOffsetScoresHigh(tempo: Double) throws {
        for offset in [0.0, 0.8, 3.7] {
            let card = try score(sing(tempo: tempo, offsetS: offset))
            #expect(card.score >= 95, "tempo \(tempo), offset \(offset): \(card.score)")
            #expect(card.timing == "free")
            #expect(abs((card.warp?.tempoRatio ?? 0) - tempo) < 0.1, "tempo \(card.warp?.tempoRatio ?? 0)")
            #expect(card.missingNotes.isEmpty)
        }
    }

    /// The melody sung with each note (and the gap after it) stretched by `factors[k]`: a singer who
    /// rushes some notes and drags others.
    func singUnevenly(_ factors: [Double]) -> PitchContour {
        var spans: [(start: Double, end: Double, cents: Double)] = []
        var t = 0.8
        for (k, n) in melody.notes.enumerated() {
            let d = Double(n.durationMs) / 1000 * factors[k % factors.count]
            spans.append((t, t + d - 0.03, n.cents ?? 0))
            t += d + 0.06
        }
        var times: [Double] = [], hz: [Double?] = []
        var x = 0.0
        while x < t + 1 {
            times.append(x)
            hz.append(spans.first { $0.start <= x && x < $0.end }.map { ReferenceMelody.hz(cents: $0.cents + 25 * sin(2 * .pi * 5 * x)) })
            x += 128.0 / 44100
        }
        return PitchContour(timesS: times, f0Hz: hz)
    }

    @Test func aTakeThatSkipsTheStartOrStopsEarlyLeavesThoseNotesMissing() throws {
        // Notes 0-2 not sung (the singer comes in at note 3), or notes 7-9 not sung (stops early),
        // at 1.2× tempo: the path leaves those reference notes out instead of stretching the take
        // over them, so the rest keep their rhythm and the tempo is the sung part's.
        for (skip, missing) in [(0..<3, ["n0", "n1", "n2"]), (7..<10, ["n7", "n8", "n9"])] {
            let card = try score(sing(tempo: 1.2, skip: skip))
            let names = card.missingNotes.map { card.lines[$0.line].notes[$0.note].note.word }
            #expect(names == missing, "\(names)")
            #expect(abs((card.warp?.tempoRatio ?? 0) - 1.2) < 0.1, "tempo \(card.warp?.tempoRatio ?? 0)")
            let sung = card.lines.flatMap(\.notes).filter { !missing.contains($0.note.word) }
            #expect(sung.allSatisfy { ($0.score ?? 0) >= 90 }, "\(sung.map { $0.score ?? 0 })")
            #expect(try #require(card.tempoStability) > 0.95)
        }
    }

    @Test func anUnsteadyTempoCostsAndIsReported() throws {
        let steady = try score(sing(tempo: 1.2))
        let uneven = try score(singUnevenly([1.6, 0.6, 1.3, 0.7]))
        #expect(try #require(steady.tempoStability) > 0.95, "\(steady.tempoStability ?? 0)")
        #expect(try #require(uneven.tempoStability) < 0.8, "\(uneven.tempoStability ?? 0)")
        #expect(uneven.score < steady.score - 10, "steady \(steady.score), uneven \(uneven.score)")
        let json = ScoreReport.json(uneven, take: "t", reference: "r")
        #expect(json["warp"]?["tempo_stability"]?.number == (uneven.tempoStability! * 1000).rounded() / 1000)
    }

    @Test func oneWrongNoteLowersTheScoreAndIsNamed() throws {
        let good = try score(sing(tempo: 1.1))
        let bad = try score(sing(tempo: 1.1, wrong: (5, 300)))
        #expect(bad.score < good.score - 5, "\(bad.score) vs \(good.score)")
        let notes = bad.lines.flatMap(\.notes)
        let worst = try #require(notes.min { ($0.score ?? 100) < ($1.score ?? 100) })
        #expect(worst.note.word == "n5")
        #expect(abs((worst.medianErrorCents ?? 0) - 300) < 40)
    }

    @Test func aMissingPhraseIsReportedAsMissingNotes() throws {
        let card = try score(sing(tempo: 0.9, skip: 6..<9))
        let missing = card.missingNotes.map { card.lines[$0.line].notes[$0.note].note.word }
        #expect(missing == ["n6", "n7", "n8"], "\(missing)")
        #expect(card.score < 80)
    }

    @Test func aTransposedTakeIsJudgedOnIntervalsWithAutoAndPenalisedWithNone() throws {
        let auto = try score(sing(tempo: 1.2, detune: 300), keyShift: .auto)
        #expect(auto.score >= 80, "auto \(auto.score)")
        #expect(abs(auto.keyShiftCents - 300) < 30)
        let none = try score(sing(tempo: 1.2, detune: 300), keyShift: .none)
        #expect(none.score < auto.score - 30, "none \(none.score), auto \(auto.score)")
    }

    @Test func aLongTakeAlignsInABand() throws {
        // 30 repeats of the melody: a 5-minute take at 1.1× against a 4.6-minute reference (the
        // 10-minute memory figure is `make bench`'s).
        var notes: [MelodyNote] = []
        for r in 0..<30 {
            for n in melody.notes { var m = n; m.startMs += r * 9300; m.line = r; notes.append(m) }
        }
        let long = ReferenceMelody(notes: notes, lines: (0..<30).map { MelodyLine(startMs: $0 * 9300, endMs: $0 * 9300 + 9000, text: "") })
        var times: [Double] = [], hz: [Double?] = []
        var t = 0.0
        while t < 308 {
            let songMs = t / 1.1 * 1000
            let k = notes.firstIndex { Double($0.startMs) <= songMs && songMs < Double($0.endMs) - 30 }
            times.append(t)
            hz.append(k.map { ReferenceMelody.hz(cents: notes[$0].cents ?? 6000) })
            t += 0.01
        }
        let aligner = FreeTimingAligner(reference: long)
        let card = try KTVRules().judge(try aligner.align(PitchContour(timesS: times, f0Hz: hz)), against: long)
        #expect(card.score >= 90, "\(card.score)")
    }
}

@Suite struct GradeCalibrationTests {
    @Test func theLevelMeansLandOnTheirAnchorsAndTheMapRises() {
        #expect(abs(GradeCalibration.calibrated(41.5) - 25) < 1e-9)
        #expect(abs(GradeCalibration.calibrated(56.5) - 50) < 1e-9)
        #expect(abs(GradeCalibration.calibrated(71.8) - 75) < 1e-9)
        #expect(abs(GradeCalibration.calibrated(83.2) - 92) < 1e-9)
        #expect(GradeCalibration.calibrated(0) == 0)
        #expect(GradeCalibration.calibrated(100) == 100)
        let values = stride(from: 0.0, through: 100, by: 0.5).map(GradeCalibration.calibrated)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
        let levels: [Int] = [39.9, 40, 65, 85].map { GradeCalibration.level($0) }
        #expect(levels == [1, 2, 3, 4])
    }
}
