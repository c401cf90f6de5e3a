import KTVCore
// Aligning timed text (lyric words) with where a voice actually sings.
//
// Given spans that should be sung (start/end in ms) and a voicing track (voiced or not every hop),
// the score of a shift s is the share of span time that is voiced once every span is moved by s.
// The best shift maximizes it: the centre of the near-maximal plateau when word time is fully voiced
// over a range of shifts, else the peak refined below the hop by a parabola. Lines whose spans stay mostly unvoiced at the
// best shift are the ones to check by hand.

/// Settings of the alignment search, declared once in `Spec`.
public struct AlignmentConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let searchMs = Parameter<Int>("searchMs", unit: "ms", range: 0...60000, default: 5000,
            "Shifts searched, either way around 0.")
        public static let unvoicedLineShare = Parameter<Double>("unvoicedLineShare", range: 0...1, default: 0.3,
            "A line is mostly unvoiced when less than this share of its word time is voiced.")
        public static let all: [ParameterInfo] = [searchMs.info, unvoicedLineShare.info]
    }

    public var searchMs = Spec.searchMs.defaultValue
    public var unvoicedLineShare = Spec.unvoicedLineShare.defaultValue

    public init() {}

    public func validated() throws(PitchError) -> AlignmentConfiguration {
        do {
            try Spec.searchMs.check(searchMs)
            try Spec.unvoicedLineShare.check(unvoicedLineShare)
        } catch { throw PitchError(error) }
        return self
    }
}

/// A span of text that should be sung, with the group (lyric line) it belongs to.
public struct SungSpan: Sendable, Equatable {
    public var startMs: Int
    public var endMs: Int
    public var group: Int

    public init(startMs: Int, endMs: Int, group: Int) {
        self.startMs = startMs
        self.endMs = endMs
        self.group = group
    }
}

public struct AlignmentResult: Sendable, Equatable {
    /// Milliseconds to add to every lyric time for the best match (sub-hop, from the parabola fit).
    public var bestShiftMs: Double
    /// Share of span time voiced at the best shift, and with no shift.
    public var voicedShareAtBest: Double
    public var voicedShareAtZero: Double
    /// Voiced share per group at the best shift (groups with spans only).
    public var groupShares: [Int: Double]
    /// Groups whose share is under the configured threshold.
    public var mostlyUnvoicedGroups: [Int]
}

public enum VoicingAlignment {
    /// `voiced[k]` says whether the voice sings at k·hopMs.
    public static func align(spans: [SungSpan], voiced: [Bool], hopMs: Double,
                             configuration: AlignmentConfiguration = AlignmentConfiguration()) throws(PitchError) -> AlignmentResult {
        let c = try configuration.validated()
        guard hopMs > 0 else { throw .invalidParameter(name: "hopMs", value: "\(hopMs)", allowed: "> 0") }
        // Span frames on the voicing grid.
        var frames: [(frame: Int, group: Int)] = []
        for s in spans where s.endMs > s.startMs {
            let a = Int((Double(s.startMs) / hopMs).rounded(.up)), b = Int((Double(s.endMs) / hopMs).rounded(.up))
            for f in a..<b { frames.append((f, s.group)) }
        }
        guard !frames.isEmpty else {
            return AlignmentResult(bestShiftMs: 0, voicedShareAtBest: 0, voicedShareAtZero: 0, groupShares: [:], mostlyUnvoicedGroups: [])
        }
        let maxShift = Int((Double(c.searchMs) / hopMs).rounded(.down))
        func isVoiced(_ f: Int) -> Bool { f >= 0 && f < voiced.count && voiced[f] }
        var scores = [Int](repeating: 0, count: 2 * maxShift + 1)
        for (f, _) in frames {
            // Each span frame contributes to every shift that lands it on a voiced frame.
            let lo = max(-maxShift, -f), hi = min(maxShift, voiced.count - 1 - f)
            if lo > hi { continue }
            for s in lo...hi where voiced[f + s] { scores[s + maxShift] += 1 }
        }
        var best = maxShift
        for i in 0..<scores.count {
            if scores[i] > scores[best] || (scores[i] == scores[best] && abs(i - maxShift) < abs(best - maxShift)) { best = i }
        }
        // When every word is voiced over a range of shifts the scores form a plateau; the slack is on
        // both sides, so its centre is the estimate. Otherwise refine the single peak by a parabola.
        let nearTop = Double(scores[best]) * 0.998
        var lo = best, hi = best
        while lo > 0 && Double(scores[lo - 1]) >= nearTop { lo -= 1 }
        while hi + 1 < scores.count && Double(scores[hi + 1]) >= nearTop { hi += 1 }
        var refined = Double(lo + hi) / 2 - Double(maxShift)
        if lo == hi, best > 0 && best + 1 < scores.count {
            refined += Parabola.peakOffset(Double(scores[best - 1]), Double(scores[best]), Double(scores[best + 1]))
        }
        let n = Double(frames.count)
        let bestShift = best - maxShift
        var groupTotal: [Int: Int] = [:], groupVoiced: [Int: Int] = [:]
        for (f, g) in frames {
            groupTotal[g, default: 0] += 1
            if isVoiced(f + bestShift) { groupVoiced[g, default: 0] += 1 }
        }
        var shares: [Int: Double] = [:]
        for (g, t) in groupTotal { shares[g] = Double(groupVoiced[g] ?? 0) / Double(t) }
        let unvoiced = shares.filter { $0.value < c.unvoicedLineShare }.map(\.key).sorted()
        return AlignmentResult(bestShiftMs: refined * hopMs,
                               voicedShareAtBest: Double(scores[best]) / n,
                               voicedShareAtZero: Double(scores[maxShift]) / n,
                               groupShares: shares, mostlyUnvoicedGroups: unvoiced)
    }
}

/// Sub-sample refinement of a sampled maximum.
enum Parabola {
    /// Offset (−0.5…0.5) of the vertex of the parabola through (−1, y0), (0, y1), (1, y2) when y1 is
    /// a local maximum; 0 when the three points do not bend downwards.
    static func peakOffset(_ y0: Double, _ y1: Double, _ y2: Double) -> Double {
        let den = y0 - 2 * y1 + y2
        return den < 0 ? max(-0.5, min(0.5, 0.5 * (y0 - y2) / den)) : 0
    }
}
