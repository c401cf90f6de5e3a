import Foundation

/// What no song has, checked once where a melody, a take or a progress log enters ktv.
///
/// Every reader of a reference melody, a sung take's pitch or a player's positions holds its values
/// to these bounds and refuses the file (exit 65) when one is outside them, naming the value. Past
/// that boundary every time fits in 24 hours and every pitch in the MIDI range, so the scoring
/// stages' arithmetic (sums of times, times as `Int` milliseconds, cents) cannot overflow or trap.
public enum SongBounds {
    /// The latest time anything in a song can happen: 24 hours, in ms.
    public static let maxTimeMs = 86_400_000
    /// The same, in seconds.
    public static let maxTimeS = Double(maxTimeMs) / 1000
    /// Pitch in cents above MIDI note 0: MIDI notes 0…127.
    public static let cents: ClosedRange<Double> = 0...12_700
    /// The same range in Hz: MIDI 0 (8.18 Hz) to MIDI 127 (12,543.85 Hz).
    public static let hz: ClosedRange<Double> = hzOf(cents: cents.lowerBound)...hzOf(cents: cents.upperBound)

    private static func hzOf(cents: Double) -> Double { 440 * pow(2, (cents - 6900) / 1200) }

    /// What is wrong with a time in ms, or nil when it lies in 0…24 h.
    public static func timeProblem(ms: Int) -> String? {
        if ms < 0 { return "\(ms) ms is before 0" }
        if ms > maxTimeMs { return "\(ms) ms is past 24 hours (\(maxTimeMs) ms); no song is that long" }
        return nil
    }

    /// What is wrong with a time in seconds, or nil when it is finite and in 0…24 h.
    public static func timeProblem(s: Double) -> String? {
        if !s.isFinite { return "\(s) s is not a finite number" }
        if s < 0 { return "\(s) s is before 0" }
        if s > maxTimeS { return "\(s) s is past 24 hours (\(Int(maxTimeS)) s); no song is that long" }
        return nil
    }

    /// What is wrong with a duration in ms, or nil when it lies in 0…24 h.
    public static func durationProblem(ms: Int) -> String? {
        if ms < 0 { return "\(ms) ms is negative" }
        if ms > maxTimeMs { return "\(ms) ms is longer than 24 hours (\(maxTimeMs) ms)" }
        return nil
    }

    /// What is wrong with a pitch in Hz, or nil when it is finite and in the MIDI range.
    public static func pitchProblem(hz f: Double) -> String? {
        if !f.isFinite { return "\(f) Hz is not a finite number" }
        if !hz.contains(f) {
            return "\(f) Hz is outside the MIDI range (\(String(format: "%.2f", hz.lowerBound))…\(String(format: "%.2f", hz.upperBound)) Hz)"
        }
        return nil
    }

    /// What is wrong with a pitch in cents above MIDI note 0, or nil when it is finite and in 0…12700.
    public static func pitchProblem(cents c: Double) -> String? {
        if !c.isFinite { return "MIDI \(c / 100) is not a finite number" }
        if !cents.contains(c) { return "MIDI \(c / 100) is outside the MIDI range 0…127" }
        return nil
    }

    /// Milliseconds from a `Double` that may hold anything: rounded, NaN as 0, clamped to ±4 × 24 h
    /// so that sums and differences of a few such values stay inside `Int`. For values a checked
    /// boundary has already bounded this is plain rounding; it never traps.
    @inline(__always)
    public static func clampedMs(_ ms: Double) -> Int {
        guard !ms.isNaN else { return 0 }
        let limit = Double(4 * maxTimeMs)
        return Int(min(max(ms, -limit), limit).rounded())
    }
}

extension PitchContour {
    /// The first sample outside what a song can hold (times finite, in 0…24 h and increasing; pitch
    /// in the MIDI range), as its 0-based index and what is wrong; nil when every sample is fine.
    public func songBoundsViolation() -> (index: Int, detail: String)? {
        if timesS.count != f0Hz.count { return (min(timesS.count, f0Hz.count), "\(timesS.count) times but \(f0Hz.count) pitch values") }
        for i in timesS.indices {
            let t = timesS[i]
            if let p = SongBounds.timeProblem(s: t) { return (i, "time \(p)") }
            if i > 0, !(t > timesS[i - 1]) { return (i, "time \(t) s is not after the previous sample's \(timesS[i - 1]) s") }
            if let f = f0Hz[i], let p = SongBounds.pitchProblem(hz: f) { return (i, "the pitch at \(t) s, \(p)") }
        }
        return nil
    }
}
