import Foundation
import KTVCore

// Vibrato: how regular, how fast and how wide the singer's pitch oscillation is on held notes.
//
// Reference: T. Nakano, M. Goto, Y. Hiraga, "An automatic singing skill evaluation method for unknown
// melodies using pitch interval accuracy and vibrato features", Interspeech 2006: vibrato is a mark of
// a trained voice that listeners hear, measured on the F0 contour of held notes. Rate and extent bands
// follow Sundberg, "The Science of the Singing Voice" (1987): 5.5-7.5 Hz, ±50-100 cents in trained
// singers. The method here:
// - held stretches: voiced runs of the contour (on the recording's clock, so a free-timing warp does
//   not bend the rate) of at least `minStretchS`;
// - the note's own pitch movement is taken off with a centred moving average over `trendS` (longer
//   than a vibrato cycle, shorter than a note);
// - the residual's normalised autocorrelation is searched for its peak at lags of `minRateHz`…
//   `maxRateHz`: the peak's height is the regularity (1 = a perfect oscillation, about 0 for a
//   wobble or a straight tone), its lag the rate; the extent is √2 × the residual's standard
//   deviation (a sine's semi-amplitude);
// - each figure is averaged over the stretches, weighted by their length.
// The vibrato dimension compares the take's regularity with the reference singer's (full credit from
// 80 % of it, the spread of one singer's phrases) when the reference is a recording (a straight reference leaves nothing to compare: not judged); against written notes a
// take with vibrato is judged on the usual bands, and one without is not judged (a synthetic or
// straight voice is not punished for what no note asks for).

/// What the vibrato of one contour measured.
public struct VibratoFigures: Sendable, Equatable {
    /// Oscillations per second, Hz.
    public var rateHz: Double
    /// Semi-amplitude of the oscillation, cents.
    public var extentCents: Double
    /// 0…1: the autocorrelation peak of the detrended pitch at the vibrato's period.
    public var regularity: Double
    /// Seconds of held stretches measured.
    public var heldS: Double
}

public enum VibratoMeasure {
    /// Settings, declared once (constants of the method, not tuned per song).
    public enum Spec {
        public static let minStretchS = Parameter<Double>("vibratoMinStretchS", unit: "s", range: 0.2...5, default: 0.4,
            "A voiced stretch this long or longer is a held note whose vibrato is measured.")
        public static let trendS = Parameter<Double>("vibratoTrendS", unit: "s", range: 0.1...1, default: 0.25,
            "The note's own movement is the moving average over this; the vibrato is what is left.")
        public static let minRateHz = Parameter<Double>("vibratoMinRateHz", unit: "Hz", range: 1...10, default: 4,
            "Slowest oscillation counted as vibrato.")
        public static let maxRateHz = Parameter<Double>("vibratoMaxRateHz", unit: "Hz", range: 5...20, default: 12,
            "Fastest oscillation counted as vibrato.")
        public static let presentRegularity = Parameter<Double>("vibratoPresentRegularity", range: 0...1, default: 0.3,
            "A regularity from this up is vibrato (a reference singer's below it is a straight voice, not compared).")
        public static let noiseRegularity = Parameter<Double>("vibratoNoiseRegularity", range: 0...1, default: 0.1,
            "The regularity a straight or unsteady voice shows by chance: it earns nothing.")
        public static let all: [ParameterInfo] = [minStretchS.info, trendS.info, minRateHz.info, maxRateHz.info,
                                                  presentRegularity.info, noiseRegularity.info]
    }

    /// The vibrato of a contour (times in seconds, increasing; cents or nil), nil when no held
    /// stretch is long enough.
    public static func figures(timesS: [Double], cents: [Double?]) -> VibratoFigures? {
        let n = min(timesS.count, cents.count)
        guard n >= 8 else { return nil }
        var steps: [Double] = []
        for i in 1..<min(n, 2000) { let d = timesS[i] - timesS[i - 1]; if d > 0 { steps.append(d) } }
        steps.sort()
        guard let hop = Stats.median(steps), hop > 0 else { return nil }
        let minFrames = Int((Spec.minStretchS.defaultValue / hop).rounded())
        let trend = max(3, Int((Spec.trendS.defaultValue / hop).rounded()) | 1)
        let maxLag = Int((1 / Spec.minRateHz.defaultValue / hop).rounded(.up))
        var weight = 0.0, rate = 0.0, extent = 0.0, regularity = 0.0
        var i = 0
        while i < n {
            guard cents[i] != nil else { i += 1; continue }
            var j = i + 1
            while j < n, cents[j] != nil, timesS[j] - timesS[j - 1] <= 1.5 * hop { j += 1 }
            defer { i = j }
            guard j - i >= max(minFrames, trend + maxLag + 4) else { continue }
            let seg = (i..<j).map { cents[$0] ?? 0 }
            // Residual after the centred moving average, away from the stretch's ends.
            let half = trend / 2
            var prefix = [0.0]
            for v in seg { prefix.append(prefix[prefix.count - 1] + v) }
            var residual: [Double] = []
            for k in half..<(seg.count - half) {
                residual.append(seg[k] - (prefix[k + half + 1] - prefix[k - half]) / Double(trend))
            }
            guard let o = oscillation(residual, hopS: hop) else { continue }
            let w = Double(seg.count)
            weight += w
            rate += w * o.rateHz
            // The moving average keeps part of the oscillation itself (its response at the rate is
            // sin(πfT)/(πfT)): the residual's amplitude is (1 − that) times the vibrato's.
            let x = Double.pi * o.rateHz * Double(trend) * hop
            let kept = x > 0 ? sin(x) / x : 1
            extent += w * o.extentCents / max(0.5, 1 - kept)
            regularity += w * o.regularity
        }
        guard weight > 0 else { return nil }
        return VibratoFigures(rateHz: rate / weight, extentCents: extent / weight, regularity: regularity / weight, heldS: weight * hop)
    }

    /// The share of the reference singer's regularity that earns full credit.
    static let referenceShare = 0.8

    /// The smallest semi-amplitude that is an oscillation at all, cents (a tracker's jitter on a
    /// steady tone is a few cents).
    static let minExtentCents = 8.0

    /// The oscillation of a detrended series sampled every `hopS`: the normalised autocorrelation's
    /// peak over the vibrato lags (its height the regularity, its lag the rate) and √2 × the
    /// series' standard deviation; nil when it is shorter than the slowest period and a bit.
    static func oscillation(_ residual: [Double], hopS hop: Double) -> (rateHz: Double, extentCents: Double, regularity: Double)? {
        let minLag = max(2, Int((1 / Spec.maxRateHz.defaultValue / hop).rounded(.down)))
        let maxLag = Int((1 / Spec.minRateHz.defaultValue / hop).rounded(.up))
        guard hop > 0, residual.count > minLag + 4, let mean = Stats.mean(residual) else { return nil }
        let r = residual.map { $0 - mean }
        let energy = r.reduce(0) { $0 + $1 * $1 }
        guard energy > 0 else { return (0, 0, 0) }
        var bestLag = minLag, best = -1.0
        for lag in minLag...max(minLag, min(maxLag, r.count - 4)) {
            var s = 0.0
            for k in 0..<(r.count - lag) { s += r[k] * r[k + lag] }
            // Normalised by the overlap, so a long lag is not penalised for its shorter sum.
            let value = s / energy * Double(r.count) / Double(r.count - lag)
            if value > best { best = value; bestLag = lag }
        }
        let extent = (2 * energy / Double(r.count)).squareRoot()
        // A held tone steadier than `minExtentCents` has no oscillation to speak of, however
        // regular its last bits of rounding are.
        return (1 / (Double(bestLag) * hop), extent, extent < minExtentCents ? 0 : min(1, max(0, best)))
    }

    /// The vibrato dimension of a take (`take`) against the reference singer's (`reference`, nil
    /// for written notes).
    static func dimension(take: VibratoFigures?, reference: VibratoFigures?, referenceIsRecording: Bool) -> DimensionScore {
        var d = DimensionScore(.vibrato)
        guard let take else {
            d.reason = "no held note of \(Spec.minStretchS.defaultValue) s or longer was sung: nothing to measure"
            return d
        }
        d.figures = [.init("rate", take.rateHz, "Hz"), .init("extent", take.extentCents, "cents"), .init("regularity", take.regularity, nil)]
        let floor = Spec.noiseRegularity.defaultValue, present = Spec.presentRegularity.defaultValue
        if referenceIsRecording {
            guard let reference else {
                d.reason = "the reference recording has no held note to compare with"
                return d
            }
            d.figures.append(.init("reference_regularity", reference.regularity, nil))
            d.figures.append(.init("reference_rate", reference.rateHz, "Hz"))
            d.figures.append(.init("reference_extent", reference.extentCents, "cents"))
            guard reference.regularity >= present else {
                d.reason = "the reference singer sings without vibrato (regularity \(String(format: "%.2f", reference.regularity))): nothing to compare"
                return d
            }
            // Full credit from `referenceShare` of the reference's regularity: one professional's
            // phrases of one song vary by about ±0.1 (0.43-0.64 over PESnQ's four).
            d.score = 100 * min(1, max(0, (take.regularity - floor) / max(0.05, Self.referenceShare * reference.regularity - floor)))
            return d
        }
        guard take.regularity >= present else {
            d.reason = "no vibrato sung; written notes ask for none, so a straight voice is not judged on it"
            return d
        }
        // Against the usual bands: rate 5…7.5 Hz and extent 20…150 cents in full, nothing at 3 / 10 Hz
        // and 5 / 300 cents.
        let rateCredit = band(take.rateHz, zeroLow: 3, fullLow: 5, fullHigh: 7.5, zeroHigh: 10)
        let extentCredit = band(take.extentCents, zeroLow: 5, fullLow: 20, fullHigh: 150, zeroHigh: 300)
        d.score = 100 * rateCredit * extentCredit
        return d
    }

    /// 1 inside [fullLow, fullHigh], 0 outside (zeroLow, zeroHigh), linear between.
    static func band(_ x: Double, zeroLow: Double, fullLow: Double, fullHigh: Double, zeroHigh: Double) -> Double {
        if x >= fullLow && x <= fullHigh { return 1 }
        if x <= zeroLow || x >= zeroHigh { return 0 }
        return x < fullLow ? (x - zeroLow) / (fullLow - zeroLow) : (zeroHigh - x) / (zeroHigh - fullHigh)
    }
}
