import KTVCore

// The map from a lyric file's clock to an audio file's, found from the voice.
//
// Method: the lyrics give an expected singing timeline (+1 where a word, or a line without words, is
// sung, −1 elsewhere); the tracker gives the voice's voicing timeline (2·voiced share − 1), both on
// one grid (`stepMs`). (1) The speed ratio r is the one whose scaled lyric timeline correlates best
// with the voicing at some offset (coarse grid of ratios and offsets, then a fine grid around the
// best) — cross-correlation of binary activity sequences, as in lyrics-to-audio alignment from
// singing-voice activity (Fujihara et al., "LyricSynchronizer", IEEE JSTSP 2011, §III, used here
// without phonemes). (2) With r fixed, a Viterbi pass over the lines (Rabiner, "A tutorial on hidden
// Markov models", Proc. IEEE 1989, §III-B) picks one offset per line from a band of ±`searchS`:
// each line's emission is the mean agreement of the lyric timeline around the line with the voicing
// at that offset; staying on an offset is free, drifting one step costs `driftCost`, any other move
// (a section cut from the audio or added to it) costs `jumpCost`. Lines whose best agreement stays
// under `dropBelow` have no audio (cut); lines under `confidentAbove` are placed by their section
// and listed. (3) Runs of lines on one offset are the map's sections. (4) Each confident line's
// start moves to the nearest voice onset within `onsetSearchMs` (a voiced frame after ≥ 50 ms of
// silence) — the onset refinement of Kan et al., "LyricAlly", IEEE TASLP 2008, §IV.
// Memory is the band times the lines (Int32 back-pointers), never the song's length squared.

/// Settings of `LyricSync`, declared once in `Spec`.
public struct LyricSyncConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let stepMs = Parameter<Int>("stepMs", unit: "ms", range: 10...100, default: 20,
            "Grid of the alignment: the lyric and voicing timelines are compared every this many ms.")
        public static let searchS = Parameter<Double>("searchS", unit: "s", range: 1...600, default: 60,
            "Offsets searched either way (after the speed ratio): the largest global shift plus sections cut or added.")
        public static let minRatio = Parameter<Double>("minRatio", range: 0.5...1, default: 0.8,
            "Smallest speed ratio searched (audio duration over lyric duration; below 1 the audio is faster).")
        public static let maxRatio = Parameter<Double>("maxRatio", range: 1...2, default: 1.25,
            "Largest speed ratio searched (audio duration over lyric duration; above 1 the audio is slower).")
        public static let jumpCost = Parameter<Double>("jumpCost", range: 0...100, default: 0.6,
            "Cost of a section boundary (a jump in offset), in lines of perfect agreement.")
        public static let driftCost = Parameter<Double>("driftCost", range: 0...10, default: 0.02,
            "Cost of a one-step drift of the offset between consecutive lines.")
        public static let dropBelow = Parameter<Double>("dropBelow", range: -1...1, default: 0.25,
            "A line agreeing less than this (−1…1) with the voice everywhere has no audio: it is dropped.")
        public static let confidentAbove = Parameter<Double>("confidentAbove", range: -1...1, default: 0.5,
            "A line agreeing less than this is placed by its section's map and listed as low-confidence.")
        public static let onsetSearchMs = Parameter<Int>("onsetSearchMs", unit: "ms", range: 0...1000, default: 200,
            "How far a confident line's start may move to the nearest voice onset.")
        public static let contextMs = Parameter<Int>("contextMs", unit: "ms", range: 0...5000, default: 500,
            "Lyric timeline around each line (before its start and after its end) that its emission compares.")
        public static let all: [ParameterInfo] = [stepMs.info, searchS.info, minRatio.info, maxRatio.info, jumpCost.info, driftCost.info,
                                                  dropBelow.info, confidentAbove.info, onsetSearchMs.info, contextMs.info]
    }

    public var stepMs = Spec.stepMs.defaultValue
    public var searchS = Spec.searchS.defaultValue
    public var minRatio = Spec.minRatio.defaultValue
    public var maxRatio = Spec.maxRatio.defaultValue
    public var jumpCost = Spec.jumpCost.defaultValue
    public var driftCost = Spec.driftCost.defaultValue
    public var dropBelow = Spec.dropBelow.defaultValue
    public var confidentAbove = Spec.confidentAbove.defaultValue
    public var onsetSearchMs = Spec.onsetSearchMs.defaultValue
    public var contextMs = Spec.contextMs.defaultValue

    public init() {}

    public func validated() throws(PitchError) -> LyricSyncConfiguration {
        do {
            try Spec.stepMs.check(stepMs)
            try Spec.searchS.check(searchS)
            try Spec.minRatio.check(minRatio)
            try Spec.maxRatio.check(maxRatio)
            try Spec.jumpCost.check(jumpCost)
            try Spec.driftCost.check(driftCost)
            try Spec.dropBelow.check(dropBelow)
            try Spec.confidentAbove.check(confidentAbove)
            try Spec.onsetSearchMs.check(onsetSearchMs)
            try Spec.contextMs.check(contextMs)
        } catch { throw PitchError(error) }
        if confidentAbove < dropBelow {
            throw .invalidParameter(name: "confidentAbove", value: "\(confidentAbove)", allowed: "≥ dropBelow (\(dropBelow))")
        }
        return self
    }
}

/// What the lyrics expect of one line: its start and end, and the spans sung in it (its words, or
/// the whole line when it has none). A line with no spans is not aligned; it follows its neighbours.
public struct SyncLineInput: Sendable, Equatable {
    public var startMs: Int
    public var endMs: Int
    public var sung: [ClosedRange<Int>]

    public init(startMs: Int, endMs: Int, sung: [ClosedRange<Int>]) {
        self.startMs = startMs
        self.endMs = endMs
        self.sung = sung
    }
}

/// One section of the map: `audio = ratio × lyric + offsetMs` for the lyric times in it.
public struct SyncSection: Sendable, Equatable {
    public var lyricStartMs: Int
    public var lyricEndMs: Int
    public var audioStartMs: Int
    public var audioEndMs: Int
    public var offsetMs: Int
    public var ratio: Double
    /// Mean agreement (−1…1) of the section's lines with the voice.
    public var confidence: Double
    /// Indices of the lines (of the input) the section holds.
    public var lines: ClosedRange<Int>

    public func map(_ lyricMs: Int) -> Int { Int((ratio * Double(lyricMs)).rounded()) + offsetMs }
}

/// Where one line went.
public struct SyncedLine: Sendable, Equatable {
    public enum Status: String, Sendable { case placed, lowConfidence = "low-confidence", dropped, unsung }
    public var index: Int
    public var oldStartMs: Int
    /// nil when dropped.
    public var newStartMs: Int?
    public var status: Status
    /// Agreement with the voice at the chosen place (−1…1); nil for unsung lines.
    public var agreement: Double?
    /// The section that moves it (index into `SyncMap.sections`); nil when dropped.
    public var section: Int?
}

/// The map and every line's place.
public struct SyncMap: Sendable, Equatable {
    public var sections: [SyncSection]
    public var lines: [SyncedLine]
    public var ratio: Double
    /// Share of the audio's frames that are voiced.
    public var voicedShare: Double

    public var dropped: [Int] { lines.filter { $0.status == .dropped }.map(\.index) }
    public var lowConfidence: [Int] { lines.filter { $0.status == .lowConfidence }.map(\.index) }
    /// True when some sections' offsets differ by more than `toleranceMs`.
    public func sectionsDiffer(toleranceMs: Int = 200) -> Bool {
        guard let lo = sections.map(\.offsetMs).min(), let hi = sections.map(\.offsetMs).max() else { return false }
        return hi - lo > toleranceMs
    }
}

public enum LyricSync {
    /// Aligns `lines` with a voicing track (`voiced[k]`: the voice sings at k·hopMs).
    public static func align(lines: [SyncLineInput], voiced: [Bool], hopMs: Double,
                             configuration: LyricSyncConfiguration = LyricSyncConfiguration()) throws(PitchError) -> SyncMap {
        let c = try configuration.validated()
        guard hopMs > 0 else { throw .invalidParameter(name: "hopMs", value: "\(hopMs)", allowed: "> 0") }
        let step = Double(c.stepMs)
        let voicedCount = voiced.reduce(0) { $0 + ($1 ? 1 : 0) }
        let voicedShare = voiced.isEmpty ? 0 : Double(voicedCount) / Double(voiced.count)
        guard voicedShare >= 0.01 else {
            throw .noAudio("the audio has no voice to align to (\(Int((voicedShare * 1000).rounded()) / 10)% of it voiced); give the vocal stem, the dual-mono track, or the recording with --accompaniment")
        }
        // Voicing on the grid: 2·share − 1 (−1 silent … +1 sung).
        let audioFrames = Int((Double(voiced.count) * hopMs / step).rounded(.up))
        var obs = [Float](repeating: 0, count: audioFrames)
        var cnt = [Int](repeating: 0, count: audioFrames)
        for (k, v) in voiced.enumerated() {
            let f = min(audioFrames - 1, Int(Double(k) * hopMs / step))
            cnt[f] += 1
            if v { obs[f] += 1 }
        }
        for f in 0..<audioFrames { obs[f] = cnt[f] > 0 ? 2 * obs[f] / Float(cnt[f]) - 1 : -1 }
        // The lyrics' expected timeline.
        let lyricEnd = (lines.map(\.endMs).max() ?? 0) + c.contextMs
        let lyricFrames = max(1, Int((Double(lyricEnd) / step).rounded(.up)) + 1)
        var expect = [Float](repeating: -1, count: lyricFrames)
        for l in lines { for s in l.sung {
            let a = max(0, Int((Double(s.lowerBound) / step).rounded())), b = min(lyricFrames, Int((Double(s.upperBound) / step).rounded()))
            if b > a { for f in a..<b { expect[f] = 1 } }
        } }
        let maxOff = Int((c.searchS * 1000 / step).rounded())
        let aligned = lines.enumerated().filter { !$0.element.sung.isEmpty }.map(\.offset)
        // The ratio: each candidate (1, and the best of the correlation search) is aligned, and the
        // one whose path scores best wins: a cut or added section misleads a global correlation, not
        // the path, which may jump.
        var best: (ratio: Double, path: [Int], emission: [[Float]], score: Float)?
        for ratio in ratioCandidates(expect: expect, obs: obs, c: c) {
            let v = viterbi(lines: lines, aligned: aligned, expect: expect, obs: obs, ratio: ratio, maxOff: maxOff, c: c)
            if best == nil || v.score > best!.score { best = (ratio, v.path, v.emission, v.score) }
        }
        let (ratio, path, emission) = (best!.ratio, best!.path, best!.emission)
        // Each line's place. The lines kept are the heaviest chain (total agreement) in which each
        // starts no earlier than half a second before the previous one ends in the audio: a line the
        // path put out of order (onto audio another line sings) is dropped, not kept by chance.
        var agree = aligned.indices.map { emission[$0][path[$0]] }
        func audioMs(_ n: Int, _ ms: Int) -> Double { ratio * Double(ms) + Double(path[n] - maxOff) * step }
        let candidates = aligned.indices.filter { Double(agree[$0]) >= c.dropBelow }
        var chainScore = [Double](repeating: 0, count: candidates.count), chainBack = [Int](repeating: -1, count: candidates.count)
        for (x, q) in candidates.enumerated() {
            chainScore[x] = Double(agree[q])
            for y in 0..<x {
                let p = candidates[y]
                if audioMs(q, lines[aligned[q]].startMs) >= audioMs(p, lines[aligned[p]].endMs) - 500, chainScore[y] + Double(agree[q]) > chainScore[x] {
                    chainScore[x] = chainScore[y] + Double(agree[q])
                    chainBack[x] = y
                }
            }
        }
        var placed: [Int] = []
        if var x = chainScore.indices.max(by: { chainScore[$0] < chainScore[$1] }) {
            while x >= 0 { placed.append(candidates[x]); x = chainBack[x] }
            placed.reverse()
        }
        for n in aligned.indices where !placed.contains(n) && Double(agree[n]) >= c.dropBelow { agree[n] = -1 }
        let placedSet = Set(placed)
        // Sections: runs of placed lines whose offsets move by at most five steps from line to line.
        var sectionOf = [Int?](repeating: nil, count: aligned.count)
        var runs: [[Int]] = []
        for n in placed {
            if let last = runs.last?.last, abs(path[n] - path[last]) <= 5 {
                runs[runs.count - 1].append(n)
            } else { runs.append([n]) }
        }
        var sections: [SyncSection] = []
        // Voice onsets on the tracker's grid: a voiced frame after at least 50 ms of silence.
        let quiet = max(1, Int((50 / hopMs).rounded()))
        var onsets: [Double] = []
        var run = quiet
        for (k, v) in voiced.enumerated() {
            if v { if run >= quiet { onsets.append(Double(k) * hopMs) }; run = 0 } else { run += 1 }
        }
        var result = [SyncedLine](repeating: SyncedLine(index: 0, oldStartMs: 0, newStartMs: nil, status: .unsung, agreement: nil, section: nil),
                                  count: lines.count)
        for (r, members) in runs.enumerated() {
            let offs = members.map { Double(path[$0] - maxOff) * step }.sorted()
            let offset = Int(offs[offs.count / 2].rounded())
            let first = lines[aligned[members.first!]], last = lines[aligned[members.last!]]
            let conf = members.map { Double(agree[$0]) }.reduce(0, +) / Double(members.count)
            sections.append(SyncSection(lyricStartMs: first.startMs, lyricEndMs: last.endMs,
                                        audioStartMs: Int((ratio * Double(first.startMs)).rounded()) + offset,
                                        audioEndMs: Int((ratio * Double(last.endMs)).rounded()) + offset,
                                        offsetMs: offset, ratio: ratio, confidence: (conf * 1000).rounded() / 1000,
                                        lines: aligned[members.first!]...aligned[members.last!]))
            for n in members { sectionOf[n] = r }
        }
        for (n, i) in aligned.enumerated() {
            let l = lines[i]
            let a = Double(agree[n])
            guard placedSet.contains(n), let sec = sectionOf[n] else {
                result[i] = SyncedLine(index: i, oldStartMs: l.startMs, newStartMs: nil, status: .dropped,
                                       agreement: (Double(emission[n][path[n]]) * 1000).rounded() / 1000, section: nil)
                continue
            }
            let predicted = audioMs(n, l.startMs)
            var start = predicted
            let confident = a >= c.confidentAbove
            if confident, let near = nearest(onsets, to: predicted), abs(near - predicted) <= Double(c.onsetSearchMs) { start = near }
            if !confident { start = Double(sections[sec].map(l.startMs)) }
            result[i] = SyncedLine(index: i, oldStartMs: l.startMs, newStartMs: max(0, Int(start.rounded())),
                                   status: confident ? .placed : .lowConfidence, agreement: (a * 1000).rounded() / 1000, section: sec)
        }
        // Each section's offset from its confident lines' refined starts (median), and its low-confidence lines moved by it.
        for k in sections.indices {
            let members = result.filter { $0.section == k && $0.status == .placed }
            guard !members.isEmpty else { continue }
            let d = members.map { Double($0.newStartMs!) - ratio * Double($0.oldStartMs) }.sorted()
            let offset = Int(d[d.count / 2].rounded())
            sections[k].offsetMs = offset
            sections[k].audioStartMs = Int((ratio * Double(sections[k].lyricStartMs)).rounded()) + offset
            sections[k].audioEndMs = Int((ratio * Double(sections[k].lyricEndMs)).rounded()) + offset
        }
        for i in result.indices where result[i].status == .lowConfidence {
            result[i].newStartMs = max(0, sections[result[i].section!].map(lines[i].startMs))
        }
        // Lines with nothing sung follow the section of the nearest aligned line before them (else after).
        for i in lines.indices where result[i].status == .unsung {
            let before = (0..<i).reversed().first { result[$0].section != nil }
            let after = (i + 1..<lines.count).first { result[$0].section != nil }
            let sec = (before ?? after).flatMap { result[$0].section }
            result[i] = SyncedLine(index: i, oldStartMs: lines[i].startMs,
                                   newStartMs: sec.map { max(0, sections[$0].map(lines[i].startMs)) } ?? lines[i].startMs,
                                   status: .unsung, agreement: nil, section: sec)
        }
        return SyncMap(sections: sections, lines: result, ratio: ratio, voicedShare: voicedShare)
    }

    /// One offset per aligned line, by Viterbi, for a fixed ratio: the path, the emissions, the path's score.
    static func viterbi(lines: [SyncLineInput], aligned: [Int], expect: [Float], obs: [Float], ratio: Double, maxOff: Int,
                        c: LyricSyncConfiguration) -> (path: [Int], emission: [[Float]], score: Float) {
        let step = Double(c.stepMs)
        let states = 2 * maxOff + 1
        let lyricFrames = expect.count
        // Emissions: mean agreement of the lyric timeline around each line with the voicing, per offset.
        var emission = [[Float]](repeating: [], count: aligned.count)
        obs.withUnsafeBufferPointer { o in
            for (n, i) in aligned.enumerated() {
                let l = lines[i]
                let a = max(0, Int((Double(l.startMs - c.contextMs) / step).rounded())), b = min(lyricFrames, Int((Double(l.endMs + c.contextMs) / step).rounded()))
                var e = [Float](repeating: -1, count: states)
                if b > a {
                    // round(r·k + off) = round(r·k) + off for a whole offset: the frames are mapped once.
                    let idx = (a..<b).map { Int((ratio * Double($0)).rounded()) }
                    let ex = Array(expect[a..<b])
                    let inv = 1 / Float(b - a)
                    let lo = idx.first!, hi = idx.last!
                    idx.withUnsafeBufferPointer { ix in ex.withUnsafeBufferPointer { exb in
                        for s in 0..<states {
                            let off = s - maxOff
                            var sum: Float = 0
                            if lo + off >= 0 && hi + off < o.count {
                                for j in 0..<exb.count { sum += exb[j] * o[ix[j] + off] }
                            } else {
                                for j in 0..<exb.count {
                                    let f = ix[j] + off
                                    sum += exb[j] * (f >= 0 && f < o.count ? o[f] : -1)
                                }
                            }
                            e[s] = sum * inv
                        }
                    } }
                }
                emission[n] = e
            }
        }
        // Viterbi over the lines: stay free, drift one step at `driftCost`, jump anywhere at `jumpCost`.
        var score = [Float](repeating: 0, count: states)
        var back = [[Int32]](repeating: [], count: aligned.count)
        let drop = Float(c.dropBelow), jump = Float(c.jumpCost), drift = Float(c.driftCost)
        for n in 0..<aligned.count {
            let em = emission[n].map { max($0, drop) }
            if n == 0 { score = em; back[0] = [Int32](repeating: -1, count: states); continue }
            var bestAll = 0
            for s in 1..<states where score[s] > score[bestAll] { bestAll = s }
            var next = [Float](repeating: 0, count: states), bp = [Int32](repeating: 0, count: states)
            for s in 0..<states {
                var v = score[s], from = s
                if s > 0, score[s - 1] - drift > v { v = score[s - 1] - drift; from = s - 1 }
                if s + 1 < states, score[s + 1] - drift > v { v = score[s + 1] - drift; from = s + 1 }
                if score[bestAll] - jump > v { v = score[bestAll] - jump; from = bestAll }
                next[s] = v + em[s]
                bp[s] = Int32(from)
            }
            score = next
            back[n] = bp
        }
        var path = [Int](repeating: 0, count: aligned.count)
        var total: Float = -.infinity
        if !aligned.isEmpty {
            var s = 0
            for k in 1..<states where score[k] > score[s] { s = k }
            total = score[s]
            for n in stride(from: aligned.count - 1, through: 0, by: -1) {
                path[n] = s
                if n > 0 { s = Int(back[n][s]) }
            }
        }
        return (path, emission, total)
    }

    static func nearest(_ sorted: [Double], to x: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        var lo = 0, hi = sorted.count
        while lo < hi { let m = (lo + hi) / 2; if sorted[m] < x { lo = m + 1 } else { hi = m } }
        let cands = [lo - 1, lo].filter { $0 >= 0 && $0 < sorted.count }.map { sorted[$0] }
        return cands.min { abs($0 - x) < abs($1 - x) }
    }

    /// Candidate speed ratios: 1, and the best few local maxima of the correlation of the scaled lyric
    /// timeline with the voicing (ratios every 1 % on a 5× coarser grid), each refined every 0.1 %
    /// on the alignment grid.
    static func ratioCandidates(expect: [Float], obs: [Float], c: LyricSyncConfiguration) -> [Double] {
        func pool(_ x: [Float], _ k: Int) -> [Float] {
            stride(from: 0, to: x.count, by: k).map { i in x[i..<min(x.count, i + k)].reduce(0, +) / Float(min(x.count, i + k) - i) }
        }
        func best(_ e: [Float], _ o: [Float], ratios: [Double], offsets: ClosedRange<Int>) -> (ratio: Double, offset: Int, score: Float) {
            var top = (ratio: 1.0, offset: 0, score: -Float.infinity)
            // Only the sung frames of the lyric timeline and their immediate surroundings count.
            let idx = e.indices.filter { e[$0] > 0 }
            guard !idx.isEmpty else { return top }
            let meanObs = o.reduce(0, +) / Float(max(1, o.count))
            o.withUnsafeBufferPointer { ob in
                for r in ratios {
                    let mapped = idx.map { Int((r * Double($0)).rounded()) }
                    let lo = mapped.first!, hi = mapped.last!
                    mapped.withUnsafeBufferPointer { mp in
                        for off in offsets {
                            var sum: Float = 0
                            if lo + off >= 0 && hi + off < ob.count {
                                for j in 0..<mp.count { sum += ob[mp[j] + off] }
                                sum -= Float(mp.count) * meanObs
                            } else {
                                for j in 0..<mp.count {
                                    let f = mp[j] + off
                                    if f >= 0 && f < ob.count { sum += ob[f] - meanObs } else { sum -= 1 + meanObs }
                                }
                            }
                            if sum > top.score { top = (r, off, sum) }
                        }
                    }
                }
            }
            return top
        }
        let k = 5
        let maxOff = Int((c.searchS * 1000 / Double(c.stepMs * k)).rounded())
        let coarseRatios = stride(from: c.minRatio, through: c.maxRatio + 1e-9, by: 0.01).map { $0 }
        let pe = pool(expect, k), po = pool(obs, k)
        let curve = coarseRatios.map { best(pe, po, ratios: [$0], offsets: -maxOff...maxOff) }
        let peaks = curve.indices.filter { i in (i == 0 || curve[i].score >= curve[i - 1].score) && (i + 1 == curve.count || curve[i].score >= curve[i + 1].score) }
            .sorted { curve[$0].score > curve[$1].score }.prefix(2)
        var out: [Double] = [1]
        for i in peaks {
            let coarse = curve[i]
            let fineRatios = stride(from: max(c.minRatio, coarse.ratio - 0.012), through: min(c.maxRatio, coarse.ratio + 0.012) + 1e-9, by: 0.001).map { $0 }
            let center = coarse.offset * k
            let r = best(expect, obs, ratios: fineRatios, offsets: (center - 10 * k)...(center + 10 * k)).ratio
            if !out.contains(where: { abs($0 - r) < 0.0005 }) { out.append(r) }
        }
        return out
    }
}
