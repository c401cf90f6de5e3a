import Foundation
import KTVCore
import KTVLyrics

// Pitch contour → notes: for a reference given as a pitch track (a reference singer's, a piano
// played before a sing-back exam, Agora's binary contour).
//
// In the spirit of the note segmentation step of Mauch et al., "Computer-aided melody note
// transcription using the Tony software", SMC 2015 (pitch-change and voicing boundaries), far
// simpler, since a reference is one clean voice:
// 1. Runs of voiced frames are cut where the pitch moves away from the run's median (over its
//    first `medianFrames` frames) by more than `jumpCents` (a new note) and where a word starts,
//    when words are known.
// 2. The tracker's own artefacts are cleaned up, because every one of them would be judged as a
//    note: neighbouring runs (touching, no word start between them) within `mergeCents` of the
//    note's first piece are one note whose pitch drifted (a piano note's decay, a singer's sag); a
//    stretch of touching runs each shorter than `transitionMs` is the glide between two notes, or a
//    decay's tail, and its time goes to the notes it touches (split at its middle when it touches
//    two), without its pitch; then neighbours are merged again, for a note a glitch broke.
// 3. Runs shorter than `minNoteMs` left on their own are dropped.
// Each step is one pass over the runs.
// A note's pitch is the median of its own frames (vibrato and a glide in do not move it).

/// Turns a pitch contour into notes (see the comment at the top of the file).
public struct ContourSegmenter: Sendable, Equatable {
    public enum Spec {
        public static let jumpCents = Parameter<Double>("jumpCents", unit: "cents", range: 10...600, default: 70,
            "A frame this far from its run's median starts a new note.")
        public static let mergeCents = Parameter<Double>("mergeCents", unit: "cents", range: 0...300, default: 50,
            "Touching runs whose pitches differ by at most this are one note (0: never merged).")
        public static let transitionMs = Parameter<Int>("transitionMs", unit: "ms", range: 0...500, default: 60,
            "A run shorter than this touching another note is a glide or a decay's tail: its time goes to its neighbours (0: kept).")
        public static let minNoteMs = Parameter<Int>("minNoteMs", unit: "ms", range: 1...2000, default: 60,
            "A run shorter than this on its own is not a note.")
        public static let all: [ParameterInfo] = [jumpCents.info, mergeCents.info, transitionMs.info, minNoteMs.info]
    }

    /// How many of a run's first frames its running median is taken over.
    static let medianFrames = 2048

    public var jumpCents = Spec.jumpCents.defaultValue
    public var mergeCents = Spec.mergeCents.defaultValue
    public var transitionMs = Spec.transitionMs.defaultValue
    public var minNoteMs = Spec.minNoteMs.defaultValue

    public init() {}

    public func validated() throws(ScoreError) -> ContourSegmenter {
        do {
            try Spec.jumpCents.check(jumpCents)
            try Spec.mergeCents.check(mergeCents)
            try Spec.transitionMs.check(transitionMs)
            try Spec.minNoteMs.check(minNoteMs)
        } catch { throw ScoreError(error) }
        return self
    }

    /// A run of voiced frames: its time span and its frames' cents.
    struct Run {
        var startMs: Double
        var endMs: Double
        var cents: [Double]
        /// A word starts where this run starts: it is never merged into the run before.
        var wordStart: Bool
        /// The median of the run's own frames (its first `medianFrames`) when it was found; a merged
        /// note keeps its first piece's.
        var pitch = 0.0
        var durationMs: Double { endMs - startMs }
    }

    public func notes(_ contour: PitchContour, words: [LyricWord] = []) -> [MelodyNote] {
        let runs = cleaned(runs(contour, words: words), hopMs: hopMs(contour))
        return runs.compactMap { run in
            guard Int(run.durationMs.rounded()) >= minNoteMs, let median = Stats.median(run.cents.sorted()) else { return nil }
            let mid = Int(((run.startMs + run.endMs) / 2).rounded())
            let word = words.first { $0.startMs <= mid && mid < $0.endMs }?.text ?? ""
            return MelodyNote(startMs: Int(run.startMs.rounded()), durationMs: Int(run.durationMs.rounded()), cents: median, word: word)
        }
    }

    func hopMs(_ contour: PitchContour) -> Double {
        let timesS = contour.timesS
        return timesS.count > 1 ? (timesS[timesS.count - 1] - timesS[0]) * 1000 / Double(timesS.count - 1) : 10
    }

    /// Step 1: voiced runs cut at pitch jumps and word starts.
    func runs(_ contour: PitchContour, words: [LyricWord]) -> [Run] {
        let timesMs = contour.timesS.map { $0 * 1000 }
        let hopMs = hopMs(contour)
        let boundaries = Set(words.map(\.startMs))
        var runs: [Run] = []
        var sorted: [Double] = []  // the current run's cents, sorted (one insertion a frame)
        var current: Run?
        func close(at endMs: Double) {
            if var run = current {
                run.endMs = endMs
                run.pitch = Stats.median(sorted) ?? 0
                runs.append(run)
            }
            current = nil
            sorted = []
        }
        var lastBoundary = -1
        for (k, t) in timesMs.enumerated() {
            guard let f0 = contour.f0Hz[k] else {
                close(at: t)
                continue
            }
            let c = ReferenceMelody.cents(hz: f0)
            // A word starting in this frame ends the note before it.
            let boundary = boundaries.first { Double($0) <= t && Double($0) > t - hopMs && $0 != lastBoundary }
            if let b = boundary { lastBoundary = b }
            // Against the run's median, which vibrato and a glide in do not move.
            if current != nil, abs(c - (Stats.median(sorted) ?? c)) > jumpCents || boundary != nil { close(at: t) }
            if current == nil { current = Run(startMs: t, endMs: t, cents: [], wordStart: boundary != nil) }
            current?.cents.append(c)
            // The median of a run's first `medianFrames` frames stands for it: a long steady run
            // costs a sorted insertion per frame only that far.
            guard sorted.count < Self.medianFrames else { continue }
            sorted.insert(c, at: sorted.partitionPoint { $0 < c })
        }
        close(at: (timesMs.last ?? 0) + hopMs)
        return runs
    }

    /// Step 2: drifting notes merged, glides and decay tails given to their neighbours.
    func cleaned(_ input: [Run], hopMs: Double) -> [Run] {
        // Runs touch when no more than two frames of silence lie between them.
        func touching(_ a: Run, _ b: Run) -> Bool { b.startMs - a.endMs <= 2 * hopMs + 1e-9 && !b.wordStart }
        // Merging: each run against the first piece of the note built so far (so a slow drift
        // cannot chain far), in one pass.
        func merged(_ runs: [Run]) -> [Run] {
            var out: [Run] = []
            for run in runs {
                if let last = out.last, touching(last, run), abs(run.pitch - last.pitch) <= mergeCents {
                    out[out.count - 1].endMs = run.endMs
                    out[out.count - 1].cents += run.cents
                } else {
                    out.append(run)
                }
            }
            return out
        }
        let runs = merged(input)
        guard transitionMs > 0 else { return runs }
        // Transitions, in one pass: a stretch of touching pieces, each shorter than `transitionMs`,
        // between two notes is the glide from one to the other (split at its middle); touching only
        // the note before it, a decay's tail (that note extends over it); only the note after it, a
        // glide in. A stretch touching no note is left as it is.
        let shortMs = Double(transitionMs)
        var out: [Run] = []
        var i = 0
        while i < runs.count {
            guard runs[i].durationMs < shortMs else {
                out.append(runs[i])
                i += 1
                continue
            }
            var j = i
            while j + 1 < runs.count, runs[j + 1].durationMs < shortMs, touching(runs[j], runs[j + 1]) { j += 1 }
            let before = out.last.map { $0.durationMs >= shortMs && touching($0, runs[i]) } ?? false
            let after = j + 1 < runs.count && touching(runs[j], runs[j + 1])  // then runs[j + 1] is a note
            let start = runs[i].startMs, end = runs[j].endMs
            switch (before, after) {
            case (true, true):
                out[out.count - 1].endMs = (start + end) / 2
                out.append(runs[j + 1])
                out[out.count - 1].startMs = (start + end) / 2
                j += 1
            case (true, false): out[out.count - 1].endMs = end
            case (false, true):
                out.append(runs[j + 1])
                out[out.count - 1].startMs = start
                j += 1
            case (false, false): out += runs[i...j]
            }
            i = j + 1
        }
        // A note the tracker broke with a glitch is whole again.
        return merged(out)
    }
}
