import Foundation
import KTVCore

// What a singer can act on, read off a judged card: each finding names one fault (a code), how bad
// it is, where it shows (lines counted from 1) and what to do. The card's words come from here (the
// text report, the SVG's subtitle), so that every sentence a singer reads traces to a number in the
// JSON. The measures follow what karaoke scorers and teachers report (../shared/spec/scoring-anchors.md):
// wrong notes after the key and octave (UltraStar, Performous), a consistent lean in cents, onsets
// early or late (Vocaluxe's timing), notes left unsung, singing where the melody rests, a monotone
// (the sung spread against the melody's, as KTVRules.movementCredit measures it).

/// One thing a singer can act on.
public struct Finding: Sendable, Equatable {
    public enum Severity: String, Sendable, Comparable, CaseIterable {
        /// Worth knowing; costs nothing or was forgiven (an octave, a transposition, lines outside the recording).
        case info
        /// Costs points; worth practising.
        case warning
        /// The main reason the score is low.
        case fault

        var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    /// `monotone`, `late`, `early`, `wrong_notes`, `flat`, `sharp`, `octave`, `transposed`,
    /// `missing_notes`, `silent`, `extra_singing`, `unsteady_tempo`, `unsteady_notes`, `vibrato`,
    /// `voice_quality`, `dynamics`, `outside_recording`, `latency`.
    public var code: String
    public var severity: Severity
    /// The fault, where, and what to do, for people.
    public var message: String
    public var value: Double?
    public var unit: String?
    /// Lines where it shows, counted from 1; empty when it is about the whole take.
    public var lines: [Int]
    public var count: Int?

    public init(code: String, severity: Severity, message: String, value: Double? = nil, unit: String? = nil, lines: [Int] = [], count: Int? = nil) {
        self.code = code
        self.severity = severity
        self.message = message
        self.value = value
        self.unit = unit
        self.lines = lines
        self.count = count
    }

    public var json: JSONValue {
        .object([
            ("code", .string(code)), ("severity", .string(severity.rawValue)), ("message", .string(message)),
            ("value", value.map { .double(($0 * 10).rounded() / 10) } ?? .null), ("unit", unit.map(JSONValue.string) ?? .null),
            ("lines", .array(lines.map(JSONValue.int))), ("count", count.map(JSONValue.int) ?? .null),
        ])
    }
}

/// The thresholds findings are drawn at, each declared once.
public struct FindingsConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let wrongNoteCents = Parameter<Double>("wrongNoteCents", unit: "cents", range: 50...600, default: 100,
            "A note whose median error, after the key and whole octaves, is this far off or more is a wrong note.")
        public static let leanCents = Parameter<Double>("leanCents", unit: "cents", range: 1...100, default: 20,
            "A mean error this large over the notes sung within a semitone (with a key shift under a semitone) is a lean flat or sharp.")
        public static let transposedCents = Parameter<Double>("transposedCents", unit: "cents", range: 30...600, default: 100,
            "A key shift (beyond whole octaves) this large or more is a transposition; a smaller one is singing flat or sharp.")
        public static let onsetGraceMs = Parameter<Double>("onsetGraceMs", unit: "ms", range: 0...1000, default: 120,
            "The median onset beyond this (early or late) is a timing fault (the ktv rules' own onset grace).")
        public static let monotoneShare = Parameter<Double>("monotoneShare", range: 0...1, default: 0.35,
            "The sung notes' pitch spread under this share of the melody's is a monotone (a hum, a drone).")
        public static let unsteadyTempo = Parameter<Double>("unsteadyTempo", range: 0...1, default: 0.8,
            "Free timing: a tempo stability under this is an unsteady tempo.")
        public static let all: [ParameterInfo] = [wrongNoteCents.info, leanCents.info, transposedCents.info, onsetGraceMs.info,
                                                  monotoneShare.info, unsteadyTempo.info]
    }

    public var wrongNoteCents = Spec.wrongNoteCents.defaultValue
    public var leanCents = Spec.leanCents.defaultValue
    public var transposedCents = Spec.transposedCents.defaultValue
    public var onsetGraceMs = Spec.onsetGraceMs.defaultValue
    public var monotoneShare = Spec.monotoneShare.defaultValue
    public var unsteadyTempo = Spec.unsteadyTempo.defaultValue

    public init() {}
}

/// Findings from a judged card.
public enum ScoreFindings {
    /// A voice dimension under this score, that cost points, is a finding.
    static let weakDimension = 60.0

    /// A melody whose notes spread less than this (mean absolute deviation, cents) has no movement to follow.
    static let minMelodySpreadCents = 50.0

    /// The card's findings, root causes first (nothing sung, a monotone), then by the points their
    /// term cost (the ktv breakdown) and severity.
    public static func findings(_ card: ScoreCard, configuration c: FindingsConfiguration = FindingsConfiguration()) -> [Finding] {
        var out: [Finding] = []
        // Each judged note with its line counted from 1 and its place on the card.
        let notes = card.lines.enumerated().filter { $0.element.judged }.flatMap { li, l in
            l.notes.enumerated().filter { $0.element.score != nil }
                .map { (line: l.index + 1, at: TimingExplanation.NoteIndex(line: li, note: $0.offset), note: $0.element) }
        }
        let sung = notes.filter { $0.note.medianErrorCents != nil }
        func lineList(_ ls: [Int]) -> String {
            let u = Array(Set(ls)).sorted()
            return u.count == 1 ? "line \(u[0])" : "lines " + u.prefix(8).map(String.init).joined(separator: ", ") + (u.count > 8 ? ", …" : "")
        }

        if !notes.isEmpty && sung.isEmpty {
            out.append(Finding(code: "silent", severity: .fault,
                               message: "nothing was sung: no note of the song has a voiced pitch in the recording; check the microphone and the take's channel",
                               count: notes.count))
            return out + outside(card)
        }

        // Monotone: the sung notes' spread against the melody's (pitches as sung, octaves put back).
        var sungPitches: [Double] = [], written: [Double] = []
        for (_, _, n) in sung {
            guard let target = n.targetCents, let e = n.medianErrorCents else { continue }
            sungPitches.append(target + e + 1200 * Double(n.octaves))
            written.append(target)
        }
        let melodySpread = spread(written), sungSpread = spread(sungPitches)
        if sung.count >= 4, melodySpread >= minMelodySpreadCents, sungSpread < c.monotoneShare * melodySpread {
            out.append(Finding(code: "monotone", severity: .fault,
                               message: "the voice barely moves: the notes sung spread \(Int(sungSpread.rounded())) cent(s) where the melody's spread \(Int(melodySpread.rounded())); follow the tune up and down instead of holding one pitch",
                               value: sungSpread, unit: "cents"))
        }

        // Key: whole octaves are forgiven; less than a semitone is singing flat or sharp, not a key.
        let octaves = (card.keyShiftCents / 1200).rounded()
        var rest = card.keyShiftCents - 1200 * octaves
        if octaves != 0 {
            out.append(Finding(code: "octave", severity: .info,
                               message: "sung \(Int(abs(octaves))) octave(s) \(octaves < 0 ? "below" : "above") the written melody; forgiven (a comfortable octave is fine)",
                               value: octaves * 1200, unit: "cents"))
        }
        if abs(rest) >= c.transposedCents {
            out.append(Finding(code: "transposed", severity: .info,
                               message: "sung in another key, \(Int(abs(rest).rounded())) cents (\(String(format: "%.1f", abs(rest) / 100)) semitones) \(rest < 0 ? "down" : "up"); judged on the intervals, " + ((card.pointsLost?.key ?? 1) < 0.05 ? "at no cost (the reference singer sang alone: the key is yours to choose)" : "and the key change costs a little"),
                               value: rest, unit: "cents"))
            rest = 0
        }
        let octaveNotes = sung.filter { $0.note.octaves != 0 }
        if !octaveNotes.isEmpty {
            out.append(Finding(code: "octave", severity: .info,
                               message: "\(octaveNotes.count) note(s) sung an octave or more away from the rest (\(lineList(octaveNotes.map(\.line)))); judged on pitch class",
                               value: Double(octaveNotes.count) / Double(sung.count), unit: "share", lines: Array(Set(octaveNotes.map(\.line))).sorted(),
                               count: octaveNotes.count))
        }

        // Wrong notes by the rule set's own criterion, then the lean of the rest. Notes that a time
        // shift rights are the timing's, not the pitch's (`TimingExplanation`): said under late/early.
        let criterion = card.wrongNotes ?? .ktv(cents: c.wrongNoteCents)
        let timing = card.timingExplanation
        let righted = Set(timing?.righted ?? [])
        let wrong = sung.filter { abs($0.note.medianErrorCents ?? 0) >= criterion.cents && !righted.contains($0.at) }
        if !wrong.isEmpty {
            let share = Double(wrong.count) / Double(sung.count)
            out.append(Finding(code: "wrong_notes", severity: share >= 0.2 ? .fault : .warning,
                               message: "\(wrong.count) of \(sung.count) notes sung \(criterion.words), in \(lineList(wrong.map(\.line))); practise those lines slowly against the reference",
                               value: Double(wrong.count), unit: "notes", lines: Array(Set(wrong.map(\.line))).sorted(), count: wrong.count))
        }
        // A drone's few notes near its pitch lean wherever it sits: no habit to name.
        let monotone = out.contains { $0.code == "monotone" }
        // A late or early singer's notes are read where they were sung (a note half over the next
        // one's pitch leans by half the interval, not by habit).
        let errors = timing?.errorsAtShift ?? sung.compactMap(\.note.medianErrorCents)
        let inTune = errors.filter { abs($0) < c.wrongNoteCents }
        if !monotone, inTune.count >= 3, let mean = Stats.mean(inTune) {
            let lean = mean + rest
            if abs(lean) >= c.leanCents {
                out.append(Finding(code: lean < 0 ? "flat" : "sharp", severity: .warning,
                                   message: "notes lean \(lean < 0 ? "flat" : "sharp") by \(Int(abs(lean).rounded())) cents on average; aim a little \(lean < 0 ? "higher" : "lower") (support the breath on held notes)",
                                   value: lean, unit: "cents"))
            }
        }

        // Timing: the median onset (`medianOnset`); or, when judging the notes a shift later (or
        // earlier) rights most of the wrong ones, that shift, told first: the singer is late, not off.
        let onset = Self.medianOnset(card)
        let lateOnset = onset.flatMap { abs($0.ms) > c.onsetGraceMs ? $0 : nil }
        if lateOnset != nil || timing != nil {
            let ms = timing?.shiftMs ?? lateOnset?.ms ?? 0
            let late = ms > 0
            var message: String
            if let lateOnset, timing == nil || lateOnset.ms == timing?.shiftMs {
                message = "notes start \(Int(abs(lateOnset.ms).rounded())) ms \(late ? "late" : "early") (the median over \(lateOnset.count) notes)"
            } else {
                message = "notes are sung about \(Int(abs(ms).rounded())) ms \(late ? "late" : "early")"
            }
            if let timing {
                let (r, w) = (timing.righted.count, timing.wrongBefore)
                message += ": judged \(Int(abs(ms).rounded())) ms \(late ? "later" : "earlier"), "
                    + (r == w ? (w == 1 ? "the note that sounded wrong is right" : "all \(w) notes that sounded wrong are right") : "\(r) of the \(w) notes that sounded wrong are right")
                    + (timing.reached.isEmpty ? "" : timing.reached.count == 1 ? " and the one that seemed unsung is sung" : " and \(timing.reached.count) that seemed unsung are sung")
                    + " (\(late ? "each note ran over the start of the next" : "each note came in over the end of the one before")); the pitches are right, the timing is not"
            }
            if card.latencySource == "estimated" {
                // `Scorer.score` moves an estimate by the median onset when that puts the notes on the beat.
                message += "; left after the \(Int(card.latencyMs.rounded())) ms latency estimated from the take: no delay of the whole take within the latencies considered puts the notes on the beat, so it is the singing"
            }
            if late && card.latencySource == "none" {
                message += "; if the whole take is late by about this much, it may be the recording path's delay rather than the singer: give the latency and score again"
            } else {
                message += late ? "; come in on the beat: breathe before the note, not on it" : "; wait for the beat before each note"
            }
            let share = Double(timing?.righted.count ?? 0) / Double(max(1, sung.count))
            out.append(Finding(code: late ? "late" : "early", severity: share >= 0.2 ? .fault : .warning, message: message, value: ms, unit: "ms",
                               count: timing == nil ? lateOnset?.count : timing?.righted.count))
        }

        // Notes a late or early singer reached at the shift are the timing's, not left unsung.
        let reached = Set(timing?.reached ?? [])
        let missing = card.missingNotes.filter { !reached.contains(TimingExplanation.NoteIndex(line: $0.line, note: $0.note)) }
        if !missing.isEmpty {
            let ls = missing.map { $0.line + 1 }
            out.append(Finding(code: "missing_notes", severity: Double(missing.count) >= 0.25 * Double(notes.count) ? .fault : .warning,
                               message: "\(missing.count) of \(notes.count) notes left unsung or hardly sung, in \(lineList(ls)); learn the words of those lines",
                               value: Double(missing.count), unit: "notes", lines: Array(Set(ls)).sorted(), count: missing.count))
        }
        if card.extraNotes > 0 {
            out.append(Finding(code: "extra_singing", severity: card.extraNotes >= 5 ? .warning : .info,
                               message: "\(card.extraNotes) stretch(es) of voice where the melody rests; keep quiet in the gaps (or the microphone hears the speakers)",
                               value: Double(card.extraNotes), unit: "stretches", count: card.extraNotes))
        }
        if let stability = card.tempoStability, stability < c.unsteadyTempo {
            out.append(Finding(code: "unsteady_tempo", severity: .warning,
                               message: "the tempo wanders: tempo steadiness \(Int((stability * 100).rounded())) %; some notes rushed, others dragged; sing with the beat",
                               value: stability, unit: "share"))
        }
        // The voice dimensions that cost points, and notes held unsteadily.
        for d in card.dimensions {
            switch d.dimension {
            case .vibrato, .voiceQuality, .dynamics:
                guard let score = d.score, score < Self.weakDimension, d.pointsLost >= 0.5 else { continue }
                out.append(Finding(code: d.dimension.rawValue, severity: .warning, message: "\(d.dimension.label.lowercased()) \(Int(score.rounded())) / 100: \(d.sentence)",
                                   value: score, unit: "score"))
            case .intonation:
                guard let unsteady = d.figure("unsteady_notes"), unsteady >= 3 else { continue }
                out.append(Finding(code: "unsteady_notes", severity: .warning,
                                   message: "\(Int(unsteady)) held note(s) wobble, drift or are scooped into (median wobble \(Int((d.figure("median_wobble") ?? 0).rounded())) cents, drift \(Int((d.figure("median_drift") ?? 0).rounded())) cents); aim for the note's pitch from its start and hold it there",
                                   value: unsteady, unit: "notes", count: Int(unsteady)))
            case .rhythm, .pitchRange: continue
            }
        }
        if let e = card.latencyEstimate, !e.used {
            out.append(Finding(code: "latency", severity: .info,
                               message: "the latency could not be estimated from the take (confidence \(String(format: "%.2f", e.confidence)), best guess \(Int(e.latencyMs.rounded())) ms): scored at 0 ms; give the latency if it is known",
                               value: e.latencyMs, unit: "ms"))
        }
        return ordered(out, card) + outside(card)
    }

    /// The median onset over the notes whose onset was seen, ms (positive: late), and how many; nil
    /// under 3. Notes reached legato are left out: their onset is 0 by rule, and a late singer's
    /// repeated notes would pull the median to 0. The one definition the `late`/`early` finding,
    /// `TimingExplanation` and the latency estimate's check (`Scorer.score`) share.
    public static func medianOnset(_ card: ScoreCard) -> (ms: Double, count: Int)? {
        let onsets = card.lines.filter(\.judged).flatMap(\.notes).compactMap { $0.score == nil || $0.legato ? nil : $0.onsetMs }.sorted()
        guard onsets.count >= 3, let median = Stats.median(onsets) else { return nil }
        return (median, onsets.count)
    }

    /// Lines not judged: outside the recording.
    static func outside(_ card: ScoreCard) -> [Finding] {
        let ls = card.lines.filter { !$0.judged && !$0.notes.isEmpty }.map { $0.index + 1 }
        guard !ls.isEmpty else { return [] }
        return [Finding(code: "outside_recording", severity: .info,
                        message: "\(ls.count) of \(card.lines.count) line(s) lie outside the recording and are not judged",
                        lines: ls, count: ls.count)]
    }

    /// Root causes first (nothing sung, a monotone, a late or early singer whose notes only sound
    /// wrong), then by the points their term lost (ktv), then severity.
    static func ordered(_ findings: [Finding], _ card: ScoreCard) -> [Finding] {
        let lost = card.pointsLost
        func cost(_ f: Finding) -> Double {
            switch f.code {
            case "silent", "monotone": return .infinity
            case "wrong_notes", "flat", "sharp": return lost?.pitch ?? 0
            case "missing_notes": return lost?.coverage ?? 0
            case "late", "early": return card.timingExplanation != nil ? .infinity : lost?.timing ?? 0
            case "transposed": return lost?.key ?? 0
            case "unsteady_tempo": return lost?.tempoStability ?? 0
            case "vibrato": return lost?.vibrato ?? 0
            case "voice_quality": return lost?.voiceQuality ?? 0
            case "dynamics": return lost?.dynamics ?? 0
            default: return 0
            }
        }
        return findings.enumerated().sorted { a, b in
            let (ca, cb) = (cost(a.element), cost(b.element))
            if ca != cb { return ca > cb }
            if a.element.severity != b.element.severity { return a.element.severity > b.element.severity }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// Mean absolute deviation, cents (0 for fewer than two values).
    static func spread(_ v: [Double]) -> Double {
        guard v.count >= 2, let mean = Stats.mean(v) else { return 0 }
        return Stats.mean(v.map { abs($0 - mean) }) ?? 0
    }
}
