import Foundation
import KTVCore

// Melody (predominant-f0) evaluation with the MIREX "Audio Melody Extraction" measures, computed
// the way mir_eval computes them, so numbers from ktv can be set beside published ones.
//
// References:
// - C. Raffel, B. McFee, E. J. Humphrey, J. Salamon, O. Nieto, D. Liang, D. P. W. Ellis,
//   "mir_eval: A Transparent Implementation of Common MIR Metrics", ISMIR 2014
//   (`mir_eval.melody.evaluate`, version 0.8.2 read as the behavioural specification; this is an
//   independent Swift implementation, not a translation).
// - G. E. Poliner, D. P. W. Ellis, A. F. Ehmann, E. Gómez, S. Streich, B. Ong, "Melody
//   transcription from music audio: approaches and evaluation", IEEE TASLP 15(4), 2007, and
//   J. Salamon, E. Gómez, D. P. W. Ellis, G. Richard, "Melody extraction from polyphonic music
//   signals", IEEE Signal Processing Magazine 31(2), 2014: the MIREX definitions of the measures.

/// Settings of a melody evaluation, declared once in `Spec`. Defaults are mir_eval's.
public struct MelodyMetricsConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let toleranceCents = Parameter<Double>("toleranceCents", unit: "cents", range: 0...1200, lowerExclusive: true, default: 50,
            "A pitch is correct when strictly within this of the reference (RPA, RCA, OA); MIREX uses 50, CREPE-style tables add 25 and 10.")
        public static let baseFrequencyHz = Parameter<Double>("baseFrequencyHz", unit: "Hz", range: 0...1000, lowerExclusive: true, default: 10,
            "The frequency that is 0 cents (mir_eval's 10 Hz); a pitch equal to it reads as no pitch.")
        public static let grossErrorFraction = Parameter<Double>("grossErrorFraction", range: 0...1, lowerExclusive: true, upperExclusive: true, default: 0.2,
            "A frame is a gross error when off by more than this fraction of the reference frequency (YIN-paper style; not a mir_eval measure).")
        public static let all: [ParameterInfo] = [toleranceCents.info, baseFrequencyHz.info, grossErrorFraction.info]
    }

    public var toleranceCents: Double
    public var baseFrequencyHz: Double
    public var grossErrorFraction: Double

    public init(toleranceCents: Double = Spec.toleranceCents.defaultValue, baseFrequencyHz: Double = Spec.baseFrequencyHz.defaultValue,
                grossErrorFraction: Double = Spec.grossErrorFraction.defaultValue) {
        self.toleranceCents = toleranceCents
        self.baseFrequencyHz = baseFrequencyHz
        self.grossErrorFraction = grossErrorFraction
    }

    public func validated() throws(PitchError) -> MelodyMetricsConfiguration {
        do {
            try Spec.toleranceCents.check(toleranceCents)
            try Spec.baseFrequencyHz.check(baseFrequencyHz)
            try Spec.grossErrorFraction.check(grossErrorFraction)
        } catch { throw PitchError(error) }
        return self
    }
}

/// The measures of one evaluation. Accuracies and rates are fractions in [0, 1].
public struct MelodyScores: Sendable, Equatable {
    /// The tolerance RPA, RCA and OA were computed with.
    public var toleranceCents: Double
    /// Share of reference-voiced frames the estimate marks voiced (1 when none are voiced).
    public var voicingRecall: Double
    /// Share of reference-unvoiced frames the estimate marks voiced (0 when none are unvoiced).
    public var voicingFalseAlarm: Double
    /// Share of reference-voiced frames where the estimate offers a pitch (voiced or not) within
    /// the tolerance. 0 when the reference has no voiced frame.
    public var rawPitchAccuracy: Double
    /// As `rawPitchAccuracy` with the difference folded to the nearest octave.
    public var rawChromaAccuracy: Double
    /// Share of all frames that are right: reference-voiced frames marked voiced with a correct
    /// pitch, plus reference-unvoiced frames marked unvoiced.
    public var overallAccuracy: Double
    /// Frames scored: the reference grid, including a t = 0 frame inserted when it starts later.
    public var referenceFrames: Int
    /// Reference frames with f0 > 0.
    public var voicedReferenceFrames: Int
    /// Reference-voiced frames where both series have a pitch: the frames the two values below use.
    public var pitchedFrames: Int
    /// Share of `pitchedFrames` where |f_est / f_ref − 1| > `grossErrorFraction`; nil when there are none.
    public var grossErrorShare: Double?
    /// Median |est − ref| in cents over `pitchedFrames`; nil when there are none.
    public var medianAbsoluteCents: Double?

    public init(toleranceCents: Double, voicingRecall: Double, voicingFalseAlarm: Double,
                rawPitchAccuracy: Double, rawChromaAccuracy: Double, overallAccuracy: Double,
                referenceFrames: Int, voicedReferenceFrames: Int, pitchedFrames: Int,
                grossErrorShare: Double?, medianAbsoluteCents: Double?) {
        self.toleranceCents = toleranceCents
        self.voicingRecall = voicingRecall
        self.voicingFalseAlarm = voicingFalseAlarm
        self.rawPitchAccuracy = rawPitchAccuracy
        self.rawChromaAccuracy = rawChromaAccuracy
        self.overallAccuracy = overallAccuracy
        self.referenceFrames = referenceFrames
        self.voicedReferenceFrames = voicedReferenceFrames
        self.pitchedFrames = pitchedFrames
        self.grossErrorShare = grossErrorShare
        self.medianAbsoluteCents = medianAbsoluteCents
    }
}

/// Reference and estimate on the reference's time grid, in cents with binary voicing: the arrays
/// every measure is computed from (mir_eval's `to_cent_voicing` output). Compute it once with
/// `MelodyMetrics.align` and score it at several tolerances.
public struct AlignedMelody: Sendable, Equatable {
    public var referenceVoiced: [Bool]
    /// Reference pitch in cents re the base frequency; 0 = no pitch.
    public var referenceCents: [Double]
    public var estimateVoiced: [Bool]
    /// Estimated pitch (including unvoiced guesses) in cents; 0 = no pitch.
    public var estimateCents: [Double]

    public init(referenceVoiced: [Bool], referenceCents: [Double], estimateVoiced: [Bool], estimateCents: [Double]) {
        self.referenceVoiced = referenceVoiced
        self.referenceCents = referenceCents
        self.estimateVoiced = estimateVoiced
        self.estimateCents = estimateCents
    }

    public var frameCount: Int { referenceVoiced.count }
    public var voicedReferenceFrames: Int { referenceVoiced.lazy.filter { $0 }.count }

    public var voicingRecall: Double {
        let voiced = voicedReferenceFrames
        if frameCount == 0 { return 0 }
        if voiced == 0 { return 1 }
        var hits = 0
        for i in 0..<frameCount where referenceVoiced[i] && estimateVoiced[i] { hits += 1 }
        return Double(hits) / Double(voiced)
    }

    public var voicingFalseAlarm: Double {
        let unvoiced = frameCount - voicedReferenceFrames
        if frameCount == 0 || unvoiced == 0 { return 0 }
        var alarms = 0
        for i in 0..<frameCount where !referenceVoiced[i] && estimateVoiced[i] { alarms += 1 }
        return Double(alarms) / Double(unvoiced)
    }

    /// Frames where the reference is voiced and both series carry a pitch.
    private func isPitched(_ i: Int) -> Bool {
        referenceVoiced[i] && referenceCents[i] != 0 && estimateCents[i] != 0
    }

    /// RPA: the estimator's voicing decision is ignored; only whether it offers a pitch counts.
    public func rawPitchAccuracy(toleranceCents: Double = 50) -> Double {
        let voiced = voicedReferenceFrames
        if voiced == 0 { return 0 }
        var correct = 0
        for i in 0..<frameCount where isPitched(i) && abs(referenceCents[i] - estimateCents[i]) < toleranceCents {
            correct += 1
        }
        return Double(correct) / Double(voiced)
    }

    /// RCA: as RPA, with the difference folded to the nearest whole number of octaves first.
    public func rawChromaAccuracy(toleranceCents: Double = 50) -> Double {
        let voiced = voicedReferenceFrames
        if voiced == 0 { return 0 }
        var correct = 0
        for i in 0..<frameCount where isPitched(i) {
            let d = abs(referenceCents[i] - estimateCents[i])
            let octaves = 1200 * (d / 1200 + 0.5).rounded(.down)
            if abs(d - octaves) < toleranceCents { correct += 1 }
        }
        return Double(correct) / Double(voiced)
    }

    /// OA: voiced reference frames need the voicing and the pitch right; unvoiced ones the voicing.
    public func overallAccuracy(toleranceCents: Double = 50) -> Double {
        if frameCount == 0 { return 0 }
        var right = 0
        for i in 0..<frameCount {
            if referenceVoiced[i] {
                if estimateVoiced[i], isPitched(i), abs(referenceCents[i] - estimateCents[i]) < toleranceCents { right += 1 }
            } else if !estimateVoiced[i] {
                right += 1
            }
        }
        return Double(right) / Double(frameCount)
    }

    /// All measures. `configuration` is used as given (`MelodyMetrics.evaluate` validates it).
    public func scores(_ configuration: MelodyMetricsConfiguration = MelodyMetricsConfiguration()) -> MelodyScores {
        var absCents: [Double] = []
        var gross = 0
        for i in 0..<frameCount where isPitched(i) {
            let d = estimateCents[i] - referenceCents[i]
            absCents.append(abs(d))
            if abs(pow(2, d / 1200) - 1) > configuration.grossErrorFraction { gross += 1 }
        }
        absCents.sort()
        let median = Stats.median(absCents)
        let tol = configuration.toleranceCents
        return MelodyScores(
            toleranceCents: tol,
            voicingRecall: voicingRecall,
            voicingFalseAlarm: voicingFalseAlarm,
            rawPitchAccuracy: rawPitchAccuracy(toleranceCents: tol),
            rawChromaAccuracy: rawChromaAccuracy(toleranceCents: tol),
            overallAccuracy: overallAccuracy(toleranceCents: tol),
            referenceFrames: frameCount,
            voicedReferenceFrames: voicedReferenceFrames,
            pitchedFrames: absCents.count,
            grossErrorShare: absCents.isEmpty ? nil : Double(gross) / Double(absCents.count),
            medianAbsoluteCents: median)
    }
}

/// Melody metrics with mir_eval's semantics (`mir_eval.melody.evaluate(ref_time, ref_freq,
/// est_time, est_freq)` with default arguments):
///
/// 1. A series whose first time is after 0 gets a sample at t = 0 carrying its first frequency.
/// 2. f > 0 is voiced; f ≤ 0 unvoiced; the pitch kept is |f|.
/// 3. Pitch in cents re `baseFrequencyHz` (10 Hz): 1200·log2(|f| / base); 0 Hz stays 0 cents.
/// 4. The estimate is resampled onto the reference's times (the reference is never resampled):
///    unless both grids have the same length and agree within 1e-5 relative + 1e-8 absolute,
///    times are rounded to 10 decimals; when the reference runs past the estimate's last time a
///    final unvoiced, pitchless sample is appended there; pitch is linearly interpolated after
///    each 0 has been replaced by the last pitch before it, then set to 0 wherever the previous
///    estimate sample (zeroth-order hold) has no pitch; voicing is held from the previous sample.
/// 5. The estimate is zero-padded or truncated to the reference length.
///
/// Then VR, VFA, RPA, RCA and OA as defined on `AlignedMelody` (tolerance strict: `<`).
public enum MelodyMetrics {
    /// Aligns and scores in one call.
    public static func evaluate(reference: PitchContour, estimate: PitchContour,
                                configuration: MelodyMetricsConfiguration = MelodyMetricsConfiguration()) throws(PitchError) -> MelodyScores {
        let config = try configuration.validated()
        return try align(reference: reference, estimate: estimate, baseFrequencyHz: config.baseFrequencyHz).scores(config)
    }

    /// Steps 1-5 above: both series as cents and voicing on the reference grid.
    public static func align(reference: PitchContour, estimate: PitchContour, baseFrequencyHz: Double = 10) throws(PitchError) -> AlignedMelody {
        guard baseFrequencyHz.isFinite, baseFrequencyHz > 0 else {
            throw .invalidParameter(name: "baseFrequencyHz", value: String(baseFrequencyHz), allowed: "greater than 0")
        }
        let ref: PitchContour, est: PitchContour
        do {
            ref = startingAtZero(try reference.validated(name: "reference"))
            est = startingAtZero(try estimate.validated(name: "estimate"))
        } catch { throw PitchError(error) }
        let refCents = ref.f0Hz.indices.map { cents(offeredHz: ref.offeredHz($0), baseFrequencyHz: baseFrequencyHz) }
        let refVoiced = ref.f0Hz.map { $0 != nil }
        let estCents = est.f0Hz.indices.map { cents(offeredHz: est.offeredHz($0), baseFrequencyHz: baseFrequencyHz) }
        let estVoiced = est.f0Hz.map { $0 != nil }
        var (c, v) = try resample(timesS: est.timesS, cents: estCents, voiced: estVoiced,
                                  onto: ref.timesS)
        let n = refCents.count
        if c.count < n {
            c += [Double](repeating: 0, count: n - c.count)
            v += [Bool](repeating: false, count: n - v.count)
        } else if c.count > n {
            c.removeLast(c.count - n)
            v.removeLast(v.count - n)
        }
        return AlignedMelody(referenceVoiced: refVoiced, referenceCents: refCents, estimateVoiced: v, estimateCents: c)
    }

    /// 1200·log2(|f| / base), and 0 (no pitch) for f = 0 and for non-normal f (subnormal, infinite, NaN):
    /// mir_eval's conversion of a signed value.
    public static func cents(frequencyHz: Double, baseFrequencyHz: Double = 10) -> Double {
        frequencyHz.isNormal ? 1200 * log2(abs(frequencyHz) / baseFrequencyHz) : 0
    }

    /// 1200·log2(f / base), and 0 (mir_eval's "no pitch") when no pitch is offered.
    static func cents(offeredHz: Double?, baseFrequencyHz: Double) -> Double {
        offeredHz.map { 1200 * log2($0 / baseFrequencyHz) } ?? 0
    }

    /// Rounds to 10 decimals the way NumPy's `round` does: scale, round half to even, unscale.
    static func roundedTo10Decimals(_ t: Double) -> Double {
        (t * 1e10).rounded(.toNearestOrEven) / 1e10
    }

    /// Step 1: a sample at t = 0 repeating the first frequency when the series starts later.
    static func startingAtZero(_ s: PitchContour) -> PitchContour {
        guard let first = s.timesS.first, first > 0 else { return s }
        return PitchContour(timesS: [0] + s.timesS, f0Hz: [s.f0Hz[0]] + s.f0Hz,
                            unvoicedGuessHz: s.unvoicedGuessHz.isEmpty ? [] : [s.unvoicedGuessHz[0]] + s.unvoicedGuessHz)
    }

    /// NumPy's `allclose` (rtol 1e-5, atol 1e-8, relative to `b`).
    static func allClose(_ a: [Double], _ b: [Double]) -> Bool {
        zip(a, b).allSatisfy { abs($0 - $1) <= 1e-8 + 1e-5 * abs($1) }
    }

    /// Step 4: a pitch series (cents, 0 = no pitch) and binary voicing resampled onto `grid`.
    static func resample(timesS: [Double], cents: [Double], voiced: [Bool],
                         onto grid: [Double]) throws(PitchError) -> (cents: [Double], voiced: [Bool]) {
        if timesS.count == grid.count, allClose(timesS, grid) { return (cents, voiced) }
        guard !grid.isEmpty else { return ([], []) }
        var times = timesS.map(roundedTo10Decimals)
        let newTimes = grid.map(roundedTo10Decimals)
        var values = cents
        var voicing = voiced
        let newMax = newTimes.max()!
        if newMax > times.last! {
            times.append(newMax)
            values.append(0)
            voicing.append(false)
        }
        for i in 1..<max(1, times.count) where !(times[i] > times[i - 1]) {
            throw .invalidParameter(name: "estimate time", value: String(timesS[min(i, timesS.count - 1)]),
                                    allowed: "at least 1e-10 s after the previous time (times are rounded to 10 decimals)")
        }
        // Zeros replaced by the last pitch before them, so interpolation never slides towards 0 Hz.
        var held = values
        for i in 1..<max(1, held.count) where values[i] == 0 { held[i] = held[i - 1] }

        var outCents = [Double](repeating: 0, count: newTimes.count)
        var outVoiced = [Bool](repeating: false, count: newTimes.count)
        let last = times.count - 1
        for (k, x) in newTimes.enumerated() {
            guard x >= times[0] else {
                throw .invalidParameter(name: "reference time", value: String(grid[k]),
                                        allowed: "not before the estimate's first time (\(times[0]))")
            }
            // j: the last estimate sample at or before x.
            // (x ≥ times[0], checked above, so there is one.)
            let j = times.partitionPoint { $0 <= x } - 1
            let linear: Double
            if j == last || times[j] == x {
                linear = held[j]
            } else {
                let slope = (held[j + 1] - held[j]) / (times[j + 1] - times[j])
                linear = slope * (x - times[j]) + held[j]
            }
            outCents[k] = values[j] != 0 ? linear : 0
            outVoiced[k] = voicing[j]
        }
        return (outCents, outVoiced)
    }
}
