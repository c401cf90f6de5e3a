import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// A generated melody: 6 lines of 5 notes, 300-700 ms, MIDI 60-72, 80 ms gaps, lines 1 s apart.
func generatedMelody(seed: UInt64 = 7) -> ReferenceMelody {
    var rng = SeededGenerator(seed: seed)
    var notes: [MelodyNote] = []
    var lines: [MelodyLine] = []
    var t = 1000
    for line in 0..<6 {
        let start = t
        for k in 0..<5 {
            let dur = Int.random(in: 300...700, using: &rng)
            let midi = Int.random(in: 60...72, using: &rng)
            notes.append(MelodyNote(startMs: t, durationMs: dur, cents: Double(midi) * 100, word: "w\(line)\(k)", line: line))
            t += dur + 80
        }
        lines.append(MelodyLine(startMs: start, endMs: t - 80, text: "line \(line)"))
        t += 1000
    }
    return ReferenceMelody(notes: notes, lines: lines)
}

/// A take sung as the melody says, every 10 ms: `detuneCents` off, `lateMs` late, with vibrato,
/// glides into each note and unvoiced gaps between notes; `pitch` overrides the sung pitch.
func sungTake(_ m: ReferenceMelody, detuneCents: Double = 0, lateMs: Double = 0, seed: UInt64 = 3,
              pitch: ((Double, Double?, inout SeededGenerator) -> Double?)? = nil) -> PitchContour {
    var rng = SeededGenerator(seed: seed)
    let endMs = Double(m.notes.last!.endMs) + 1000
    var times: [Double] = [], hz: [Double?] = []
    var t = 0.0
    while t < endMs {
        let songMs = t - lateMs
        var value: Double?
        if let n = m.notes.first(where: { Double($0.startMs) <= songMs && songMs < Double($0.endMs) - 40 }), let c = n.cents {
            let into = songMs - Double(n.startMs)
            let glide = into < 40 ? (40 - into) * 2 : 0
            let vibrato = 30 * sin(2 * Double.pi * 5.5 * t / 1000)
            value = c + detuneCents - glide + vibrato + Double.random(in: -8...8, using: &rng)
        }
        if let pitch { value = pitch(t, value, &rng) }
        times.append(t / 1000)
        hz.append(value.map { ReferenceMelody.hz(cents: $0) })
        t += 10
    }
    return PitchContour(timesS: times, f0Hz: hz)
}

func ktvScore(_ m: ReferenceMelody, _ take: PitchContour, rules: KTVRules = KTVRules()) throws -> ScoreCard {
    try rules.judge(try LatencyAligner(latencyMs: 0).align(take), against: m)
}

@Suite struct KTVRulesTests {
    let melody = generatedMelody()

    @Test func aGoodTakeScoresHighAndDefectsScoreLow() throws {
        let good = try ktvScore(melody, sungTake(melody))
        #expect(good.score >= 85, "good \(good.score)")
        let hum = try ktvScore(melody, sungTake(melody) { _, _, _ in 6600 })
        #expect(hum.score <= 30, "hum \(hum.score)")
        let random = try ktvScore(melody, sungTake(melody) { _, v, rng in v == nil ? nil : Double.random(in: 4500...8500, using: &rng) })
        #expect(random.score <= 35, "random \(random.score)")
        let silent = try ktvScore(melody, sungTake(melody) { _, _, _ in nil })
        #expect(silent.score <= 5, "silent \(silent.score)")
        let octaveDown = try ktvScore(melody, sungTake(melody, detuneCents: -1200))
        #expect(abs(octaveDown.score - good.score) <= 10, "octave \(octaveDown.score) vs \(good.score)")
        #expect(abs(octaveDown.keyShiftCents + 1200) < 30)
        let late = try ktvScore(melody, sungTake(melody, lateMs: 400))
        #expect(late.score <= good.score - 10, "late \(late.score) vs \(good.score)")
    }

    @Test func detuningLowersTheScoreStrictly() throws {
        let scores = try [0.0, -25, -50, -100, -200].map { try ktvScore(melody, sungTake(melody, detuneCents: $0)).score }
        for k in 1..<scores.count { #expect(scores[k] < scores[k - 1], "\(scores)") }
    }

    @Test func aTakeThatStopsEarlyIsJudgedOnWhatItCovers() throws {
        let full = sungTake(melody)
        let half = full[0..<(full.count / 2)]
        let card = try ktvScore(melody, half)
        #expect(card.judgedShare > 0.3 && card.judgedShare < 0.7)
        #expect(card.score >= 85)
        #expect(card.lines.last?.score == nil)
        let whole = try ktvScore(melody, half, rules: KTVRules(wholeSong: true))
        #expect(whole.score < card.score * 0.7)
        #expect(whole.lines.last?.score == 0)
    }

    @Test func unpitchedNotesNeitherRewardNorPenalise() throws {
        var m = melody
        let take = sungTake(m)
        let before = try ktvScore(m, take).score
        m.notes[3].cents = nil
        m.notes[8].cents = nil
        let after = try ktvScore(m, take).score
        #expect(abs(after - before) < 1.5)
        #expect(try ktvScore(m, take).lines[0].notes[3].score == nil)
    }

    @Test func aNoteSungAnOctaveAwayKeepsOctaveCreditOfItsPitchCredit() throws {
        // Note 7 (line 1, note 2) an octave down, the rest as written.
        let note = melody.notes[7]
        let take = sungTake(melody) { t, v, _ in
            v.map { t >= Double(note.startMs) - 100 && t < Double(note.endMs) ? $0 - 1200 : $0 }
        }
        func judged(_ octaveCredit: Double) throws -> NoteScore {
            var c = KTVRulesConfiguration()
            c.octaveCredit = octaveCredit
            return try ktvScore(melody, take, rules: KTVRules(configuration: c)).lines[1].notes[2]
        }
        let full = try judged(1), default_ = try judged(KTVRulesConfiguration.Spec.octaveCredit.defaultValue), none = try judged(0)
        #expect(full.octaves == -1 && none.octaves == -1)
        #expect(abs(full.medianErrorCents ?? 999) < 35, "\(String(describing: full.medianErrorCents))")
        let fullScore = try #require(full.score), defaultScore = try #require(default_.score)
        #expect(fullScore > 70)
        #expect(abs(defaultScore - 0.75 * fullScore) < 0.01, "\(defaultScore) vs \(fullScore)")
        #expect(none.score == 0)
        // The rest of the take keeps its key: no octave anywhere else.
        let card = try ktvScore(melody, take)
        #expect(card.lines.flatMap(\.notes).filter { $0.octaves != 0 }.map(\.note.word) == [note.word])
        #expect(abs(card.keyShiftCents) < 30)
    }
}

/// The real recorded takes of 七里香 (Agora's fixtures, one Hz value per 50 ms; the recordings stop
/// before the song ends) under the ktv rules.
@Suite(.enabled(if: agoraShared != nil, "needs ../shared/agora (Agora's fixtures)"))
struct KTVRulesOnRecordedTakesTests {
    @Test func everyGoodTakeBeatsTheBadOneAndAHumFails() throws {
        let dir = try #require(agoraShared) + "/LrcView-iOS/Tests/Resource"
        let reference = try ReferenceReader.read(path: "\(dir)/660250.xml")
        func score(_ contour: PitchContour) throws -> ScoreCard { try KTVRules().judge(try LatencyAligner(latencyMs: 0).align(contour), against: reference) }
        var scores: [String: Double] = [:]
        for name in ["bad1", "good1", "good2", "good3", "good4"] {
            scores[name] = try score(try TakeReader.read(path: "\(dir)/qilixiang_\(name)_50ms_pitch.txt", pitchIntervalMs: 50)).score
        }
        let bad = try #require(scores["bad1"])
        for name in ["good1", "good2", "good3", "good4"] { #expect(try #require(scores[name]) > bad + 10, "\(scores)") }
        let count = (reference.notes.map(\.endMs).max() ?? 0) / 50
        let hum = try score(PitchContour(timesS: (0..<count).map { Double($0 + 1) * 0.05 }, f0Hz: Array(repeating: 150, count: count)))
        #expect(hum.score <= 30)
        print("七里香 under the ktv rules: \(scores.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.1f", $0.value))" }.joined(separator: ", ")), hum at 150 Hz \(String(format: "%.1f", hum.score))")
    }
}

/// Points that add up (issue 20): 100 − the points lost to each term is the score, on every kind of take.
@Suite struct PointsLostTests {
    let melody = generatedMelody()

    func expectAddsUp(_ card: ScoreCard, _ what: String) throws {
        let lost = try #require(card.pointsLost, "\(what): no breakdown")
        #expect(abs(100 - lost.total - card.score) < 0.05, "\(what): 100 − \(lost.total) ≠ \(card.score)")
        for t in lost.terms { #expect(t.points >= -1e-9, "\(what): \(t.name) \(t.points)") }
    }

    @Test func theBreakdownAddsUpAndNamesTheTermThatCost() throws {
        let good = try ktvScore(melody, sungTake(melody))
        try expectAddsUp(good, "good")
        let flat = try ktvScore(melody, sungTake(melody, detuneCents: -70), rules: KTVRules(keyShift: .none))
        try expectAddsUp(flat, "70 cents flat")
        #expect(try #require(flat.pointsLost).pitch > 20)
        let late = try ktvScore(melody, sungTake(melody, lateMs: 250))
        try expectAddsUp(late, "250 ms late")
        let lateTiming = try #require(late.pointsLost).timing, goodTiming = try #require(good.pointsLost).timing
        #expect(lateTiming > goodTiming + 5)
        // Half the song sung: the unsung notes cost coverage.
        let half = sungTake(melody) { t, v, _ in t < 9000 ? v : nil }
        let halfCard = try ktvScore(melody, half, rules: KTVRules(wholeSong: true))
        try expectAddsUp(halfCard, "half sung, whole song")
        #expect(try #require(halfCard.pointsLost).coverage > 30)
        // A hum on the pitch of the most common note: a few notes land, and movement takes the rest.
        let pitches = melody.notes.compactMap(\.cents)
        let common = pitches.max { a, b in pitches.filter { $0 == a }.count < pitches.filter { $0 == b }.count } ?? 6600
        let hum = try ktvScore(melody, sungTake(melody) { _, v, _ in v.map { _ in common } })
        try expectAddsUp(hum, "hum")
        #expect(try #require(hum.pointsLost).movement > 0, "hum \(hum.score): \(String(describing: hum.pointsLost))")
        // Sung 300 cents sharp throughout: judged on intervals, the key costs.
        let key = try ktvScore(melody, sungTake(melody, detuneCents: 300))
        try expectAddsUp(key, "a minor third up")
        #expect(try #require(key.pointsLost).key > 1)
        // Nothing sung inside the song.
        let silent = try ktvScore(melody, sungTake(melody) { _, _, _ in nil })
        #expect(silent.score == 0 && silent.pointsLost?.coverage == 100)
    }

    @Test func freeTimingAddsUpToo() throws {
        let take = sungTake(melody)
        let sung = try FreeTimingAligner(reference: melody).align(take)
        let card = try KTVRules().judge(sung, against: melody)
        try expectAddsUp(card, "free timing")
    }

    @Test func everyRuleSetHasAScoreOn0To100() throws {
        let take = try LatencyAligner(latencyMs: 0).align(sungTake(melody))
        let ktv = try KTVRules().judge(take, against: melody)
        #expect(ktv.score100 == ktv.score)
        let ultrastar = try UltraStarRules().judge(take, against: melody)
        #expect(abs(ultrastar.score100 - ultrastar.score / 100) < 1e-9)
        // Agora sums every line; its 0-100 score is the mean over the lines the recording reaches.
        let firstHalf = try LatencyAligner(latencyMs: 0).align(sungTake(melody) { t, v, _ in t < 9000 ? v : nil }[0..<900])
        let agora = try AgoraRules().judge(firstHalf, against: melody)
        let judged = agora.lines.filter(\.judged)
        #expect(judged.count < agora.lines.count && !judged.isEmpty)
        #expect(abs(agora.score100 - judged.compactMap(\.score).reduce(0, +) / Double(judged.count)) < 1e-9)
        #expect(agora.score100 > agora.score / Double(agora.lines.count))
    }
}

/// Findings that name the real fault (issue 20): generated takes with one known fault each.
@Suite struct FindingsTests {
    let melody = generatedMelody()

    func first(_ take: PitchContour, rules: KTVRules = KTVRules()) throws -> (Finding?, ScoreCard) {
        let card = try ktvScore(melody, take, rules: rules)
        return (card.findings.first, card)
    }

    @Test func aGoodTakeHasNoWarningOrFault() throws {
        let card = try ktvScore(melody, sungTake(melody))
        #expect(card.findings.allSatisfy { $0.severity == .info }, "\(card.findings.map(\.message))")
    }

    @Test func aHumIsAMonotone() throws {
        let pitches = melody.notes.compactMap(\.cents)
        let common = pitches.max { a, b in pitches.filter { $0 == a }.count < pitches.filter { $0 == b }.count } ?? 6600
        let (f, _) = try first(sungTake(melody) { _, v, _ in v.map { _ in common } })
        #expect(f?.code == "monotone" && f?.severity == .fault, "\(String(describing: f))")
        #expect((f?.value ?? 100) < 30)
    }

    @Test func fourHundredMillisecondsLateIsLate() throws {
        let (f, _) = try first(sungTake(melody, lateMs: 400))
        #expect(f?.code == "late", "\(String(describing: f))")
        #expect((300...500).contains(f?.value ?? 0), "\(String(describing: f?.value))")
        #expect(f?.message.contains("recording path's delay") == true)   // no latency was given
    }

    /// A take sung 400 ms early or 450 ms late with every pitch right (issue 31): each rule set's
    /// notes held over the next note's start sound wrong; judged at the shift they are right, so
    /// the first finding is the timing and none is a wrong note.
    @Test(arguments: [-400.0, 450])
    func aTakeSungEarlyOrLateIsItsTimingNotWrongNotes(shiftMs: Double) throws {
        let take = try LatencyAligner(latencyMs: 0).align(sungTake(melody, lateMs: shiftMs))
        for rules in [KTVRules() as any ScoringRules, AgoraRules(), UltraStarRules()] {
            let card = try rules.judge(take, against: melody)
            let codes = card.findings.map(\.code)
            #expect(codes.first == (shiftMs > 0 ? "late" : "early"), "\(rules.name): \(card.findings.map(\.message))")
            #expect(!codes.contains("wrong_notes"), "\(rules.name): \(card.findings.map(\.message))")
            let explained = try #require(card.timingExplanation, "\(rules.name)")
            #expect(abs(explained.shiftMs - shiftMs) <= 30 && !explained.righted.isEmpty, "\(rules.name): \(explained.shiftMs)")
        }
    }

    @Test func wrongNotesAreCountedWithTheirLines() throws {
        // Notes 2, 7, 12, 17, 22 and 27 sung 250 cents high.
        let wrong = Set([2, 7, 12, 17, 22, 27])
        let take = sungTake(melody) { t, v, _ in
            guard let v, let k = melody.notes.firstIndex(where: { Double($0.startMs) <= t && t < Double($0.endMs) }) else { return v }
            return wrong.contains(k) ? v + 250 : v
        }
        let (f, _) = try first(take)
        #expect(f?.code == "wrong_notes", "\(String(describing: f))")
        #expect(abs((f?.count ?? 0) - wrong.count) <= 2)
        #expect(f?.lines == Array(Set(wrong.map { melody.notes[$0].line + 1 })).sorted())
    }

    @Test func fortyFiveCentsFlatIsFlat() throws {
        let (f, _) = try first(sungTake(melody, detuneCents: -45))
        #expect(f?.code == "flat", "\(String(describing: f))")
        #expect((-60 ... -30).contains(f?.value ?? 0), "\(String(describing: f?.value))")
    }

    @Test func anOctaveDownIsForgivenAndSaid() throws {
        let (f, card) = try first(sungTake(melody, detuneCents: -1200))
        #expect(f?.code == "octave" && f?.severity == .info, "\(String(describing: f))")
        #expect(card.findings.allSatisfy { $0.severity == .info })
    }

    @Test func silenceIsSilent() throws {
        let (f, _) = try first(sungTake(melody) { _, _, _ in nil })
        #expect(f?.code == "silent" && f?.severity == .fault)
    }

    @Test func aTransposedTakeIsTransposedNotFlat() throws {
        let card = try ktvScore(melody, sungTake(melody, detuneCents: 300))
        #expect(card.findings.contains { $0.code == "transposed" && abs(($0.value ?? 0) - 300) < 20 })
        #expect(!card.findings.contains { $0.code == "flat" || $0.code == "sharp" })
    }
}

/// `--latency-ms auto` (issue 20): the delay found from the take against the reference.
@Suite struct LatencyEstimatorTests {
    let melody = generatedMelody()

    @Test(arguments: [-150.0, 0, 120, 250, 500])
    func aShiftedPitchTrackIsFoundWithin20Ms(latencyMs: Double) throws {
        let take = sungTake(melody, lateMs: latencyMs)
        let e = try LatencyEstimator.estimate(take, reference: melody)
        print("latency \(latencyMs) ms: estimated \(e.latencyMs) ms, confidence \(e.confidence)")
        #expect(e.used)
        #expect(abs(e.latencyMs - latencyMs) <= 20, "\(e)")
        let atTruth = try KTVRules().judge(try LatencyAligner(latencyMs: latencyMs).align(take), against: melody).score
        let atEstimate = try KTVRules().judge(try LatencyAligner(latencyMs: e.latencyMs).align(take), against: melody).score
        #expect(abs(atTruth - atEstimate) <= 3, "\(atTruth) at the truth, \(atEstimate) at the estimate")
    }

    @Test func aTransposedOrFlatSingerIsAlignedToo() throws {
        for detune in [-45.0, 300, -1200] {
            let e = try LatencyEstimator.estimate(sungTake(melody, detuneCents: detune, lateMs: 200), reference: melody)
            #expect(e.used && abs(e.latencyMs - 200) <= 20, "\(detune) cents: \(e)")
        }
    }

    @Test func aDroneGivesNoConfidentEstimate() throws {
        // One voiced stretch on one pitch: no onset and no movement to line up.
        let drone = sungTake(melody) { t, _, _ in t > 500 && t < 30_000 ? 6600 : nil }
        let e = try LatencyEstimator.estimate(drone, reference: melody)
        print("drone: \(e)")
        #expect(!e.used, "\(e)")
        let silent = try LatencyEstimator.estimate(sungTake(melody) { _, _, _ in nil }, reference: melody)
        #expect(!silent.used && silent.latencyMs == 0)
    }
}
