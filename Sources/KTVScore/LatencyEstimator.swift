import KTVCore

// The recording path's delay, found from the take itself when no accompaniment says it: the offset,
// within a window, at which the sung contour best lines up with the reference's notes. An SDK's pitch
// file or a take recorded elsewhere has no accompaniment to cross-correlate (AccompanimentCanceller),
// but its notes start late by the same amount throughout.
//
// The measure at each candidate offset d (the take moved d ms earlier): of the voiced frames, the
// share that falls inside a note and agrees with it, within `agreeCents`, once the take's key is
// taken off (the median of the octave-folded errors at that offset, so a transposed singer is
// aligned too); times how well the voice's onsets (voiced after a rest) land on note starts, which
// settles the plateau a singer's early breaths leave at the ends of notes. It is the alignment score of melody matching by voicing and pitch
// (cf. Dannenberg & Hu 2003, "Polyphonic audio matching for score following"), over one shift.
// Candidates every `stepMs`; the best is refined by a parabola through its neighbours. Confidence:
// how far the best stands above the window's median, as a share of the best; under
// `minConfidence` the estimate is not used.

/// Settings of the latency estimate, each declared once.
public struct LatencyEstimatorConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let minMs = Parameter<Double>("latencyMinMs", unit: "ms", range: -2000...0, default: -200,
            "The earliest latency considered (a take ahead of the song).")
        public static let maxMs = Parameter<Double>("latencyMaxMs", unit: "ms", range: 0...3000, default: 600,
            "The latest latency considered (a recording path's delay).")
        public static let stepMs = Parameter<Double>("latencyStepMs", unit: "ms", range: 1...50, default: 5,
            "Spacing of the candidate latencies; the best is refined between them.")
        public static let agreeCents = Parameter<Double>("latencyAgreeCents", unit: "cents", range: 20...600, default: 100,
            "A voiced frame agrees with its note within this many cents (after the take's key, octaves folded).")
        public static let minConfidence = Parameter<Double>("latencyMinConfidence", range: 0...1, default: 0.15,
            "Below this confidence the estimate is not used: the latency is taken as 0 and a finding says so.")
        public static let all: [ParameterInfo] = [minMs.info, maxMs.info, stepMs.info, agreeCents.info, minConfidence.info]
    }

    public var minMs = Spec.minMs.defaultValue
    public var maxMs = Spec.maxMs.defaultValue
    public var stepMs = Spec.stepMs.defaultValue
    public var agreeCents = Spec.agreeCents.defaultValue
    public var minConfidence = Spec.minConfidence.defaultValue

    public init() {}

    public func validated() throws(ScoreError) -> LatencyEstimatorConfiguration {
        do {
            try Spec.minMs.check(minMs)
            try Spec.maxMs.check(maxMs)
            try Spec.stepMs.check(stepMs)
            try Spec.agreeCents.check(agreeCents)
            try Spec.minConfidence.check(minConfidence)
        } catch { throw ScoreError(error) }
        return self
    }
}

/// The latency of a take against its reference, estimated from the take alone.
public struct LatencyEstimate: Sendable, Equatable {
    /// The best offset in the window, ms (positive: the take lags the song).
    public var latencyMs: Double
    /// 0…1: how far the best alignment stands above the window's median.
    public var confidence: Double
    /// Whether `confidence` reached the configuration's minimum (else the latency used is 0).
    public var used: Bool
    /// What the notes' onsets moved the estimate by after it was used, ms (`Scorer.score`): a median
    /// onset beyond the grace after compensation is the estimate's own error. `latencyMs` includes it.
    public var onsetCorrectionMs = 0.0

    public init(latencyMs: Double, confidence: Double, used: Bool, onsetCorrectionMs: Double = 0) {
        self.latencyMs = latencyMs
        self.confidence = confidence
        self.used = used
        self.onsetCorrectionMs = onsetCorrectionMs
    }
}

public enum LatencyEstimator {
    /// How much onsets landing on note starts count against frames agreeing with their notes.
    static let onsetWeight = 1.0
    /// An onset this far from every note start (ms) earns nothing.
    static let onsetReachMs = 80.0

    /// The estimate for `take` (its own clock, seconds) against `reference`.
    public static func estimate(_ take: PitchContour, reference: ReferenceMelody,
                                configuration: LatencyEstimatorConfiguration = LatencyEstimatorConfiguration()) throws(ScoreError) -> LatencyEstimate {
        let c = try configuration.validated()
        let notes = reference.notes.filter { $0.cents != nil && $0.durationMs > 0 }.sorted { $0.startMs < $1.startMs }
        var frames: [(ms: Double, cents: Double)] = []
        for (t, f) in zip(take.timesS, take.f0Hz) { if let f { frames.append((t * 1000, ReferenceMelody.cents(hz: f))) } }
        guard !notes.isEmpty, frames.count >= 10 else { return LatencyEstimate(latencyMs: 0, confidence: 0, used: false) }
        let starts = notes.map { Double($0.startMs) }
        // The note under a song time (the last starting at or before it, if it has not ended).
        func note(at ms: Double) -> MelodyNote? {
            let lo = starts.partitionPoint { $0 <= ms }
            guard lo > 0 else { return nil }
            let n = notes[lo - 1]
            return ms < Double(n.endMs) ? n : nil
        }
        func folded(_ x: Double) -> Double { x - 1200 * (x / 1200).rounded() }
        // Where the voice starts after a rest: singers come in on the note; they leave it early
        // for a breath, so the ends would leave a plateau of equally good offsets.
        var onsets: [Double] = []
        for (k, t) in take.timesS.enumerated() where take.f0Hz[k] != nil {
            if k == 0 || take.f0Hz[k - 1] == nil || (t - take.timesS[k - 1]) * 1000 > 30 { onsets.append(t * 1000) }
        }
        // 1 when an onset lands on a note's start, falling to 0 at `onsetReachMs` away.
        func onsetMatch(_ d: Double) -> Double {
            guard !onsets.isEmpty else { return 0 }
            var sum = 0.0
            for o in onsets {
                let t = o - d
                let lo = starts.partitionPoint { $0 < t }
                var nearest = Double.infinity
                if lo < starts.count { nearest = min(nearest, abs(starts[lo] - t)) }
                if lo > 0 { nearest = min(nearest, abs(starts[lo - 1] - t)) }
                sum += max(0, 1 - nearest / Self.onsetReachMs)
            }
            return sum / Double(onsets.count)
        }
        func measure(_ d: Double) -> Double {
            var errors: [Double] = []
            errors.reserveCapacity(frames.count)
            for f in frames {
                if let n = note(at: f.ms - d), let target = n.cents { errors.append(folded(f.cents - target)) }
            }
            guard errors.count >= 5 else { return 0 }
            // The key at this offset: the circular median is near enough as the plain median of folded errors.
            var sorted = errors
            sorted.sort()
            let key = Stats.median(sorted) ?? 0
            let agreeing = errors.filter { abs(folded($0 - key)) <= c.agreeCents }.count
            return Double(agreeing) / Double(frames.count) * (1 + Self.onsetWeight * onsetMatch(d)) / (1 + Self.onsetWeight)
        }
        let count = Int(((c.maxMs - c.minMs) / c.stepMs).rounded(.down)) + 1
        let candidates = (0..<count).map { c.minMs + Double($0) * c.stepMs }
        let scores = candidates.map(measure)
        guard let bestIndex = scores.indices.max(by: { scores[$0] < scores[$1] }), scores[bestIndex] > 0 else {
            return LatencyEstimate(latencyMs: 0, confidence: 0, used: false)
        }
        var best = candidates[bestIndex]
        if bestIndex > 0, bestIndex < scores.count - 1 {
            let (a, b, e) = (scores[bestIndex - 1], scores[bestIndex], scores[bestIndex + 1])
            let denominator = a - 2 * b + e
            if denominator < 0 { best += c.stepMs * max(-0.5, min(0.5, 0.5 * (a - e) / denominator)) }
        }
        var sortedScores = scores
        sortedScores.sort()
        let median = Stats.median(sortedScores) ?? 0
        let confidence = max(0, min(1, (scores[bestIndex] - median) / scores[bestIndex]))
        return LatencyEstimate(latencyMs: best, confidence: confidence, used: confidence >= c.minConfidence)
    }
}
