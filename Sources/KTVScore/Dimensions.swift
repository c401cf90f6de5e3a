import Foundation
import KTVCore

// The ktv rules' dimensions: the take judged as a music teacher hears it, one 0-100 sub-score each,
// and the one overall score that combines them.
//
// - intonation and rhythm are read off the notes (`KTVRules`): they make the notes' score, which
//   with coverage, the key, the movement and the tempo is the core of the overall score;
// - vibrato (`VibratoMeasure`), voice quality (`VoiceQualityMeasure`), dynamics (`DynamicsMeasure`)
//   and pitch range (the notes at the melody's extremes) say how the notes were sung: each
//   scales the core by 1 − w + w × score/100, w its weight (`DimensionWeights`), so a dimension can
//   take at most w of the score, and a hum or a random take, whose notes score little, cannot be
//   lifted by a clear voice.
// A dimension that cannot be measured (a pitch-track take has no voice; written notes have no
// dynamics) has no score, says why, and is left out of the overall rather than guessed.

/// One dimension of the judgement.
public enum ScoreDimension: String, Sendable, CaseIterable {
    case intonation, rhythm, vibrato
    case voiceQuality = "voice_quality"
    case dynamics
    case pitchRange = "pitch_range"

    /// The name people read.
    public var label: String {
        switch self {
        case .intonation: "Intonation"
        case .rhythm: "Rhythm"
        case .vibrato: "Vibrato"
        case .voiceQuality: "Voice quality"
        case .dynamics: "Dynamics"
        case .pitchRange: "Pitch range"
        }
    }
}

/// A named measurement behind a dimension's score.
public struct DimensionFigure: Sendable, Equatable {
    public var name: String
    public var value: Double
    public var unit: String?

    public init(_ name: String, _ value: Double, _ unit: String?) {
        self.name = name
        self.value = value
        self.unit = unit
    }
}

/// One dimension's result.
public struct DimensionScore: Sendable, Equatable {
    public var dimension: ScoreDimension
    /// 0…100; nil when it could not be measured (`reason` says why).
    public var score: Double?
    public var reason: String?
    public var figures: [DimensionFigure] = []
    /// Its weight in the overall score (`DimensionWeights`); nil for the dimensions that make the core.
    public var weight: Double?
    /// The points of the overall score it cost.
    public var pointsLost = 0.0

    public init(_ dimension: ScoreDimension, score: Double? = nil, reason: String? = nil) {
        self.dimension = dimension
        self.score = score
        self.reason = reason
    }

    public func figure(_ name: String) -> Double? { figures.first { $0.name == name }?.value }
}

/// How much each voice dimension may take of the overall score: the one place these weights are
/// declared. Fitted on the shared expert grades (PESnQ-DS "Edelweiss", ten singers; `ktv-bench
/// assess-experts`): two parameters for ten singers, one weight shared by vibrato, voice quality
/// and dynamics (0.4) and one for pitch range (0), chosen on a 0.05 grid to maximise the mean
/// Pearson of locked and free timing with the experts' overall grade; fitted leaving each singer
/// out the shared weight stays 0.3-0.5 (docs/development.md has the table).
public struct DimensionWeights: Sendable, Equatable {
    public enum Spec {
        public static let vibrato = Parameter<Double>("vibratoWeight", range: 0...0.6, default: 0.4,
            "Share of the overall score the vibrato dimension can take.")
        public static let voiceQuality = Parameter<Double>("voiceQualityWeight", range: 0...0.6, default: 0.4,
            "Share of the overall score the voice-quality dimension can take.")
        public static let dynamics = Parameter<Double>("dynamicsWeight", range: 0...0.6, default: 0.4,
            "Share of the overall score the dynamics dimension can take.")
        public static let pitchRange = Parameter<Double>("pitchRangeWeight", range: 0...0.6, default: 0,
            "Share of the overall score the pitch-range dimension can take (0: reported, not scored; its notes already count in intonation).")
        public static let all: [ParameterInfo] = [vibrato.info, voiceQuality.info, dynamics.info, pitchRange.info]
    }

    public var vibrato = Spec.vibrato.defaultValue
    public var voiceQuality = Spec.voiceQuality.defaultValue
    public var dynamics = Spec.dynamics.defaultValue
    public var pitchRange = Spec.pitchRange.defaultValue

    public init() {}

    public init(vibrato: Double, voiceQuality: Double, dynamics: Double, pitchRange: Double) {
        self.vibrato = vibrato
        self.voiceQuality = voiceQuality
        self.dynamics = dynamics
        self.pitchRange = pitchRange
    }

    public func validated() throws(ScoreError) -> DimensionWeights {
        do {
            try Spec.vibrato.check(vibrato)
            try Spec.voiceQuality.check(voiceQuality)
            try Spec.dynamics.check(dynamics)
            try Spec.pitchRange.check(pitchRange)
        } catch { throw ScoreError(error) }
        return self
    }

    /// The weight of a voice dimension; nil for intonation and rhythm (the core).
    public func weight(_ d: ScoreDimension) -> Double? {
        switch d {
        case .intonation, .rhythm: nil
        case .vibrato: vibrato
        case .voiceQuality: voiceQuality
        case .dynamics: dynamics
        case .pitchRange: pitchRange
        }
    }

    /// The overall score: `core` scaled by each measured voice dimension in turn, with each one's
    /// cost filled in (the core's dimensions cost nothing here: their points are the notes').
    public func combine(core: Double, _ dimensions: inout [DimensionScore]) -> Double {
        var score = core
        for i in dimensions.indices {
            guard let w = weight(dimensions[i].dimension) else { continue }
            dimensions[i].weight = w
            guard let s = dimensions[i].score else { continue }
            let scaled = score * (1 - w + w * min(100, max(0, s)) / 100)
            dimensions[i].pointsLost = score - scaled
            score = scaled
        }
        return score
    }
}

/// The overall score on a music teacher's 1-5 scale: a straight line fitted to the mean grade of
/// PESnQ-DS's five experts against the ktv score of the singers' takes (`ktv-bench assess`), clamped
/// to 1…5. Meaningful for takes judged by the ktv rules against a reference singer's recording.
public enum ExpertGrade {
    /// grade = intercept + slope × score (fitted; see docs/development.md).
    public static let intercept = 0.98
    public static let slope = 0.045

    public static func grade(_ score: Double) -> Double { min(5, max(1, intercept + slope * score)) }
}

/// The dimensions read off the notes.
enum NoteDimensions {
    /// Intonation: the notes' pitch credit (the median error and the steadiness inside each note),
    /// weighted by duration over the notes sung, times the key and movement factors.
    static func intonation(_ notes: [NoteScore], keyFactor: Double, movement: Double) -> DimensionScore {
        var d = DimensionScore(.intonation)
        let sung = notes.filter { $0.score != nil && $0.medianErrorCents != nil && $0.coverage >= 0.3 }
        guard !sung.isEmpty else {
            d.reason = "no note was sung on a pitch"
            return d
        }
        let w = sung.map { Double($0.note.durationMs) * ($0.note.kind == .golden ? 2 : 1) }, total = w.reduce(0, +)
        let credit = zip(sung, w).reduce(0) { $0 + $1.1 * ($1.0.pitchCredit ?? 0) } / max(total, 1)
        d.score = 100 * credit * keyFactor * movement
        let errors = sung.compactMap { $0.medianErrorCents.map(abs) }
        d.figures = [.init("mean_abs_error", Stats.mean(errors) ?? 0, "cents"),
                     .init("within_50_cents", Double(errors.filter { $0 <= 50 }.count) / Double(errors.count), nil)]
        let steady = sung.compactMap(\.steadiness)
        if !steady.isEmpty {
            d.figures.append(.init("unsteady_notes", Double(steady.filter { $0.credit < 0.7 }.count), nil))
            d.figures.append(.init("median_wobble", Stats.median(steady.map(\.wobbleCents).sorted()) ?? 0, "cents"))
            d.figures.append(.init("median_drift", Stats.median(steady.map { abs($0.driftCents) }.sorted()) ?? 0, "cents"))
            d.figures.append(.init("scoops", Double(steady.filter { abs($0.scoopCents) >= NoteSteadiness.scoopCents }.count), nil))
        }
        return d
    }

    /// Rhythm: the notes' timing credit (onsets when locked; durations at the singer's tempo when
    /// free), weighted by duration over the notes sung, times the tempo factor.
    static func rhythm(_ notes: [NoteScore], tempoFactor: Double, timingWeight: Double) -> DimensionScore {
        var d = DimensionScore(.rhythm)
        let sung = notes.filter { $0.score != nil && $0.timingCredit != nil && $0.coverage >= 0.3 }
        guard !sung.isEmpty, timingWeight > 0 else {
            d.reason = "no note was sung"
            return d
        }
        let w = sung.map { Double($0.note.durationMs) }, total = w.reduce(0, +)
        // timingCredit = 1 − tw + tw × t: the note's own 0…1 timing is t.
        let t = zip(sung, w).reduce(0) { $0 + $1.1 * (($1.0.timingCredit ?? 1) - (1 - timingWeight)) / timingWeight } / max(total, 1)
        d.score = 100 * min(1, max(0, t)) * tempoFactor
        let onsets = sung.compactMap { $0.legato ? nil : $0.onsetMs }.sorted()
        if let m = Stats.median(onsets) { d.figures.append(.init("median_onset", m, "ms")) }
        let ratios = sung.compactMap(\.durationRatio).map { abs(log2(max($0, 1e-3))) }.sorted()
        if let m = Stats.median(ratios) { d.figures.append(.init("median_length_error", (pow(2, m) - 1) * 100, "%")) }
        return d
    }

    /// Pitch range: how the notes at the melody's extremes (its highest and lowest sixth, at least
    /// one note each) were sung: their coverage × pitch credit. Not judged on a melody spanning
    /// less than five semitones.
    static func pitchRange(_ notes: [NoteScore]) -> DimensionScore {
        var d = DimensionScore(.pitchRange)
        let judged = notes.filter { $0.score != nil && $0.targetCents != nil }
        let targets = judged.compactMap(\.targetCents).sorted()
        guard let lo = targets.first, let hi = targets.last, hi - lo >= 500 else {
            d.reason = "the melody spans less than five semitones: no range to reach"
            return d
        }
        let span = hi - lo
        let edges = judged.filter { ($0.targetCents ?? lo) >= hi - span / 6 || ($0.targetCents ?? hi) <= lo + span / 6 }
        let w = edges.map { Double($0.note.durationMs) }, total = w.reduce(0, +)
        guard total > 0 else { d.reason = "no note at the melody's extremes was judged"; return d }
        let credit = zip(edges, w).reduce(0) { $0 + $1.1 * ($1.0.coverageCredit ?? 0) * ($1.0.pitchCredit ?? 0) } / total
        d.score = 100 * credit
        d.figures = [.init("span", span, "cents"), .init("edge_notes", Double(edges.count), nil)]
        return d
    }
}

extension DimensionScore {
    /// What the dimension says, in a teacher's words, from its figures.
    public var sentence: String {
        guard let score else { return "not judged: " + (reason ?? "nothing to measure") }
        func f(_ name: String) -> Double? { figure(name) }
        func n(_ v: Double?) -> String { v.map { String(Int($0.rounded())) } ?? "?" }
        let good = score >= 80, fair = score >= 55
        switch dimension {
        case .intonation:
            var s = good ? "in tune" : fair ? "mostly in tune" : "often off pitch"
            s += ": notes \(n(f("mean_abs_error"))) cents off on average, \(n((f("within_50_cents") ?? 0) * 100)) % within 50 cents"
            if let u = f("unsteady_notes"), u > 0 {
                s += "; \(n(u)) held note(s) unsteady (wobble \(n(f("median_wobble"))) cents, drift \(n(f("median_drift"))) cents"
                    + ((f("scoops") ?? 0) > 0 ? ", \(n(f("scoops"))) scooped into" : "") + ")"
            }
            return s + (good ? "" : "; hold each note's pitch from its start to its end")
        case .rhythm:
            var s = good ? "in time" : fair ? "mostly in time" : "often out of time"
            if let o = f("median_onset") { s += ": notes start \(n(abs(o))) ms \(o >= 0 ? "late" : "early") (median)" }
            if let l = f("median_length_error") { s += (f("median_onset") == nil ? ": " : "; ") + "note lengths \(n(l)) % off (median)" }
            return s + (good ? "" : "; feel the beat and give each note its length")
        case .vibrato:
            let r = f("regularity") ?? 0
            var s = r >= VibratoMeasure.Spec.presentRegularity.defaultValue
                ? "vibrato \(String(format: "%.1f", f("rate") ?? 0)) Hz, ±\(n(f("extent"))) cents, regularity \(String(format: "%.2f", r))"
                : "little vibrato (regularity \(String(format: "%.2f", r)))"
            if let rr = f("reference_regularity") { s += " against the reference singer's \(String(format: "%.2f", rr))" }
            return s + (good ? "" : "; let long notes float with an even vibrato, as the reference does")
        case .voiceQuality:
            var s = good ? "a clear, ringing tone" : fair ? "a somewhat dull or breathy tone" : "a dull, muffled or breathy tone"
            if let r = f("reference_brightness") {
                let below = r - (f("brightness") ?? r)
                s += ": " + (below > 0.5 ? "\(String(format: "%.1f", below)) dB less brightness than the reference singer" : "as bright as the reference singer")
            }
            s += "; harmonics-to-noise \(n(f("harmonicity"))) dB"
            return s + (good ? "" : "; support the breath and let the voice ring forward")
        case .dynamics:
            let s = (good ? "the loudness follows the phrases" : fair ? "the loudness partly follows the phrases" : "the loudness does not follow the phrases")
                + ": correlation \(String(format: "%.2f", f("correlation") ?? 0)) with the reference singer's, range \(n(f("range"))) dB against \(n(f("reference_range"))) dB"
                + (f("carrying_power").map { "; carrying power \(n($0 * 100)) %" } ?? "")
            return s + (good ? "" : "; swell and soften where the reference does")
        case .pitchRange:
            let s = (good ? "the highest and lowest notes are reached cleanly" : fair ? "the extremes of the range are reached with some effort" : "the highest or lowest notes are not reached")
                + " (\(n(f("edge_notes"))) notes at the edges of a \(n((f("span") ?? 0) / 100))-semitone melody)"
            return s + (good ? "" : "; warm up the range, or sing in a more comfortable key")
        }
    }
}
