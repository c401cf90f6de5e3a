import Foundation
import KTVCore

// Free timing: a take that shares no clock with the reference (a sing-back exam, a practice app
// without a backing track, a take recorded elsewhere) is placed on the reference's clock by dynamic
// time warping of the two pitch sequences.
//
// Reference: M. Müller, "Fundamentals of Music Processing", Springer 2015, ch. 3 (DTW: cost matrix,
// step sizes (1,0), (0,1), (1,1), accumulated cost, optimal warping path; the Sakoe-Chiba band).
//
// Why DTW over pitch rather than note matching: the takes are f0 tracks, and a note-level matcher
// needs the take segmented into notes first, which errs most on exactly the takes that matter (a
// glide into a wrong note, a missed re-attack). DTW compares the contours directly, and the judge
// then works note by note on the warped take. Choices:
// - Both sequences are taken to a common step (`stepMs`, median of the voiced frames in a step), in
//   cents; the take is moved by its key estimate first (the median sung pitch against the
//   reference's), so that a transposed singer aligns on the melody's shape.
// - Cost: |difference| capped at `capCents` (a wrong note costs the same however wrong), a fixed
//   `gapCost` where one side is silent, 0 where both are.
// - Leading and trailing silence of the take is dropped: the singer may start anywhere.
// - The path is searched in a band around the diagonal (`bandShare` of the length, at least
//   `minBandS`): memory is take steps × band width bytes, bounded (`maxCells`) by coarsening the step
//   for very long takes, never a full matrix.

/// Settings of free-timing alignment, declared once.
public struct FreeTimingConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let stepMs = Parameter<Int>("stepMs", unit: "ms", range: 5...200, default: 30,
            "Time step both contours are compared at (the median of the voiced frames in each step).")
        public static let capCents = Parameter<Double>("capCents", unit: "cents", range: 50...2400, default: 300,
            "A step's cost stops growing here: a wrong note costs the same however wrong.")
        public static let gapCost = Parameter<Double>("gapCost", unit: "cents", range: 0...2400, default: 150,
            "Cost of a step where one contour is silent and the other is not.")
        public static let skipCost = Parameter<Double>("skipCost", unit: "cents", range: 0...2400, default: 80,
            "Cost of each step with a note the path leaves out before its start or after its end (a singer who comes in late or stops early); below a semitone's cost, so the take is not stretched over notes it does not sing.")
        public static let bandShare = Parameter<Double>("bandShare", range: 0.05...1, default: 0.3,
            "Half-width of the search band around the diagonal, as a share of the longer sequence.")
        public static let minBandS = Parameter<Double>("minBandS", unit: "s", range: 0.5...60, default: 3,
            "The band's half-width is at least this.")
        public static let all: [ParameterInfo] = [stepMs.info, capCents.info, gapCost.info, skipCost.info, bandShare.info, minBandS.info]
    }

    public var stepMs = Spec.stepMs.defaultValue
    public var capCents = Spec.capCents.defaultValue
    public var gapCost = Spec.gapCost.defaultValue
    public var skipCost = Spec.skipCost.defaultValue
    public var bandShare = Spec.bandShare.defaultValue
    public var minBandS = Spec.minBandS.defaultValue
    /// The most cells (bytes of path directions) one alignment may use; the step grows past it.
    public static let maxCells = 48_000_000

    public init() {}

    public func validated() throws(ScoreError) -> FreeTimingConfiguration {
        do {
            try Spec.stepMs.check(stepMs)
            try Spec.capCents.check(capCents)
            try Spec.gapCost.check(gapCost)
            try Spec.skipCost.check(skipCost)
            try Spec.bandShare.check(bandShare)
            try Spec.minBandS.check(minBandS)
        } catch { throw ScoreError(error) }
        return self
    }
}

/// What the warping did: the take's overall tempo against the reference and its largest local stretch.
public struct WarpSummary: Sendable, Equatable {
    /// Sung duration / reference duration over the whole melody (> 1: slower).
    public var tempoRatio: Double
    /// The largest and smallest local tempo ratio over one-second stretches of the reference,
    /// relative to `tempoRatio` (1 = steady).
    public var largestStretch: Double
    public var largestCompression: Double
    /// The key assumed while aligning, cents (the take was moved by −this).
    public var keyShiftCents: Double
    /// The inverse map, for rhythm: the take time (ms from its first voiced frame) at reference step
    /// k, where step k starts at `referenceStartMs` + k·`stepMs`.
    public var takeMsAtStep: [Double] = []
    public var referenceStartMs = 0
    public var stepMs = 0.0

    /// How long the singer took over the reference span [startMs, endMs), in ms of the take.
    public func sungMs(from startMs: Int, to endMs: Int) -> Double? {
        guard !takeMsAtStep.isEmpty, stepMs > 0 else { return nil }
        func at(_ ms: Int) -> Double {
            let x = Double(ms - referenceStartMs) / stepMs
            let a = max(0, min(takeMsAtStep.count - 1, Int(x.rounded(.down)))), b = min(takeMsAtStep.count - 1, a + 1)
            let frac = max(0, min(1, x - Double(a)))
            return takeMsAtStep[a] + (takeMsAtStep[b] - takeMsAtStep[a]) * frac
        }
        return at(endMs) - at(startMs)
    }
}

/// Places a take on the reference's clock by DTW (see the comment at the top of the file).
public struct FreeTimingAligner: TakeAligner {
    /// The `count` shifts in [0, 1200) cents that best align the pitch classes of `a` onto `b`
    /// (local maxima of the circular cross-correlation of 10-cent histograms smoothed over ±30 cents),
    /// best first.
    static func pitchClassShifts(_ a: [Double], _ b: [Double], count: Int) -> [Double] {
        func histogram(_ v: [Double]) -> [Double] {
            var h = [Double](repeating: 0, count: 120)
            for x in v {
                let bin = Int((x / 10).rounded()) % 120
                h[(bin + 120) % 120] += 1
            }
            var smooth = [Double](repeating: 0, count: 120)
            for k in 0..<120 { for d in -3...3 { smooth[k] += h[(k + d + 120) % 120] * exp(-Double(d * d) / 4.5) } }
            return smooth
        }
        let ha = histogram(a), hb = histogram(b)
        var correlation = [Double](repeating: 0, count: 120)
        for s in 0..<120 { for k in 0..<120 { correlation[s] += ha[(k + s) % 120] * hb[k] } }
        let peaks = (0..<120).filter { correlation[$0] >= correlation[($0 + 119) % 120] && correlation[$0] > correlation[($0 + 1) % 120] }
        return peaks.sorted { correlation[$0] > correlation[$1] }.prefix(count).map { Double($0) * 10 }
    }

    public let reference: ReferenceMelody
    public var configuration: FreeTimingConfiguration
    public var keyShift: KeyShift

    public init(reference: ReferenceMelody, keyShift: KeyShift = .auto, configuration: FreeTimingConfiguration = FreeTimingConfiguration()) {
        self.reference = reference
        self.keyShift = keyShift
        self.configuration = configuration
    }

    public func align(_ take: PitchContour) throws(ScoreError) -> SungTake {
        let c = try configuration.validated()
        let notes = reference.notes.filter { $0.cents != nil && $0.durationMs > 0 }
        guard let refStart = notes.map(\.startMs).min(), let refEnd = notes.map(\.endMs).max(), refEnd > refStart else {
            throw .badReference(path: "", line: nil, detail: "no pitched note to align the take to")
        }
        // The sung span: first to last voiced frame.
        guard let first = take.f0Hz.firstIndex(where: { $0 != nil }), let last = take.f0Hz.lastIndex(where: { $0 != nil }) else {
            throw .badTake(path: "", line: nil, detail: "no voiced frame: nothing was sung")
        }
        let takeStartMs = take.timesS[first] * 1000, takeEndMs = take.timesS[last] * 1000 + 1
        // The step: as asked, coarser when the band would not fit the cell budget.
        var stepMs = Double(c.stepMs)
        func counts(_ s: Double) -> (n: Int, m: Int, w: Int) {
            let n = max(1, Int(((takeEndMs - takeStartMs) / s).rounded(.up)))
            let m = max(1, Int((Double(refEnd - refStart) / s).rounded(.up)))
            let w = max(Int(c.minBandS * 1000 / s), Int(c.bandShare * Double(max(n, m)))) + abs(n - m)
            return (n, m, w)
        }
        while true {
            let (n, _, w) = counts(stepMs)
            if n * (2 * w + 1) <= FreeTimingConfiguration.maxCells { break }
            stepMs *= 1.5
        }
        let (n, m, w) = counts(stepMs)
        // The take in cents per step, and the reference rendered from its notes.
        var takeSteps = [Double?](repeating: nil, count: n)
        do {
            var bucket: [Double] = []
            var current = 0
            func flush() {
                if !bucket.isEmpty, current < n { bucket.sort(); takeSteps[current] = Stats.median(bucket) }
                bucket.removeAll(keepingCapacity: true)
            }
            for k in first...last {
                let i = min(n - 1, Int((take.timesS[k] * 1000 - takeStartMs) / stepMs))
                if i != current { flush(); current = i }
                if let f = take.f0Hz[k] { bucket.append(ReferenceMelody.cents(hz: f)) }
            }
            flush()
        }
        var refSteps = [Double?](repeating: nil, count: m)
        for note in notes {
            guard let cents = note.cents else { continue }
            let a = Int(Double(note.startMs - refStart) / stepMs), b = Int((Double(note.endMs - refStart) / stepMs).rounded(.up))
            for j in max(0, a)..<min(m, b) { refSteps[j] = cents }
        }
        // The key: within the octave, the candidates are the shifts that best line up the two
        // pitch-class histograms (a median difference is pulled off by notes held longer in one
        // than in the other, and melodies full of fourths have several near-best shifts) and the
        // median difference itself; the warp with the lowest cost decides. The octave comes from
        // the medians (the cost below folds octaves anyway).
        let sung = takeSteps.compactMap { $0 }.sorted(), wanted = refSteps.compactMap { $0 }.sorted()
        let medianDifference = (Stats.median(sung) ?? 0) - (Stats.median(wanted) ?? 0)
        func nearMedian(_ classShift: Double) -> Double { classShift + 1200 * ((medianDifference - classShift) / 1200).rounded() }
        let candidates: [Double]
        switch keyShift {
        case .auto: candidates = [medianDifference] + Self.pitchClassShifts(sung, wanted, count: 3).map(nearMedian)
        case .none: candidates = [1200 * (medianDifference / 1200).rounded()]
        case let .cents(given): candidates = [given]
        }
        let width = 2 * w + 1
        func centre(_ i: Int) -> Int { n > 1 ? Int((Double(i) * Double(m - 1) / Double(n - 1)).rounded()) : 0 }
        let b = refSteps.map { $0 ?? .nan }
        // Open ends: the take may begin after the reference's first notes and stop before its last
        // (a singer who comes in late or stops early, or a reference whose recording runs on past
        // the melody). Each step with a note left out costs `skipCost`, less than matching a note a
        // semitone away, so the path does not stretch the take's first or last note over notes it
        // never sang, and more than nothing, so it does not drop notes the take does sing; the notes
        // left out are judged as missing.
        var skipBefore = [Double](repeating: 0, count: m + 1)
        for j in 0..<m { skipBefore[j + 1] = skipBefore[j] + (b[j].isNaN ? 0 : c.skipCost) }
        func skipAfter(_ j: Int) -> Double { skipBefore[m] - skipBefore[j + 1] }
        /// The banded DTW for one key: the cheapest total cost (with the skipped ends) and the
        /// reference step the path ends at, and, when `keepPath`, the path directions (the only
        /// n × width allocation; candidate keys are compared without it).
        func warp(shift: Double, keepPath: Bool) -> (cost: Double, endStep: Int, directions: [UInt8]) {
            // The cost folds octaves: a singer who changes octave mid-phrase is still aligned on the
            // melody (the judge decides what the octave costs).
            // Banded DTW: row i (take step) holds columns centre(i) − w … centre(i) + w. Silence is NaN
            // in plain arrays, so the inner loop does no optional unwrapping.
            let a = takeSteps.map { $0.map { $0 - shift } ?? .nan }
            let cap = c.capCents, gap = c.gapCost
            var directions = [UInt8](repeating: 0, count: keepPath ? n * width : 0)  // 0 start, 1 diagonal, 2 from i−1, 3 from j−1
            var previous = [Double](repeating: .infinity, count: width), row = [Double](repeating: .infinity, count: width)
            a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    directions.withUnsafeMutableBufferPointer { directions in
                        for i in 0..<n {
                            let ci = centre(i), shiftFromPrevious = i > 0 ? ci - centre(i - 1) : 0
                            let ai = a[i]
                            var left = Double.infinity
                            for k in 0..<width {
                                let j = ci - w + k
                                guard j >= 0, j < m else { row[k] = .infinity; left = .infinity; continue }
                                let bj = b[j]
                                let here: Double
                                if ai.isNaN { here = bj.isNaN ? 0 : gap } else if bj.isNaN { here = gap } else {
                                    // The distance to the nearest whole octave apart (fmod costs more in this loop).
                                    let d = ai - bj
                                    here = min(abs(d - 1200 * (d * (1.0 / 1200)).rounded()), cap)
                                }
                                // The previous row's columns j − 1 and j sit at k + shift − 1 and k + shift there.
                                // The first take step may also start the path anywhere, the steps before skipped.
                                var best = i == 0 ? skipBefore[j] : Double.infinity, dir: UInt8 = 0
                                if i > 0 {
                                    let kd = k + shiftFromPrevious - 1, kv = kd + 1
                                    if kd >= 0, kd < width, previous[kd] < best { best = previous[kd]; dir = 1 }
                                    if kv >= 0, kv < width, previous[kv] < best { best = previous[kv]; dir = 2 }
                                }
                                if left < best { best = left; dir = 3 }
                                let total = best + here
                                row[k] = best.isFinite ? total : .infinity
                                left = row[k]
                                if keepPath { directions[i * width + k] = best.isFinite ? dir : 0 }
                            }
                            swap(&previous, &row)
                        }
                    }
                }
            }
            // The path ends in the last row, the reference steps after it skipped.
            var cost = Double.infinity, endStep = m - 1
            for k in 0..<width {
                let j = centre(n - 1) - w + k
                guard j >= 0, j < m, previous[k].isFinite else { continue }
                let total = previous[k] + skipAfter(j)
                if total < cost { cost = total; endStep = j }
            }
            return (cost, endStep, directions)
        }
        var shift = candidates[0]
        if candidates.count > 1 {
            var bestCost = Double.infinity
            for candidate in candidates {
                let cost = warp(shift: candidate, keepPath: false).cost
                if cost < bestCost { bestCost = cost; shift = candidate }
            }
        }
        let (_, endStep, directions) = warp(shift: shift, keepPath: true)
        // Backtrack from the path's end: the reference step of every take step (the mean when several).
        var refOfTake = [Double](repeating: 0, count: n), hits = [Int](repeating: 0, count: n)
        var i = n - 1, j = endStep, startStep = 0
        while true {
            refOfTake[i] += Double(j)
            hits[i] += 1
            let k = j - (centre(i) - w)
            guard k >= 0, k < width else { break }
            let dir = directions[i * width + k]
            if dir == 0 { startStep = j; break }
            switch dir {
            case 1: i -= 1; j -= 1
            case 2: i -= 1
            default: j -= 1
            }
            if i < 0 || j < 0 { break }
        }
        for k in 0..<n { refOfTake[k] = hits[k] > 0 ? refOfTake[k] / Double(hits[k]) : (k > 0 ? refOfTake[k - 1] : 0) }

        // Every take frame of the sung span, placed by the path (linear between step centres).
        var times: [Double] = [], hz: [Double?] = []
        times.reserveCapacity(last - first + 1)
        hz.reserveCapacity(last - first + 1)
        for k in first...last {
            let x = (take.timesS[k] * 1000 - takeStartMs) / stepMs
            let a = min(n - 1, Int(x)), b = min(n - 1, a + 1), frac = x - Double(a)
            let refStep = refOfTake[a] + (refOfTake[b] - refOfTake[a]) * min(1, max(0, frac))
            times.append((Double(refStart) + refStep * stepMs) / 1000)
            hz.append(take.f0Hz[k])
        }
        // Tempo: sung span over the reference span the path covers; local stretch over one-second
        // reference windows.
        let coveredMs = min(Double(refEnd - refStart), Double(endStep - startStep + 1) * stepMs)
        let tempo = (takeEndMs - takeStartMs) / max(stepMs, coveredMs)
        var largest = 1.0, smallest = 1.0
        let window = max(1, Int(1000 / stepMs))
        var jStart = 0
        while jStart + window < m {
            // Take steps mapped into [jStart, jStart + window).
            let inside = refOfTake.indices.filter { refOfTake[$0] >= Double(jStart) && refOfTake[$0] < Double(jStart + window) }.count
            let local = Double(inside) / Double(window) / tempo
            if inside > 0 { largest = max(largest, local); smallest = min(smallest, local) }
            jStart += window
        }
        // Inverse map: the take step at each reference step (first take step reaching it).
        var takeAt = [Double](repeating: .nan, count: m)
        for i in 0..<n {
            let j = Int(refOfTake[i].rounded())
            if j >= 0, j < m, takeAt[j].isNaN { takeAt[j] = Double(i) * stepMs }
        }
        var lastKnown = 0.0
        for j in 0..<m { if takeAt[j].isNaN { takeAt[j] = lastKnown } else { lastKnown = takeAt[j] } }
        var sungTake = SungTake(contour: PitchContour(timesS: times, f0Hz: hz), coveredMs: refStart...refEnd, latencyMs: 0)
        var summary = WarpSummary(tempoRatio: tempo, largestStretch: largest, largestCompression: smallest, keyShiftCents: shift)
        summary.takeMsAtStep = takeAt
        summary.referenceStartMs = refStart
        summary.stepMs = stepMs
        sungTake.warp = summary
        sungTake.recordingTimesS = Array(take.timesS[first...last])
        return sungTake
    }
}
