import Foundation

/// What a pitch tracker heard of the voice besides its pitch, frame by frame, on the recording's own
/// clock (frame k at k·`hopS`, the frames of the `PitchContour` it came with): how loud it was and
/// how periodic. The voice measures of the ktv rules (dynamics, voice quality) read these; a take
/// given as a pitch track has none.
public struct VoiceFrames: Sendable, Equatable {
    /// Frame step, seconds.
    public var hopS: Double
    /// RMS level of each frame's analysis buffer, dB relative to full scale (−120 for silence).
    public var levelDb: [Double]
    /// YIN's aperiodicity of each frame: the cumulative-mean-normalised difference d′ at its best
    /// dip, 0 (perfectly periodic) … 1 (noise). de Cheveigné & Kawahara 2002 show d′ at the period
    /// is the share of the frame's power that is aperiodic, so 10·log10((1 − d′)/d′) is a
    /// harmonics-to-noise ratio.
    public var aperiodicity: [Double]
    /// How bright each frame is: the energy of the signal's second difference over its own, dB
    /// (a 12 dB-per-octave tilt: a voice rich in upper harmonics, the "ring" of a carrying voice,
    /// reads higher; a dull, muffled or pressed-down voice lower). At the tracker's analysis rate.
    public var brightnessDb: [Double]

    public init(hopS: Double, levelDb: [Double], aperiodicity: [Double], brightnessDb: [Double]) {
        self.hopS = hopS
        self.levelDb = levelDb
        self.aperiodicity = aperiodicity
        self.brightnessDb = brightnessDb
    }

    public var count: Int { levelDb.count }

    /// The frame nearest `timeS` on the recording's clock; nil outside the frames.
    public func index(atS timeS: Double) -> Int? {
        guard hopS > 0, timeS.isFinite else { return nil }
        let k = Int((timeS / hopS).rounded())
        return k >= 0 && k < count ? k : nil
    }

    /// The harmonics-to-noise ratio of frame `k`, dB, from its aperiodicity (clamped to ±40 dB).
    public func harmonicsToNoiseDb(_ k: Int) -> Double {
        let d = min(max(aperiodicity[k], 1e-4), 1 - 1e-4)
        return 10 * log10((1 - d) / d)
    }
}

/// Level in dB of an RMS amplitude, −120 for silence.
@inline(__always)
public func levelDb(rms: Double) -> Double { rms > 1e-6 ? 20 * log10(rms) : -120 }
