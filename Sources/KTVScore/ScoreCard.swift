import KTVCore

/// How one note was sung.
public struct NoteScore: Sendable, Equatable {
    public var note: MelodyNote
    /// The pitch judged against: the note's, moved by the key shift (cents above MIDI 0); nil when unpitched.
    public var targetCents: Double?
    /// Median of (sung − target) over the note's voiced frames, cents; nil when none was voiced or the note is unpitched.
    public var medianErrorCents: Double?
    /// Share of the note's time with a voiced frame, 0…1.
    public var coverage: Double
    /// First voiced frame relative to the note's start, ms (negative = early); nil when none.
    public var onsetMs: Double?
    /// 0…100 under the rules; nil when the note is not judged (unpitched, freestyle, outside the recording).
    public var score: Double?

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
