import Foundation
import KTVCore

// Agora's karaoke scoring, replayed exactly: the numbers Agora's Android component gives for the
// same pitch samples. Source: AgoraIO-Community/LyricsView, release 3.0.1 (ecb726d),
// `karaoke_view_ex`: `internal/ScoringMachine.java` (setPitch, findRefPitchByTime, isNewLine,
// updateScoreForMostRecentLine, whenDraggingHappen, mayBeFixLyricModel),
// `internal/scoring/DefaultScoringAlgorithm.java` (getLineScore) and `cpp/Algorithm.c`
// (PTS_version 20231021001: pitchToToneC, calculatedScoreC, handlePitchC); the same C core is in
// LrcView-iOS. Notes and golden data: shared/agora/NOTES.md §2.1-2.5, §2.8-2.9.
//
// The player reports its progress every `progressIntervalMs`; each pitch sample is judged at the
// last progress value (Agora ignores the sample's own time). A sample inside a tone stores a frame
// score: the sung pitch folded by octaves to within 6 semitones of the tone, then
// clamp(100·(1 + L/50)·(1 − L·d/100 + O/100)) for d semitones off. The current line is scored at
// the first sample after its end; the first line is current from the start, a later one only once
// a sample lands in its last tone (a line that never gets one is never scored, and its samples
// spill into the next scored line). A line's score is Int(mean of its tones' mean frame scores),
// unpitched and unsung tones counting 0. The total is the plain sum of line scores.
//
// Where the input differs from Android's: KTVLyrics rounds XML times to the ms where Android
// truncates them through a float (1 ms low for ~2% of them; the golden scores do not move, NOTES
// §1.4), and keeps iOS's `<overlap>` sentences, which Android skips.

/// Settings of Agora's rules, declared once.
public struct AgoraRulesConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let level = Parameter<Int>("level", range: 1...100, default: 15,
            "Agora's scoreLevel: how fast a frame's score falls with its distance from the note; smaller is more lenient (Agora's KTV scene uses 10, 15, 25).")
        // Agora's API takes −100…100, but the C core clamps a negative offset to 0: only 0…100 does anything.
        public static let compensationOffset = Parameter<Int>("compensationOffset", range: 0...100, default: 0,
            "Agora's scoreCompensationOffset: added to every frame's match (Agora accepts −100…100 but treats a negative offset as 0).")
        public static let progressIntervalMs = Parameter<Int>("progressIntervalMs", unit: "ms", range: 1...1000, default: 20,
            "Cadence of the player's progress callback: each pitch sample is judged at the last progress value at or before it.")
        public static let all: [ParameterInfo] = [level.info, compensationOffset.info, progressIntervalMs.info]
    }

    public var level = Spec.level.defaultValue
    public var compensationOffset = Spec.compensationOffset.defaultValue
    public var progressIntervalMs = Spec.progressIntervalMs.defaultValue

    public init(level: Int = Spec.level.defaultValue, compensationOffset: Int = Spec.compensationOffset.defaultValue,
                progressIntervalMs: Int = Spec.progressIntervalMs.defaultValue) {
        self.level = level
        self.compensationOffset = compensationOffset
        self.progressIntervalMs = progressIntervalMs
    }

    public func validated() throws(ScoreError) -> AgoraRulesConfiguration {
        do {
            try Spec.level.check(level)
            try Spec.compensationOffset.check(compensationOffset)
            try Spec.progressIntervalMs.check(progressIntervalMs)
        } catch { throw ScoreError(error) }
        return self
    }
}

/// Agora's rules (see the comment at the top of the file).
public struct AgoraRules: ScoringRules {
    public let name = "agora"
    public var configuration: AgoraRulesConfiguration

    public init(configuration: AgoraRulesConfiguration) { self.configuration = configuration }

    public init(level: Int = AgoraRulesConfiguration.Spec.level.defaultValue,
                compensationOffset: Int = AgoraRulesConfiguration.Spec.compensationOffset.defaultValue,
                progressIntervalMs: Int = AgoraRulesConfiguration.Spec.progressIntervalMs.defaultValue) {
        configuration = AgoraRulesConfiguration(level: level, compensationOffset: compensationOffset, progressIntervalMs: progressIntervalMs)
    }

    public func judge(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> ScoreCard {
        let replay = try self.replay(take, against: reference)
        let scores = replay.referenceLineScores
        var lines = reference.lines.enumerated().map { i, l in
            var line = LineScore(index: i, startMs: l.startMs, endMs: l.endMs, text: l.text, score: Double(scores[i] ?? 0), notes: [])
            // Agora scores it from the silence after the take: counted in its sum, but not judged.
            line.outsideRecording = l.endMs < take.coveredMs.lowerBound || l.startMs > take.coveredMs.upperBound
            return line
        }
        for (k, n) in replay.notes.enumerated() {
            var ns = NoteScore(note: n, targetCents: n.cents, coverage: replay.landed[k] > 0 ? Double(replay.voiced[k]) / Double(replay.landed[k]) : 0,
                               score: replay.toneScores[k].map(Double.init))
            let errors = replay.errorsCents[k].sorted()
            ns.medianErrorCents = Stats.median(errors)
            lines[n.line].notes.append(ns)
        }
        let pitched = reference.notes.filter { $0.cents != nil && $0.durationMs > 0 }
        let covered = pitched.filter { take.coveredMs.contains($0.startMs) && take.coveredMs.contains($0.endMs) }
        let allMs = pitched.reduce(0) { $0 + $1.durationMs }
        var card = ScoreCard(rules: name, score: Double(scores.values.reduce(0, +)), maxScore: 100 * Double(reference.lines.count),
                             lines: lines, latencyMs: take.latencyMs,
                             judgedShare: allMs > 0 ? Double(covered.reduce(0) { $0 + $1.durationMs }) / Double(allMs) : 0)
        card.explainWrongNotes(take, criterion: .agora(level: configuration.level, compensationOffset: configuration.compensationOffset))
        return card
    }

    /// What Agora's machine ends with after the take and the trailing silence.
    func replay(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> AgoraMachine {
        let c = try configuration.validated()
        var machine = AgoraMachine(notes: Self.overlapRepaired(reference.notes.filter { reference.lines.indices.contains($0.line) }),
                                   lineCount: reference.lines.count, level: c.level, offset: c.compensationOffset)
        let timesMs = try Self.songTimesMs(take.contour)
        for (k, t) in timesMs.enumerated() {
            machine.setPitch(Self.agoraHz(take.contour.f0Hz[k]), progressMs: Self.progressStamp(songMs: t, intervalMs: c.progressIntervalMs))
        }
        // The singer stops, the song does not: a real app (and Agora's golden harness) keeps feeding
        // 0 Hz at the same cadence until the song's end + 100 ms, which scores the last lines.
        let intervalMs = max(1, Self.medianStepMs(timesMs) ?? Double(c.progressIntervalMs))
        let lastMs = timesMs.last ?? 0
        // Before the song starts every sample is judged at 0 and only resets the machine: start at 0.
        var k = max(1, (-lastMs / intervalMs).rounded(.up))
        while lastMs + k * intervalMs < Double(machine.lyricsEndMs + 100) {
            machine.setPitch(0, progressMs: Self.progressStamp(songMs: lastMs + k * intervalMs, intervalMs: c.progressIntervalMs))
            k += 1
        }
        return machine
    }

    /// The take's song times in ms, rounded to the µs: decimal times (0.35 s) are not exact in
    /// binary, and a tick boundary must not move by 1 ulp.
    static func songTimesMs(_ contour: PitchContour) throws(ScoreError) -> [Double] {
        guard contour.f0Hz.count == contour.timesS.count else {
            throw ScoreError(ParameterError(name: "take.f0Hz.count", value: String(contour.f0Hz.count), allowed: "the number of times (\(contour.timesS.count))"))
        }
        var out: [Double] = []
        out.reserveCapacity(contour.count)
        for (i, t) in contour.timesS.enumerated() {
            guard t.isFinite, abs(t) < 1e9 else {
                throw ScoreError(ParameterError(name: "take.timesS[\(i)]", value: String(t), allowed: "finite, within ±10⁹ s"))
            }
            out.append((t * 1_000_000).rounded() / 1000)
        }
        return out
    }

    /// The progress value a sample at `songMs` is judged at: the last tick at or before it (the
    /// player sets its progress before the pitch arrives); 0 before the first tick.
    static func progressStamp(songMs: Double, intervalMs: Int) -> Int {
        songMs <= 0 ? 0 : Int((songMs / Double(intervalMs)).rounded(.down)) * intervalMs
    }

    /// The take's usual sample step (the median of its positive steps), ms.
    static func medianStepMs(_ timesMs: [Double]) -> Double? {
        let steps = zip(timesMs.dropFirst(), timesMs).map { $0 - $1 }.filter { $0 > 0 }.sorted()
        return Stats.median(steps)
    }

    /// What Agora's `setPitch(float)` receives: float Hz, 0 when unvoiced.
    static func agoraHz(_ hz: Double?) -> Float {
        guard let hz, hz.isFinite, hz > 0 else { return 0 }
        return Float(hz)
    }

    /// A tone's pitch as Agora holds it: whole Hz (Android parses `pitch` as an int). An XML pitch comes
    /// back from cents within rounding error of its integer; any other is truncated, as Android's
    /// `(int)` does. Unpitched is 0.
    static func toneHz(cents: Double?) -> Float {
        guard let cents else { return 0 }
        let hz = ReferenceMelody.hz(cents: cents)
        guard hz.isFinite, hz > 0, hz < 1e9 else { return 0 }
        let whole = hz.rounded()
        return Float(abs(hz - whole) < 1e-6 ? whole : hz.rounded(.towardZero))
    }

    /// Agora's overlap repair (`mayBeFixLyricModel`): a line's leading notes that start before the
    /// previous line's last note ends start at that end (an end before it moves up to it); the first
    /// note that does not overlap stops it. Notes keep their order; overlaps inside a line stay.
    static func overlapRepaired(_ notes: [MelodyNote]) -> [MelodyNote] {
        var out = notes
        let byLine = Dictionary(grouping: out.indices, by: { out[$0].line })
        var previousEndMs: Int?
        for line in byLine.keys.sorted() {
            let members = byLine[line] ?? []
            if let end = previousEndMs {
                for k in members {
                    guard out[k].startMs < end else { break }
                    let oldEnd = out[k].endMs
                    out[k].startMs = end
                    out[k].durationMs = max(0, oldEnd - end)
                }
            }
            previousEndMs = members.last.map { out[$0].endMs }
        }
        return out
    }

    // MARK: - Algorithm.c, with its float and double steps kept (the golden values are floats)

    /// Semitones above 55 Hz, floored at 0 (`pitchToToneC`).
    static func tone(hz: Double) -> Double {
        max(0, log(hz / 55 + 1e-6) / log(2.0)) * 12
    }

    /// One frame's score, 0…100 (`calculatedScoreC`).
    static func frameScore(voiceHz: Double, refHz: Double, level: Int, offset: Int) -> Float {
        guard voiceHz > 0, refHz > 0 else { return 0 }
        let l = min(100, max(1, level)), o = min(100, max(0, offset))
        let distance = abs(tone(hz: voiceHz) - tone(hz: refHz))
        var match = Float(1 - Double(Float(l) / 100) * distance + Double(Float(o) / 100))
        let rate: Float = 1 + Float(l) / 50
        match = match * 100 * rate
        return min(100, max(0, match))
    }

    /// The sung pitch moved by octaves (at most 11) toward the reference until within 6 semitones
    /// (`handlePitchC`, "octave pitch compensation v0.2"); 0 when either is not a pitch.
    static func octaveFolded(voiceHz: Double, refHz: Double) -> Double {
        guard voiceHz > 0, refHz > 0 else { return 0 }
        let target = tone(hz: refHz)
        var v = voiceHz
        if abs(tone(hz: v) - target) <= 6 { return v }
        let up = v < refHz
        for _ in 0..<11 {
            v = up ? v * 2 : v / 2
            if abs(tone(hz: v) - target) <= 6 { return v }
        }
        return v
    }
}

/// Android's `ScoringMachine` with internal scoring and its `DefaultScoringAlgorithm`: the state
/// that `setPitch` walks. Lines are the reference's lines, each its notes in order.
struct AgoraMachine {
    struct Tone {
        var startMs: Int, endMs: Int
        var hz: Float
        var note: Int
        func contains(_ t: Int) -> Bool { startMs <= t && t <= endMs }
    }

    let notes: [MelodyNote]
    /// Tones per line, for the reference's lines that have notes (Agora's lines always have tones).
    let lines: [[Tone]]
    /// The reference's index of each line.
    let referenceLines: [Int]
    let level: Int, offset: Int
    /// `mTimestampOfFirstRefPitch`: no line is scored before the first tone.
    let firstToneMs: Int
    /// `mEndTimeOfThisLyrics`: the last line's end.
    let lyricsEndMs: Int

    /// `mDeltaOfUpdate`: the last step between progress values (20 when irregular).
    var deltaMs = 20
    /// `mCurrentPitchProgress`.
    var progressMs = 0
    /// `mIndexOfCurrentLine`: moves to a line only when a sample lands in its last tone.
    var currentLine = 0
    var zeroCount = 0
    /// `mPitchesForLine`, in insertion order: a frame score, or nil for Agora's −1 marker (a sample
    /// that landed in a tone but stored no score).
    var pending: [(progressMs: Int, score: Float?)] = []
    /// `mScoreForEachLine`, by index into `lines`.
    var lineScores: [Int: Int] = [:]
    /// Per note: the tone score its line's mean used, while that line's score stands.
    var toneScores: [Float?]
    /// Per note, for the report: samples that landed in it, how many were voiced, and the folded
    /// sung pitch minus the note, cents.
    var landed: [Int], voiced: [Int]
    var errorsCents: [[Double]]

    init(notes: [MelodyNote], lineCount: Int, level: Int, offset: Int) {
        self.notes = notes
        var tones = [[Tone]](repeating: [], count: lineCount)
        for (k, n) in notes.enumerated() where tones.indices.contains(n.line) {
            tones[n.line].append(Tone(startMs: n.startMs, endMs: n.endMs, hz: AgoraRules.toneHz(cents: n.cents), note: k))
        }
        referenceLines = tones.indices.filter { !tones[$0].isEmpty }
        lines = referenceLines.map { tones[$0] }
        self.level = level
        self.offset = offset
        firstToneMs = lines.first?.first?.startMs ?? 0
        lyricsEndMs = lines.last?.last?.endMs ?? 0
        toneScores = Array(repeating: nil, count: notes.count)
        landed = Array(repeating: 0, count: notes.count)
        voiced = Array(repeating: 0, count: notes.count)
        errorsCents = Array(repeating: [], count: notes.count)
    }

    /// Line scores by the reference's line index.
    var referenceLineScores: [Int: Int] {
        Dictionary(uniqueKeysWithValues: lineScores.map { (referenceLines[$0.key], $0.value) })
    }

    func startMs(_ line: Int) -> Int { lines[line].first?.startMs ?? 0 }
    func endMs(_ line: Int) -> Int { lines[line].last?.endMs ?? 0 }

    /// `setPitch(speakerPitch, progressInMs)` with internal scoring: `hz` judged at `progressMs`.
    mutating func setPitch(_ hz: Float, progressMs t: Int) {
        if t > 0 {
            deltaMs = t - progressMs
            if deltaMs > 100 || deltaMs < 0 { deltaMs = 20 }
        }
        if t <= 0 {
            restart()
            lineScores.removeAll()
            toneScores = toneScores.map { _ in nil }
        }
        if t < progressMs { dragged(to: t) }
        progressMs = t

        // findRefPitchByTime: the first line spanning t, then its first tone holding t.
        var refHz: Float = -1
        var hit: Tone?
        var endsLine = -1
        if let i = lines.indices.first(where: { startMs($0) <= t && t <= endMs($0) }),
           let j = lines[i].firstIndex(where: { $0.contains(t) }) {
            hit = lines[i][j]
            refHz = lines[i][j].hz
            if j == lines[i].count - 1 { endsLine = i }
            store(t, nil)
        }
        // isNewLine: the current line has ended and is not scored yet. (Its branch for a current index
        // past the lines cannot run: the index is always a line's.)
        let newLine = lines.indices.contains(currentLine) && t > endMs(currentLine) && lineScores[currentLine] == nil
        let finished = currentLine
        if endsLine != -1 { currentLine = endsLine }

        if let hit {
            landed[hit.note] += 1
            if hz != 0 { voiced[hit.note] += 1 }
        }
        // Zeros never store a score; the count of consecutive zeros only decides when Agora's UI resets.
        if hz == 0 {
            zeroCount += 1
            if zeroCount < 10 {
                scoreLine(at: t, newLine, finished)
                return
            }
        } else {
            zeroCount = 0
        }
        if refHz <= 0 || zeroCount >= 10 {
            zeroCount = 0
            scoreLine(at: t, newLine, finished)
            return
        }
        scoreLine(at: t, newLine, finished)
        let folded = Float(AgoraRules.octaveFolded(voiceHz: Double(hz), refHz: Double(refHz)))
        store(t, AgoraRules.frameScore(voiceHz: Double(folded), refHz: Double(refHz), level: level, offset: offset))
        if let hit, let cents = notes[hit.note].cents {
            errorsCents[hit.note].append(ReferenceMelody.cents(hz: Double(folded)) - cents)
        }
    }

    /// `mPitchesForLine.put`: a key already there keeps its place and takes the new value. Keys never
    /// decrease between clears, so only the last can match.
    mutating func store(_ t: Int, _ score: Float?) {
        if let last = pending.last, last.progressMs == t {
            pending[pending.count - 1].score = score
        } else {
            pending.append((t, score))
        }
    }

    /// `minorReset`.
    mutating func restart() {
        progressMs = 0
        currentLine = 0
        pending.removeAll()
    }

    /// `whenDraggingHappen`: progress went back; lines starting at or after it lose their scores.
    mutating func dragged(to t: Int) {
        restart()
        for i in lines.indices where t <= startMs(i) {
            lineScores[i] = nil
            for tone in lines[i] { toneScores[tone.note] = nil }
        }
    }

    /// `updateScoreForMostRecentLine`.
    mutating func scoreLine(at t: Int, _ newLine: Bool, _ line: Int) {
        guard newLine, t >= firstToneMs, t <= lyricsEndMs + 2 * deltaMs else { return }
        lineScores[line] = lineScore(line)
    }

    /// `getLineScore`: the stored samples, in order, are dealt to the line's tones in order; a sample
    /// outside the tone at hand closes it (its mean, or 0) and moves on, so tones after the last
    /// sample drop out of the mean, and a sample from an earlier line closes every tone at 0. The
    /// stored samples are used up.
    mutating func lineScore(_ line: Int) -> Int {
        let tones = lines[line]
        // Java keeps tone scores in a HashMap keyed by the tone's value: equal tones share one entry.
        var entries: [(key: ToneKey, score: Float)] = []
        var entryOfTone: [(tone: Int, entry: Int)] = []
        func close(_ index: Int, _ score: Float) {
            let key = ToneKey(tones[index], word: notes[tones[index].note].word)
            if let e = entries.firstIndex(where: { $0.key == key }) {
                entries[e].score = score
                entryOfTone.append((index, e))
            } else {
                entries.append((key, score))
                entryOfTone.append((index, entries.count - 1))
            }
        }
        var toneIndex = 0, total: Float = 0, count = 0
        for (t, score) in pending {
            var inTone = false
            while toneIndex < tones.count {
                if tones[toneIndex].contains(t) { inTone = true; break }
                close(toneIndex, count > 0 ? total / Float(count) : 0)
                toneIndex += 1
                total = 0
                count = 0
            }
            if inTone, let score {
                total += score
                count += 1
            }
        }
        pending.removeAll()
        if toneIndex < tones.count { close(toneIndex, count > 0 ? total / Float(count) : 0) }
        for tone in tones { toneScores[tone.note] = nil }
        for (tone, entry) in entryOfTone { toneScores[tones[tone].note] = entries[entry].score }
        guard !entries.isEmpty else { return 0 }
        // Java sums in HashMap order, which it does not define; tone order here.
        let sum = entries.reduce(Float(0)) { $0 + $1.score }
        return Int(sum / Float(entries.count))
    }

    /// What Java's `Tone.equals` compares (its `lang` is not in the note model).
    struct ToneKey: Equatable {
        var startMs: Int, endMs: Int, hz: Float, word: String
        init(_ tone: Tone, word: String) {
            startMs = tone.startMs
            endMs = tone.endMs
            hz = tone.hz
            self.word = word
        }
    }
}
