import Foundation

// Candidate tracking across frames, after pYIN: Mauch, M. & Dixon, S. (2014). "pYIN: A fundamental
// frequency estimator using probabilistic threshold distributions." Proc. ICASSP, 659-663.
//
// Each frame's YIN dips get probabilities from a prior over the absolute threshold (a dip receives the
// mass of every threshold for which it is the first dip below it), so no single threshold decides.
// A Viterbi pass then picks one dip or "unvoiced" per frame, paying for pitch jumps (per semitone,
// more for leaps) and for voicing changes: octave errors and isolated voiced frames cost more than
// they explain.

/// Costs of the decoding, in nats.
public struct ViterbiCosts: Sendable, Equatable {
    /// Per semitone of pitch change between consecutive voiced frames.
    public var semitone: Double = 0.6
    /// Extra cost of a change larger than 1.5 semitones (a leap rather than vibrato or a glide).
    public var leap: Double = 1.5
    /// Cost of switching between voiced and unvoiced.
    public var voicingSwitch: Double = 2.5
    /// Added to every voiced state of a frame whose energy is under the floor.
    public var quietFrame: Double = 12
    /// In frames well above the energy floor (`loudMarginDb`), a voiced candidate never costs more
    /// than −ln(loudVoicedFloor), and "unvoiced" costs `loudUnvoiced` more: at note onsets and ends
    /// the YIN buffer is half silent, so its dips are weak although the voice is there; continuity
    /// with the neighbouring frames then decides.
    public var loudVoicedFloor: Double = 0.3
    public var loudUnvoiced: Double = 1.5
    public var loudMarginDb: Double = 10
    /// The floor above applies only to dips under this d′: noise has dips too (white noise's lowest
    /// are about 0.6-0.8), and with the floor on them a loud noise was tracked as a wandering pitch.
    public var loudFloorMaxDprime: Double = 0.5

    public init() {}
}

enum ThresholdPrior {
    /// Beta(2, 11.33) over thresholds 0.01…1.00 (mean 0.15; one of pYIN's priors), normalized.
    static let thresholds: [Float] = (1...100).map { Float($0) / 100 }
    static let weights: [Double] = {
        let a = 2.0, b = 11.33
        let raw = thresholds.map { t -> Double in
            let x = Double(t) - 0.005
            return pow(x, a - 1) * pow(1 - x, b - 1)
        }
        let s = raw.reduce(0, +)
        return raw.map { $0 / s }
    }()

    /// Probabilities of each candidate (sorted by lag ascending) being the period.
    static func probabilities(_ dprimes: UnsafeBufferPointer<Float>) -> [Double] {
        var p = [Double](repeating: 0, count: dprimes.count)
        guard !dprimes.isEmpty else { return p }
        var best = 0
        for i in 1..<dprimes.count where dprimes[i] < dprimes[best] { best = i }
        for (t, w) in zip(thresholds, weights) {
            if let first = dprimes.firstIndex(where: { $0 < t }) {
                p[first] += w
            } else {
                // pYIN keeps a little mass on the global minimum when no dip is under the threshold.
                p[best] += w * 0.01
            }
        }
        return p
    }
}

/// Frame-wise candidates in flat storage: `count[k]` candidates of frame k at `k·stride`.
struct CandidateTable {
    let stride: Int
    var lags: [Float] = []
    var dprimes: [Float] = []
    var counts: [UInt8] = []
    var rms: [Float] = []
    /// Per frame: the lowest d′ (aperiodicity) and the brightness ratio (`YinWorker.analyze`).
    var minDprime: [Float] = []
    var brightness: [Float] = []
    /// RMS of the reference signal (the predicted accompaniment echo) over the same samples, if any.
    var referenceRMS: [Float] = []

    init(stride: Int) { self.stride = stride }

    var frames: Int { counts.count }

    mutating func reserve(_ frames: Int) {
        lags.reserveCapacity(frames * stride)
        dprimes.reserveCapacity(frames * stride)
        counts.reserveCapacity(frames)
        rms.reserveCapacity(frames)
        minDprime.reserveCapacity(frames)
        brightness.reserveCapacity(frames)
    }

    mutating func append(_ candidates: [YinCandidate], rms r: Float, minDprime m: Float = 1, brightness b: Float = 0, referenceRMS ref: Float? = nil) {
        if let ref { referenceRMS.append(ref) }
        minDprime.append(m)
        brightness.append(b)
        for i in 0..<stride {
            lags.append(i < candidates.count ? candidates[i].lag : 0)
            dprimes.append(i < candidates.count ? candidates[i].dprime : 1)
        }
        counts.append(UInt8(min(candidates.count, stride)))
        rms.append(r)
    }
}

/// The decoded choice of one frame.
struct Decoded {
    /// Lag in analysis samples, nil when unvoiced.
    var lag: Float?
    /// Probability mass of the voiced hypotheses.
    var voicedProbability: Double
}

enum PitchDecoder {
    /// Viterbi over "unvoiced" + each frame's candidates. `quiet[k]` marks frames under the energy floor.
    static func decode(_ table: CandidateTable, quiet: [Bool], loud: [Bool], rate: Double, costs: ViterbiCosts) -> [Decoded] {
        let n = table.frames, stride = table.stride
        guard n > 0 else { return [] }
        let states = stride + 1  // 0 = unvoiced
        var cost = [Double](repeating: .infinity, count: states)
        var next = [Double](repeating: .infinity, count: states)
        var back = [UInt8](repeating: 0, count: n * states)
        var emissions = [Double](repeating: 0, count: states)
        var cents = [Double](repeating: 0, count: states), prevCents = [Double](repeating: 0, count: states)
        var voicedProbability = [Double](repeating: 0, count: n)

        func prepare(_ k: Int) {
            let count = Int(table.counts[k])
            let probs = table.dprimes.withUnsafeBufferPointer { ThresholdPrior.probabilities(UnsafeBufferPointer(rebasing: $0[(k * stride)..<(k * stride + count)])) }
            let pv = min(0.999, probs.reduce(0, +))
            voicedProbability[k] = pv
            emissions[0] = -log(max(1 - pv, 1e-3)) + (loud[k] ? costs.loudUnvoiced : 0)
            let floor = loud[k] ? costs.loudVoicedFloor : 1e-4
            for i in 0..<stride {
                if i < count {
                    let dip = Double(table.dprimes[k * stride + i]) < costs.loudFloorMaxDprime
                    emissions[i + 1] = -log(max(probs[i], dip ? floor : 1e-4)) + (quiet[k] ? costs.quietFrame : 0)
                    cents[i + 1] = 1200 * log2(rate / Double(table.lags[k * stride + i]))
                } else {
                    emissions[i + 1] = .infinity
                }
            }
        }

        prepare(0)
        for s in 0..<states { cost[s] = emissions[s] }
        swap(&cents, &prevCents)
        var prevCount = Int(table.counts[0])
        for k in 1..<n {
            prepare(k)
            let count = Int(table.counts[k])
            for s in 0...count {
                var best = Double.infinity, arg = 0
                for p in 0...prevCount where cost[p] < .infinity {
                    var t = cost[p]
                    if s == 0 && p != 0 || s != 0 && p == 0 { t += costs.voicingSwitch }
                    if s != 0 && p != 0 {
                        let jump = abs(cents[s] - prevCents[p]) / 100
                        t += costs.semitone * jump + (jump > 1.5 ? costs.leap : 0)
                    }
                    if t < best { best = t; arg = p }
                }
                next[s] = best + emissions[s]
                back[k * states + s] = UInt8(arg)
            }
            for s in (count + 1)..<states { next[s] = .infinity }
            // Keep costs small to avoid losing precision over an hour of frames.
            let m = next.min() ?? 0
            for s in 0..<states { cost[s] = next[s] - m }
            swap(&cents, &prevCents)
            prevCount = count
        }
        var s = 0
        for i in 0..<states where cost[i] < cost[s] { s = i }
        var out = [Decoded](repeating: Decoded(lag: nil, voicedProbability: 0), count: n)
        for k in Swift.stride(from: n - 1, through: 0, by: -1) {
            out[k] = Decoded(lag: s == 0 ? nil : table.lags[k * table.stride + s - 1], voicedProbability: voicedProbability[k])
            if k > 0 { s = Int(back[k * states + s]) }
        }
        return out
    }
}
