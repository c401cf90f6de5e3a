import Foundation
import KTVCore

// Voice quality: how clear and how ringing the sung tone is, against the reference singer's.
//
// Two figures, both read off the pitch tracker's own analysis of each frame (`VoiceFrames`):
// - harmonicity: the harmonics-to-noise ratio, a classic index of breathiness and hoarseness (Yumoto,
//   Gould & Baer, JASA 1982), from YIN's d′ at the period, the aperiodic share of the frame's power
//   (de Cheveigné & Kawahara, JASA 2002): HNR = 10·log10((1 − d′)/d′);
// - brightness: the energy of the signal's second difference over its own, dB, a 12 dB-per-octave
//   spectral tilt measure: a trained, carrying voice puts energy in its upper harmonics (the singer's
//   formant, Sundberg, "The Science of the Singing Voice", 1987); a dull, muffled or pressed voice
//   does not. Spectral tilt is the voice-quality cue most used after HNR (Hillenbrand & Houde 1996).
// Each the median over the loud voiced frames (the loudest 80 %, so onsets and breaths do not decide
// it). Against a reference singer's recording the score is the take's brightness against the
// reference's (a room and a microphone move both alike; harmonicity varies more with the song's
// vowels than with the voice, so it is reported, not scored); against written notes, harmonicity on
// an absolute ramp. A take given as a pitch track carries no voice: not judged.

public struct VoiceQualityFigures: Sendable, Equatable {
    /// Median harmonics-to-noise ratio over the loud voiced frames, dB.
    public var harmonicityDb: Double
    /// Share of those frames under `breathyDb`.
    public var breathyShare: Double
    /// Median brightness over those frames, dB.
    public var brightnessDb: Double
}

public enum VoiceQualityMeasure {
    public enum Spec {
        public static let breathyDb = Parameter<Double>("breathyDb", unit: "dB", range: 0...20, default: 6,
            "A voiced frame with a harmonics-to-noise ratio under this is breathy or rough.")
        public static let fullBelowReferenceDb = Parameter<Double>("voiceFullBelowReferenceDb", unit: "dB", range: 0...20, default: 1,
            "A take's brightness up to this far under the reference singer's keeps full credit.")
        public static let zeroBelowReferenceDb = Parameter<Double>("voiceZeroBelowReferenceDb", unit: "dB", range: 1...40, default: 9,
            "This far under the reference singer's earns none (linear in between).")
        public static let all: [ParameterInfo] = [breathyDb.info, fullBelowReferenceDb.info, zeroBelowReferenceDb.info]
    }

    /// The figures of the voiced frames `frames` (indices into `voice`), nil with fewer than 20.
    public static func figures(voice: VoiceFrames, frames: [Int]) -> VoiceQualityFigures? {
        guard frames.count >= 20 else { return nil }
        // The loudest 80 % of the voiced frames.
        let levels = frames.map { voice.levelDb[$0] }.sorted()
        let gate = Stats.percentile(levels, 0.2) ?? -120
        let loud = frames.filter { voice.levelDb[$0] >= gate }
        let hnr = loud.map { voice.harmonicsToNoiseDb($0) }.sorted()
        guard let median = Stats.median(hnr), let bright = Stats.median(loud.map { voice.brightnessDb[$0] }.sorted()) else { return nil }
        let breathy = Double(hnr.filter { $0 < Spec.breathyDb.defaultValue }.count) / Double(hnr.count)
        return VoiceQualityFigures(harmonicityDb: median, breathyShare: breathy, brightnessDb: bright)
    }

    /// 0…1 for a take `belowDb` less bright than the reference singer: 1 up to
    /// `fullBelowReferenceDb`, 0 from `zeroBelowReferenceDb`, linear between.
    static func brightnessCredit(belowDb: Double) -> Double {
        let full = Spec.fullBelowReferenceDb.defaultValue, zero = Spec.zeroBelowReferenceDb.defaultValue
        return belowDb <= full ? 1 : belowDb >= zero ? 0 : (zero - belowDb) / (zero - full)
    }

    static func dimension(take: VoiceQualityFigures?, reference: VoiceQualityFigures?, referenceIsRecording: Bool, takeHasVoice: Bool) -> DimensionScore {
        var d = DimensionScore(.voiceQuality)
        guard takeHasVoice else {
            d.reason = "the take is a pitch track: it carries no voice to judge (score the audio instead)"
            return d
        }
        guard let take else {
            d.reason = "too little voiced singing to measure"
            return d
        }
        d.figures = [.init("brightness", take.brightnessDb, "dB"), .init("harmonicity", take.harmonicityDb, "dB"),
                     .init("breathy_share", take.breathyShare, nil)]
        if referenceIsRecording {
            guard let reference else {
                d.reason = "the reference recording has too little voiced singing to compare with"
                return d
            }
            d.figures.append(.init("reference_brightness", reference.brightnessDb, "dB"))
            d.figures.append(.init("reference_harmonicity", reference.harmonicityDb, "dB"))
            d.score = 100 * brightnessCredit(belowDb: reference.brightnessDb - take.brightnessDb)
            return d
        }
        // Written notes: an absolute ramp, full from 15 dB (a clear sung tone), none at 5 dB.
        d.score = 100 * min(1, max(0, (take.harmonicityDb - 5) / 10))
        return d
    }
}
