import Foundation
import KTVCore
import KTVScore

// `ktv-bench assess-experts`: how ktv's scores agree with music experts, dimension by dimension. The
// data is PESnQ-DS in `../shared/assess/pesnq` (see its README): per song, amateur singers' phrases
// `S/S_k.flac` against a professional's `MCUR/MCUR_k.flac`, five experts' mean grade (1-5) per singer,
// overall and on seven dimensions. Each clip is scored as a user would (`ktv score S_k.flac
// --reference-audio MCUR_k.flac`), locked with `--latency-ms auto` and in free timing; a singer's
// figure is the mean over their clips. Reported: per dimension, Pearson with the experts' grade of
// that dimension; overall Pearson and Spearman; then the voice-dimension weights chosen on a coarse
// grid (maximising the mean of both timings' Pearson), fitted on all singers and leaving each singer
// out, and the straight line from score to expert grade, likewise.

/// One song of the set: its singers' clips and the experts' grades.
struct ExpertSong {
    var name: String
    var folder: String
    /// Grades by file key (`overall`, `pitch`, `rhythm`, …), then by singer.
    var grades: [String: [String: Double]]
    var singers: [String] { (grades["overall"] ?? [:]).keys.sorted() }
}

/// Which expert grade each ktv dimension is checked against.
let expertDimension: [(ktv: ScoreDimension, expert: String)] = [
    (.intonation, "pitch"), (.rhythm, "rhythm"), (.vibrato, "vibrato"), (.voiceQuality, "vqual"),
    (.dynamics, "volume"), (.pitchRange, "pitchDynamicRange"),
]

func loadExpertSongs(root: String) -> [ExpertSong] {
    let fm = FileManager.default
    guard let names = try? fm.contentsOfDirectory(atPath: root) else { return [] }
    var songs: [ExpertSong] = []
    for name in names.sorted() {
        let folder = root + "/" + name
        guard let files = try? fm.contentsOfDirectory(atPath: folder) else { continue }
        var grades: [String: [String: Double]] = [:]
        let prefix = "GT_\(name)_"
        for file in files where file.hasPrefix(prefix) && file.hasSuffix(".txt") {
            let key = String(file.dropFirst(prefix.count).dropLast(4))
            guard let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8) else { continue }
            for line in text.split(whereSeparator: \.isNewline) {
                let parts = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
                if parts.count == 2, let g = Double(parts[1]) { grades[key, default: [:]][String(parts[0])] = g }
            }
        }
        if grades["overall"] != nil { songs.append(ExpertSong(name: name, folder: folder, grades: grades)) }
    }
    return songs
}

/// One clip's card in each timing.
struct ExpertClip {
    var singer: String
    var locked: ScoreCard?
    var free: ScoreCard?
}

func scoreExpertSong(_ song: ExpertSong, settings: AssessSettings = AssessSettings(), referenceSinger: String = "MCUR") -> [ExpertClip] {
    let rules = KTVRules(configuration: settings.rules)
    guard let scorer = try? Scorer(configuration: ScoreConfiguration(rules: rules)) else { return [] }
    var references: [Int: ReferenceMelody] = [:]
    var clips: [ExpertClip] = []
    for singer in song.singers {
        for k in 0..<16 {
            let take = "\(song.folder)/\(singer)/\(singer)_\(k).flac", refPath = "\(song.folder)/\(referenceSinger)/\(referenceSinger)_\(k).flac"
            guard FileManager.default.fileExists(atPath: take), FileManager.default.fileExists(atPath: refPath) else { continue }
            if references[k] == nil { references[k] = try? scorer.reference(path: nil, audio: refPath) }
            guard let reference = references[k] else { continue }
            let locked = try? scorer.score(TakeRequest(take: take, rules: rules, estimateLatency: true), reference: reference).card
            let free = try? scorer.score(TakeRequest(take: take, timing: .free, rules: rules), reference: reference).card
            clips.append(ExpertClip(singer: singer, locked: locked, free: free))
        }
    }
    return clips
}

/// A singer's mean of `value` over their clips (nil values left out).
func singerMeans(_ clips: [ExpertClip], _ value: (ExpertClip) -> Double?) -> [String: Double] {
    var sums: [String: (Double, Int)] = [:]
    for c in clips { if let v = value(c) { sums[c.singer, default: (0, 0)].0 += v; sums[c.singer, default: (0, 0)].1 += 1 } }
    return sums.mapValues { $0.0 / Double($0.1) }
}

func correlations(_ scores: [String: Double], _ grades: [String: Double]) -> (pearson: Double?, spearman: Double?) {
    let singers = scores.keys.filter { grades[$0] != nil }.sorted()
    let x = singers.map { scores[$0] ?? 0 }, y = singers.map { grades[$0] ?? 0 }
    return (Stats.pearson(x, y), Stats.spearman(x, y))
}

/// The overall score of a card under other voice-dimension weights.
func rescored(_ card: ScoreCard?, _ weights: DimensionWeights) -> Double? {
    guard let card, let core = card.coreScore else { return card?.score }
    var dims = card.dimensions
    return weights.combine(core: core, &dims)
}

/// The grid the weights are chosen on. Few parameters for ten singers: one weight w shared by the
/// three voice dimensions (vibrato, voice quality, dynamics) and one for pitch range, each 0, 0.05, …, 0.6 (their range).
let weightGrid: [DimensionWeights] = {
    let steps = stride(from: 0.0, through: 0.6001, by: 0.05).map { ($0 * 100).rounded() / 100 }
    var out: [DimensionWeights] = []
    for w in steps { for r in steps { out.append(DimensionWeights(vibrato: w, voiceQuality: w, dynamics: w, pitchRange: r)) } }
    return out
}()

/// The weights that maximise the mean of both timings' Pearson over `singers`.
func fitWeights(_ clips: [ExpertClip], grades: [String: Double], singers: Set<String>) -> DimensionWeights {
    let used = clips.filter { singers.contains($0.singer) }
    var best = (DimensionWeights(), -2.0)
    for w in weightGrid {
        let l = correlations(singerMeans(used) { rescored($0.locked, w) }, grades).pearson ?? -1
        let f = correlations(singerMeans(used) { rescored($0.free, w) }, grades).pearson ?? -1
        if (l + f) / 2 > best.1 + 1e-9 { best = (w, (l + f) / 2) }
    }
    return best.0
}

func benchExpertAssess(_ args: [String]) {
    let root = option("--pesnq", in: args) ?? "../shared/assess/pesnq"
    let songs = loadExpertSongs(root: root)
    guard !songs.isEmpty else {
        print("assess-experts: no PESnQ data at \(root) (<song>/GT_<song>_overall.txt); nothing measured")
        return
    }
    func f(_ v: Double?) -> String { v.map { String(format: "%.3f", $0) } ?? "—" }
    // `--set NAME=VALUE`: one general setting changed (the names `assess --sweep` takes).
    var settings = AssessSettings()
    if let spec = option("--set", in: args) {
        let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let value = Double(parts[1]), let set = AssessSettings.setters[parts[0]] else {
            fail("--set takes NAME=VALUE with one of: " + AssessSettings.setters.keys.sorted().joined(separator: ", "))
        }
        set(&settings, value)
        print("assess-experts: \(parts[0]) = \(value)")
    }
    for song in songs {
        let started = Date()
        let clips = scoreExpertSong(song, settings: settings)
        let overall = song.grades["overall"] ?? [:]
        let failures = clips.filter { $0.locked == nil || $0.free == nil }.count
        print("assess-experts: \(song.name): \(song.singers.count) singers, \(clips.count) clips scored in \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
              + (failures > 0 ? " (\(failures) clip(s) failed in a timing)" : ""))
        print("")
        print("### \(song.name): ktv against the experts (Pearson over the \(song.singers.count) singers' mean scores)")
        print("")
        print("| ktv figure | expert grade | locked, auto latency | free |")
        print("|---|---|---|---|")
        let l = correlations(singerMeans(clips) { $0.locked?.score }, overall), fr = correlations(singerMeans(clips) { $0.free?.score }, overall)
        print("| overall score | overall | \(f(l.pearson)) (Spearman \(f(l.spearman))) | \(f(fr.pearson)) (Spearman \(f(fr.spearman))) |")
        for (dim, expert) in expertDimension {
            guard let g = song.grades[expert] else { continue }
            func dimScore(_ c: ScoreCard?) -> Double? { c?.dimensions.first { $0.dimension == dim }?.score }
            let a = correlations(singerMeans(clips) { dimScore($0.locked) }, g).pearson
            let b = correlations(singerMeans(clips) { dimScore($0.free) }, g).pearson
            print("| \(dim.rawValue) | \(expert) | \(f(a)) | \(f(b)) |")
        }
        if let g = song.grades["pitch"] {
            let a = correlations(singerMeans(clips) { $0.locked?.score }, g).pearson, b = correlations(singerMeans(clips) { $0.free?.score }, g).pearson
            print("| overall score | pitch | \(f(a)) | \(f(b)) |")
        }
        print("")

        // The weights: shipped, fitted on all, and leaving each singer out.
        let shipped = DimensionWeights()
        let all = Set(song.singers)
        let fitted = fitWeights(clips, grades: overall, singers: all)
        func describe(_ w: DimensionWeights) -> String {
            "vibrato \(w.vibrato), voice quality \(w.voiceQuality), dynamics \(w.dynamics), pitch range \(w.pitchRange)"
        }
        var heldLocked: [String: Double] = [:], heldFree: [String: Double] = [:]
        var heldGrade: [String: Double] = [:]
        var chosen: [String] = []
        for singer in song.singers {
            let rest = all.subtracting([singer])
            let w = fitWeights(clips, grades: overall, singers: rest)
            chosen.append("\(singer): \(w.vibrato)/\(w.voiceQuality)/\(w.dynamics)/\(w.pitchRange)")
            let own = clips.filter { $0.singer == singer }
            heldLocked[singer] = Stats.mean(own.compactMap { rescored($0.locked, w) })
            heldFree[singer] = Stats.mean(own.compactMap { rescored($0.free, w) })
            // The grade line fitted on the other singers (both timings pooled), applied to this one.
            let others = singerMeans(clips.filter { rest.contains($0.singer) }) { c in
                Stats.mean([rescored(c.locked, w), rescored(c.free, w)].compactMap { $0 })
            }
            let keys = others.keys.sorted()
            if let line = Stats.linearFit(keys.map { others[$0] ?? 0 }, keys.map { overall[$0] ?? 0 }),
               let mine = Stats.mean([heldLocked[singer], heldFree[singer]].compactMap { $0 }) {
                heldGrade[singer] = min(5, max(1, line.intercept + line.slope * mine))
            }
        }
        let fl = correlations(singerMeans(clips) { rescored($0.locked, fitted) }, overall).pearson
        let ff = correlations(singerMeans(clips) { rescored($0.free, fitted) }, overall).pearson
        let hl = correlations(heldLocked, overall), hf = correlations(heldFree, overall)
        print("Voice-dimension weights (share of the score each may take): shipped \(describe(shipped)); fitted on all \(song.singers.count) singers \(describe(fitted)).")
        print("")
        print("| overall Pearson | locked, auto latency | free |")
        print("|---|---|---|")
        print("| shipped weights | \(f(l.pearson)) | \(f(fr.pearson)) |")
        print("| weights fitted on all singers | \(f(fl)) | \(f(ff)) |")
        print("| leave-one-singer-out (weights fitted on the other singers) | \(f(hl.pearson)) (Spearman \(f(hl.spearman))) | \(f(hf.pearson)) (Spearman \(f(hf.spearman))) |")
        print("")
        print("Weights chosen leaving each singer out (vibrato/voice quality/dynamics/pitch range): " + chosen.joined(separator: ", "))
        print("")
        // The expert-grade line: fitted on all (both timings' mean), and its held-out error.
        let both = singerMeans(clips) { c in Stats.mean([c.locked?.score, c.free?.score].compactMap { $0 }) }
        let keys = both.keys.sorted()
        if let line = Stats.linearFit(keys.map { both[$0] ?? 0 }, keys.map { overall[$0] ?? 0 }) {
            let errors = keys.compactMap { s in heldGrade[s].map { abs($0 - (overall[s] ?? 0)) } }
            print("Expert grade = \(String(format: "%.3f", line.intercept)) + \(String(format: "%.4f", line.slope)) × score on all singers "
                  + "(shipped in ExpertGrade: \(ExpertGrade.intercept) + \(ExpertGrade.slope) × score); "
                  + "leave-one-singer-out mean |error| \(f(Stats.mean(errors))) grade points, largest \(f(errors.max())).")
            print("")
            print("| singer | experts' overall | ktv locked | ktv free | expert_grade (shipped) | held-out grade |")
            print("|---|---|---|---|---|---|")
            let ml = singerMeans(clips) { $0.locked?.score }, mf = singerMeans(clips) { $0.free?.score }
            for s in keys.sorted(by: { (overall[$0] ?? 0) > (overall[$1] ?? 0) }) {
                let shippedGrade = ExpertGrade.grade(both[s] ?? 0)
                print("| \(s) | \(String(format: "%.1f", overall[s] ?? 0)) | \(String(format: "%.1f", ml[s] ?? 0)) | \(String(format: "%.1f", mf[s] ?? 0)) | \(String(format: "%.2f", shippedGrade)) | \(f(heldGrade[s])) |")
            }
            print("")
        }
    }
}
