import KTVCore

// Which sung notes a card calls wrong, and whether timing explains them.
//
// Each rule set judges pitch its own way, so "wrong" is the rule set's own: ktv's `wrongNoteCents`
// after the key and whole octaves, the distance where Agora's frame score starts to fall, outside
// UltraStar's tolerance at the difficulty played. The finding says which (`WrongNoteCriterion`), so
// one take's counts under two rule sets differ with a reason given.
//
// A singer 300-500 ms late (or early) holds each note over the start of the next: judged where the
// song has them, those notes sound wrong though every pitch is right. `TimingExplanation` judges
// the sung notes again with the take moved by one shift (the median onset when it is beyond the
// onset grace, else the shift within ±`searchMs` that rights the most of them): when that rights
// most wrong notes and wrongs few right ones, the fault is the timing, and the findings say so.

/// When a rule set counts a sung note as wrong, and how a finding says it.
public struct WrongNoteCriterion: Sendable, Equatable {
    /// A note whose median error (cents, after whatever key the rule set applies, whole octaves
    /// taken off) is this far off or more is wrong.
    public var cents: Double
    /// The criterion in words, after "N of M notes sung …".
    public var words: String

    public init(cents: Double, words: String) {
        self.cents = cents
        self.words = words
    }

    /// The ktv rules: `wrongNoteCents` after the key and whole octaves.
    public static func ktv(cents: Double) -> WrongNoteCriterion {
        let amount = cents == 100 ? "a semitone" : "\(Int(cents.rounded())) cents"
        return WrongNoteCriterion(cents: cents, words: "\(amount) or more off the melody after the key and whole octaves (ktv's wrong-note threshold)")
    }

    /// Agora's rules: a frame scores 100 up to `(1 + offset/100 − 1/(1 + level/50)) / (level/100)`
    /// semitones from the tone (`AgoraRules.frameScore`); a note whose median error is beyond that
    /// loses points. Agora folds octaves and knows no key.
    public static func agora(level: Int, compensationOffset: Int) -> WrongNoteCriterion {
        let l = Double(min(100, max(1, level))), o = Double(min(100, max(0, compensationOffset)))
        let semitones = max(0, (1 + o / 100 - 1 / (1 + l / 50)) / (l / 100))
        return WrongNoteCriterion(cents: semitones * 100,
                                  words: "more than \(String(format: "%.1f", semitones)) semitones off, where Agora's frame score at level \(Int(l)) starts to fall (octaves folded, in the written key)")
    }

    /// UltraStar's rules: a beat hits within ±tolerance whole semitones, octaves folded; a note whose
    /// median error rounds beyond that misses.
    public static func ultraStar(_ difficulty: UltraStarRulesConfiguration.Difficulty) -> WrongNoteCriterion {
        let t = difficulty.toleranceSemitones
        return WrongNoteCriterion(cents: (Double(t) + 0.5) * 100,
                                  words: "outside UltraStar's ±\(t) semitone\(t == 1 ? "" : "s") at \(difficulty) difficulty (octaves folded)")
    }
}

/// The take judged again with one time shift: the wrong notes it rights.
public struct TimingExplanation: Sendable, Equatable {
    /// The shift, ms (positive: the singer is late; the notes are judged this much later).
    public var shiftMs: Double
    /// The wrong notes that are right at the shift, as (line index, note index in line).
    public var righted: [NoteIndex]
    /// How many notes were wrong before the shift.
    public var wrongBefore: Int
    /// The notes hardly sung where the song has them (`ScoreCard.missingNotes`) that are sung at the shift.
    public var reached: [NoteIndex] = []
    /// Each sung note's median error at the shift, cents, whole octaves taken off: what a lean
    /// flat or sharp is read from when the timing explains the wrong notes.
    public var errorsAtShift: [Double] = []

    public struct NoteIndex: Sendable, Equatable, Hashable {
        public var line: Int, note: Int
    }

    /// The shifts looked through when the median onset does not say it: ±this, every `stepMs`.
    static let searchMs = 600.0
    static let stepMs = 10.0

    /// Whether timing explains the card's wrong notes (see the top of the file); nil when there are
    /// none, when the take is warped (free timing places every note itself), or when no shift beyond
    /// the onset grace rights most of them. The shift: the median onset when it is beyond the grace
    /// and explains them; else the shift within ±`searchMs` at which the most voiced frames agree
    /// with their notes (within the criterion), the middle of the first run of such shifts.
    static func measure(_ card: ScoreCard, take: SungTake, criterion: WrongNoteCriterion,
                        onsetGraceMs: Double = FindingsConfiguration.Spec.onsetGraceMs.defaultValue) -> TimingExplanation? {
        guard take.warp == nil else { return nil }
        var sung: [(index: NoteIndex, note: NoteScore, target: Double)] = []
        for (li, line) in card.lines.enumerated() where line.judged {
            for (ni, n) in line.notes.enumerated() where n.score != nil && n.medianErrorCents != nil {
                if let target = n.targetCents { sung.append((NoteIndex(line: li, note: ni), n, target)) }
            }
        }
        let wrong = Set(sung.filter { abs($0.note.medianErrorCents ?? 0) >= criterion.cents }.map(\.index))
        guard !wrong.isEmpty else { return nil }
        let frames = SongFrames(take.contour)
        func folded(_ x: Double) -> Double { x - 1200 * (x / 1200).rounded() }
        // At shift d: the wrong notes it rights, and the right ones it makes wrong.
        func evaluate(_ d: Double) -> (righted: [NoteIndex], spoiled: Int, errors: [Double]) {
            var righted: [NoteIndex] = [], spoiled = 0, medians: [Double] = []
            for (index, n, target) in sung {
                var errors: [Double] = []
                for i in frames.indices(from: Double(n.note.startMs) + d, to: Double(n.note.endMs) + d) {
                    if let c = frames.cents[i] { errors.append(c - target) }
                }
                errors.sort()
                guard let median = Stats.median(errors) else { continue }
                medians.append(folded(median))
                let off = abs(folded(median)) >= criterion.cents
                if wrong.contains(index) { if !off { righted.append(index) } } else if off { spoiled += 1 }
            }
            return (righted, spoiled, medians)
        }
        // Most wrong notes righted, and a right note made wrong for fewer than one in two righted.
        func explains(_ r: (righted: [NoteIndex], spoiled: Int, errors: [Double])) -> Bool { 2 * r.righted.count > wrong.count && 2 * r.spoiled < r.righted.count }
        // Voiced frames agreeing with their notes at shift d.
        func agreeing(_ d: Double) -> Int {
            var count = 0
            for (_, n, target) in sung {
                for i in frames.indices(from: Double(n.note.startMs) + d, to: Double(n.note.endMs) + d) {
                    if let c = frames.cents[i], abs(folded(c - target)) < criterion.cents { count += 1 }
                }
            }
            return count
        }
        var shift: Double?, result: (righted: [NoteIndex], spoiled: Int, errors: [Double])?
        if let onset = ScoreFindings.medianOnset(card), abs(onset.ms) > onsetGraceMs {
            let r = evaluate(onset.ms)
            if explains(r) { (shift, result) = (onset.ms, r) }
        }
        if shift == nil {
            var scores: [(d: Double, agree: Int)] = []
            var d = -Self.searchMs
            while d <= Self.searchMs {
                if abs(d) > onsetGraceMs { scores.append((d, agreeing(d))) }
                d += Self.stepMs
            }
            // The middle of the best run of shifts: a voice that stops before each note's end (a
            // breath) agrees as well a little earlier, and the run's middle is the singer's shift.
            guard let top = scores.map(\.agree).max(), top > agreeing(0),
                  let first = scores.firstIndex(where: { $0.agree == top }) else { return nil }
            var last = first
            while last + 1 < scores.count, scores[last + 1].agree == top, scores[last + 1].d - scores[last].d <= Self.stepMs + 1e-9 { last += 1 }
            let best = ((scores[first].d + scores[last].d) / 2 / Self.stepMs).rounded() * Self.stepMs
            let r = evaluate(best)
            guard explains(r) else { return nil }
            (shift, result) = (best, r)
        }
        guard let shift, let result else { return nil }
        // Notes hardly sung where the song has them, but sung at the shift.
        var reached: [NoteIndex] = []
        for m in card.missingNotes where card.lines.indices.contains(m.line) && card.lines[m.line].notes.indices.contains(m.note) {
            let n = card.lines[m.line].notes[m.note].note
            let range = frames.indices(from: Double(n.startMs) + shift, to: Double(n.endMs) + shift)
            let voiced = range.filter { frames.cents[$0] != nil }.count
            if !range.isEmpty, Double(voiced) >= 0.3 * Double(range.count) { reached.append(NoteIndex(line: m.line, note: m.note)) }
        }
        return TimingExplanation(shiftMs: shift, righted: result.righted, wrongBefore: wrong.count, reached: reached, errorsAtShift: result.errors)
    }
}

extension ScoreCard {
    /// The rule set's criterion and whether timing explains the wrong notes it gives: what every
    /// rule set's `judge` ends with.
    mutating func explainWrongNotes(_ take: SungTake, criterion: WrongNoteCriterion?) {
        wrongNotes = criterion
        timingExplanation = TimingExplanation.measure(self, take: take, criterion: criterion ?? .ktv(cents: FindingsConfiguration.Spec.wrongNoteCents.defaultValue))
    }
}
