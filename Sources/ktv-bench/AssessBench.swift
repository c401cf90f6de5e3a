import Foundation
import KTVCore
import KTVPitch
import KTVScore

// `ktv-bench assess`: how ktv's scores rank real sung performances against a jury. The data is
// MASTmelody's development part in `../shared/assess/mast` (see its README): performances of
// melodies sung back after a piano reference, graded pass/fail by the examiners and re-graded 1-4
// by later listeners. Two scorers are compared on the same performances: ktv's (`Scorer` with the
// ktv rules) and the dataset's naive DTW baseline. Figures: pass/fail ROC AUC, Spearman against the
// majority grade, each overall and per held-out melody; a grade calibration fitted leaving one
// melody out; the performances where ktv and the graders disagree most.

// MARK: - The data

/// One sung performance, paired with the reference played before it and what the jury said.
struct AssessPerformance {
    /// The f0 file's name, e.g. `51_mel1_per101559_fail.f0s.txt`.
    var fileName: String
    var path: String
    var referencePath: String
    /// The melody, e.g. `51_mel1`: the unit held out in leave-one-melody-out.
    var melody: String
    /// The examiners' unanimous verdict.
    var passed: Bool
    /// The re-grading's majority, 1 (completely off) … 4 (perfect); nil where there is none.
    var majority: Int?
    /// No reference carries this performance's number, so the melody's first reference stands in.
    var usesFirstReference: Bool
}

/// Pairs every `M_per<N>_<pass|fail>.f0s.txt` of `root/f0data` with `M_ref<N>.f0s.txt` (else the
/// melody's first reference, by file name) and with its row of `root/annotations.csv`.
func loadAssessSet(root: String) throws -> [AssessPerformance] {
    let folder = root + "/f0data"
    let suffix = ".f0s.txt"
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(suffix) }.sorted()
    var referencesByMelody: [String: [String]] = [:]
    var takes: [(name: String, melody: String, number: String, passed: Bool)] = []
    for name in names {
        let stem = String(name.dropLast(suffix.count))
        if let range = stem.range(of: "_ref") {
            referencesByMelody[String(stem[..<range.lowerBound]), default: []].append(name)
        } else if let range = stem.range(of: "_per") {
            let tail = stem[range.upperBound...].split(separator: "_")
            guard tail.count == 2, tail[1] == "pass" || tail[1] == "fail" else { fail("\(folder)/\(name): expected M_per<N>_<pass|fail>\(suffix)") }
            takes.append((name, String(stem[..<range.lowerBound]), String(tail[0]), tail[1] == "pass"))
        }
    }
    let grades = try majorityGrades(path: root + "/annotations.csv")
    return try takes.map { take in
        let ownReference = "\(take.melody)_ref\(take.number)\(suffix)"
        let references = referencesByMelody[take.melody] ?? []
        let reference: String
        if references.contains(ownReference) {
            reference = ownReference
        } else if let first = references.first {
            reference = first
        } else {
            throw ScoreError.badReference(path: folder, line: nil, detail: "no reference of melody \(take.melody) for \(take.name)")
        }
        return AssessPerformance(fileName: take.name, path: folder + "/" + take.name, referencePath: folder + "/" + reference,
                                 melody: take.melody, passed: take.passed, majority: grades["\(take.melody)_per\(take.number)"],
                                 usesFirstReference: reference != ownReference)
    }
}

/// `majority_score` by recording (`file` without `.wav`), references' rows skipped. A recording may
/// have two rows (the graders split over them); its grade is the one majority they give, none if
/// they give two different ones.
func majorityGrades(path: String) throws -> [String: Int] {
    let text = String(decoding: try FileIO.read(path, maxBytes: 16 << 20), as: UTF8.self)
    let rows = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    guard let header = rows.first, let fileColumn = header.firstIndex(of: "file"),
          let gradeColumn = header.firstIndex(of: "majority_score") else { fail("\(path): expected the columns file and majority_score") }
    var found: [String: Set<Int>] = [:]
    for row in rows.dropFirst() where row.count > max(fileColumn, gradeColumn) {
        let file = row[fileColumn]
        guard file.hasSuffix(".wav"), !file.contains("_ref"),
              let value = Double(row[gradeColumn]), let grade = Int(exactly: value), (1...4).contains(grade) else { continue }
        found[String(file.dropLast(4)), default: []].insert(grade)
    }
    return found.compactMapValues { $0.count == 1 ? $0.first : nil }
}

// MARK: - The scorers

/// Scores a performance against its reference (file paths); higher = better.
typealias AssessScorer = (_ reference: String, _ performance: String) throws -> Double

/// The general settings ktv is assessed with: the rules' and the alignment's (defaults unless a
/// sweep varies one).
struct AssessSettings {
    var rules = KTVRulesConfiguration()
    var timing = FreeTimingConfiguration()
    var segmenter = ContourSegmenter()

    /// The settings a sweep may vary, by their declared names.
    static let setters: [String: @Sendable (inout AssessSettings, Double) -> Void] = {
        typealias R = KTVRulesConfiguration.Spec
        typealias T = FreeTimingConfiguration.Spec
        typealias S = ContourSegmenter.Spec
        return [
            S.jumpCents.name: { $0.segmenter.jumpCents = $1 }, S.mergeCents.name: { $0.segmenter.mergeCents = $1 },
            S.transitionMs.name: { $0.segmenter.transitionMs = Int($1) }, S.minNoteMs.name: { $0.segmenter.minNoteMs = Int($1) },
            R.fullCreditCents.name: { $0.rules.fullCreditCents = $1 }, R.zeroCreditCents.name: { $0.rules.zeroCreditCents = $1 },
            R.fullCoverage.name: { $0.rules.fullCoverage = $1 }, R.timingWeight.name: { $0.rules.timingWeight = $1 },
            R.keyWeight.name: { $0.rules.keyWeight = $1 }, R.keyToleranceCents.name: { $0.rules.keyToleranceCents = $1 },
            R.octaveCredit.name: { $0.rules.octaveCredit = $1 }, R.tempoStabilityWeight.name: { $0.rules.tempoStabilityWeight = $1 },
            R.tempoSpreadScale.name: { $0.rules.tempoSpreadScale = $1 }, R.steadinessWeight.name: { $0.rules.steadinessWeight = $1 },
            T.stepMs.name: { $0.timing.stepMs = Int($1) }, T.capCents.name: { $0.timing.capCents = $1 },
            T.gapCost.name: { $0.timing.gapCost = $1 }, T.skipCost.name: { $0.timing.skipCost = $1 }, T.bandShare.name: { $0.timing.bandShare = $1 },
        ]
    }()
}

/// ktv's score (0-100, ktv rules, free timing as in `ktv score --timing free`: the performances are
/// sung freely after the piano) with one `Scorer`; each reference is read, and its aligner made,
/// once.
func makeKTVAssessScorer(_ settings: AssessSettings = AssessSettings()) throws -> AssessScorer {
    let scorer = try Scorer(configuration: ScoreConfiguration(rules: KTVRules(configuration: settings.rules)))
    let reference = memoised { path -> (melody: ReferenceMelody, aligner: any TakeAligner) in
        let melody = try scorer.reference(path: path, options: ReferenceOptions(segmenter: settings.segmenter))
        return (melody, FreeTimingAligner(reference: melody, configuration: settings.timing))
    }
    return { referencePath, performancePath in
        let (melody, aligner) = try reference(referencePath)
        return try scorer.score(try scorer.take(path: performancePath), reference: melody, aligner: aligner).score
    }
}

/// The dataset's naive baseline: −(mean |cents difference| along the DTW path) between the reference
/// and the performance moved by whole octaves to the reference's register (`baselineOctaveShiftCents`),
/// both as `baselineSteps`. References are prepared once.
func makeBaselineAssessScorer() -> AssessScorer {
    let reference = memoised { path -> (steps: [Float], medianCents: Double) in
        let contour = try BaselineContour(path: path)
        return (baselineSteps(contour), contour.medianCents)
    }
    return { referencePath, performancePath in
        let (referenceSteps, referenceMedianCents) = try reference(referencePath)
        let performance = try BaselineContour(path: performancePath)
        let shiftCents = baselineOctaveShiftCents(performance: performance.medianCents, reference: referenceMedianCents)
        return -dtwMeanCost(referenceSteps, baselineSteps(performance, shiftCents: shiftCents))
    }
}

/// `make(path)`, made once per path: a reference serves every performance sung after it.
func memoised<Value>(_ make: @escaping (String) throws -> Value) -> (String) throws -> Value {
    var cache: [String: Value] = [:]
    return { path in
        if let value = cache[path] { return value }
        let value = try make(path)
        cache[path] = value
        return value
    }
}

/// A pitch track's voiced frames in cents (above A4; only differences matter), with their median.
struct BaselineContour {
    var timesS: [Double] = []
    var cents: [Double] = []
    var medianCents: Double

    init(path: String) throws {
        let contour = try PitchTrackFile.read(path: path)
        for (t, f0) in zip(contour.timesS, contour.f0Hz) {
            guard let hz = f0, hz > 0, t >= 0 else { continue }
            timesS.append(t)
            cents.append(1200 * log2(hz / 440))
        }
        guard let median = Stats.median(cents.sorted()) else { throw ScoreError.badTake(path: path, line: nil, detail: "no voiced frame") }
        medianCents = median
    }
}

/// The whole octaves between the two medians, in cents: what "octave-normalised by the median" moves
/// a performance by. Only octaves: a candidate singing back in another key is wrong, and the graders
/// hear it. (Subtracting each contour's own median, which removes the key too, gives AUC 0.69 and
/// Spearman 0.41 here instead of the README's 0.79 and 0.61; whole octaves give about those.)
func baselineOctaveShiftCents(performance: Double, reference: Double) -> Double {
    1200 * ((performance - reference) / 1200).rounded()
}

/// The contour less `shiftCents`, as `stepS` steps from time 0: the median of the voiced frames in
/// each step; steps with none are dropped (the DTW then joins across silences).
func baselineSteps(_ contour: BaselineContour, shiftCents: Double = 0, stepS: Double = 0.03) -> [Float] {
    var steps: [Float] = []
    var i = 0
    while i < contour.timesS.count {
        let step = Int(contour.timesS[i] / stepS)
        var inStep: [Double] = []
        while i < contour.timesS.count, Int(contour.timesS[i] / stepS) == step {
            inStep.append(contour.cents[i] - shiftCents)
            i += 1
        }
        if let value = Stats.median(inStep.sorted()) { steps.append(Float(value)) }
    }
    return steps
}

/// Plain DTW (steps (1,0), (0,1), (1,1)), cost |a − b|: the total cost of the cheapest path divided
/// by its length. Two rows of the cost matrix at a time (with each cell's path length), so memory is
/// linear in `b`'s length.
func dtwMeanCost(_ a: [Float], _ b: [Float]) -> Double {
    guard !a.isEmpty, !b.isEmpty else { return .infinity }
    var previousCost = [Double](repeating: .infinity, count: b.count), cost = previousCost
    var previousLength = [Int](repeating: 0, count: b.count), length = previousLength
    for i in a.indices {
        for j in b.indices {
            let local = Double(abs(a[i] - b[j]))
            if i == 0 && j == 0 {
                cost[j] = local
                length[j] = 1
                continue
            }
            // The cheapest predecessor; on a tie the diagonal, then the one above.
            var best = Double.infinity, bestLength = 0
            if i > 0 && j > 0 { best = previousCost[j - 1]; bestLength = previousLength[j - 1] }
            if i > 0 && previousCost[j] < best { best = previousCost[j]; bestLength = previousLength[j] }
            if j > 0 && cost[j - 1] < best { best = cost[j - 1]; bestLength = length[j - 1] }
            cost[j] = best + local
            length[j] = bestLength + 1
        }
        swap(&cost, &previousCost)
        swap(&length, &previousLength)
    }
    return previousCost[b.count - 1] / Double(previousLength[b.count - 1])
}

// MARK: - Figures

/// A performance's score with the jury's verdicts: what the figures and a calibration see.
struct GradedScore {
    var melody: String
    var score: Double
    var passed: Bool
    var majority: Int?
}

/// Pass/fail ROC AUC (pass positive) and Spearman against the majority grade; nil where undefined
/// (one class only, fewer than two graded, a constant list).
func rankFigures(_ items: [GradedScore]) -> (auc: Double?, spearman: Double?) {
    let graded = items.filter { $0.majority != nil }
    return (Stats.rocAUC(positives: items.filter(\.passed).map(\.score), negatives: items.filter { !$0.passed }.map(\.score)),
            Stats.spearman(graded.map(\.score), graded.compactMap { $0.majority.map(Double.init) }))
}

/// The figures of each melody on its own (sorted by melody).
func perMelodyFigures(_ items: [GradedScore]) -> [(melody: String, auc: Double?, spearman: Double?)] {
    Dictionary(grouping: items, by: \.melody).sorted { $0.key < $1.key }.map { melody, group in
        let figures = rankFigures(group)
        return (melody, figures.auc, figures.spearman)
    }
}

/// Fits on all melodies but one and applies to that one, for each melody in turn: `fit` sees the
/// other melodies' scores and grades and returns the parameters (nil: nothing to fit), `apply` maps a
/// held-out score with them. The results are in `items`' order; nil where the fit gave nothing.
func leaveOneMelodyOut<Parameters>(_ items: [GradedScore], fit: ([GradedScore]) -> Parameters?,
                                   apply: (Parameters, Double) -> Double) -> [Double?] {
    var results = [Double?](repeating: nil, count: items.count)
    for melody in Set(items.map(\.melody)) {
        guard let parameters = fit(items.filter { $0.melody != melody }) else { continue }
        for i in items.indices where items[i].melody == melody { results[i] = apply(parameters, items[i].score) }
    }
    return results
}

/// The grade calibration (`KTVScore.GradeCalibration`'s map) fitted on graded scores: the mean raw
/// score of each grade level lands on that level's anchor in the shipped knots (1 → 25, 2 → 50,
/// 3 → 75, 4 → 92). When the level means are out of order the map would fall, so neighbouring
/// anchors that are out of order are pooled (pool-adjacent-violators: raw and anchor means weighted
/// by the levels' counts) until the anchors rise with the raw score.
struct CalibrationFit {
    /// Level (1-4) → its anchor, as the shipped knots have them.
    static let anchors = Dictionary(uniqueKeysWithValues: GradeCalibration.knots.enumerated().map { ($0.offset + 1, $0.element.calibrated) })

    /// (raw, calibrated) points, raw strictly rising, calibrated never falling.
    var points: [(raw: Double, calibrated: Double)]

    /// Fitted on the graded items; nil when none is graded.
    init?(fitting items: [GradedScore]) {
        var blocks: [(raw: Double, calibrated: Double, weight: Double)] = []
        let byLevel = Dictionary(grouping: items.compactMap { item in item.majority.map { (level: $0, score: item.score) } }, by: { $0.level })
        let levels = byLevel.compactMap { level, scores -> (raw: Double, calibrated: Double, weight: Double)? in
            guard let anchor = Self.anchors[level], let mean = Stats.mean(scores.map { $0.score }) else { return nil }
            return (mean, anchor, Double(scores.count))
        }.sorted { ($0.raw, $0.calibrated) < ($1.raw, $1.calibrated) }
        for level in levels {
            blocks.append(level)
            while blocks.count >= 2, let last = blocks.last, blocks[blocks.count - 2].calibrated > last.calibrated || blocks[blocks.count - 2].raw == last.raw {
                let previous = blocks[blocks.count - 2], weight = previous.weight + last.weight
                blocks.removeLast(2)
                blocks.append(((previous.raw * previous.weight + last.raw * last.weight) / weight,
                               (previous.calibrated * previous.weight + last.calibrated * last.weight) / weight, weight))
            }
        }
        guard !blocks.isEmpty else { return nil }
        points = blocks.map { ($0.raw, $0.calibrated) }
    }

    func callAsFunction(_ raw: Double) -> Double { GradeCalibration.interpolated(raw, knots: points) }
}

/// Each performance's score with its verdicts, in the performances' order.
func gradedScores(_ performances: [AssessPerformance], _ scores: [Double]) -> [GradedScore] {
    zip(performances, scores).map { GradedScore(melody: $0.melody, score: $1, passed: $0.passed, majority: $0.majority) }
}

/// The mean and the least of the defined values; nil when none is.
func meanAndLeast(_ values: [Double?]) -> (mean: Double?, least: Double?) {
    let defined = values.compactMap { $0 }
    return (Stats.mean(defined), defined.min())
}

/// A figure to three decimals; "—" when undefined.
func figure(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "—" }

// MARK: - The bench

/// One scorer's scores of every performance, and the time they took.
struct AssessRun {
    var name: String
    var scores: [Double]
    var seconds: Double
    /// Performances the scorer refused, with the first reason.
    var failures: Int
    var firstFailure: String?
}

/// Scores every performance with `scorer`, timed (reading the f0 files is part of scoring; pairing
/// them is not). A performance the scorer refuses gets its lowest score, so it ranks last rather than
/// leaving the scorers compared on different sets.
func runAssessScorer(_ name: String, _ scorer: AssessScorer, on performances: [AssessPerformance]) -> AssessRun {
    var scores: [Double?] = []
    var firstFailure: String?
    let start = now()
    for performance in performances {
        do { scores.append(try scorer(performance.referencePath, performance.path)) } catch {
            scores.append(nil)
            if firstFailure == nil { firstFailure = "\(performance.fileName): \(error)" }
        }
    }
    let seconds = now() - start
    let lowest = scores.compactMap { $0 }.min() ?? 0
    return AssessRun(name: name, scores: scores.map { $0 ?? lowest }, seconds: seconds,
                     failures: scores.filter { $0 == nil }.count, firstFailure: firstFailure)
}

func benchAssess(_ args: [String]) {
    let shared = option("--shared", in: args) ?? "../shared"
    let root = shared + "/assess/mast"
    guard FileManager.default.fileExists(atPath: root + "/f0data"), FileManager.default.fileExists(atPath: root + "/annotations.csv") else {
        print("assess: no MASTmelody data at \(root) (f0data/, annotations.csv); nothing measured")
        exit(0)
    }
    let performances: [AssessPerformance]
    do { performances = try loadAssessSet(root: root) } catch { fail("\(error)") }
    let melodies = Set(performances.map(\.melody)).count
    let passCount = performances.filter(\.passed).count, gradedCount = performances.filter { $0.majority != nil }.count
    print("assess: \(performances.count) performances of \(melodies) melodies (\(passCount) pass, \(performances.count - passCount) fail), "
          + "\(gradedCount) with a majority grade, from \(root); \(performances.filter(\.usesFirstReference).count) sung after "
          + "the melody's first reference (none of their own number)")
    print("")

    if let spec = option("--sweep", in: args) {
        sweepAssess(spec, performances: performances)
        return
    }
    let ktvScorer: AssessScorer
    do { ktvScorer = try makeKTVAssessScorer() } catch { fail("\(error)") }
    let ktvRun = runAssessScorer("ktv", ktvScorer, on: performances)
    let runs = [ktvRun, runAssessScorer("baseline (DTW)", makeBaselineAssessScorer(), on: performances)]
    for run in runs where run.failures > 0 {
        print("\(run.name): \(run.failures) performances not scored (ranked last); first: \(run.firstFailure ?? "")")
    }

    // Every scorer's figures, and its scores calibrated leaving each melody out.
    let graded = runs.map { gradedScores(performances, $0.scores) }
    let calibrated = graded.map { items in
        leaveOneMelodyOut(items, fit: { CalibrationFit(fitting: $0) }, apply: { calibration, raw in calibration(raw) })
    }
    func table(_ rows: [(String, [String])]) {
        print("| figure | " + runs.map(\.name).joined(separator: " | ") + " |")
        print("|---|" + String(repeating: "---|", count: runs.count))
        for (label, cells) in rows { print("| \(label) | " + cells.joined(separator: " | ") + " |") }
    }
    let f = figure
    func summary(_ values: [Double?]) -> String {
        let (mean, least) = meanAndLeast(values), defined = values.compactMap { $0 }.count
        guard mean != nil else { return "—" }
        return "\(f(mean)) / \(f(least))" + (defined < values.count ? " (\(defined) of \(values.count))" : "")
    }
    let overall = graded.map(rankFigures)
    let perMelody = graded.map(perMelodyFigures)
    let pooledCalibrated = zip(graded, calibrated).map { items, values in
        rankFigures(zip(items, values).compactMap { item, value in value.map { GradedScore(melody: item.melody, score: $0, passed: item.passed, majority: item.majority) } })
    }
    let inBand = zip(graded, calibrated).map { items, values -> Double? in
        let judged = zip(items, values).compactMap { item, value in item.majority.flatMap { majority in value.map { (majority, $0) } } }
        guard !judged.isEmpty else { return nil }
        return Double(judged.filter { GradeCalibration.level($0.1) == $0.0 }.count) / Double(judged.count)
    }
    print("### Ranking against the jury (leave-one-melody-out: each melody on its own; calibration fitted on the others)")
    print("")
    table([
        ("pass/fail ROC AUC, all \(performances.count)", overall.map { f($0.auc) }),
        ("AUC per held-out melody, mean / min", perMelody.map { summary($0.map { $0.auc }) }),
        ("AUC pooled, calibrated on the other melodies", pooledCalibrated.map { f($0.auc) }),
        ("Spearman vs majority grade, all \(gradedCount)", overall.map { f($0.spearman) }),
        ("Spearman per held-out melody, mean / min", perMelody.map { summary($0.map { $0.spearman }) }),
        ("Spearman pooled, calibrated on the other melodies", pooledCalibrated.map { f($0.spearman) }),
        ("calibrated score in its majority's band (held out)", inBand.map { $0.map { String(format: "%.1f %%", 100 * $0) } ?? "—" }),
        ("seconds, all performances (reading included)", runs.map { String(format: "%.2f", $0.seconds) }),
        ("ms per performance", runs.map { String(format: "%.2f", 1000 * $0.seconds / Double(max(1, performances.count))) }),
    ])
    let levelCounts: [Int] = (1...4).map { level in performances.filter { $0.majority == level }.count }
    let commonest = levelCounts.max() ?? 0
    print("")
    print("For scale: the README's baseline figures are AUC 0.79 and Spearman 0.61; two graders agree at Spearman 0.84-0.88; "
          + "calling every performance the commonest grade puts \(String(format: "%.1f %%", 100 * Double(commonest) / Double(max(1, gradedCount)))) in band.")
    // The calibration `ktv score` reports with (KTVScore.GradeCalibration) is this fit on every melody.
    if let all = CalibrationFit(fitting: graded[0]) {
        let fitted = all.points.map { String(format: "(%.1f, %.0f)", $0.raw, $0.calibrated) }.joined(separator: ", ")
        let shipped = GradeCalibration.knots.map { String(format: "(%.1f, %.0f)", $0.raw, $0.calibrated) }.joined(separator: ", ")
        print("Calibration fitted on every melody (raw level mean → anchor): \(fitted); in KTVScore.GradeCalibration: \(shipped)"
              + (fitted == shipped ? "." : " (out of date: copy the fitted knots there)."))
    }

    // Each melody on its own: where the means and minima above come from.
    print("")
    print("### Per melody")
    print("")
    print("| melody | pass / fail | graded | " + runs.map { "AUC \($0.name)" }.joined(separator: " | ") + " | "
          + runs.map { "Spearman \($0.name)" }.joined(separator: " | ") + " |")
    print("|---|---|---|" + String(repeating: "---|", count: 2 * runs.count))
    for (k, melody) in perMelody[0].map(\.melody).enumerated() {
        let members = performances.filter { $0.melody == melody }
        let passes = members.filter(\.passed).count
        print("| \(melody) | \(passes) / \(members.count - passes) | \(members.filter { $0.majority != nil }.count) | "
              + perMelody.map { f($0[k].auc) }.joined(separator: " | ") + " | " + perMelody.map { f($0[k].spearman) }.joined(separator: " | ") + " |")
    }

    // ktv's raw and calibrated scores by grade level.
    let ktvCalibrated = calibrated[0]
    print("")
    print("### ktv's scores by majority grade (calibrated: fitted leaving the performance's melody out; band 1 < 40 ≤ 2 < 65 ≤ 3 < 85 ≤ 4)")
    print("")
    print("| majority | n | raw min / median / max | calibrated min / median / max | calibrated in band |")
    print("|---|---|---|---|---|")
    for level in 1...4 {
        let members = performances.indices.filter { performances[$0].majority == level }
        let raw = members.map { ktvRun.scores[$0] }.sorted()
        let cal = members.compactMap { ktvCalibrated[$0] }.sorted()
        func spread(_ sorted: [Double]) -> String {
            guard let low = sorted.first, let mid = Stats.median(sorted), let high = sorted.last else { return "—" }
            return String(format: "%.1f / %.1f / %.1f", low, mid, high)
        }
        let hits = cal.filter { GradeCalibration.level($0) == level }.count
        print("| \(level) | \(members.count) | \(spread(raw)) | \(spread(cal)) | \(cal.isEmpty ? "—" : String(format: "%.1f %%", 100 * Double(hits) / Double(cal.count))) |")
    }

    // Where ktv and the graders disagree most: rank distance over the graded performances.
    let gradedIndices = performances.indices.filter { performances[$0].majority != nil }
    let scoreRanks = Stats.averageRanks(gradedIndices.map { ktvRun.scores[$0] })
    let gradeRanks = Stats.averageRanks(gradedIndices.compactMap { performances[$0].majority.map(Double.init) })
    let disagreements = gradedIndices.indices.map { k in (index: gradedIndices[k], distance: abs(scoreRanks[k] - gradeRanks[k]) / Double(gradedIndices.count)) }
        .sorted { $0.distance > $1.distance }.prefix(5)
    print("")
    print("### Where ktv disagrees with the graders most (|rank of ktv's score − rank of the majority grade| / \(gradedIndices.count))")
    print("")
    print("| performance | majority | examiners | ktv score | rank distance |")
    print("|---|---|---|---|---|")
    for (index, distance) in disagreements {
        let p = performances[index]
        print("| \(p.fileName) | \(p.majority.map(String.init) ?? "—") | \(p.passed ? "pass" : "fail") | \(String(format: "%.1f", ktvRun.scores[index])) | \(String(format: "%.2f", distance)) |")
    }
}

// MARK: - Sweeping a general setting

/// `--sweep name=v1,v2,…`: ktv scored with each value of one general setting, and how much choosing
/// it on this data flatters the figures: for each melody the value is chosen on the other melodies
/// (best mean per-melody AUC + Spearman) and the held-out melody is scored with it.
func sweepAssess(_ spec: String, performances: [AssessPerformance]) {
    let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2, let setter = AssessSettings.setters[parts[0]] else {
        fail("--sweep: expected name=v1,v2,… with a name among \(AssessSettings.setters.keys.sorted().joined(separator: ", "))")
    }
    let values = parts[1].split(separator: ",").compactMap { Double($0) }
    guard values.count >= 2, values.count == parts[1].split(separator: ",").count else { fail("--sweep: expected at least two numbers after \(parts[0])=") }
    let runs: [[GradedScore]] = values.map { value in
        var settings = AssessSettings()
        setter(&settings, value)
        let scorer: AssessScorer
        do {
            _ = try settings.rules.validated()
            _ = try settings.timing.validated()
            _ = try settings.segmenter.validated()
            scorer = try makeKTVAssessScorer(settings)
        } catch { fail("--sweep \(parts[0])=\(value): \(error)") }
        return gradedScores(performances, runAssessScorer("ktv", scorer, on: performances).scores)
    }
    let f = figure
    print("")
    print("### Sweep of \(parts[0])")
    print("")
    print("| \(parts[0]) | AUC all | AUC per melody mean / min | Spearman all | Spearman per melody mean / min |")
    print("|---|---|---|---|---|")
    let perMelody = runs.map(perMelodyFigures)
    for (k, value) in values.enumerated() {
        let all = rankFigures(runs[k]), auc = meanAndLeast(perMelody[k].map(\.auc)), rho = meanAndLeast(perMelody[k].map(\.spearman))
        print("| \(value) | \(f(all.auc)) | \(f(auc.mean)) / \(f(auc.least)) | \(f(all.spearman)) | \(f(rho.mean)) / \(f(rho.least)) |")
    }
    // Leave one melody out: the value the other melodies prefer (mean per-melody AUC + Spearman),
    // applied to the held-out one.
    var chosen: [Double] = [], heldOut: [(auc: Double?, spearman: Double?)] = [], pooled: [GradedScore] = []
    for (m, melody) in perMelody[0].map(\.melody).enumerated() {
        let merits = perMelody.map { figures in
            let others = figures.indices.filter { $0 != m }
            return (meanAndLeast(others.map { figures[$0].auc }).mean ?? 0) + (meanAndLeast(others.map { figures[$0].spearman }).mean ?? 0)
        }
        let best = merits.indices.max { merits[$0] < merits[$1] } ?? 0
        chosen.append(values[best])
        heldOut.append((perMelody[best][m].auc, perMelody[best][m].spearman))
        pooled += runs[best].filter { $0.melody == melody }
    }
    let pooledFigures = rankFigures(pooled), auc = meanAndLeast(heldOut.map(\.auc)), rho = meanAndLeast(heldOut.map(\.spearman))
    let counts = Dictionary(grouping: chosen, by: { $0 }).sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value.count)" }
    print("")
    print("Chosen leaving each melody out: \(counts.joined(separator: ", ")). Held out: AUC per melody \(f(auc.mean)) / \(f(auc.least)), "
          + "Spearman per melody \(f(rho.mean)) / \(f(rho.least)); pooled AUC \(f(pooledFigures.auc)), Spearman \(f(pooledFigures.spearman)).")
}
