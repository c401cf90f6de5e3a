import Foundation
import KTVCore
import KTVLyrics

// Word times for a line timed by line only, from the voice inside the line.
//
// The line's text becomes syllables (a CJK character is one; other scripts are split into words at
// spaces). Candidate word starts inside the line are the voice's onsets (a voiced frame after at
// least `onsetGapMs` of silence; strength 1) and its pitch changes (the median pitch of the
// `pitchWindowMs` before and after a frame differing by at least `pitchStepSemitones`; strength
// grows with the step up to 1). A dynamic programme chooses one candidate per syllable boundary, in
// order, maximising strength minus `priorWeight` × the distance from where the syllable would start
// if the line's sung time were shared by text length — the segmentation-by-onset of Kan et al.
// ("LyricAlly", IEEE TASLP 2008, §IV-B) with note changes as extra boundaries (as in singing
// transcription, e.g. Mauch et al., "Computer-aided melody note transcription using the Tony
// software", 2015, which segments notes at pitch changes). A boundary with no candidate near enough
// falls back to the proportional place.

/// Settings of `LyricWordTiming`, declared once in `Spec`.
public struct WordTimingConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let onsetGapMs = Parameter<Int>("onsetGapMs", unit: "ms", range: 10...500, default: 30,
            "Silence before a voiced frame that makes it an onset (a word start candidate).")
        public static let pitchStepSemitones = Parameter<Double>("pitchStepSemitones", unit: "semitones", range: 0.1...12, default: 0.7,
            "Change of median pitch across a frame that makes it a note change (a word start candidate).")
        public static let pitchWindowMs = Parameter<Int>("pitchWindowMs", unit: "ms", range: 20...500, default: 60,
            "Window either side of a frame whose median pitches are compared.")
        public static let priorWeight = Parameter<Double>("priorWeight", range: 0...100, default: 2,
            "Cost of moving a word start away from its proportional place, per line duration.")
        public static let all: [ParameterInfo] = [onsetGapMs.info, pitchStepSemitones.info, pitchWindowMs.info, priorWeight.info]
    }

    public var onsetGapMs = Spec.onsetGapMs.defaultValue
    public var pitchStepSemitones = Spec.pitchStepSemitones.defaultValue
    public var pitchWindowMs = Spec.pitchWindowMs.defaultValue
    public var priorWeight = Spec.priorWeight.defaultValue

    public init() {}

    public func validated() throws(PitchError) -> WordTimingConfiguration {
        do {
            try Spec.onsetGapMs.check(onsetGapMs)
            try Spec.pitchStepSemitones.check(pitchStepSemitones)
            try Spec.pitchWindowMs.check(pitchWindowMs)
            try Spec.priorWeight.check(priorWeight)
        } catch { throw PitchError(error) }
        return self
    }
}

public enum LyricWordTiming {
    /// The syllables of a line's text: each CJK character (and kana, hangul) one, other runs split at
    /// spaces; a syllable keeps the spaces after it, so joining them gives the text back.
    public static func syllables(_ text: String) -> [String] {
        var out: [String] = []
        var current = ""
        for ch in text {
            if ch == " " || ch == "\u{3000}" || ch == "\t" {
                if out.isEmpty && current.isEmpty { continue }
                if current.isEmpty { out[out.count - 1].append(ch) } else { current.append(ch); out.append(current); current = "" }
            } else if isCJK(ch) {
                if !current.isEmpty { out.append(current); current = "" }
                out.append(String(ch))
            } else if ch.isPunctuation && !current.isEmpty || ch.isPunctuation && out.isEmpty {
                current.append(ch)
            } else if ch.isPunctuation {
                out[out.count - 1].append(ch)
            } else {
                current.append(ch)
            }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    static func isCJK(_ ch: Character) -> Bool {
        guard let u = ch.unicodeScalars.first?.value else { return false }
        return (0x3040...0x30FF).contains(u) || (0x3400...0x4DBF).contains(u) || (0x4E00...0x9FFF).contains(u)
            || (0xAC00...0xD7AF).contains(u) || (0xF900...0xFAFF).contains(u) || (0x20000...0x2FA1F).contains(u)
    }

    /// Words for a line sung from `startMs` to `endMs`: one per syllable of `text`, starts from the
    /// voice (`f0Hz[k]` at k·hopMs, nil unvoiced), each lasting to the next (the last to the end of
    /// the voice in the line, or `endMs`).
    public static func words(text: String, startMs: Int, endMs: Int, f0Hz: [Double?], hopMs: Double,
                             configuration: WordTimingConfiguration = WordTimingConfiguration()) throws(PitchError) -> [LyricWord] {
        let c = try configuration.validated()
        let parts = syllables(text)
        guard !parts.isEmpty, endMs > startMs else { return [] }
        let a = max(0, Int((Double(startMs) / hopMs).rounded())), b = min(f0Hz.count, Int((Double(endMs) / hopMs).rounded()))
        // The voice's end inside the line.
        var voiceEnd = endMs
        if b > a, let last = (a..<b).last(where: { f0Hz[$0] != nil }) { voiceEnd = min(endMs, Int((Double(last + 1) * hopMs).rounded())) }
        let span = Double(max(1, voiceEnd - startMs))
        // Candidates inside the line (not at its start).
        var cands: [(ms: Double, strength: Double)] = []
        if b > a + 1 {
            let gap = max(1, Int((Double(c.onsetGapMs) / hopMs).rounded())), win = max(1, Int((Double(c.pitchWindowMs) / hopMs).rounded()))
            var silent = 0
            for k in a..<b {
                if f0Hz[k] != nil {
                    if silent >= gap && k > a + 1 { cands.append((Double(k) * hopMs, 1)) }
                    silent = 0
                } else { silent += 1 }
            }
            func median(_ r: Range<Int>) -> Double? {
                let v = r.clamped(to: 0..<f0Hz.count).compactMap { f0Hz[$0] }.map { 12 * log2($0 / 440) }.sorted()
                return v.count * 2 >= r.count && !v.isEmpty ? v[v.count / 2] : nil
            }
            var steps: [(k: Int, step: Double)] = []
            for k in (a + win)..<max(a + win, b - win) {
                if let before = median((k - win)..<k), let after = median(k..<(k + win)) { steps.append((k, abs(after - before))) }
            }
            // Local maxima of the step above the threshold; a plateau of equal steps (medians of a
            // clean change agree over a few frames) gives its centre.
            var i = 0
            while i < steps.count {
                var j = i
                while j + 1 < steps.count && steps[j + 1].step == steps[i].step { j += 1 }
                let left = i > 0 ? steps[i - 1].step : 0, right = j + 1 < steps.count ? steps[j + 1].step : 0
                if steps[i].step >= c.pitchStepSemitones && steps[i].step > left && steps[i].step > right {
                    let k = (steps[i].k + steps[j].k + 1) / 2
                    cands.append((Double(k) * hopMs, min(1, steps[i].step / (2 * c.pitchStepSemitones))))
                }
                i = j + 1
            }
            cands.sort { $0.ms < $1.ms }
        }
        // Proportional places by text length.
        let weights = parts.map { Double(max(1, $0.trimmingCharacters(in: .whitespaces).count)) }
        let total = weights.reduce(0, +)
        var prior: [Double] = []
        var acc = 0.0
        for w in weights.dropLast() { acc += w; prior.append(Double(startMs) + span * acc / total) }
        // DP: boundary j (0..<n-1) takes candidate i or its own prior place (index -1), strictly increasing.
        let n = prior.count
        var starts = [Double(startMs)]
        if n > 0 {
            let pts = cands.map(\.ms), str = cands.map(\.strength)
            let m = pts.count
            let lambda = c.priorWeight / span
            // score[j][i]: best total with boundary j on candidate i (i == m: on its prior place).
            var score = [[Double]](repeating: [Double](repeating: -.infinity, count: m + 1), count: n)
            var back = [[Int]](repeating: [Int](repeating: -1, count: m + 1), count: n)
            func place(_ j: Int, _ i: Int) -> Double { i == m ? prior[j] : pts[i] }
            func gain(_ j: Int, _ i: Int) -> Double { i == m ? 0 : str[i] - lambda * abs(pts[i] - prior[j]) - 0.3 }
            let minGap = 2 * hopMs
            for j in 0..<n {
                for i in 0...m {
                    let p = place(j, i)
                    if p <= Double(startMs) + minGap || p >= Double(voiceEnd) - minGap { if i < m { continue } }
                    let g = gain(j, i)
                    if j == 0 { score[0][i] = g; continue }
                    for q in 0...m where score[j - 1][q] > -.infinity && place(j - 1, q) + minGap <= p {
                        if score[j - 1][q] + g > score[j][i] { score[j][i] = score[j - 1][q] + g; back[j][i] = q }
                    }
                }
            }
            var i = (0...m).max { score[n - 1][$0] < score[n - 1][$1] } ?? m
            var chosen = [Double](repeating: 0, count: n)
            if score[n - 1][i] == -.infinity { chosen = prior } else {
                for j in stride(from: n - 1, through: 0, by: -1) {
                    chosen[j] = place(j, i)
                    if j > 0 { i = back[j][i] }
                }
            }
            starts += chosen
        }
        var out: [LyricWord] = []
        for (k, text) in parts.enumerated() {
            let s = Int(starts[k].rounded()), e = k + 1 < starts.count ? Int(starts[k + 1].rounded()) : voiceEnd
            out.append(LyricWord(startMs: s, durationMs: max(0, e - s), text: text))
        }
        return out
    }
}
