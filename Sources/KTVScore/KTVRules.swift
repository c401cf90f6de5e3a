import Foundation
import KTVCore

// ktv's own rules: score what a listener hears, and explain every point.
//
// Each pitched note is judged on the frames sung inside it (on the song's clock, after latency):
// - coverage: the share of the note's time voiced (a note left unsung scores 0);
// - pitch: the median error of its voiced frames against the target, after the key shift (the
//   median keeps vibrato and glides from deciding the note), less the whole octaves it holds; a
//   note sung whole octaves away keeps `octaveCredit` of its credit (a singer changing register
//   mid-song, or a pitch tracker's octave error: every karaoke scorer in
//   shared/spec/scoring-anchors.md folds octaves, and the graders of a sing-back exam do not hear a
//   tracker's error);
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
        public static let zeroCreditCents = Parameter<Double>("zeroCreditCents", unit: "cents", range: 10...1200, default: 100,
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
        public static let octaveCredit = Parameter<Double>("octaveCredit", range: 0...1, default: 0.75,
            "Share of its pitch credit a note keeps when sung whole octaves from its target (a singer changing register mid-song, or a pitch tracker's octave error); 0 judges it as far off.")
        public static let tempoStabilityWeight = Parameter<Double>("tempoStabilityWeight", range: 0...1, default: 0.5,
            "Free timing: share of the total that depends on a steady tempo.")
        public static let tempoSpreadScale = Parameter<Double>("tempoSpreadScale", range: 0.05...5, default: 0.5,
            "Free timing: tempo stability is exp(−spread/this), spread the robust standard deviation (1.4826 × MAD) of the notes' ln(duration ratio) above 0.1.")
        public static let steadinessWeight = Parameter<Double>("steadinessWeight", range: 0...1, default: 0.15,
            "Share of a note's pitch credit that depends on how steadily it is held (scoops, drift, wobble; NoteSteadiness).")
        public static let all: [ParameterInfo] = [fullCreditCents.info, zeroCreditCents.info, fullCoverage.info, onsetGraceMs.info,
                                                  onsetZeroMs.info, onsetToleranceCents.info, timingWeight.info, keyWeight.info,
                                                  keyToleranceCents.info, octaveCredit.info, tempoStabilityWeight.info, tempoSpreadScale.info,
                                                  steadinessWeight.info]
    }

    /// A key shift is applied when notes holding at least this share of the sung time sit within
    /// `keyConfidenceCents` of it (a majority: the singer really sang in that key).
    static let keyConfidenceShare = 0.5
    static let keyConfidenceCents = 50.0

    public var fullCreditCents = Spec.fullCreditCents.defaultValue
    public var zeroCreditCents = Spec.zeroCreditCents.defaultValue
    public var fullCoverage = Spec.fullCoverage.defaultValue
    public var onsetGraceMs = Spec.onsetGraceMs.defaultValue
    public var onsetZeroMs = Spec.onsetZeroMs.defaultValue
    public var onsetToleranceCents = Spec.onsetToleranceCents.defaultValue
    public var timingWeight = Spec.timingWeight.defaultValue
    public var keyWeight = Spec.keyWeight.defaultValue
    public var keyToleranceCents = Spec.keyToleranceCents.defaultValue
    public var octaveCredit = Spec.octaveCredit.defaultValue
    public var tempoStabilityWeight = Spec.tempoStabilityWeight.defaultValue
    public var tempoSpreadScale = Spec.tempoSpreadScale.defaultValue
    public var steadinessWeight = Spec.steadinessWeight.defaultValue

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
            try Spec.octaveCredit.check(octaveCredit)
            try Spec.tempoStabilityWeight.check(tempoStabilityWeight)
            try Spec.tempoSpreadScale.check(tempoSpreadScale)
            try Spec.steadinessWeight.check(steadinessWeight)
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

    /// `auto`, `none`, or cents within ±2400 (`-300`).
    public init(parsing text: String) throws(ParameterError) {
        switch text {
        case "auto": self = .auto
        case "none": self = .none
        default:
            guard let cents = Double(text), cents.isFinite, abs(cents) <= 2400 else {
                throw ParameterError(name: "keyShift", value: quoted(text), allowed: "auto, none, or cents within ±2400")
            }
            self = .cents(cents)
        }
    }
}

/// ktv's rules (see the comment at the top of the file).
public struct KTVRules: ScoringRules {
    public let name = "ktv"
    public var configuration: KTVRulesConfiguration
    public var keyShift: KeyShift
    /// Count lines outside the recording as 0 instead of leaving them out.
    public var wholeSong: Bool
    /// What each voice dimension may take of the overall score.
    public var weights: DimensionWeights

    public init(configuration: KTVRulesConfiguration = KTVRulesConfiguration(), keyShift: KeyShift = .auto, wholeSong: Bool = false,
                weights: DimensionWeights = DimensionWeights()) {
        self.configuration = configuration
        self.keyShift = keyShift
        self.wholeSong = wholeSong
        self.weights = weights
    }

    public func judge(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> ScoreCard {
        let c = try configuration.validated()
        let frames = SongFrames(take.contour)
        let judgedNotes = reference.notes.filter { $0.cents != nil && $0.kind != .freestyle && $0.durationMs > 0 }
        // The key: median error of every voiced frame inside a pitched note.
        let keyErrors = frames.errors(against: judgedNotes)
        let octaves = 1200 * ((keyErrors.median ?? 0) / 1200).rounded()
        // A transposition is a claim that the melody was sung in another key: it holds when most of
        // the sung notes sit within `keyConfidenceCents` of it. A hum or random notes make no such
        // claim and are judged in the song's key (octaves still forgiven).
        let key = Self.keyEstimate(keyErrors.perNote)
        let measured = key.cents
        let credible = key.agreeingShare >= KTVRulesConfiguration.keyConfidenceShare
        let shift: Double, keyCredit: Double
        switch (keyShift, reference.scale) {
        case (_, .relative):
            // A relative scale has no key to be in: intervals only, at no cost.
            shift = measured
            keyCredit = 1
        case (.auto, .absolute) where reference.recording?.accompanied == false:
            // The reference singer sang alone: the key was theirs to choose, and so is the take's.
            shift = credible ? measured : octaves
            keyCredit = 1
        case (.auto, .absolute):
            shift = credible ? measured : octaves
            keyCredit = credible ? exp(-pow((measured - octaves) / c.keyToleranceCents, 2)) : 1
        case (.none, .absolute):
            shift = octaves
            keyCredit = 1
        case let (.cents(given), .absolute):
            shift = given
            keyCredit = 1
        }

        var lines: [LineScore] = reference.lines.enumerated().map { LineScore(index: $0, startMs: $1.startMs, endMs: $1.endMs, text: $1.text, score: nil, notes: []) }
        var totalWeight = 0.0, totalScore = 0.0, coveredWeight = 0.0, allWeight = 0.0
        var lost = PointsLost()   // the notes' share, weighted sums until divided below
        var lineWeights = [Double](repeating: 0, count: lines.count), lineSums = [Double](repeating: 0, count: lines.count)
        var previous: MelodyNote?
        for n in reference.notes {
            defer { if n.cents != nil { previous = n } }
            var ns = NoteScore(note: n)
            let judged = n.cents != nil && n.kind != .freestyle && n.durationMs > 0
            let inside = take.covers(n.startMs, n.endMs)
            let weight = Double(n.durationMs) * (n.kind == .golden ? 2 : 1)
            if judged { allWeight += weight }
            if judged, let pitch = n.cents {
                let target = pitch + shift
                ns.targetCents = target
                if inside || wholeSong {
                    let s = noteScore(n, previous: previous, target: target, frames: frames, c, warp: take.warp, into: &ns)
                    ns.score = inside ? s : 0
                    if inside { coveredWeight += weight }
                    totalWeight += weight
                    totalScore += weight * (ns.score ?? 0)
                    // Coverage first, then pitch, then timing: 100·C·P·T split so the parts add up.
                    let cc = inside ? ns.coverageCredit ?? 0 : 0, pc = ns.pitchCredit ?? 0, tc = ns.timingCredit ?? 0
                    lost.coverage += weight * 100 * (1 - cc)
                    lost.pitch += weight * 100 * cc * (1 - pc)
                    lost.timing += weight * 100 * cc * pc * (1 - tc)
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
        // Free timing: a singer whose notes keep their proportions sings in a steady tempo, however
        // slow or fast; one who rushes some notes and drags others does not (see `tempoStability`).
        let stability = take.warp.map { Self.tempoStability(lines.flatMap(\.notes), warp: $0, c) }
        let keyFactor = 1 - c.keyWeight + c.keyWeight * keyCredit, movement = movementCredit(lines.flatMap(\.notes))
        let tempoFactor = 1 - c.tempoStabilityWeight + c.tempoStabilityWeight * (stability ?? 1)
        let core = noteMean * keyFactor * movement * tempoFactor
        let allNotes = lines.flatMap(\.notes)
        var dimensions = [NoteDimensions.intonation(allNotes, keyFactor: keyFactor, movement: movement),
                          NoteDimensions.rhythm(allNotes, tempoFactor: tempoFactor, timingWeight: c.timingWeight)]
        dimensions += VoiceDimensions.measure(take, reference: reference)
        dimensions.append(NoteDimensions.pitchRange(allNotes))
        let score = try weights.validated().combine(core: core, &dimensions)
        if totalWeight > 0 {
            lost.coverage /= totalWeight
            lost.pitch /= totalWeight
            lost.timing /= totalWeight
        } else {
            lost.coverage = 100   // no note judged: nothing was sung where the song is
        }
        lost.key = noteMean * (1 - keyFactor)
        lost.movement = noteMean * keyFactor * (1 - movement)
        lost.tempoStability = noteMean * keyFactor * movement * (1 - tempoFactor)
        for d in dimensions {
            switch d.dimension {
            case .vibrato: lost.vibrato = d.pointsLost
            case .voiceQuality: lost.voiceQuality = d.pointsLost
            case .dynamics: lost.dynamics = d.pointsLost
            case .pitchRange: lost.pitchRange = d.pointsLost
            case .intonation, .rhythm: break
            }
        }
        // The core's dimensions: the points their terms cost.
        for i in dimensions.indices {
            if dimensions[i].dimension == .intonation { dimensions[i].pointsLost = lost.pitch + lost.key + lost.movement }
            if dimensions[i].dimension == .rhythm { dimensions[i].pointsLost = lost.timing + lost.tempoStability }
        }
        var card = ScoreCard(rules: name, score: score, maxScore: 100, lines: lines, latencyMs: take.latencyMs,
                             keyShiftCents: shift, judgedShare: allWeight > 0 ? coveredWeight / allWeight : 0)
        card.tempoStability = stability
        card.pointsLost = lost
        card.dimensions = dimensions
        card.coreScore = core
        card.describe(take, reference: reference, frames: frames)
        card.explainWrongNotes(take, criterion: nil)
        return card
    }

    /// The key a take was sung in: the shift (cents, whole octaves included) that the most sung
    /// time agrees with, within `keyConfidenceCents`, and that share. The notes' errors are compared
    /// folded into one octave, so a singer a tritone away, whose errors fall either side of ±600,
    /// is one key, not two (a median of unfolded errors splits them); the octave is the weighted
    /// median of the agreeing notes' own. O(notes²), over a melody's few hundred notes.
    static func keyEstimate(_ notes: [(error: Double, weight: Double)]) -> (cents: Double, agreeingShare: Double) {
        let total = notes.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return (0, 0) }
        let window = KTVRulesConfiguration.keyConfidenceCents
        var best = (cents: 0.0, weight: -1.0)
        for candidate in notes {
            let c = octaveFolded(candidate.error)
            var weight = 0.0, sum = 0.0
            for n in notes {
                let d = octaveFolded(n.error - c)
                if abs(d) <= window { weight += n.weight; sum += n.weight * d }
            }
            if weight > best.weight + 1e-9 { best = (c + sum / max(weight, 1e-9), weight) }
        }
        // The octave: the agreeing notes' whole octaves, their weighted median.
        var octaves: [(Double, Double)] = []
        for n in notes where abs(octaveFolded(n.error - best.cents)) <= window {
            octaves.append((((n.error - best.cents) / 1200).rounded(), n.weight))
        }
        octaves.sort { $0.0 < $1.0 }
        var acc = 0.0, octave = 0.0
        for (o, w) in octaves {
            acc += w
            if acc >= best.weight / 2 { octave = o; break }
        }
        return (best.cents + 1200 * octave, best.weight / total)
    }

    /// One note, 0…100: coverage × pitch × (on-time share), filling in the note's figures.
    func noteScore(_ n: MelodyNote, previous: MelodyNote?, target: Double, frames: SongFrames, _ c: KTVRulesConfiguration,
                   warp: WarpSummary? = nil, into ns: inout NoteScore) -> Double {
        // The onset: the start of the on-pitch run that reaches the note, looked for within
        // `onsetZeroMs` either side of its start (an early or a late singer).
        let reach = Int(c.onsetZeroMs)
        var runStart: Double?, onset: Double?
        frames.forEach(in: n.startMs - reach, n.startMs + reach) { timeMs, cents in
            guard onset == nil else { return }
            let onPitch = cents.map { abs(Self.octaveFolded($0 - target)) <= c.onsetToleranceCents } ?? false
            if onPitch, timeMs >= Double(n.startMs) { onset = (runStart ?? timeMs) - Double(n.startMs) }
            runStart = onPitch ? (runStart ?? timeMs) : nil
        }
        // A run already under way before the note, on the previous note's pitch, is legato: the
        // onset cannot be seen, so it is not held against the singer.
        if let o = onset, o < 0, let previous, let p = previous.cents, abs(p - (n.cents ?? p)) <= c.onsetToleranceCents,
           Double(n.startMs - previous.endMs) < -o {
            onset = 0
            ns.legato = true
        }
        // Pitch and coverage are judged where the singer sang the note: a late singer's note is the
        // right note late (timing pays for that), not the previous note's tail.
        let shiftMs = Int((onset ?? 0).rounded())
        var total = 0, voiced = 0
        var errs: [Double] = []
        var timed: [(timeMs: Double, cents: Double)] = []
        frames.forEach(in: n.startMs + shiftMs, n.endMs + shiftMs) { timeMs, cents in
            total += 1
            if let cents {
                voiced += 1
                errs.append(cents - target)
                timed.append((timeMs, cents - target))
            }
        }
        ns.coverage = total > 0 ? Double(voiced) / Double(total) : 0
        ns.onsetMs = onset
        ns.coverageCredit = min(1, ns.coverage / c.fullCoverage)
        errs.sort()
        // The median first, then its whole octaves (folding each frame first would centre the
        // median of frames sung at random on the target).
        guard let plainMedian = Stats.median(errs) else { return 0 }
        ns.octaves = Int((plainMedian / 1200).rounded())
        let median = plainMedian - 1200 * Double(ns.octaves)
        ns.medianErrorCents = median
        let coverageCredit = min(1, ns.coverage / c.fullCoverage)
        // Held notes: how steadily (`NoteSteadiness`); folded into one octave, as the median is.
        ns.steadiness = NoteSteadiness.measure(timed.map { ($0.timeMs, Self.octaveFolded($0.cents - 1200 * Double(ns.octaves) - median) + median) })
        let steadyCredit = 1 - c.steadinessWeight * (1 - (ns.steadiness?.credit ?? 1))
        let pitchCredit = ramp(abs(median), full: c.fullCreditCents, zero: c.zeroCreditCents) * (ns.octaves == 0 ? 1 : c.octaveCredit) * steadyCredit
        var timingCredit = onset.map { ramp(abs($0), full: c.onsetGraceMs, zero: c.onsetZeroMs) } ?? 0
        // Free timing: the warp lines onsets up by construction; what is left to judge is rhythm, the
        // note's sung duration against its written one at the singer's own tempo.
        if let warp, let sungMs = warp.sungMs(from: n.startMs, to: n.endMs), n.durationMs > 0 {
            let ratio = max(1e-3, sungMs) / (Double(n.durationMs) * warp.tempoRatio)
            ns.onsetMs = nil
            ns.durationRatio = ratio
            timingCredit = ramp(abs(log2(ratio)), full: Self.rhythmFullLog2, zero: Self.rhythmZeroLog2)
        }
        ns.pitchCredit = pitchCredit
        ns.timingCredit = 1 - c.timingWeight + c.timingWeight * timingCredit
        return 100 * coverageCredit * pitchCredit * (1 - c.timingWeight + c.timingWeight * timingCredit)
    }

    /// Tempo stability, 0…1: exp(−max(0, σ − `tempoSpreadFloor`)/`tempoSpreadScale`), σ the spread
    /// of ln(duration ratio) over the notes sung (each note's sung duration against its written one
    /// at the singer's own tempo, so a uniformly slow singer has σ = 0). σ is the robust standard
    /// deviation, 1.4826 × the median absolute deviation (Rousseeuw & Croux 1993): a note the warp
    /// squeezed to nothing must not decide it. Notes that should last fewer than 4 warp steps at the
    /// singer's tempo are left out (their durations are measured to a step, ±25 % or worse; a note
    /// sung far shorter than written still counts), and the floor is the spread that step alone
    /// leaves on the rest. Fewer than 3 notes: 1 (nothing to judge).
    static func tempoStability(_ notes: [NoteScore], warp: WarpSummary, _ c: KTVRulesConfiguration) -> Double {
        let minWrittenMs = 4 * warp.stepMs
        let logs = notes.compactMap { n -> Double? in
            guard let r = n.durationRatio, r > 0, Double(n.note.durationMs) * warp.tempoRatio >= minWrittenMs else { return nil }
            return log(r)
        }.sorted()
        guard logs.count >= 3, let median = Stats.median(logs),
              let mad = Stats.median(logs.map { abs($0 - median) }.sorted()) else { return 1 }
        return exp(-max(0, 1.4826 * mad - Self.tempoSpreadFloor) / c.tempoSpreadScale)
    }

    /// The spread of ln(duration ratio) a steady singer still shows from the warp's step (one 30 ms
    /// step on a note of 300 ms is 0.1).
    static let tempoSpreadFloor = 0.1

    /// Whether the singer follows the melody's movement: the spread (mean absolute deviation) of the
    /// sung notes' pitches against the reference's, full credit from `movementShare` of it. A hum or
    /// a monotone scores a few notes that sit at its pitch, but it does not sing the tune. (A mean
    /// deviation, not an interquartile range: with a dozen notes in two clusters, one note sung an
    /// octave off moves the quartiles from one cluster to the other.) A reference whose notes
    /// deviate by less than half a semitone is not judged on this.
    func movementCredit(_ notes: [NoteScore]) -> Double {
        var sung: [Double] = [], reference: [Double] = []
        for n in notes where n.score != nil {
            guard let target = n.targetCents, let e = n.medianErrorCents else { continue }
            sung.append(target + e + 1200 * Double(n.octaves))
            reference.append(target)
        }
        func spread(_ v: [Double]) -> Double {
            guard let mean = Stats.mean(v) else { return 0 }
            return Stats.mean(v.map { abs($0 - mean) }) ?? 0
        }
        let refSpread = spread(reference)
        guard sung.count >= 4, refSpread >= 50 else { return 1 }
        return min(1, spread(sung) / refSpread / Self.movementShare)
    }

    /// Free timing's rhythm: a note sung within 2^0.3 (±23 %) of its written length at the singer's
    /// tempo is in time; at twice or half it gets no rhythm credit (linear in log2 between).
    static let rhythmFullLog2 = 0.3
    static let rhythmZeroLog2 = 1.0

    /// The share of the melody's spread a singer must cover for full movement credit.
    static let movementShare = 0.75

    /// `cents` moved by whole octaves into −600…600.
    static func octaveFolded(_ cents: Double) -> Double { cents - 1200 * (cents / 1200).rounded() }

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
        let lo = timesMs.partitionPoint { $0 < startMs }
        var end = lo
        while end < timesMs.count, timesMs[end] < endMs { end += 1 }
        return lo..<end
    }

    /// The take's key against the notes: the median of (sung − note) over every voiced frame inside
    /// a pitched note, cents; nil when no such frame was voiced.
    func medianError(against notes: [MelodyNote]) -> Double? { errors(against: notes).median }

    /// The errors behind the key: their median over every voiced frame inside a pitched note, and
    /// each sung note's own median with its duration (ms) as weight.
    func errors(against notes: [MelodyNote]) -> (median: Double?, perNote: [(error: Double, weight: Double)]) {
        var all: [Double] = []
        var perNote: [(error: Double, weight: Double)] = []
        for n in notes {
            guard let target = n.cents else { continue }
            var own: [Double] = []
            forEach(in: n.startMs, n.endMs) { _, cents in if let cents { own.append(cents - target) } }
            all += own
            if let m = Stats.median(selecting: &own) { perNote.append((m, Double(n.durationMs))) }
        }
        return (Stats.median(selecting: &all), perNote)
    }
}
