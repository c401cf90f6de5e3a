import KTVCore

// UltraStar Deluxe's scoring, so that a ktv score matches what players of the game know.
// Source: UltraStar Deluxe (UltraStar-Deluxe/USDX at 8170b56a) `src/base/UNote.pas`, `UMusic.pas`,
// `controllers/UScreenSingController.pas` (OnSentenceEnd), as restated in
// shared/spec/scoring-anchors.md §2.1:
// - one sung tone a beat: the game analyses once a beat and quantises to a semitone. Here the tone
//   is the median of the take's voiced frames inside the beat, and the beat counts as sung when at
//   least half its frames are voiced (a breath or a consonant does not win or lose it); a beat
//   holding no frame (frames sparser than beats) takes the frame nearest its middle;
// - octave folding: the sung semitone moves by octaves to within 6 semitones of the note's;
// - a beat hits when |sung − note| ≤ 2 − level semitones (easy 2, medium 1, hard 0), rounded
//   semitones as the game detects them; on a rap note any sung beat hits;
// - weights: normal 1, golden 2, rap 1, golden rap 2, freestyle 0 (unpitched normal and golden
//   notes, which no UltraStar file has, count 0 too); the song's value is Σ beats × weight and a
//   hit beat earns 9000 × weight / value;
// - line bonus, 1000 shared equally by the lines with value: a line's perfection is its points
//   over (its maximum − 2), clamped to 0…1 (the game's deliberate slack), 1 when its maximum is
//   at most 2 points; a reference without lines counts as one line;
// - the total is rounded to a whole point (the game since 9a3ca273), out of 10000.
// The game judges the whole song, so notes the recording does not reach are missed beats here too
// (`judgedShare` says how much was reached). References that are not UltraStar songs have no beat:
// theirs is `defaultBeatMs`, and a note's beats are its duration over it, rounded, at least one.
// A relative pitch scale (Agora's 0-100) has no key: the take is judged in the whole-semitone key
// it sang in (its median error, rounded), reported as `keyShiftCents`.
// Line scores are 0-100: the share of the line's value (beats × weight) hit.

/// Settings of the UltraStar rules, declared once.
public struct UltraStarRulesConfiguration: Sendable, Equatable {
    /// UltraStar Deluxe's levels; the tolerance is 2 − level semitones.
    public enum Difficulty: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case easy, medium, hard

        public var toleranceSemitones: Int { 2 - rawValue }
        public var description: String {
            switch self {
            case .easy: return "easy"
            case .medium: return "medium"
            case .hard: return "hard"
            }
        }
        public static func < (a: Difficulty, b: Difficulty) -> Bool { a.rawValue < b.rawValue }

        /// `easy`, `medium` or `hard`.
        public init(parsing text: String) throws(ParameterError) {
            guard let d = Self.allCases.first(where: { $0.description == text }) else {
                throw ParameterError(name: "difficulty", value: quoted(text), allowed: "easy, medium or hard")
            }
            self = d
        }
    }

    public enum Spec {
        public static let difficulty = Parameter<Difficulty>("difficulty", range: .easy ... .hard, default: .medium,
            "How far the sung semitone may be from the note's, octaves folded: easy ±2, medium ±1, hard 0.")
        public static let defaultBeatMs = Parameter<Double>("defaultBeatMs", unit: "ms", range: 10...1000, default: 50,
            "The beat of references that are not UltraStar songs: one sung tone judged a beat.")
        public static let all: [ParameterInfo] = [difficulty.info, defaultBeatMs.info]
    }

    public var difficulty = Spec.difficulty.defaultValue
    public var defaultBeatMs = Spec.defaultBeatMs.defaultValue

    public init(difficulty: Difficulty = Spec.difficulty.defaultValue, defaultBeatMs: Double = Spec.defaultBeatMs.defaultValue) {
        self.difficulty = difficulty
        self.defaultBeatMs = defaultBeatMs
    }

    public func validated() throws(ScoreError) -> UltraStarRulesConfiguration {
        do {
            try Spec.difficulty.check(difficulty)
            try Spec.defaultBeatMs.check(defaultBeatMs)
        } catch { throw ScoreError(error) }
        return self
    }
}

/// UltraStar Deluxe's rules (see the comment at the top of the file).
public struct UltraStarRules: ScoringRules {
    public let name = "ultrastar"
    public static let maxScore = 10_000.0
    static let notePoints = 9_000.0
    static let lineBonusPoints = 1_000.0

    public var configuration: UltraStarRulesConfiguration

    public init(configuration: UltraStarRulesConfiguration = UltraStarRulesConfiguration()) {
        self.configuration = configuration
    }

    /// A note's weight: points a hit beat earns, relative to a normal note's.
    static func weight(_ n: MelodyNote) -> Int {
        switch n.kind {
        case .normal: return n.cents == nil ? 0 : 1
        case .golden: return n.cents == nil ? 0 : 2
        case .rap: return 1
        case .goldenRap: return 2
        case .freestyle: return 0
        }
    }

    /// How many beats a note lasts.
    static func beats(_ n: MelodyNote, beatMs: Double) -> Int {
        n.durationMs > 0 ? max(1, Int((Double(n.durationMs) / beatMs).rounded())) : 0
    }

    public func judge(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> ScoreCard {
        let c = try configuration.validated()
        let frames = SongFrames(take.contour)
        let beatMs = reference.beatMs ?? c.defaultBeatMs
        let hopMs = frames.timesMs.count > 1 ? (frames.timesMs[frames.timesMs.count - 1] - frames.timesMs[0]) / Double(frames.timesMs.count - 1) : beatMs
        let shift = reference.scale == .relative ? 100 * ((frames.medianError(against: reference.pitchedNotes) ?? 0) / 100).rounded() : 0
        let tolerance = c.difficulty.toleranceSemitones

        var lines = reference.lines.enumerated().map { LineScore(index: $0, startMs: $1.startMs, endMs: $1.endMs, text: $1.text, score: nil, notes: []) }
        // Value and hits per line, in beats × weight; the last bucket holds notes of no line.
        var lineValue = [Int](repeating: 0, count: lines.count + 1), lineHit = lineValue
        var coveredValue = 0
        for n in reference.notes {
            var ns = NoteScore(note: n)
            let weight = Self.weight(n), count = Self.beats(n, beatMs: beatMs)
            let bucket = lines.indices.contains(n.line) ? n.line : lines.count
            if weight > 0, count > 0 {
                let target = n.cents.map { $0 + shift }
                ns.targetCents = target
                var hits = 0, voiced = 0, covered = 0
                var errors: [Double] = []
                for b in 0..<count {
                    let s = Double(n.startMs) + Double(b) * beatMs
                    let e = b == count - 1 ? Double(n.endMs) : s + beatMs
                    if take.coveredMs.contains(Int(((s + e) / 2).rounded())) { covered += 1 }
                    guard let tone = tone(frames, from: s, to: e, hopMs: hopMs) else { continue }
                    voiced += 1
                    if ns.onsetMs == nil { ns.onsetMs = s - Double(n.startMs) }
                    guard let target else { hits += 1; continue }  // rap: any sung beat
                    let error = tone - target
                    errors.append(error - 1200 * (error / 1200).rounded())
                    let semitones = Int((tone / 100).rounded()) - Int((target / 100).rounded())
                    let folded = ((semitones + 6) % 12 + 12) % 12 - 6
                    if n.kind == .rap || n.kind == .goldenRap || abs(folded) <= tolerance { hits += 1 }
                }
                errors.sort()
                ns.medianErrorCents = Stats.median(errors)
                ns.coverage = Double(voiced) / Double(count)
                ns.score = 100 * Double(hits) / Double(count)
                lineValue[bucket] += count * weight
                lineHit[bucket] += hits * weight
                coveredValue += covered * weight
            }
            if bucket < lines.count { lines[bucket].notes.append(ns) }
        }
        let songValue = lineValue.reduce(0, +)
        guard songValue > 0 else {
            // Nothing to judge (freestyle only): no points to win or lose.
            return ScoreCard(rules: name, score: 0, maxScore: Self.maxScore, lines: lines, latencyMs: take.latencyMs, keyShiftCents: shift, judgedShare: 0)
        }
        let pointsPerValue = Self.notePoints / Double(songValue)
        var bonus = 0.0
        let judgedLines = lineValue.indices.filter { lineValue[$0] > 0 }
        for i in judgedLines {
            let maxPoints = Double(lineValue[i]) * pointsPerValue, points = Double(lineHit[i]) * pointsPerValue
            let perfection = maxPoints <= 2 ? 1 : min(1, max(0, points / (maxPoints - 2)))
            bonus += Self.lineBonusPoints / Double(judgedLines.count) * perfection
            if i < lines.count { lines[i].score = 100 * Double(lineHit[i]) / Double(lineValue[i]) }
        }
        let score = (Double(lineHit.reduce(0, +)) * pointsPerValue + bonus).rounded()
        var card = ScoreCard(rules: name, score: score, maxScore: Self.maxScore, lines: lines, latencyMs: take.latencyMs,
                             keyShiftCents: shift, judgedShare: Double(coveredValue) / Double(songValue))
        card.explainWrongNotes(take, criterion: .ultraStar(c.difficulty))
        return card
    }

    /// The tone sung in [startMs, endMs), cents: the median of the voiced frames when at least half
    /// the frames are voiced; with no frame inside, the frame nearest the middle within half a hop.
    func tone(_ frames: SongFrames, from startMs: Double, to endMs: Double, hopMs: Double) -> Double? {
        var range = frames.indices(from: startMs, to: endMs)
        if range.isEmpty {
            let mid = (startMs + endMs) / 2
            let candidates = [range.lowerBound - 1, range.lowerBound].filter { frames.timesMs.indices.contains($0) }
            guard let k = candidates.min(by: { abs(frames.timesMs[$0] - mid) < abs(frames.timesMs[$1] - mid) }),
                  abs(frames.timesMs[k] - mid) <= hopMs / 2 + (endMs - startMs) / 2 else { return nil }
            range = k..<(k + 1)
        }
        var voiced: [Double] = []
        for i in range { if let c = frames.cents[i] { voiced.append(c) } }
        guard voiced.count * 2 >= range.count, !voiced.isEmpty else { return nil }
        voiced.sort()
        return Stats.median(voiced)
    }
}
