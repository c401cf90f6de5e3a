import Foundation
import KTVCore

// Dynamics: whether the singer's loudness follows the reference singer's phrase by phrase (swells,
// accents, phrase ends), and spans a like range.
//
// Reference: loudness-contour similarity as used in singing assessment, e.g. C. Gupta, H. Li, Y. Wang,
// "Perceptual evaluation of singing quality", APSIPA 2017 (the volume dimension of PESnQ), and
// Molina et al. 2013 (frame-level volume against a reference after alignment). Here: the frames
// where both sang, paired through the alignment (the take's frame at its recording time, the
// reference's at the song time it was placed on); the level in dB of each; their Pearson correlation
// (a constant gain, a louder microphone, drops out) and the ratio of their ranges (90th minus 10th
// percentile). Loudness as heard is not level alone: at the same level a voice rich in upper
// harmonics sounds louder and carries (loudness models weight those bands more, Zwicker & Fastl,
// "Psychoacoustics", ch. 8; the singer's formant, Sundberg 1987), so half the score is the shape (the
// correlation, with the range) and half the carrying power: the take's brightness against the
// reference singer's (`VoiceQualityMeasure`'s figure, on the same ramp). Only a reference recording has
// dynamics: written notes leave it unjudged, and so does a take given as a pitch track.

public struct DynamicsFigures: Sendable, Equatable {
    /// Pearson correlation of the paired levels, −1…1.
    public var correlation: Double
    /// The take's level range (90th − 10th percentile of its voiced frames), dB.
    public var rangeDb: Double
    /// The reference singer's, over the same pairs, dB.
    public var referenceRangeDb: Double
    public var pairs: Int
}

public enum DynamicsMeasure {
    public enum Spec {
        public static let fullCorrelation = Parameter<Double>("dynamicsFullCorrelation", range: 0.1...1, default: 0.7,
            "Level contours correlated this well or better with the reference singer's earn full credit (none at 0).")
        public static let all: [ParameterInfo] = [fullCorrelation.info]
    }

    /// The paired figures, nil with fewer than 50 pairs.
    static func figures(_ take: SungTake, reference: ReferenceRecording) -> DynamicsFigures? {
        guard let voice = take.voice, let refVoice = reference.voice, let recorded = take.recordingTimesS,
              recorded.count == take.contour.count else { return nil }
        var a: [Double] = [], b: [Double] = []
        for i in 0..<take.contour.count where take.contour.f0Hz[i] != nil {
            guard let k = voice.index(atS: recorded[i]), let m = refVoice.index(atS: take.contour.timesS[i]),
                  m < reference.contour.count, reference.contour.f0Hz[m] != nil else { continue }
            a.append(voice.levelDb[k])
            b.append(refVoice.levelDb[m])
        }
        guard a.count >= 50, let r = Stats.pearson(a, b) else { return nil }
        func range(_ v: [Double]) -> Double {
            let s = v.sorted()
            return (Stats.percentile(s, 0.9) ?? 0) - (Stats.percentile(s, 0.1) ?? 0)
        }
        return DynamicsFigures(correlation: r, rangeDb: range(a), referenceRangeDb: range(b), pairs: a.count)
    }

    /// Share of the score that is the shape of the loudness (the rest is carrying power).
    static let shapeShare = 0.5

    /// `brightnessBelowDb`: the take's brightness under the reference singer's, dB (nil: unknown,
    /// the shape decides alone).
    static func dimension(_ take: SungTake, reference: ReferenceMelody, brightnessBelowDb: Double?) -> DimensionScore {
        var d = DimensionScore(.dynamics)
        guard let recording = reference.recording else {
            d.reason = "written notes carry no dynamics to follow (give the reference singer's recording with --reference-audio)"
            return d
        }
        guard take.voice != nil else {
            d.reason = "the take is a pitch track: it carries no loudness (score the audio instead)"
            return d
        }
        guard let f = figures(take, reference: recording) else {
            d.reason = "too few moments where both the take and the reference singer sang to compare loudness"
            return d
        }
        d.figures = [.init("correlation", f.correlation, nil), .init("range", f.rangeDb, "dB"), .init("reference_range", f.referenceRangeDb, "dB")]
        let follow = min(1, max(0, f.correlation / Spec.fullCorrelation.defaultValue))
        // The range within half to twice the reference's keeps full credit; a flat or a shouting
        // delivery loses up to a quarter.
        let ratio = f.referenceRangeDb > 0.5 ? f.rangeDb / f.referenceRangeDb : 1
        let rangeCredit = 1 - 0.25 * min(1, max(0, abs(log2(max(ratio, 1e-3))) - 1))
        guard let below = brightnessBelowDb else {
            d.score = 100 * follow * rangeCredit
            return d
        }
        let carrying = VoiceQualityMeasure.brightnessCredit(belowDb: below)
        d.figures.append(.init("carrying_power", carrying, nil))
        d.score = 100 * (Self.shapeShare * follow * rangeCredit + (1 - Self.shapeShare) * carrying)
        return d
    }
}
