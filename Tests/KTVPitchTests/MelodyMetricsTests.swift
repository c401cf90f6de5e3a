import Foundation
import KTVCore
@testable import KTVPitch
import Testing

/// Cents re 10 Hz, as the metrics compute them.
private func c(_ hz: Double) -> Double { MelodyMetrics.cents(frequencyHz: hz) }

private func series(_ t: [Double], _ f: [Double]) -> PitchContour {
    PitchContour(timesS: t, signedHz: f)
}

private func score(_ rt: [Double], _ rf: [Double], _ et: [Double], _ ef: [Double],
                   toleranceCents: Double = 50) throws -> MelodyScores {
    try MelodyMetrics.evaluate(reference: series(rt, rf), estimate: series(et, ef),
                               configuration: MelodyMetricsConfiguration(toleranceCents: toleranceCents))
}

/// Small cases worked out by hand (each also checked against mir_eval 0.8.2 while writing them).
@Suite struct MelodyMetricsHandTests {
    /// Same grid. Reference: unvoiced, 220, 220, 220, unvoiced. Estimate: unvoiced, 220 (right),
    /// 440 (octave up), -220 (unvoiced, right guess), 110 (false alarm).
    @Test func everyMeasureOnOneGrid() throws {
        let t = [0, 0.01, 0.02, 0.03, 0.04]
        let s = try score(t, [0, 220, 220, 220, 0], t, [0, 220, 440, -220, 110])
        #expect(s.referenceFrames == 5)
        #expect(s.voicedReferenceFrames == 3)
        #expect(s.voicingRecall == 2.0 / 3)            // frames 1 and 2 marked voiced, not 3
        #expect(s.voicingFalseAlarm == 1.0 / 2)        // frame 4 of the unvoiced frames 0 and 4
        #expect(s.rawPitchAccuracy == 2.0 / 3)         // frames 1 and 3 (the negative guess counts)
        #expect(s.rawChromaAccuracy == 1)              // the octave error of frame 2 is forgiven
        #expect(s.overallAccuracy == 2.0 / 5)          // frames 0 and 1
        #expect(s.pitchedFrames == 3)
        #expect(s.grossErrorShare == 1.0 / 3)          // frame 2: 100 % off
        #expect(s.medianAbsoluteCents == 0)            // |Δ| = 0, 0, 1200
    }

    @Test func octaveErrorsCountForChromaNotPitch() throws {
        let t = [0, 0.01, 0.02, 0.03]
        // 440 (+1200), 55 (−2400), 220·2^(1230/1200) (+1230), 220·2^(1900/1200) (+1900 → 500 from 2400)
        let s = try score(t, [220, 220, 220, 220], t, [440, 55, 220 * pow(2, 1230.0 / 1200), 220 * pow(2, 1900.0 / 1200)])
        #expect(s.rawPitchAccuracy == 0)
        #expect(s.rawChromaAccuracy == 3.0 / 4)
        #expect(s.overallAccuracy == 0)
        let s25 = try score(t, [220, 220, 220, 220], t, [440, 55, 220 * pow(2, 1230.0 / 1200), 220 * pow(2, 1900.0 / 1200)],
                            toleranceCents: 25)
        #expect(s25.rawChromaAccuracy == 2.0 / 4)   // the 30-cent chroma error fails at 25 cents
    }

    @Test func referenceStartingLateGetsAFrameAtZero() throws {
        // Reference (0.02, 220), (0.03, 220) becomes (0, 220), (0.02, 220), (0.03, 220).
        let s = try score([0.02, 0.03], [220, 220], [0, 0.01, 0.02, 0.03], [220, 0, 0, 0])
        #expect(s.referenceFrames == 3)
        #expect(s.voicedReferenceFrames == 3)
        #expect(s.rawPitchAccuracy == 1.0 / 3)   // only the inserted frame at 0 is matched
        #expect(s.voicingRecall == 1.0 / 3)
        #expect(s.overallAccuracy == 1.0 / 3)
    }

    @Test func estimateStartingLateRepeatsItsFirstValueSignIncluded() throws {
        // Estimate (0.01, -220), (0.02, 220) becomes (0, -220), (0.01, -220), (0.02, 220).
        let a = try MelodyMetrics.align(reference: series([0, 0.01, 0.02], [220, 220, 220]),
                                        estimate: series([0.01, 0.02], [-220, 220]))
        #expect(a.estimateVoiced == [false, false, true])
        #expect(a.estimateCents == [c(220), c(220), c(220)])
        let s = a.scores()
        #expect(s.rawPitchAccuracy == 1)
        #expect(s.voicingRecall == 1.0 / 3)
        #expect(s.overallAccuracy == 1.0 / 3)
    }

    @Test func negativeFrequencyIsUnvoicedWithAPitchGuess() throws {
        let a = try MelodyMetrics.align(reference: series([0, 1], [-300, 300]), estimate: series([0, 1], [-300, 0]))
        #expect(a.referenceVoiced == [false, true])
        #expect(a.referenceCents == [c(300), c(300)])
        #expect(a.estimateVoiced == [false, false])
        #expect(a.estimateCents == [c(300), 0])
        #expect(MelodyMetrics.cents(frequencyHz: 0) == 0)
        #expect(MelodyMetrics.cents(frequencyHz: 20) == 1200)
        #expect(MelodyMetrics.cents(frequencyHz: -40) == 2400)
    }

    /// Estimate at 0, 0.02, 0.04 s (100 Hz, 200 Hz, unvoiced) onto a 10 ms reference grid to 0.05 s.
    @Test func resamplingOntoTheReferenceGrid() throws {
        let a = try MelodyMetrics.align(reference: series([0, 0.01, 0.02, 0.03, 0.04, 0.05], [100, 100 * 2.0.squareRoot(), 200, 200, 200, 200]),
                                        estimate: series([0, 0.02, 0.04], [100, 200, 0]))
        #expect(a.estimateCents.count == 6)
        #expect(a.estimateCents[0] == c(100))
        #expect(abs(a.estimateCents[1] - (c(100) + 600)) < 1e-9)   // linear in cents between 100 and 200 Hz
        #expect(a.estimateCents[2] == c(200))
        #expect(a.estimateCents[3] == c(200))   // towards the 0 at 0.04: the held 200 Hz, not halfway to 0 cents
        #expect(a.estimateCents[4] == 0)        // the 0 itself is kept
        #expect(a.estimateCents[5] == 0)        // past the estimate's end: the appended unvoiced sample
        #expect(a.estimateVoiced == [true, true, true, true, false, false])
        let s = a.scores()
        #expect(s.rawPitchAccuracy == 4.0 / 6)
        #expect(s.voicingRecall == 4.0 / 6)
        #expect(s.voicingFalseAlarm == 0)       // no unvoiced reference frame
        #expect(s.overallAccuracy == 4.0 / 6)
    }

    @Test func voicingIsHeldFromThePreviousSample() throws {
        let a = try MelodyMetrics.align(reference: series([0, 0.005, 0.01, 0.015], [200, 200, 200, 200]),
                                        estimate: series([0, 0.01, 0.02], [-200, 200, 200]))
        #expect(a.estimateVoiced == [false, false, true, true])
        #expect(a.estimateCents == [c(200), c(200), c(200), c(200)])
    }

    @Test func estimateLongerThanTheReferenceIsCutToItsGrid() throws {
        let a = try MelodyMetrics.align(reference: series([0, 0.01], [200, 200]),
                                        estimate: series([0, 0.01, 0.02, 0.03], [200, 200, 300, 300]))
        #expect(a.estimateCents == [c(200), c(200)])
    }

    @Test func nearlyEqualGridsAreNotResampled() throws {
        // mir_eval skips resampling when the grids agree within NumPy's allclose (1e-5 relative):
        // the estimate is then read frame by frame.
        let close = try score([0, 1, 2], [0, 220, 0], [0, 1.000001, 2.000002], [0, 220, 0])
        #expect(close.rawPitchAccuracy == 1)
        #expect(close.overallAccuracy == 1)
        // 1e-4 apart: resampled, and at t = 1 the previous estimate sample (t = 0) has no pitch.
        let far = try score([0, 1, 2], [0, 220, 0], [0, 1.0001, 2.0002], [0, 220, 0])
        #expect(far.rawPitchAccuracy == 0)
        #expect(far.voicingRecall == 0)
        #expect(far.voicingFalseAlarm == 1.0 / 2)
        #expect(far.overallAccuracy == 1.0 / 3)
    }

    @Test func toleranceIsStrict() throws {
        let exact = AlignedMelody(referenceVoiced: [true], referenceCents: [5000], estimateVoiced: [true], estimateCents: [5050])
        #expect(exact.rawPitchAccuracy(toleranceCents: 50) == 0)
        #expect(exact.rawPitchAccuracy(toleranceCents: 50.000001) == 1)
        #expect(exact.rawChromaAccuracy(toleranceCents: 50) == 0)
        #expect(exact.overallAccuracy(toleranceCents: 50) == 0)
        let below = AlignedMelody(referenceVoiced: [true], referenceCents: [5000], estimateVoiced: [true], estimateCents: [5049.999])
        #expect(below.rawPitchAccuracy() == 1)
        // 20 Hz vs 40 Hz is exactly 1200 cents: not within a 1200-cent tolerance; chroma folds it to 0.
        let s = try score([0, 1], [20, 20], [0, 1], [40, 40], toleranceCents: 1200)
        #expect(s.rawPitchAccuracy == 0)
        #expect(s.rawChromaAccuracy == 1)
        #expect(s.overallAccuracy == 0)
    }

    @Test func chromaFoldsToTheNearestOctave() {
        let a = AlignedMelody(referenceVoiced: [true, true, true], referenceCents: [5000, 5000, 5000],
                              estimateVoiced: [true, true, true], estimateCents: [6790, 7420, 2620])
        // |Δ| 1790 → nearest octave 1200, 590 off; 2420 → 2400, 20 off; |−2380| → 2400, 20 off.
        #expect(a.rawChromaAccuracy(toleranceCents: 50) == 2.0 / 3)
        #expect(a.rawChromaAccuracy(toleranceCents: 600) == 1)
    }

    @Test func tenHertzIsZeroCentsAndSoNoPitch() throws {
        // mir_eval's quirk, kept: 10 Hz is 0 cents, which the pitch measures read as "no pitch".
        let s = try score([0, 1], [10, 10], [0, 1], [10, 10])
        #expect(s.voicingRecall == 1)
        #expect(s.rawPitchAccuracy == 0)
        #expect(s.overallAccuracy == 0)
        #expect(s.pitchedFrames == 0)
        #expect(s.grossErrorShare == nil)
        #expect(s.medianAbsoluteCents == nil)
    }

    @Test func degenerateReferences() throws {
        let unvoiced = try score([0, 1], [0, -100], [0, 1], [100, 0])
        #expect(unvoiced.voicingRecall == 1)         // no voiced reference frame
        #expect(unvoiced.rawPitchAccuracy == 0)
        #expect(unvoiced.rawChromaAccuracy == 0)
        #expect(unvoiced.voicingFalseAlarm == 1.0 / 2)
        #expect(unvoiced.overallAccuracy == 1.0 / 2)
        let voiced = try score([0, 1], [100, 100], [0, 1], [100, 100])
        #expect(voiced.voicingFalseAlarm == 0)       // no unvoiced reference frame
        #expect(voiced.overallAccuracy == 1)
    }

    @Test func grossErrorsAndMedian() throws {
        let t: [Double] = [0, 1, 2, 3, 4]
        // 10 % sharp (not gross), 25 % sharp (gross), 19 % flat (not), 21 % flat (gross), unvoiced reference (ignored).
        let s = try score(t, [100, 100, 100, 100, 0], t, [110, 125, 81, 79, 300])
        #expect(s.pitchedFrames == 4)
        #expect(s.grossErrorShare == 2.0 / 4)
        let cents = [110.0, 125, 81, 79].map { abs(c($0) - c(100)) }.sorted()
        #expect(s.medianAbsoluteCents == (cents[1] + cents[2]) / 2)
    }

    @Test func configurationRangesAreChecked() throws {
        #expect(throws: PitchError.invalidParameter(name: "toleranceCents", value: "0.0", allowed: "(0, 1200] cents")) {
            _ = try score([0], [100], [0], [100], toleranceCents: 0)
        }
        #expect(throws: PitchError.invalidParameter(name: "toleranceCents", value: "1300.0", allowed: "(0, 1200] cents")) {
            _ = try MelodyMetricsConfiguration(toleranceCents: 1300).validated()
        }
        #expect(throws: PitchError.invalidParameter(name: "baseFrequencyHz", value: "-1.0", allowed: "(0, 1000] Hz")) {
            _ = try MelodyMetricsConfiguration(baseFrequencyHz: -1).validated()
        }
        #expect(throws: PitchError.invalidParameter(name: "grossErrorFraction", value: "1.0", allowed: "(0, 1)")) {
            _ = try MelodyMetricsConfiguration(grossErrorFraction: 1).validated()
        }
        #expect(throws: PitchError.invalidParameter(name: "estimate.timesS[1]", value: "0.0", allowed: "greater than the previous time (0.0)")) {
            _ = try score([0], [100], [0, 0], [100, 100])
        }
        #expect(throws: PitchError.invalidParameter(name: "reference.count", value: "0", allowed: "at least one sample")) {
            _ = try score([], [], [0], [100])
        }
        #expect(throws: PitchError.invalidParameter(name: "reference.f0Hz[0]", value: "nan", allowed: "finite and > 0 (nil for an unvoiced frame)")) {
            _ = try score([0], [.nan], [0], [100])
        }
    }

    @Test func timesAreRoundedLikeNumPy() {
        // Expected values from numpy.round(x, 10).
        #expect(MelodyMetrics.roundedTo10Decimals(0.123456789049) == 0.123456789)
        #expect(MelodyMetrics.roundedTo10Decimals(2.5e-10) == 2e-10)     // half to even
        #expect(MelodyMetrics.roundedTo10Decimals(3.5e-10) == 4e-10)
        #expect(MelodyMetrics.roundedTo10Decimals(1.00000000005) == 1.0)
        #expect(MelodyMetrics.roundedTo10Decimals(12.3456789012345) == 12.3456789012)
    }
}

/// mir_eval's own regression fixtures (`tests/data/melody`, MIT), copied into ../shared.
enum MelodyFixtures {
    static let dir = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()  // package root
        .deletingLastPathComponent().appendingPathComponent("shared/pitch/mir_eval_melody_fixtures").path
    static var present: Bool { FileManager.default.fileExists(atPath: dir + "/output09.json") }

    static func track(_ name: String) throws -> PitchContour {
        try PitchTrackFile.read(path: dir + "/" + name)
    }

    /// The five numbers of `output<id>.json`, read with `Double(String)` (correctly rounded;
    /// Foundation's JSON parser can be one ulp off on 17-digit numbers).
    static func expectedScores(_ id: String) throws -> [String: Double] {
        let text = try String(contentsOfFile: dir + "/output\(id).json", encoding: .utf8)
        var out: [String: Double] = [:]
        for part in text.split(separator: ",") {
            let kv = part.split(separator: ":")
            guard kv.count == 2 else { continue }
            let key = kv[0].trimmingCharacters(in: CharacterSet(charactersIn: "{}\" \n"))
            let value = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "{} \n"))
            out[key] = Double(value)
        }
        return out
    }

    /// Largest |ktv − mir_eval| over the five measures of fixture `n` at 50 cents.
    static func maxDifference(_ n: Int) throws -> Double {
        let id = String(format: "%02d", n)
        let s = try MelodyMetrics.evaluate(reference: track("ref\(id).txt"), estimate: track("est\(id).txt"))
        let expected = try expectedScores(id)
        let pairs: [(String, Double)] = [
            ("Voicing Recall", s.voicingRecall), ("Voicing False Alarm", s.voicingFalseAlarm),
            ("Raw Pitch Accuracy", s.rawPitchAccuracy), ("Raw Chroma Accuracy", s.rawChromaAccuracy),
            ("Overall Accuracy", s.overallAccuracy),
        ]
        var worst = 0.0
        for (key, got) in pairs {
            let want = try #require(expected[key], "output\(id).json has no \(key)")
            worst = max(worst, abs(got - want))
        }
        return worst
    }
}

@Suite(.enabled(if: MelodyFixtures.present, "../shared is absent"))
struct MelodyMetricsMirEvalFixtureTests {
    @Test(arguments: 0..<10)
    func reproducesMirEval(_ n: Int) throws {
        #expect(try MelodyFixtures.maxDifference(n) <= 1e-12)
    }

    @Test func allTenAgreeExactly() throws {
        var worst = 0.0
        for n in 0..<10 { worst = max(worst, try MelodyFixtures.maxDifference(n)) }
        // Measured: 0 (every measure is a ratio of frame counts, and every count agrees).
        #expect(worst == 0)
    }

    /// Tighter tolerances, expected values from mir_eval 0.8.2 `evaluate(..., cent_tolerance=25/10)`.
    @Test(arguments: [
        (4, 25.0, 0.51135273425008, 0.5653981451870803, 0.47254073627036813),
        (4, 10.0, 0.42468819955228654, 0.4595458906299968, 0.41701870850935424),
        (7, 25.0, 0.3431372549019608, 0.46339869281045754, 0.3682530470110273),
        (7, 10.0, 0.1718954248366013, 0.23169934640522877, 0.232733604178758),
        (8, 25.0, 0.6611743559017376, 0.7444577591372079, 0.6767861816278461),
        (8, 10.0, 0.4059316956261234, 0.4508687837028161, 0.4637529442554305),
    ])
    func tighterTolerances(_ c: (Int, Double, Double, Double, Double)) throws {
        let id = String(format: "%02d", c.0)
        let s = try MelodyMetrics.evaluate(reference: MelodyFixtures.track("ref\(id).txt"),
                                           estimate: MelodyFixtures.track("est\(id).txt"),
                                           configuration: MelodyMetricsConfiguration(toleranceCents: c.1))
        #expect(abs(s.rawPitchAccuracy - c.2) <= 1e-12)
        #expect(abs(s.rawChromaAccuracy - c.3) <= 1e-12)
        #expect(abs(s.overallAccuracy - c.4) <= 1e-12)
    }
}

/// Reading pitch-track files.
@Suite struct MelodyMetricsTrackFileTests {
    private func parse(_ text: String, _ path: String = "t.txt") throws(PitchError) -> PitchContour {
        try PitchTrackFile.parse(Array(text.utf8), path: path)
    }

    private func message(_ text: String, _ path: String = "t.txt") -> String? {
        do { _ = try parse(text, path); return nil } catch { return error.description }
    }

    @Test func csvWithAndWithoutHeader() throws {
        let expected = series([0, 0.01, 0.02], [0, 220.5, -110])
        #expect(try parse("time,f0\n0,0\n0.01,220.5\n0.02,-110\n", "a.csv") == expected)
        #expect(try parse("time_s, f0_hz\r\n0, 0\r\n0.01, 220.5\r\n0.02 ,-110", "a.csv") == expected)
        #expect(try parse("0,0\n0.01,220.5\n0.02,-110\n", "a.csv") == expected)
        #expect(try parse("\u{FEFF}0,0\n1e-2,2.205e2\n.02,-110\n", "a.csv") == expected)
    }

    @Test func theCSVKtvPitchWrites() throws {
        let text = "time_s,f0_hz,confidence\n0.000,0.000,0.000\n0.010,220.125,0.930\n0.020,0.000,0.120\n"
        #expect(try parse(text, "take.csv") == series([0, 0.01, 0.02], [0, 220.125, 0]))
    }

    @Test func whitespaceCommentsAndBlankLines() throws {
        let text = "# A comment\n\n0\t0\n  0.01    220.5  \n# another\n\n0.02 -110\n\n"
        #expect(try parse(text) == series([0, 0.01, 0.02], [0, 220.5, -110]))
        #expect(try parse("0 1\r2 3\r") == series([0, 2], [1, 3]))
    }

    @Test func textErrorsNameTheLine() {
        #expect(message("0.0,220\n0.01,abc\n", "x.csv") == "x.csv:2: f0 `abc` is not a number")
        #expect(message("# c\n\n0 220\nzero 220\n") == "t.txt:4: time `zero` is not a number")
        #expect(message("0 220\n0.01 220 5\n") == "t.txt:2: expected 2 columns (time and f0), found 3: `0.01 220 5`")
        #expect(message("0 220\n0.01\n") == "t.txt:2: expected 2 columns (time and f0), found 1: `0.01`")
        #expect(message("0,220,\n") == "t.txt:1: expected 2 columns (time and f0), found 3: `0,220,`")
        #expect(message("0 220\n0.02 220\n\n0.01 220\n") == "t.txt:4: time `0.01` is not after the previous time `0.02` (line 2); times must increase")
        #expect(message("0 220\n0 230\n") == "t.txt:2: time `0` is not after the previous time `0` (line 1); times must increase")
        #expect(message("0 nan\n") == "t.txt:1: f0 is NaN; write 0 for an unvoiced frame")
        #expect(message("0 220\nNaN 220\n") == "t.txt:2: time is NaN")
        #expect(message("0 -inf\n") == "t.txt:1: f0 is infinite")
        #expect(message("0 0x1p3\n") == "t.txt:1: f0 `0x1p3` is not a number")
        #expect(message("0,\n") == "t.txt:1: f0 is empty")
        #expect(message("-0.5 220\n") == "t.txt:1: time `-0.5` is negative; times are seconds from 0")
        #expect(message("0 220\ntime f0\n") == "t.txt:2: time `time` is not a number")
        #expect(message("time,frequency,voicing\n0,220,0.9\n") == "t.txt:1: header has 3 columns (`time,frequency,voicing`); expected 2: time and f0 (or time, f0, confidence)")
        #expect(message("time_s,f0_hz,confidence\n0.000,0.000,0.000\n0.010,220.000\n") == "t.txt:3: expected 3 columns (time, f0 and confidence), found 2: `0.010,220.000`")
        #expect(message("time_s,f0_hz,confidence\n0.000,0.000,high\n") == "t.txt:2: confidence `high` is not a number")
        #expect(message("") == "t.txt: no frames; expected rows of `time,f0` or `time f0` (seconds, Hz)")
        #expect(message("# only a comment\n\n") == "t.txt: no frames; expected rows of `time,f0` or `time f0` (seconds, Hz)")
        #expect(message("\u{FF}\u{FE}", "b.txt") != nil)
    }

    @Test func ktvPitchJSON() throws {
        let json = """
        {
          "input": "take.wav",
          "hop_s": 0.01,
          "frames": [
            {"time_s": 0, "f0_hz": null, "confidence": 0},
            {"time_s": 0.01, "f0_hz": 220.25, "confidence": 0.93},
            {"time_s": 0.02, "f0_hz": -218.5, "confidence": 0.2, "extra": [1, {"a": "\\u00e9"}]}
          ]
        }
        """
        #expect(try parse(json, "e.json") == series([0, 0.01, 0.02], [0, 220.25, -218.5]))
        #expect(try parse("{\"frames\":[{\"time_s\":1.5,\"f0_hz\":100}]}") == series([1.5], [100]))
    }

    @Test func jsonErrorsNameTheLine() {
        #expect(message("{\n\"frames\": [\n{\"time_s\": 0, \"f0_hz\": 1},\n{\"f0_hz\": 2}\n]}", "e.json")
                == "e.json:4: frames[1]: `time_s` is missing")
        #expect(message("{\"frames\": [\n{\"time_s\": 0.1, \"f0_hz\": 1},\n{\"time_s\": 0.1, \"f0_hz\": 1}]}", "e.json")
                == "e.json:3: frames[1]: `time_s` 0.1 is not after the previous frame's 0.1; times must increase")
        #expect(message("{\"frames\": [{\"time_s\": 0, \"f0_hz\": \"220\"}]}", "e.json")
                == "e.json:1: frames[0]: `f0_hz` must be a number or null, not a string")
        #expect(message("{\"frames\": [{\"time_s\": null, \"f0_hz\": 1}]}", "e.json")
                == "e.json:1: frames[0]: `time_s` must be a number, not null")
        #expect(message("{\"frames\": [{\"time_s\": 0}]}", "e.json")
                == "e.json:1: frames[0]: `f0_hz` is missing (null for an unvoiced frame)")
        #expect(message("{\n\"frames\": [\n{\"time_s\": 0, \"f0_hz\": 1}\n\n", "e.json")
                == "e.json:5: invalid JSON: expected `,` or `]` after an array element, found the end of the text")
        #expect(message("{\n\"frames\": [\n{\"time_s\": 0 \"f0_hz\": 1}]}", "e.json")
                == "e.json:3: invalid JSON: expected `,` or `}` after an object member, found `\"f0_hz\": 1}]}`")
        #expect(message("{\"tracks\": []}", "e.json") == "e.json:1: no `frames` array in the JSON object")
        #expect(message("{\"frames\": {}}", "e.json") == "e.json:1: `frames` must be an array of frame objects")
        #expect(message("{\"frames\": []}", "e.json") == "e.json:1: `frames` is empty")
        #expect(message("{\"frames\": [{\"time_s\": -1, \"f0_hz\": 1}]}", "e.json")
                == "e.json:1: frames[0]: `time_s` -1.0 is negative; times are seconds from 0")
    }

    @Test func unreadableFileIsAnIOError() {
        #expect(throws: FileIOError.cannotRead(path: "/nonexistent-ktv/ref.csv", reason: "no such file")) {
            _ = try PitchTrackFile.read(path: "/nonexistent-ktv/ref.csv")
        }
    }
}
