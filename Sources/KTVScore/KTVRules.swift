import Foundation
import KTVCore

// ktv's own rules: score what a listener hears, and explain every point.
//
// Each pitched note is judged on the frames sung inside it (on the song's clock, after latency):
// - coverage: the share of the note's time voiced (a note left unsung scores 0);
// - pitch: the median error of its voiced frames against the target, after the key shift (the
//   median keeps vibrato and glides from deciding the note; a frame an octave off is just far off);
// - onset: when the singer first reaches the note's pitch (within `onsetToleranceCents`),
//   against the note's start; it only refines a note sung on pitch.
// The song's key is judged once, not note by note: the whole take's median error is its key shift;
// whole octaves of it are forgiven (a man singing a woman's song), the rest is judged on intervals
// and costs at most `keyWeight` of the total (a singer a semitone flat throughout loses some, not
// all). Unpitched and freestyle notes neither reward nor penalise. Scores are duration-weighted
// means, so they are normalised by what could be sung.
//
// The ideas follow the measures of MIREX/mir_eval (raw pitch accuracy in cents, voicing recall),
// the note-level transcription measures of Molina et al., "Evaluation framework for automatic
// singing transcription", ISMIR 2014 (onset within a tolerance, pitch within 50 cents), and the
// key-shift-invariant interval scoring of Vocaluxe/UltraStar Play's "relative" mode; the numbers
// are ktv's (see README, `ktv score`).

/// Settings of the ktv rules, declared once.
public struct KTVRulesConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let fullCreditCents = Parameter<Double>("fullCreditCents", unit: "cents", range: 0...200, default: 35,
            "A note whose median error is within this scores full pitch credit.")
        public static let zeroCreditCents = Parameter<Double>("zeroCreditCents", unit: "cents", range: 10...1200, default: 150,
            "A note whose median error is this far off scores no pitch credit (linear in between).")
        public static let fullCoverage = Parameter<Double>("fullCoverage", range: 0.1...1, default: 0.75,
            "Share of a note's time that must be voiced for full coverage credit (breaths and consonants are not singing).")
        public static let onsetGraceMs = Parameter<Double>("onsetGraceMs", unit: "ms", range: 0...1000, default: 120,
            "An onset within this of the note's start is on time.")
        public static let onsetZeroMs = Parameter<Double>("onsetZeroMs", unit: "ms", range: 10...2000, default: 500,
            "An onset this far from the note's start gets no timing credit (linear in between).")
        public static let onsetToleranceCents = Parameter<Double>("onsetToleranceCents", unit: "cents", range: 10...600, default: 100,
            "The note is reached when a frame is within this of the target.")
        public static let timingWeight = Parameter<Double>("timingWeight", range: 0...1, default: 0.25,
            "Share of a note sung on pitch that depends on its onset.")
        public static let keyWeight = Parameter<Double>("keyWeight", range: 0...1, default: 0.15,
            "Share of the total that depends on singing in the song's key (octaves forgiven).")
        public static let keyToleranceCents = Parameter<Double>("keyToleranceCents", unit: "cents", range: 1...1200, default: 150,
            "Key credit is exp(−(shift/this)²) of the shift left after whole octaves.")
        public static let all: [ParameterInfo] = [fullCreditCents.info, zeroCreditCents.info, fullCoverage.info, onsetGraceMs.info,
                                                  onsetZeroMs.info, onsetToleranceCents.info, timingWeight.info, keyWeight.info,
                                                  keyToleranceCents.info]
    }

    public var fullCreditCents = Spec.fullCreditCents.defaultValue
    public var zeroCreditCents = Spec.zeroCreditCents.defaultValue
    public var fullCoverage = Spec.fullCoverage.defaultValue
    public var onsetGraceMs = Spec.onsetGraceMs.defaultValue
    public var onsetZeroMs = Spec.onsetZeroMs.defaultValue
    public var onsetToleranceCents = Spec.onsetToleranceCents.defaultValue
    public var timingWeight = Spec.timingWeight.defaultValue
    public var keyWeight = Spec.keyWeight.defaultValue
    public var keyToleranceCents = Spec.keyToleranceCents.defaultValue

    public init() {}

    public func validated() throws(ScoreError) -> KTVRulesConfiguration {
        do {
            try Spec.fullCreditCents.check(fullCreditCents)
            try Spec.zeroCreditCents.check(zeroCreditCents)
            try Spec.fullCoverage.check(fullCoverage)
            try Spec.onsetGraceMs.check(onsetGraceMs)
            try Spec.onsetZeroMs.check(onsetZeroMs)
            try Spec.onsetToleranceCents.check(onsetToleranceCents)
            try Spec.timingWeight.check(timingWeight)
            try Spec.keyWeight.check(keyWeight)
            try Spec.keyToleranceCents.check(keyToleranceCents)
        } catch { throw ScoreError(error) }
        guard zeroCreditCents > fullCreditCents else {
            throw .invalidParameter(name: "zeroCreditCents", value: String(zeroCreditCents), allowed: "greater than fullCreditCents (\(fullCreditCents))")
        }
        guard onsetZeroMs > onsetGraceMs else {
            throw .invalidParameter(name: "onsetZeroMs", value: String(onsetZeroMs), allowed: "greater than onsetGraceMs (\(onsetGraceMs))")
        }
        return self
    }
}

/// How the take's key is judged.
public enum KeyShift: Sendable, Equatable {
    /// Estimated from the take (its median error); whole octaves forgiven, the rest judged on intervals.
    case auto
    /// Absolute pitch; whole octaves still forgiven.
    case none
    /// A known transposition (an app's key change), cents: judged against it, at no cost.
    case cents(Double)
}

/// ktv's rules (see the comment at the top of the file).
public struct KTVRules: ScoringRules {
    public let name = "ktv"
    public var configuration: KTVRulesConfiguration
    public var keyShift: KeyShift
    /// Count lines outside the recording as 0 instead of leaving them out.
    public var wholeSong: Bool

    public init(configuration: KTVRulesConfiguration = KTVRulesConfiguration(), keyShift: KeyShift = .auto, wholeSong: Bool = false) {
        self.configuration = configuration
        self.keyShift = keyShift
        self.wholeSong = wholeSong
    }

    public func judge(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> ScoreCard {
        let c = try configuration.validated()
        let frames = SongFrames(take.contour)
        let judgedNotes = reference.notes.filter { $0.cents != nil && $0.kind != .freestyle && $0.durationMs > 0 }
        let measured = frames.medianError(against: judgedNotes) ?? 0
        let octaves = 1200 * (measured / 1200).rounded()
        let shift: Double, keyCredit: Double
        switch (keyShift, reference.scale) {
        case (_, .relative), (.auto, _):
            // A relative scale has no key to be in: intervals only, at no cost.
            shift = measured
            keyCredit = reference.scale == .relative ? 1 : exp(-pow((measured - octaves) / c.keyToleranceCents, 2))
        case (.none, .absolute):
            shift = octaves
            keyCredit = 1
        case let (.cents(given), .absolute):
            shift = given
            keyCredit = 1
        }

        var lines: [LineScore] = reference.lines.enumerated().map { LineScore(index: $0, startMs: $1.startMs, endMs: $1.endMs, text: $1.text, score: nil, notes: []) }
        var totalWeight = 0.0, totalScore = 0.0, coveredWeight = 0.0, allWeight = 0.0
        var lineWeights = [Double](repeating: 0, count: lines.count), lineSums = [Double](repeating: 0, count: lines.count)
        for n in reference.notes {
            var ns = NoteScore(note: n)
            let judged = n.cents != nil && n.kind != .freestyle && n.durationMs > 0
            let inside = take.coveredMs.contains(n.startMs) && take.coveredMs.contains(n.endMs)
            let weight = Double(n.durationMs) * (n.kind == .golden ? 2 : 1)
            if judged { allWeight += weight }
            if judged, let pitch = n.cents {
                let target = pitch + shift
                ns.targetCents = target
                if inside || wholeSong {
                    let s = noteScore(n, target: target, frames: frames, c, into: &ns)
                    ns.score = inside ? s : 0
                    if inside { coveredWeight += weight }
                    totalWeight += weight
                    totalScore += weight * (ns.score ?? 0)
                    if lines.indices.contains(n.line) {
                        lineWeights[n.line] += weight
                        lineSums[n.line] += weight * (ns.score ?? 0)
                    }
                }
            }
            if lines.indices.contains(n.line) { lines[n.line].notes.append(ns) }
        }
        for i in lines.indices where lineWeights[i] > 0 { lines[i].score = lineSums[i] / lineWeights[i] }
        let noteMean = totalWeight > 0 ? totalScore / totalWeight : 0
        let score = noteMean * (1 - c.keyWeight + c.keyWeight * keyCredit)
        return ScoreCard(rules: name, score: score, maxScore: 100, lines: lines, latencyMs: take.latencyMs,
                         keyShiftCents: shift, judgedShare: allWeight > 0 ? coveredWeight / allWeight : 0)
    }

    /// One note, 0…100: coverage × pitch × (on-time share), filling in the note's figures.
    func noteScore(_ n: MelodyNote, target: Double, frames: SongFrames, _ c: KTVRulesConfiguration, into ns: inout NoteScore) -> Double {
        var total = 0, voiced = 0
        var errs: [Double] = []
        var onset: Double?
        // The onset may come before the note (an early singer): look from a grace period before it.
        let lookBackMs = Int(c.onsetZeroMs)
        frames.forEach(in: n.startMs - lookBackMs, n.endMs) { timeMs, cents in
            if timeMs >= Double(n.startMs) {
                total += 1
                if let cents {
                    voiced += 1
                    errs.append(cents - target)
                }
            }
            if onset == nil, let cents, abs(cents - target) <= c.onsetToleranceCents { onset = timeMs - Double(n.startMs) }
        }
        // A reach found before the note only counts if the singer is still on it when the note starts
        // (a previous note on the same pitch is legato, not an early onset).
        if let o = onset, o < 0, let first = errs.first, abs(first) <= c.onsetToleranceCents { onset = max(o, -c.onsetZeroMs) }
        ns.coverage = total > 0 ? Double(voiced) / Double(total) : 0
        ns.onsetMs = onset
        errs.sort()
        ns.medianErrorCents = Stats.median(errs)
        guard let median = ns.medianErrorCents else { return 0 }
        let coverageCredit = min(1, ns.coverage / c.fullCoverage)
        let pitchCredit = ramp(abs(median), full: c.fullCreditCents, zero: c.zeroCreditCents)
        let timingCredit = onset.map { ramp(abs($0), full: c.onsetGraceMs, zero: c.onsetZeroMs) } ?? 0
        return 100 * coverageCredit * pitchCredit * (1 - c.timingWeight + c.timingWeight * timingCredit)
    }

    /// 1 up to `full`, 0 from `zero`, linear in between.
    func ramp(_ x: Double, full: Double, zero: Double) -> Double {
        x <= full ? 1 : x >= zero ? 0 : (zero - x) / (zero - full)
    }
}

/// A take's frames on the song clock in time order, as cents (nil = unvoiced), for range queries.
struct SongFrames {
    let timesMs: [Double]
    let cents: [Double?]

    init(_ contour: PitchContour) {
        let order = contour.timesS.indices.sorted { contour.timesS[$0] < contour.timesS[$1] }
        timesMs = order.map { contour.timesS[$0] * 1000 }
        cents = order.map { i in contour.f0Hz[i].map { ReferenceMelody.cents(hz: $0) } }
    }

    /// Calls `body` for every frame with startMs ≤ time < endMs.
    func forEach(in startMs: Int, _ endMs: Int, _ body: (Double, Double?) -> Void) {
        for i in indices(from: Double(startMs), to: Double(endMs)) { body(timesMs[i], cents[i]) }
    }

    /// The frames with startMs ≤ time < endMs.
    func indices(from startMs: Double, to endMs: Double) -> Range<Int> {
        var lo = 0, hi = timesMs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if timesMs[mid] < startMs { lo = mid + 1 } else { hi = mid }
        }
        var end = lo
        while end < timesMs.count, timesMs[end] < endMs { end += 1 }
        return lo..<end
    }

    /// The take's key against the notes: the median of (sung − note) over every voiced frame inside
    /// a pitched note, cents; nil when no such frame was voiced.
    func medianError(against notes: [MelodyNote]) -> Double? {
        var errors: [Double] = []
        for n in notes {
            guard let target = n.cents else { continue }
            forEach(in: n.startMs, n.endMs) { _, cents in if let cents { errors.append(cents - target) } }
        }
        errors.sort()
        return Stats.median(errors)
    }
}
