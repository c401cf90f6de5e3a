import Foundation
import KTVCore

/// `ktv pitch eval`'s report: the melody measures of one reference/estimate pair at the requested
/// tolerance, plus raw pitch and chroma accuracy at 25 and 10 cents (CREPE-style tables), as JSON
/// for machines and aligned text for people.
public struct MelodyEvaluation: Sendable {
    public var referenceName: String
    public var estimateName: String
    public var estimateFrames: Int
    public var scores: MelodyScores
    /// RPA and RCA at the extra tolerances.
    public var extra: [(cents: Double, rpa: Double, rca: Double)]

    /// Aligns and scores `estimate` against `reference` (mir_eval.melody.evaluate's steps).
    public static func evaluate(reference: PitchContour, estimate: PitchContour, referenceName: String, estimateName: String,
                                configuration: MelodyMetricsConfiguration = MelodyMetricsConfiguration(),
                                extraToleranceCents: [Double] = [25, 10]) throws(PitchError) -> MelodyEvaluation {
        let config = try configuration.validated()
        let aligned = try MelodyMetrics.align(reference: reference, estimate: estimate, baseFrequencyHz: config.baseFrequencyHz)
        let extra = extraToleranceCents.map { ($0, aligned.rawPitchAccuracy(toleranceCents: $0), aligned.rawChromaAccuracy(toleranceCents: $0)) }
        return MelodyEvaluation(referenceName: referenceName, estimateName: estimateName, estimateFrames: estimate.count,
                                scores: aligned.scores(config), extra: extra)
    }

    public var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("reference", .string(referenceName)),
            ("estimate", .string(estimateName)),
            ("tolerance_cents", .double(scores.toleranceCents)),
            ("reference_frames", .int(scores.referenceFrames)),
            ("voiced_reference_frames", .int(scores.voicedReferenceFrames)),
            ("estimate_frames", .int(estimateFrames)),
            ("raw_pitch_accuracy", .double(scores.rawPitchAccuracy)),
            ("raw_chroma_accuracy", .double(scores.rawChromaAccuracy)),
            ("voicing_recall", .double(scores.voicingRecall)),
            ("voicing_false_alarm", .double(scores.voicingFalseAlarm)),
            ("overall_accuracy", .double(scores.overallAccuracy)),
        ]
        for e in extra {
            let suffix = "_\(Self.number(e.cents))c"
            pairs.append(("raw_pitch_accuracy" + suffix, .double(e.rpa)))
            pairs.append(("raw_chroma_accuracy" + suffix, .double(e.rca)))
        }
        pairs += [
            ("pitched_frames", .int(scores.pitchedFrames)),
            ("gross_error_share", scores.grossErrorShare.map(JSONValue.double) ?? .null),
            ("median_abs_cents", scores.medianAbsoluteCents.map(JSONValue.double) ?? .null),
        ]
        return .object(pairs)
    }

    public var text: String {
        var out = ""
        func line(_ s: String) { out += s + "\n" }
        func row(_ name: String, _ value: Double, _ note: String = "") {
            line("  \(name.padding(toLength: 24, withPad: " ", startingAt: 0))\(String(format: "%.4f", value))\(note.isEmpty ? "" : "  (\(note))")")
        }
        let tol = "\(Self.number(scores.toleranceCents)) cents"
        line("reference \(referenceName): \(scores.referenceFrames) frames, \(scores.voicedReferenceFrames) voiced; estimate \(estimateName): \(estimateFrames) frames")
        row("raw pitch accuracy", scores.rawPitchAccuracy, tol)
        row("raw chroma accuracy", scores.rawChromaAccuracy, tol)
        row("voicing recall", scores.voicingRecall)
        row("voicing false alarm", scores.voicingFalseAlarm)
        row("overall accuracy", scores.overallAccuracy, tol)
        for e in extra {
            row("raw pitch accuracy", e.rpa, "\(Self.number(e.cents)) cents")
            row("raw chroma accuracy", e.rca, "\(Self.number(e.cents)) cents")
        }
        if let g = scores.grossErrorShare, let m = scores.medianAbsoluteCents {
            row("gross errors", g, "more than 20 % off, of \(scores.pitchedFrames) frames with both pitches")
            line("  \("median |error|".padding(toLength: 24, withPad: " ", startingAt: 0))\(String(format: "%.1f", m)) cents")
        } else {
            line("  no frame where both the reference is voiced and the estimate has a pitch")
        }
        return out
    }

    /// 50 → "50", 12.5 → "12.5".
    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v)
    }
}
