import Foundation
import KTVCore

/// A score card as JSON for machines and as a teacher's notes for people.
public enum ScoreReport {
    static func round(_ v: Double, _ digits: Double = 10) -> Double { (v * digits).rounded() / digits }
    static func number(_ v: Double?, _ digits: Double = 10) -> JSONValue { v.map { .double(round($0, digits)) } ?? .null }

    public static func json(_ card: ScoreCard, take: String, reference: String) -> JSONValue {
        .object([
            ("take", .string(take)),
            ("reference", .string(reference)),
            ("rules", .string(card.rules)),
            ("score", number(card.score, 100)),
            ("max_score", number(card.maxScore)),
            ("score_100", number(card.score100, 100)),
            ("breakdown", breakdown(card)),
            ("dimensions", dimensions(card)),
            ("expert_grade", number(card.expertGrade)),
            ("findings", .array(card.findings.map(\.json))),
            ("latency_ms", number(card.latencyMs)),
            ("latency_source", .string(card.latencySource)),
            ("latency_confidence", card.latencyEstimate.map { number($0.confidence, 100) } ?? .null),
            ("key_shift_cents", number(card.keyShiftCents)),
            ("judged_share", number(card.judgedShare, 1000)),
            ("timing", .string(card.timing)),
            ("warp", card.warp.map { w in .object([
                ("tempo_ratio", number(w.tempoRatio, 1000)), ("largest_stretch", number(w.largestStretch, 1000)),
                ("largest_compression", number(w.largestCompression, 1000)), ("alignment_key_shift_cents", number(w.keyShiftCents)),
                ("tempo_stability", card.tempoStability.map { number($0, 1000) } ?? .null),
            ]) } ?? .null),
            ("missing_notes", .array(card.missingNotes.map { m in
                .object([("line", .int(m.line + 1)), ("note", .int(m.note + 1)), ("start_ms", .int(card.lines[m.line].notes[m.note].note.startMs)),
                         ("word", .string(card.lines[m.line].notes[m.note].note.word))])
            })),
            ("extra_notes", .int(card.extraNotes)),
            ("grade", card.warp != nil && card.rules == "ktv" ? .object([
                ("calibrated_score", number(GradeCalibration.calibrated(card.score))),
                ("level", .int(GradeCalibration.level(GradeCalibration.calibrated(card.score)))),
            ]) : .null),
            ("totals", .object([
                ("mean_abs_error_cents", number(card.meanAbsoluteErrorCents)),
                ("mean_error_cents", number(card.meanErrorCents)),
                ("share_within_50_cents", number(card.shareWithin50Cents, 1000)),
                ("mean_onset_ms", number(card.meanOnsetMs)),
            ])),
            ("lines", lines(card)),
        ])
    }

    /// The card's lines, each made as it is written: a long song's card is never a tree of every note.
    static func lines(_ card: ScoreCard) -> JSONValue {
        let lines = card.lines
        return .generated(count: lines.count) { k in line(lines[k]) }
    }

    /// Points lost to each term (ktv rules), or null.
    static func breakdown(_ card: ScoreCard) -> JSONValue {
        guard let lost = card.pointsLost else { return .null }
        return .object(lost.terms.map { ($0.name, number($0.points, 100)) })
    }

    /// Each dimension (ktv rules) with its score or the reason it has none, its weight, what it cost
    /// and the figures behind it; null for other rule sets.
    static func dimensions(_ card: ScoreCard) -> JSONValue {
        guard !card.dimensions.isEmpty else { return .null }
        return .object(card.dimensions.map { d in
            (d.dimension.rawValue, .object([
                ("score", number(d.score)), ("reason", d.reason.map(JSONValue.string) ?? .null),
                ("weight", number(d.weight, 100)), ("points_lost", number(d.pointsLost, 100)),
                ("summary", .string(d.sentence)),
                ("figures", .object(d.figures.map { f in (f.name + (f.unit.map { "_" + Self.unitSuffix($0) } ?? ""), number(f.value, 1000)) })),
            ]))
        })
    }

    /// A figure's unit as a JSON name suffix (`cents`, `hz`, `db`, `ms`, `percent`).
    static func unitSuffix(_ unit: String) -> String {
        unit == "%" ? "percent" : unit.lowercased()
    }

    /// One line of the card, lines and notes numbered from 1 as people count them.
    static func line(_ l: LineScore) -> JSONValue {
        let notes: [JSONValue] = l.notes.enumerated().map { k, n in
            .object([
                ("note", .int(k + 1)), ("start_ms", .int(n.note.startMs)), ("duration_ms", .int(n.note.durationMs)), ("word", .string(n.note.word)),
                ("target_cents", number(n.targetCents)), ("median_error_cents", number(n.medianErrorCents)),
                ("octaves", .int(n.octaves)),
                ("coverage", number(n.coverage, 1000)), ("onset_ms", number(n.onsetMs)), ("duration_ratio", number(n.durationRatio, 100)),
                ("score", number(n.score)),
            ])
        }
        return .object([
            ("line", .int(l.index + 1)), ("start_ms", .int(l.startMs)), ("end_ms", .int(l.endMs)), ("text", .string(l.text)),
            ("score", number(l.score)), ("judged", .bool(l.judged)), ("notes", .array(notes)),
        ])
    }

    /// The score, the weakest lines, and the habits worth working on: flat or sharp, early or late,
    /// notes left unsung.
    public static func text(_ card: ScoreCard, take: String) -> String {
        var out = ""
        let scale = card.maxScore == 100 ? "/ 100" : "of \(Int(card.maxScore))"
        out += "\(take): \(String(format: "%.1f", card.score)) \(scale) (rules \(card.rules))\n"
        let judged = card.lines.filter(\.judged)
        if card.rules == "agora" {
            let outside = card.lines.count - judged.count
            out += "  mean line score \(String(format: "%.1f", card.score100)) / 100 over the \(judged.count) line(s) judged"
                + (outside > 0 ? "; Agora's total also sums the \(outside) line(s) outside the recording" : "") + "\n"
        } else if card.maxScore != 100 {
            out += "  on 0-100: \(String(format: "%.1f", card.score100))\n"
        }
        if let lost = card.pointsLost, lost.total >= 0.05 {
            let parts = lost.terms.filter { $0.points >= 0.05 }.map { "\($0.name.replacingOccurrences(of: "_", with: " ")) \(String(format: "%.1f", $0.points))" }
            out += "  points lost: " + parts.joined(separator: ", ") + "\n"
        }
        if card.latencyMs != 0 {
            let correction = card.latencyEstimate.map { abs($0.onsetCorrectionMs) >= 0.5 ? String(format: "; %+.0f ms of it from the notes' onsets", $0.onsetCorrectionMs) : "" } ?? ""
            let how = card.latencySource == "estimated" ? " (estimated from the take, confidence \(String(format: "%.2f", card.latencyEstimate?.confidence ?? 0))\(correction))"
                : card.latencySource == "accompaniment" ? " (measured against the accompaniment)" : ""
            out += "  latency compensated: \(String(format: "%.0f", card.latencyMs)) ms\(how)\n"
        }
        // The teacher's notes: each finding, the fault first.
        for f in card.findings {
            let mark = f.severity == .fault ? "✗" : f.severity == .warning ? "!" : "·"
            out += "  \(mark) \(f.message) [\(f.code)]\n"
        }
        if !card.dimensions.isEmpty {
            out += "  dimensions:\n"
            for d in card.dimensions {
                let value = d.score.map { String(format: "%5.1f", $0) } ?? "    –"
                out += "    \(d.dimension.label.padding(toLength: 14, withPad: " ", startingAt: 0)) \(value)  \(d.sentence)\n"
            }
        }
        if let g = card.expertGrade {
            out += "  to a music teacher: about \(String(format: "%.1f", g)) of 5 (PESnQ experts' scale)\n"
        }
        if let w = card.shareWithin50Cents {
            out += "  \(Int((w * 100).rounded()))% of the notes sung were within 50 cents\n"
        }
        if card.warp != nil, card.rules == "ktv" {
            let c = GradeCalibration.calibrated(card.score)
            out += "  on a jury's scale (sing-back exams): \(String(format: "%.0f", c)) / 100, level \(GradeCalibration.level(c)) of 4\n"
        }
        if let w = card.warp {
            out += "  free timing: sung at \(String(format: "%.2f", w.tempoRatio))× the reference's duration; local tempo \(String(format: "%.2f", w.largestCompression))-\(String(format: "%.2f", w.largestStretch))× of that" + (card.tempoStability.map { String(format: "; tempo steadiness %.0f %%", $0 * 100) } ?? "") + "\n"
        }
        let weakest = judged.sorted { ($0.score ?? 0) < ($1.score ?? 0) }.prefix(3).filter { ($0.score ?? 0) < 80 }
        if !weakest.isEmpty {
            out += "  weakest lines:\n"
            // Numbers right-aligned to the widest, so line 9's score stands under line 12's.
            let width = String(weakest.map { $0.index + 1 }.max() ?? 1).count
            for l in weakest {
                let number = String(l.index + 1)
                out += "    \(String(repeating: " ", count: width - number.count))\(number). \(String(format: "%5.1f", l.score ?? 0))  \(l.text.isEmpty ? "(\(l.startMs) ms)" : l.text)\n"
            }
        }
        return out
    }
}
