import KTVCore

/// How one note was sung.
public struct NoteScore: Sendable, Equatable {
    public var note: MelodyNote
    /// The pitch judged against: the note's, moved by the key shift (cents above MIDI 0); nil when unpitched.
    public var targetCents: Double?
    /// Median of (sung − target) over the note's voiced frames, cents; nil when none was voiced or the note is unpitched.
    /// Under the ktv rules the median's whole octaves are taken off (−600…600; they are `octaves`).
    public var medianErrorCents: Double?
    /// Under the ktv rules: the whole octaves the note was sung away from its target (0 = in the
    /// target's octave; −1 = an octave below).
    public var octaves = 0
    /// Share of the note's time with a voiced frame, 0…1.
    public var coverage: Double
    /// First voiced frame relative to the note's start, ms (negative = early); nil when none.
    public var onsetMs: Double?
    /// Under the ktv rules: the note was reached legato from the previous one on the same pitch, so
    /// its onset could not be seen and `onsetMs` is 0 by rule, not by measure.
    public var legato = false
    /// 0…100 under the rules; nil when the note is not judged (unpitched, freestyle, outside the recording).
    public var score: Double?
    /// Free timing: the note's sung duration over its written one at the singer's tempo (1 = in time).
    public var durationRatio: Double?
    /// Under the ktv rules: how the note was held (scoop, drift, wobble); nil for a short note.
    public var steadiness: NoteSteadiness?
    /// Under the ktv rules, the note's score as 100 × coverage × pitch × timing credit, each 0…1
    /// (nil when the note was not judged); what `ScoreCard.pointsLost` splits the points by.
    public var coverageCredit: Double?, pitchCredit: Double?, timingCredit: Double?

    public init(note: MelodyNote, targetCents: Double? = nil, medianErrorCents: Double? = nil, coverage: Double = 0,
                onsetMs: Double? = nil, score: Double? = nil) {
        self.note = note
        self.targetCents = targetCents
        self.medianErrorCents = medianErrorCents
        self.coverage = coverage
        self.onsetMs = onsetMs
        self.score = score
    }
}

/// How one line was sung.
public struct LineScore: Sendable, Equatable {
    public var index: Int
    public var startMs: Int
    public var endMs: Int
    public var text: String
    /// On the rules' line scale (0…100 for ktv and Agora); nil when the line is not judged.
    public var score: Double?
    public var notes: [NoteScore]
    /// Whether the take was judged on this line. Agora scores every line of the song, those after
    /// the recording ended too (0, from the silence it feeds); such a line is not judged here.
    public var judged: Bool { score != nil && !outsideRecording }
    /// The line lies wholly outside the recording (Agora still gives it a score).
    public var outsideRecording = false

    public init(index: Int, startMs: Int, endMs: Int, text: String, score: Double?, notes: [NoteScore]) {
        self.index = index
        self.startMs = startMs
        self.endMs = endMs
        self.text = text
        self.score = score
        self.notes = notes
    }
}

/// A take's result under one rule set: the total, each line and note, and the figures behind them.
public struct ScoreCard: Sendable, Equatable {
    public static func == (a: ScoreCard, b: ScoreCard) -> Bool {
        a.rules == b.rules && a.score == b.score && a.maxScore == b.maxScore && a.lines == b.lines && a.latencyMs == b.latencyMs
            && a.keyShiftCents == b.keyShiftCents && a.judgedShare == b.judgedShare && a.timing == b.timing && a.warp == b.warp
            && a.missingNotes.map(\.line) == b.missingNotes.map(\.line) && a.missingNotes.map(\.note) == b.missingNotes.map(\.note)
            && a.extraNotes == b.extraNotes
    }

    /// The rule set's name (`ktv`, `agora`, `ultrastar`).
    public var rules: String
    /// The total on the rules' scale (`maxScore`).
    public var score: Double
    /// 100 for ktv, 10,000 for UltraStar, 100 × lines for Agora (a plain sum of line scores).
    public var maxScore: Double
    public var lines: [LineScore]
    /// The take's delay against the song that was compensated, ms.
    public var latencyMs: Double
    /// The transposition the singer was judged in, cents (0 when none).
    public var keyShiftCents: Double
    /// Share of the song's judged notes (by duration) that the recording covers, 0…1.
    public var judgedShare: Double
    /// How the take was placed: `locked` to the song's clock, or `free` (aligned by its pitch).
    public var timing: String = "locked"
    /// With free timing: what the warping did.
    public var warp: WarpSummary?
    /// Free timing under the ktv rules: how steady the tempo was, 0…1 (`KTVRules.tempoStability`).
    public var tempoStability: Double?
    /// Judged notes hardly sung (less than 30 % of their time voiced), as (line, note in line).
    public var missingNotes: [(line: Int, note: Int)] = []
    /// Stretches sung (100 ms or more) where the reference has no note.
    public var extraNotes = 0
    /// Under the ktv rules: where the points went (100 − their sum is the score).
    public var pointsLost: PointsLost?
    /// Where `latencyMs` came from: `given`, `accompaniment` (measured), `estimated` (from the take), `none`.
    public var latencySource = "none"
    /// The estimate from the take, when one was asked for (also when it was not used).
    public var latencyEstimate: LatencyEstimate?
    /// Under the ktv rules: the take judged dimension by dimension (intonation, rhythm, vibrato,
    /// voice quality, dynamics, pitch range), each 0…100 or unmeasured with a reason.
    public var dimensions: [DimensionScore] = []
    /// Under the ktv rules: the notes' score (coverage, intonation, rhythm, key, movement, tempo)
    /// before the voice dimensions scale it (`DimensionWeights.combine`).
    public var coreScore: Double?
    /// When the rule set calls a sung note wrong (nil: the findings' own `wrongNoteCents`, the ktv rules').
    public var wrongNotes: WrongNoteCriterion?
    /// The wrong notes a time shift rights: the take is late or early, not off pitch (`TimingExplanation`).
    public var timingExplanation: TimingExplanation?

    /// Under the ktv rules: the score on a music teacher's 1-5 scale (`ExpertGrade`).
    public var expertGrade: Double? { rules == "ktv" && !dimensions.isEmpty ? ExpertGrade.grade(score) : nil }

    public init(rules: String, score: Double, maxScore: Double, lines: [LineScore], latencyMs: Double = 0,
                keyShiftCents: Double = 0, judgedShare: Double = 1) {
        self.rules = rules
        self.score = score
        self.maxScore = maxScore
        self.lines = lines
        self.latencyMs = latencyMs
        self.keyShiftCents = keyShiftCents
        self.judgedShare = judgedShare
    }

    /// The score on 0…100 whatever the rule set: the ktv score; Agora's mean line score over the
    /// lines judged (its total is a sum over every line, so a shorter recording scores less); UltraStar's
    /// points / 100.
    public var score100: Double {
        switch rules {
        case "agora":
            let judged = lines.filter(\.judged).compactMap(\.score)
            return Stats.mean(judged) ?? 0
        default:
            return maxScore > 0 ? score / maxScore * 100 : 0
        }
    }

    /// What the singer can act on, most costly first (`ScoreFindings`, default thresholds).
    public var findings: [Finding] { ScoreFindings.findings(self) }

    /// Notes with a pitch error, over all lines.
    var measuredNotes: [NoteScore] { lines.flatMap(\.notes).filter { $0.medianErrorCents != nil } }

    /// Mean |median error| over the notes sung on a pitch, cents; nil when none was.
    public var meanAbsoluteErrorCents: Double? { Stats.mean(measuredNotes.compactMap { $0.medianErrorCents.map(abs) }) }

    /// Mean signed error (negative = flat), cents; nil when no note was sung on a pitch.
    public var meanErrorCents: Double? { Stats.mean(measuredNotes.compactMap(\.medianErrorCents)) }

    /// Share of the notes sung on a pitch that were within 50 cents; nil when none was.
    public var shareWithin50Cents: Double? {
        let m = measuredNotes
        return m.isEmpty ? nil : Double(m.filter { abs($0.medianErrorCents ?? .infinity) <= 50 }.count) / Double(m.count)
    }

    /// Mean onset offset (negative = early), ms; nil when no note had an onset.
    public var meanOnsetMs: Double? { Stats.mean(lines.flatMap(\.notes).compactMap(\.onsetMs)) }
}

extension ScoreCard {
    /// Fills in what any rule set reports the same way: the timing, the warp, missing and extra notes.
    mutating func describe(_ take: SungTake, reference: ReferenceMelody, frames: SongFrames) {
        timing = take.warp == nil ? "locked" : "free"
        warp = take.warp
        missingNotes = []
        for (li, line) in lines.enumerated() {
            for (ni, n) in line.notes.enumerated() where n.score != nil && n.coverage < 0.3 { missingNotes.append((li, ni)) }
        }
        // Voiced runs of at least 100 ms whose middle is in no note (50 ms of slack either side).
        let spans = reference.notes.filter { $0.cents != nil }.map { Double($0.startMs - 50)...Double($0.endMs + 50) }
        var runStart: Double?, last = 0.0
        extraNotes = 0
        func close() {
            if let s = runStart, last - s >= 100 {
                let mid = (s + last) / 2
                if !spans.contains(where: { $0.contains(mid) }) { extraNotes += 1 }
            }
            runStart = nil
        }
        frames.forEach(in: Int.min / 2, Int.max / 2) { ms, cents in
            if cents == nil || ms - last > 60 { close() }
            if cents != nil, runStart == nil { runStart = ms }
            last = ms
        }
        close()
    }
}

/// Where a ktv score's points went: 100 − (pitch + coverage + timing + key + movement +
/// tempoStability) = the score. The notes' share first: each judged note's 100 × C × P × T is split
/// in order, coverage 100·(1 − C), then pitch 100·C·(1 − P), then timing 100·C·P·(1 − T), weighted
/// as the notes are; then the factors on the whole, in order: key, movement, tempo stability, each
/// taking its share of what was left.
public struct PointsLost: Sendable, Equatable {
    public var pitch = 0.0, coverage = 0.0, timing = 0.0, key = 0.0, movement = 0.0, tempoStability = 0.0
    /// The voice dimensions' shares (`DimensionWeights.combine`), after the core's.
    public var vibrato = 0.0, voiceQuality = 0.0, dynamics = 0.0, pitchRange = 0.0

    public init() {}

    public var total: Double { terms.reduce(0) { $0 + $1.points } }

    /// In the order the text prints them, with their JSON names.
    public var terms: [(name: String, points: Double)] {
        [("pitch", pitch), ("coverage", coverage), ("timing", timing), ("key", key), ("movement", movement), ("tempo_stability", tempoStability),
         ("vibrato", vibrato), ("voice_quality", voiceQuality), ("dynamics", dynamics), ("pitch_range", pitchRange)]
    }
}
