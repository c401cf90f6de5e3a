import KTVCore
import KTVScore
import KTVSync

/// `fuzz-score`: a reference, a take and a progress log together through `Scorer` under a rule set
/// and a way of placing the take (a latency, free timing, each device of the log; the pairing is
/// picked by a hash of the input, so mutations reach every one), and the reports a card renders
/// (JSON, text, SVG).
///
/// The input is up to three parts separated by a line `%%`: the reference (any format
/// `ReferenceReader` detects), the take (a pitch track, or one Hz value per line at 50 ms), and a
/// progress log (JSON Lines). A part that is absent or does not read is replaced by a small valid
/// one, so the fuzzer can vary each part on its own. A thrown `ScoreError` or `SyncError` is the
/// clean failure; a trap is the crash the harness looks for.
public enum ScoreTarget {
    /// The line between parts.
    public static let separator: [UInt8] = Array("\n%%\n".utf8)
    /// Takes and songs beyond these are read, not scored: the fuzzer wants many short runs.
    public static let maxTakeSamples = 20_000
    public static let maxJudgedMs = 600_000

    public static func run(_ bytes: [UInt8]) {
        let parts = split(bytes)
        let reference = (parts.count > 0 ? try? ReferenceReader.parse(parts[0], path: "ref") : nil) ?? fallbackReference
        var take = fallbackTake
        if parts.count > 1 {
            if let t = try? TakeReader.parse(parts[1], path: "take") { take = t }
            else if let t = try? TakeReader.parse(parts[1], path: "take", pitchIntervalMs: 50) { take = t }
        }
        let log = parts.count > 2 ? try? LogReader.read(bytes: parts[2], name: "log") : nil
        guard take.count <= maxTakeSamples, let first = reference.notes.map(\.startMs).min(),
              let last = reference.notes.map(\.endMs).max(), last - first <= maxJudgedMs else { return }

        var aligners: [any TakeAligner] = [LatencyAligner(latencyMs: 0), LatencyAligner(latencyMs: 120),
                                           FreeTimingAligner(reference: reference)]
        if let log {
            for device in log.devices.prefix(4) {
                if let a = try? ProgressLogAligner(log: log, device: device.name, latencyMs: 40, logName: "log") { aligners.append(a) }
            }
        }
        let rules: [any ScoringRules] = [KTVRules(), KTVRules(keyShift: .none, wholeSong: true), AgoraRules(), UltraStarRules()]
        guard let scorer = try? Scorer(configuration: ScoreConfiguration()) else { return }
        let sung = Scorer.Take(contour: take, path: "take")
        // One pairing of aligner and rule set per input, picked by the input's bytes: every pairing
        // at once made a run 16 times slower under ASan (5 runs/s), and the fuzzer reaches them all
        // by mutating (a seed's length decides its pairing).
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let pick = Int(h % UInt64(aligners.count * rules.count))
        let (aligner, r) = (aligners[pick / rules.count], rules[pick % rules.count])
        guard let (card, placed) = try? scorer.judged(sung, reference: reference, aligner: aligner, rules: r) else { return }
        _ = ScoreReport.json(card, take: "take", reference: "ref").serialized()
        _ = ScoreReport.text(card, take: "take")
        _ = ScoreSVG.render(card, take: placed, title: "take")
    }

    /// The parts between separator lines (at most three).
    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var start = 0, i = 0
        while i + separator.count <= bytes.count, parts.count < 2 {
            if bytes[i..<(i + separator.count)].elementsEqual(separator) {
                parts.append(Array(bytes[start..<i]))
                i += separator.count
                start = i
            } else {
                i += 1
            }
        }
        parts.append(Array(bytes[start...]))
        return parts
    }

    /// Three lines of notes, C4 to G4.
    static let fallbackReference = ReferenceMelody(
        notes: (0..<6).map { MelodyNote(startMs: 1000 + 500 * $0, durationMs: 400, cents: 6000 + 100 * Double($0 % 8), word: "la", line: $0 / 2) },
        lines: (0..<3).map { MelodyLine(startMs: 1000 + 1000 * $0, endMs: 1900 + 1000 * $0, text: "la la") })

    /// Four seconds at 10 ms, climbing the harmonics of 174 Hz, unvoiced every tenth frame.
    static let fallbackTake: PitchContour = {
        let times: [Double] = (0..<400).map { Double($0) / 100 }
        let f0: [Double?] = (0..<400).map { k -> Double? in k % 10 == 0 ? nil : 174.42 * Double(k / 50 + 1) }
        return PitchContour(timesS: times, f0Hz: f0)
    }()
}
