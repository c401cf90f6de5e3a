import Foundation
import KTVCore

// How a note is held, beyond its median pitch: a scoop into it, a drift across it, an irregular
// wobble on it. A teacher hears these where a median hears nothing.
//
// Reference: the note-internal pitch descriptors of singing assessment, e.g. C. Gupta, H. Li, Y. Wang,
// "Automatic leaderboard: evaluation of singing quality without a standard reference", IEEE/ACM TASLP
// 2020 (pitch stability inside notes), and the attack-sustain-release segmentation of notes of
// E. Gómez et al. (the sustain as the part that carries the perceived pitch). Per sung note of at
// least `minNoteMs`:
// - the stable part: the note without its first quarter (at most 150 ms) and its last 15 %;
// - scoop: the median error of the first 80 ms sung against the stable part's median (negative:
//   approached from below);
// - drift: the least-squares slope over the stable part, times its length (cents across the note);
// - wobble: the robust spread (1.4826 × MAD) of the stable part around that line, times
//   1 − the regularity of its oscillation (a regular vibrato is not a wobble: it is judged as vibrato);
// - credit: 1 up to `fullCents`, 0 from `zeroCents` of the worst of |drift|, wobble and |scoop|/2.

/// How one note was held.
public struct NoteSteadiness: Sendable, Equatable {
    public var scoopCents: Double
    public var driftCents: Double
    public var wobbleCents: Double
    /// 0…1.
    public var credit: Double

    /// Notes shorter than this are not judged on steadiness, ms.
    static let minNoteMs = 250.0
    /// A scoop of this size or more is named, cents.
    static let scoopCents = 50.0
    static let fullCents = 30.0
    static let zeroCents = 150.0

    /// The steadiness of a note from its voiced frames as (time ms, error cents), in time order; nil
    /// when the note is too short or too sparsely voiced.
    static func measure(_ frames: [(timeMs: Double, cents: Double)]) -> NoteSteadiness? {
        guard frames.count >= 15, let first = frames.first?.timeMs, let last = frames.last?.timeMs,
              last - first >= minNoteMs else { return nil }
        let length = last - first
        let stableFrom = first + min(0.25 * length, 150), stableTo = last - 0.15 * length
        let stable = frames.filter { $0.timeMs >= stableFrom && $0.timeMs <= stableTo }
        guard stable.count >= 8 else { return nil }
        var stableCents = stable.map(\.cents)
        let stableMedian = Stats.median(selecting: &stableCents) ?? 0
        var attack = frames.prefix { $0.timeMs < first + 80 }.map(\.cents)
        let scoop = (Stats.median(selecting: &attack) ?? stableMedian) - stableMedian
        // Least squares over the stable part (a flat line when every frame has one time).
        let n = Double(stable.count)
        let line = Stats.linearFit(stable.map(\.timeMs), stable.map(\.cents)) ?? (Stats.mean(stable.map(\.cents)) ?? 0, 0)
        let drift = line.slope * (stable[stable.count - 1].timeMs - stable[0].timeMs)
        let residual = stable.map { $0.cents - (line.intercept + line.slope * $0.timeMs) }
        var work = residual
        let med = Stats.median(selecting: &work) ?? 0
        for k in work.indices { work[k] = abs(residual[k] - med) }
        let mad = Stats.median(selecting: &work) ?? 0
        let hopS = (stable[stable.count - 1].timeMs - stable[0].timeMs) / 1000 / max(1, n - 1)
        let regularity = VibratoMeasure.oscillation(residual, hopS: hopS)?.regularity ?? 0
        let wobble = 1.4826 * mad * (1 - min(1, max(0, regularity)))
        let worst = max(abs(drift), wobble, abs(scoop) / 2)
        let credit = worst <= fullCents ? 1 : worst >= zeroCents ? 0 : (zeroCents - worst) / (zeroCents - fullCents)
        return NoteSteadiness(scoopCents: scoop, driftCents: drift, wobbleCents: wobble, credit: credit)
    }
}
