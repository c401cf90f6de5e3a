import Foundation
import KTVCore
import KTVLyrics

/// Turns a pitch contour (a reference singer's, or Agora's binary contour) into notes: runs of
/// voiced frames, cut where the pitch moves away from the run's median by more than `jumpCents`
/// (a new note) and at word boundaries when words are known; runs shorter than `minNoteMs` are
/// dropped. A note's pitch is the median of its frames. In the spirit of the note segmentation
/// step of Mauch et al., "Computer-aided melody note transcription using the Tony software",
/// SMC 2015 (pitch-change and voicing boundaries), far simpler: a reference is a clean voice.
public struct ContourSegmenter: Sendable {
    public var jumpCents = 70.0
    public var minNoteMs = 60

    public init() {}

    public func notes(_ contour: PitchContour, words: [LyricWord] = []) -> [MelodyNote] {
        let timesMs = contour.timesS.map { $0 * 1000 }
        let cents = contour.f0Hz.map { $0.map { ReferenceMelody.cents(hz: $0) } }
        let hopMs = timesMs.count > 1 ? (timesMs[timesMs.count - 1] - timesMs[0]) / Double(timesMs.count - 1) : 10
        let boundaries = Set(words.map(\.startMs))
        var notes: [MelodyNote] = []
        var run: [Double] = []  // the current run's cents, sorted
        var runStart = 0.0
        func close(at endMs: Double) {
            defer { run = [] }
            guard Int((endMs - runStart).rounded()) >= minNoteMs else { return }
            guard let median = Stats.median(run) else { return }
            let mid = Int(((runStart + endMs) / 2).rounded())
            let word = words.first { $0.startMs <= mid && mid < $0.endMs }?.text ?? ""
            notes.append(MelodyNote(startMs: Int(runStart.rounded()), durationMs: Int((endMs - runStart).rounded()), cents: median, word: word))
        }
        var lastBoundary = -1
        for (k, t) in timesMs.enumerated() {
            guard let c = cents[k] else {
                if !run.isEmpty { close(at: t) }
                continue
            }
            // A word starting in this frame ends the note before it.
            let boundary = boundaries.first { Double($0) <= t && Double($0) > t - hopMs && $0 != lastBoundary }
            if let b = boundary { lastBoundary = b }
            // Against the run's median (kept sorted: one insertion a frame), which vibrato and a glide in do not move.
            if !run.isEmpty, abs(c - (Stats.median(run) ?? c)) > jumpCents || boundary != nil { close(at: t) }
            if run.isEmpty { runStart = t }
            var lo = 0, hi = run.count
            while lo < hi { let mid = (lo + hi) / 2; if run[mid] < c { lo = mid + 1 } else { hi = mid } }
            run.insert(c, at: lo)
        }
        if !run.isEmpty { close(at: (timesMs.last ?? 0) + hopMs) }
        return notes
    }
}
