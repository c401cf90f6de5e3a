import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// A contour sampled every 10 ms from `cents(t)` (t in s), nil where it returns nil.
private func contour(seconds: Double, _ cents: (Double) -> Double?) -> (times: [Double], cents: [Double?]) {
    let n = Int(seconds * 100)
    let times = (0..<n).map { Double($0) / 100 }
    return (times, times.map(cents))
}

@Suite struct VibratoMeasureTests {
    @Test func aSineVibratoIsMeasuredAtItsRateAndExtent() throws {
        var rng = SeededGenerator(seed: 11)
        // Four held notes of 1.5 s with a 5.8 Hz, ±60-cent vibrato and ±3 cents of noise.
        let c = contour(seconds: 8) { t in
            let k = Int(t / 2)
            guard t - Double(k) * 2 < 1.5 else { return nil }
            return 6000 + 200 * Double(k) + 60 * sin(2 * .pi * 5.8 * t) + Double.random(in: -3...3, using: &rng)
        }
        let f = try #require(VibratoMeasure.figures(timesS: c.times, cents: c.cents))
        #expect(abs(f.rateHz - 5.8) <= 0.4, "rate \(f.rateHz)")
        #expect(abs(f.extentCents - 60) <= 8, "extent \(f.extentCents)")
        #expect(f.regularity >= 0.8, "regularity \(f.regularity)")
        #expect(abs(f.heldS - 6) <= 0.1)
    }

    @Test func aStraightToneOrAnIrregularWobbleHasNoVibrato() throws {
        let straight = contour(seconds: 3) { _ in 6000 }
        let flat = VibratoMeasure.figures(timesS: straight.times, cents: straight.cents)
        #expect(flat?.regularity == 0 && flat?.extentCents == 0)
        var rng = SeededGenerator(seed: 5)
        var walk = 0.0
        let wobble = contour(seconds: 6) { _ in walk += Double.random(in: -15...15, using: &rng); walk *= 0.9; return 6000 + walk }
        let w = try #require(VibratoMeasure.figures(timesS: wobble.times, cents: wobble.cents))
        #expect(w.regularity < VibratoMeasure.Spec.presentRegularity.defaultValue, "regularity \(w.regularity)")
        // Nothing held long enough: no figures.
        let short = contour(seconds: 3) { t in t.truncatingRemainder(dividingBy: 0.5) < 0.3 ? 6000 : nil }
        #expect(VibratoMeasure.figures(timesS: short.times, cents: short.cents) == nil)
    }

    @Test func theDimensionComparesWithTheReferenceSingerOrTheUsualBands() {
        let good = VibratoFigures(rateHz: 5.8, extentCents: 60, regularity: 0.7, heldS: 10)
        let none = VibratoFigures(rateHz: 9, extentCents: 10, regularity: 0.1, heldS: 10)
        // Against a recording: full credit from 80 % of the reference's regularity, nothing at the noise floor.
        #expect(VibratoMeasure.dimension(take: good, reference: good, referenceIsRecording: true).score == 100)
        #expect(VibratoMeasure.dimension(take: none, reference: good, referenceIsRecording: true).score == 0)
        let half = VibratoFigures(rateHz: 5.8, extentCents: 60, regularity: 0.33, heldS: 10)
        #expect(abs((VibratoMeasure.dimension(take: half, reference: good, referenceIsRecording: true).score ?? 0) - 50) < 0.01)
        // A straight reference singer: nothing to compare.
        let straight = VibratoMeasure.dimension(take: good, reference: none, referenceIsRecording: true)
        #expect(straight.score == nil && straight.reason?.contains("without vibrato") == true)
        // Written notes: a straight voice is not judged; a vibrato is judged on the usual bands.
        #expect(VibratoMeasure.dimension(take: none, reference: nil, referenceIsRecording: false).score == nil)
        #expect(VibratoMeasure.dimension(take: good, reference: nil, referenceIsRecording: false).score == 100)
        let fast = VibratoFigures(rateHz: 8.75, extentCents: 60, regularity: 0.7, heldS: 10)
        #expect(abs((VibratoMeasure.dimension(take: fast, reference: nil, referenceIsRecording: false).score ?? 0) - 50) < 0.01)
    }
}

@Suite struct NoteSteadinessTests {
    func frames(_ ms: Int, _ cents: (Double) -> Double) -> [(timeMs: Double, cents: Double)] {
        stride(from: 0, to: ms, by: 10).map { (Double($0), cents(Double($0))) }
    }

    @Test func aSteadyNoteIsFullCreditAndADriftScoopOrWobbleIsNot() throws {
        let steady = try #require(NoteSteadiness.measure(frames(600) { _ in 5 }))
        #expect(steady.credit == 1 && abs(steady.driftCents) < 0.01 && steady.wobbleCents < 0.01 && abs(steady.scoopCents) < 0.01)
        // 0.2 cents a millisecond across the note.
        let drift = try #require(NoteSteadiness.measure(frames(1000) { $0 * 0.2 }))
        // The stable part runs from 150 ms (a quarter, at most 150 ms) to 15 % before the end.
        #expect(abs(drift.driftCents - 0.2 * (840 - 150)) <= 5, "drift \(drift.driftCents)")
        #expect(drift.credit < 0.15)
        // A scoop from 200 cents below over the first 100 ms.
        let scoop = try #require(NoteSteadiness.measure(frames(800) { $0 < 100 ? -200 + 2 * $0 : 0 }))
        #expect(scoop.scoopCents <= -100, "scoop \(scoop.scoopCents)")
        // A regular vibrato is not a wobble.
        let vibrato = try #require(NoteSteadiness.measure(frames(1500) { 60 * sin(2 * .pi * 5.5 * $0 / 1000) }))
        #expect(vibrato.wobbleCents < 20 && vibrato.credit == 1, "\(vibrato)")
        // Too short to judge.
        #expect(NoteSteadiness.measure(frames(200) { _ in 0 }) == nil)
    }
}

@Suite struct KeyEstimateTests {
    @Test func aSingerATritoneAwayIsOneKeyNotTwo() {
        // Errors either side of ±600 cents are one transposition (−590 ≡ +610 folded).
        let notes: [(error: Double, weight: Double)] = [(-590, 300), (610, 300), (-585, 400), (605, 200), (-600, 300), (100, 100)]
        let key = KTVRules.keyEstimate(notes)
        #expect(abs(KTVRules.octaveFolded(key.cents + 595)) <= 15, "key \(key.cents)")
        #expect(abs(key.agreeingShare - 1500.0 / 1600) < 1e-9)
        // An octave and a bit down: the octave is the agreeing notes' own.
        let low = KTVRules.keyEstimate([(-1330, 500), (-1320, 500), (-130, 100)])
        #expect(abs(low.cents + 1325) <= 5, "key \(low.cents)")
        #expect(KTVRules.keyEstimate([]).agreeingShare == 0)
    }

    @Test func aTransposedTakeAgainstASoloReferenceSingerCostsNothing() throws {
        let melody = generatedMelody()
        let take = sungTake(melody, detuneCents: -350)
        let accompanied = try ktvScore(melody, take)
        var solo = melody
        solo.recording = ReferenceRecording(contour: PitchContour(timesS: [], f0Hz: []), voice: nil, accompanied: false)
        let alone = try ktvScore(solo, take)
        #expect(abs(accompanied.keyShiftCents + 350) <= 20 && abs(alone.keyShiftCents + 350) <= 20)
        #expect((accompanied.pointsLost?.key ?? 0) >= 5, "key cost \(accompanied.pointsLost?.key ?? 0)")
        #expect(alone.pointsLost?.key == 0)
        #expect(alone.findings.first { $0.code == "transposed" }?.message.contains("at no cost") == true)
    }
}

@Suite struct DimensionsTests {
    let melody = generatedMelody()

    @Test func aPitchTrackAgainstNotesReportsWhatItCannotMeasureAndKeepsItsScore() throws {
        let card = try ktvScore(melody, sungTake(melody))
        let byName = Dictionary(uniqueKeysWithValues: card.dimensions.map { ($0.dimension, $0) })
        #expect(card.dimensions.map(\.dimension) == ScoreDimension.allCases)
        #expect((byName[.intonation]?.score ?? 0) >= 90 && (byName[.rhythm]?.score ?? 0) >= 90)
        #expect(byName[.voiceQuality]?.score == nil && byName[.voiceQuality]?.reason?.contains("pitch track") == true)
        #expect(byName[.dynamics]?.score == nil && byName[.dynamics]?.reason?.contains("no dynamics") == true)
        // The synthetic take's regular 5.5 Hz vibrato is inside the usual bands.
        #expect(byName[.vibrato]?.score == 100)
        // Nothing unmeasured costs a point; the breakdown still adds up to the score.
        #expect(card.score >= 85 && abs(card.score - (card.coreScore ?? 0)) < 1e-9)
        #expect(abs(100 - (card.pointsLost?.total ?? 0) - card.score) < 1e-6)
        #expect(card.expertGrade == ExpertGrade.grade(card.score))
    }

    @Test func voiceDimensionsScaleTheCoreByTheirWeights() {
        var dims = [DimensionScore(.intonation, score: 90), DimensionScore(.vibrato, score: 50), DimensionScore(.voiceQuality),
                    DimensionScore(.dynamics, score: 100), DimensionScore(.pitchRange, score: 0)]
        let w = DimensionWeights(vibrato: 0.4, voiceQuality: 0.4, dynamics: 0.4, pitchRange: 0)
        let score = w.combine(core: 80, &dims)
        #expect(abs(score - 80 * 0.8) < 1e-9)
        #expect(abs(dims[1].pointsLost - 16) < 1e-9 && dims[2].pointsLost == 0 && dims[3].pointsLost == 0 && dims[4].pointsLost == 0)
        #expect(dims[0].weight == nil && dims[1].weight == 0.4 && dims[4].weight == 0)
    }

    @Test func theExpertGradeIsClampedToTheExpertsScale() {
        #expect(ExpertGrade.grade(0) == 1 && ExpertGrade.grade(100) == 5)
        #expect(abs(ExpertGrade.grade(62) - (ExpertGrade.intercept + ExpertGrade.slope * 62)) < 1e-12)
    }

    @Test func aHumAndRandomNotesStayLowWhateverTheirVoice() throws {
        let hum = try ktvScore(melody, sungTake(melody) { _, v, _ in v == nil ? nil : 6600 })
        #expect(hum.score <= 30, "hum \(hum.score)")
        let random = try ktvScore(melody, sungTake(melody) { _, v, rng in v == nil ? nil : Double.random(in: 5500...7800, using: &rng) })
        #expect(random.score <= 35, "random \(random.score)")
    }
}
