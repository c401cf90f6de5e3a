import Foundation
import KTVCore

// Splitting dual-mono karaoke tracks.
//
// A KTV track often carries the original song (voice + music) in one channel and the accompaniment
// alone in the other; Volcano's docs put the original left, files in the wild have it either way.
// With o = original, a = accompaniment channel: o(t) = g·a(t − lag) + v(t).
//
// 1. Lag: the peak of the cross-correlation of the two channels (computed by FFT) over a few
//    analysis windows spread through the file, within ±maxLagSamples.
// 2. Layout: after alignment, the level difference d = 20·log10(|L|/|R|) of each time-frequency bin
//    (100 Hz-5 kHz, where the voice is) sits at 20·log10(g) wherever the voice is absent, and above
//    it wherever the voice adds energy, never below. The original is the channel toward which the
//    distribution of d is skewed. (Comparing least-squares residuals cannot decide: projecting either
//    channel on the other leaves the same normalized residual.) A sharp common mode means the
//    channels share the accompaniment; without one they are unrelated (ordinary stereo, or a
//    voice-only channel), which is reported as not dual-mono.
// 3. Vocal estimate: v = o − g(t)·a(t − lag), with g estimated by least squares per block and
//    interpolated linearly between block centres so slow gain changes are followed without steps.

/// Which channel holds the original (voice + music).
public enum SplitLayout: Sendable, Equatable {
    /// Decide from the signals.
    case auto
    /// Explicit 0-based channel indices.
    case channels(original: Int, accompaniment: Int)

    public static let leftOriginal = SplitLayout.channels(original: 0, accompaniment: 1)
    public static let rightOriginal = SplitLayout.channels(original: 1, accompaniment: 0)
}

/// Settings of `DualMonoSplitter`, with units in the names and checked ranges.
public struct SplitConfiguration: Sendable {
    public var layout: SplitLayout = .auto
    /// Largest lag searched between the channels, in samples. Range 0…96000, default 4096.
    public var maxLagSamples: Int = 4096
    /// Length of the blocks the gain is estimated on, in seconds. Range 0.05…30, default 1.
    public var gainBlockSeconds: Double = 1.0
    /// Blocks on each side included in a block's least-squares gain fit. Range 0…10, default 2.
    public var gainContextBlocks: Int = 2
    /// Analysis windows for lag and layout: how many, and how long each (seconds). 1…32 and 1…120.
    public var analysisWindows: Int = 6
    public var analysisWindowSeconds: Double = 8
    /// Below this confidence `auto` reports "not dual-mono". Range 0…1, default 0.3.
    public var minConfidence: Double = 0.3

    public init() {}

    public func validated() throws(AudioError) -> SplitConfiguration {
        guard (0...96000).contains(maxLagSamples) else { throw .invalidArgument("maxLagSamples must be 0…96000, not \(maxLagSamples)") }
        guard (0.05...30).contains(gainBlockSeconds) else { throw .invalidArgument("gainBlockSeconds must be 0.05…30 s, not \(gainBlockSeconds)") }
        guard (0...10).contains(gainContextBlocks) else { throw .invalidArgument("gainContextBlocks must be 0…10, not \(gainContextBlocks)") }
        guard (1...32).contains(analysisWindows) else { throw .invalidArgument("analysisWindows must be 1…32, not \(analysisWindows)") }
        guard (1...120).contains(analysisWindowSeconds) else { throw .invalidArgument("analysisWindowSeconds must be 1…120 s, not \(analysisWindowSeconds)") }
        guard (0...1).contains(minConfidence) else { throw .invalidArgument("minConfidence must be 0…1, not \(minConfidence)") }
        return self
    }
}

/// What the analysis found.
public struct SplitAnalysis: Sendable, Equatable {
    public var dualMono: Bool
    /// 0-based channel of the original; nil when not dual-mono.
    public var originalChannel: Int?
    public var accompanimentChannel: Int?
    /// 0…1: how sure the layout decision is (1 when the layout was given).
    public var confidence: Double
    /// Accompaniment position in the original minus its position in its own channel, in samples.
    public var lagSamples: Int
    /// Level of the accompaniment inside the original relative to its own channel (linear).
    public var gain: Double
    /// Peak normalized cross-correlation of the two channels (0…1).
    public var correlation: Double
    /// Share of time-frequency bins at the common level (the accompaniment alone).
    public var commonShare: Double
    /// Shares of bins well above / below the common level (+6 dB / −6 dB): the voice's side.
    public var aboveShare: Double
    public var belowShare: Double
    /// Why, in words.
    public var reason: String
}

/// The outcome of a split.
public struct SplitResult: Sendable {
    public var analysis: SplitAnalysis
    /// Energy of the vocal estimate over energy of the original channel.
    public var vocalEnergyShare: Double
    /// Share of 50 ms frames in which the vocal estimate is active (above −26 dB of the mix level).
    public var vocalActivityShare: Double
    /// Median of the per-block gains actually used.
    public var gainMedian: Double
    public var frames: Int
    public var sampleRate: Double
    /// Where the input stopped decoding early (a truncated or damaged file); the outputs end there.
    public var truncation: AudioTruncation?
}

/// Where the split writes (nil: not written). Every output, the report included, appears together
/// or not at all: each is written under a temporary name and all are renamed once all succeeded.
public struct SplitOutputs: Sendable {
    public var original: String?
    public var accompaniment: String?
    public var vocals: String?
    public var format: AudioFileFormat?
    /// A folder to create (with its parents) once the input has been read and analysed; removed again
    /// when the split fails and it was created for this split.
    public var folder: String?
    /// A report written with the audio from the result (also when the track is not split).
    public var report: SplitReportOutput?

    public init(original: String? = nil, accompaniment: String? = nil, vocals: String? = nil, format: AudioFileFormat? = nil,
                folder: String? = nil, report: SplitReportOutput? = nil) {
        self.original = original
        self.accompaniment = accompaniment
        self.vocals = vocals
        self.format = format
        self.folder = folder
        self.report = report
    }
}

/// A file rendered from the split's result and written in the same all-or-nothing set as the audio.
public struct SplitReportOutput: Sendable {
    public var path: String
    public var render: @Sendable (SplitResult) -> [UInt8]

    public init(path: String, render: @escaping @Sendable (SplitResult) -> [UInt8]) {
        self.path = path
        self.render = render
    }
}

public enum DualMonoSplitter {
    /// Decides lag, layout and gain from analysis windows of the file.
    public static func analyze(path: String, configuration: SplitConfiguration) throws(AudioError) -> SplitAnalysis {
        try analyze(reader: AudioReader(path: path), configuration: configuration)
    }

    /// Decides lag, layout and gain from analysis windows of an open reader (a file or bytes in memory).
    public static func analyze(reader: AudioReader, configuration: SplitConfiguration) throws(AudioError) -> SplitAnalysis {
        let config = try configuration.validated()
        let info = reader.info
        try checkChannels(info, path: reader.path, layout: config.layout)
        let (a, b) = pair(config.layout, channels: info.channels)
        let windows = try analysisWindows(reader, config: config, channels: (a, b))
        return analyze(windows: windows, sampleRate: info.sampleRate, config: config, pair: (a, b))
    }

    /// Analysis and the streaming split, writing the requested outputs (all of them, or none).
    public static func split(path: String, configuration: SplitConfiguration, outputs: SplitOutputs) throws(AudioError) -> SplitResult {
        let config = try configuration.validated()
        let analysisReader = try AudioReader(path: path)
        let analysis = try analyze(reader: analysisReader, configuration: config)
        let folder = try FolderCreation(outputs.folder)
        let set = AtomicOutputSet()
        var result = SplitResult(analysis: analysis, vocalEnergyShare: 0, vocalActivityShare: 0, gainMedian: 0, frames: 0,
                                 sampleRate: 0, truncation: analysisReader.truncation)
        do {
            if analysis.dualMono, let o = analysis.originalChannel, let c = analysis.accompanimentChannel {
                result = try separate(reader: AudioReader(path: path), original: o, accompaniment: c, lag: analysis.lagSamples,
                                      gain: analysis.gain, config: config, outputs: outputs, into: set, analysis: analysis)
                result.truncation = result.truncation ?? analysisReader.truncation
            }
            if let report = outputs.report {
                let output = try set.add(report.path)
                try FileIO.writeAtomically(report.render(result), to: output.temporaryPath)
            }
            try set.commit()
        } catch {
            set.discard()
            folder.undo()
            switch error {
            case let e as AudioError: throw e
            case let e as FileIOError: throw .cannotWrite(path: Self.pathOf(e) ?? outputs.folder ?? path, reason: e.reason)
            default: throw .cannotWrite(path: outputs.folder ?? path, reason: "\(error)")
            }
        }
        return result
    }

    private static func pathOf(_ e: FileIOError) -> String? {
        switch e {
        case let .cannotRead(p, _), let .cannotWrite(p, _), let .tooLarge(p, _): return p
        case .brokenPipe: return nil
        }
    }

    static func checkChannels(_ info: AudioInfo, path: String, layout: SplitLayout) throws(AudioError) {
        switch layout {
        case .auto:
            guard info.channels == 2 else {
                throw .wrongChannelCount(path: path, found: info.channels, expected: info.channels == 1
                    ? "a dual-mono KTV track has two channels (original and accompaniment); a mono file cannot be split"
                    : "auto layout needs exactly two channels; name the original and accompaniment channels with --layout O,A",
                    format: info.formatName)
            }
        case let .channels(o, a):
            guard info.channels >= 2, o != a, (0..<info.channels).contains(o), (0..<info.channels).contains(a) else {
                throw .wrongChannelCount(path: path, found: info.channels,
                                         expected: "the layout names channels \(o + 1) and \(a + 1), which this file does not have as two different channels",
                                         format: info.formatName)
            }
        }
    }

    private static func pair(_ layout: SplitLayout, channels: Int) -> (Int, Int) {
        if case let .channels(o, a) = layout { return (o, a) }
        return (0, 1)
    }

    /// Reads `analysisWindows` windows spread evenly over the file (the whole file when it is short).
    static func analysisWindows(_ reader: AudioReader, config: SplitConfiguration, channels: (Int, Int)) throws(AudioError) -> [([Float], [Float])] {
        let info = reader.info
        let w = Int(config.analysisWindowSeconds * info.sampleRate)
        let total = info.frames
        var starts: [Int]
        if total <= w * config.analysisWindows {
            starts = Swift.stride(from: 0, to: total, by: max(1, w)).map { $0 }
        } else {
            let spacing = (total - w) / max(1, config.analysisWindows - 1)
            starts = (0..<config.analysisWindows).map { $0 * spacing }
        }
        var result: [([Float], [Float])] = []
        var block: [Float] = []
        let n = info.channels
        for s in starts {
            try reader.seek(toFrame: s)
            var x: [Float] = [], y: [Float] = []
            x.reserveCapacity(w)
            y.reserveCapacity(w)
            while x.count < w {
                let got = try reader.read(into: &block, frames: min(65536, w - x.count))
                if got == 0 { break }
                for f in 0..<got {
                    x.append(block[f * n + channels.0])
                    y.append(block[f * n + channels.1])
                }
            }
            if x.count > config.maxLagSamples * 2 + 2048 || result.isEmpty { result.append((x, y)) }
        }
        return result
    }

    /// The decision, from windows of the two channels (x = first channel of the pair, y = second).
    static func analyze(windows: [([Float], [Float])], sampleRate: Double, config: SplitConfiguration, pair: (Int, Int)) -> SplitAnalysis {
        // 1. Lag: sum of normalized cross-correlations of the windows.
        let maxLag = config.maxLagSamples
        var sum = [Float](repeating: 0, count: 2 * maxLag + 1)
        var energyProduct = 0.0
        for (x, y) in windows {
            let ex = x.reduce(0.0) { $0 + Double($1 * $1) }, ey = y.reduce(0.0) { $0 + Double($1 * $1) }
            guard ex > 0, ey > 0 else { continue }
            let c = CrossCorrelation.compute(x, y, maxLag: maxLag)
            let norm = Float(1 / (ex * ey).squareRoot())
            for k in 0..<sum.count { sum[k] += c[k] * norm }
            energyProduct += 1
        }
        var best = maxLag
        for k in 0..<sum.count where sum[k] > sum[best] { best = k }
        let lagXY = best - maxLag  // y's content appears lagXY samples later in x
        let correlation = energyProduct > 0 ? Double(sum[best]) / energyProduct : 0

        // 2. Level differences of aligned time-frequency bins.
        let stats = levelDifferences(windows: windows, lag: lagXY, sampleRate: sampleRate)
        let asymmetry = (stats.above - stats.below) / max(1e-9, stats.above + stats.below)
        let xIsOriginal = stats.above >= stats.below
        let gainDB = xIsOriginal ? stats.mode : -stats.mode
        let base = SplitAnalysis(dualMono: false, originalChannel: nil, accompanimentChannel: nil, confidence: 0,
                                 lagSamples: xIsOriginal ? lagXY : -lagXY, gain: pow(10, gainDB / 20),
                                 correlation: correlation, commonShare: stats.common, aboveShare: stats.above,
                                 belowShare: stats.below, reason: "")
        if case let .channels(o, a) = config.layout {
            var r = base
            r.dualMono = true
            r.originalChannel = o
            r.accompanimentChannel = a
            r.confidence = 1
            r.lagSamples = lagXY
            r.gain = pow(10, stats.mode / 20)
            r.reason = "layout given: channel \(o + 1) original, channel \(a + 1) accompaniment"
            return r
        }
        var r = base
        let shared = min(1, stats.common / 0.4) * min(1, max(0, correlation) / 0.5)
        let voiced = stats.above + stats.below
        r.confidence = max(0, min(1, shared * abs(asymmetry)))
        if correlation < 0.2 || stats.common < 0.1 {
            r.reason = String(format: "the channels do not share a signal (peak correlation %.2f, %.0f%% of bins at a common level): not a dual-mono KTV track", correlation, stats.common * 100)
            r.confidence = min(r.confidence, 0.2)
        } else if voiced < 0.01 {
            r.reason = "the channels carry the same signal (no voice in either beyond the other): not a dual-mono KTV track"
            r.confidence = min(r.confidence, 0.2)
        } else if r.confidence < config.minConfidence {
            r.reason = String(format: "the channels share a signal but neither clearly holds an extra voice (%.0f%% of bins louder left, %.0f%% louder right): undecided", stats.above * 100, stats.below * 100)
        } else {
            r.dualMono = true
            r.originalChannel = xIsOriginal ? pair.0 : pair.1
            r.accompanimentChannel = xIsOriginal ? pair.1 : pair.0
            r.reason = String(format: "%@ holds the other channel plus a voice (%.0f%% of bins over +6 dB there, %.0f%% the other way)",
                              xIsOriginal ? "left" : "right", max(stats.above, stats.below) * 100, min(stats.above, stats.below) * 100)
        }
        return r
    }

    struct LevelStats {
        var mode: Double
        var common: Double
        var above: Double
        var below: Double
    }

    /// Histogram of 20·log10(|X|/|Y|) over 100 Hz-5 kHz bins with energy, x advanced by `lag`.
    static func levelDifferences(windows: [([Float], [Float])], lag: Int, sampleRate: Double) -> LevelStats {
        let size = 2048, hop = 1024
        let fft = RealFFT(size: size)
        let window = RealFFT.hannWindow(size: size)
        let lo = max(1, Int(100 * Double(size) / sampleRate)), hi = min(size / 2, Int(5000 * Double(size) / sampleRate))
        // The 100 Hz-5 kHz band holds no FFT bin at all when the rate is absurdly low.
        guard hi > lo else { return LevelStats(mode: 0, common: 0, above: 0, below: 0) }
        // Histogram in 0.25 dB steps over ±60 dB.
        var histogram = [Int](repeating: 0, count: 481)
        var xr: [Float] = [], xi: [Float] = [], yr: [Float] = [], yi: [Float] = []
        var fx = [Float](repeating: 0, count: size), fy = [Float](repeating: 0, count: size)
        var magsX = [Float](repeating: 0, count: hi - lo), magsY = [Float](repeating: 0, count: hi - lo)
        var total = 0
        for (x, y) in windows {
            // y[t] pairs with x[t + lag].
            let start = max(0, -lag), end = min(y.count, x.count - lag)
            var t = start
            while t + size <= end {
                for i in 0..<size {
                    fx[i] = x[t + lag + i] * window[i]
                    fy[i] = y[t + i] * window[i]
                }
                fft.forward(fx, re: &xr, im: &xi)
                fft.forward(fy, re: &yr, im: &yi)
                var peak: Float = 0
                for k in lo..<hi {
                    magsX[k - lo] = (xr[k] * xr[k] + xi[k] * xi[k]).squareRoot()
                    magsY[k - lo] = (yr[k] * yr[k] + yi[k] * yi[k]).squareRoot()
                    peak = max(peak, magsX[k - lo], magsY[k - lo])
                }
                // Bins within 50 dB of the frame's loudest carry signal; quieter ones are noise.
                let floor = max(peak * 0.00316, 1e-7)
                if peak > 1e-5 {
                    for k in 0..<(hi - lo) where magsX[k] > floor || magsY[k] > floor {
                        let d = 20 * log10(Double(max(magsX[k], 1e-9)) / Double(max(magsY[k], 1e-9)))
                        let bin = Int(((max(-60, min(60, d)) + 60) * 4).rounded())
                        histogram[bin] += 1
                        total += 1
                    }
                }
                t += hop
            }
        }
        guard total > 0 else { return LevelStats(mode: 0, common: 0, above: 0, below: 0) }
        // Mode of a lightly smoothed histogram (±0.5 dB), away from the ±60 dB edges where bins that
        // are silent in one channel pile up.
        var modeBin = 240, modeCount = -1
        for b in 80..<(histogram.count - 80) {
            var s = 0
            for k in max(0, b - 2)...min(histogram.count - 1, b + 2) { s += histogram[k] }
            if s > modeCount { modeCount = s; modeBin = b }
        }
        let mode = Double(modeBin) / 4 - 60
        var common = 0, above = 0, below = 0
        for b in 0..<histogram.count {
            let d = Double(b) / 4 - 60 - mode
            if abs(d) <= 1.5 { common += histogram[b] }
            if d > 6 { above += histogram[b] }
            if d < -6 { below += histogram[b] }
        }
        let n = Double(total)
        return LevelStats(mode: mode, common: Double(common) / n, above: Double(above) / n, below: Double(below) / n)
    }

    /// The streaming pass: writes the channels and the vocal estimate block by block.
    ///
    /// Each block's gain is a least-squares fit over the block and `gainContextBlocks` blocks on either
    /// side, made on the time-frequency bins the accompaniment dominates (`SpectralGainFit`); gains are
    /// interpolated linearly between block centres. Memory holds 2·context + 3 blocks, whatever the
    /// file's length.
    static func separate(reader: AudioReader, original o: Int, accompaniment c: Int, lag: Int, gain: Double,
                         config: SplitConfiguration, outputs: SplitOutputs, into set: AtomicOutputSet,
                         analysis: SplitAnalysis) throws -> SplitResult {
        let path = reader.path
        let info = reader.info
        let rate = info.sampleRate
        let format = outputs.format ?? AudioFileFormat.wavMatching(info)
        func writer(_ p: String?) throws -> AudioWriter? {
            guard let p else { return nil }
            return try AudioWriter(output: set.add(p), sampleRate: rate, channels: 1, format: format)
        }
        let origWriter = try writer(outputs.original)
        let accWriter = try writer(outputs.accompaniment)
        let vocWriter = try writer(outputs.vocals)

        let context = config.gainContextBlocks
        let block = max(Int(config.gainBlockSeconds * rate), abs(lag) + 1, 1024)
        let n = info.channels
        var interleaved: [Float] = []
        var eof = false

        // Blocks by index; entries before `firstKept` are released.
        var orig: [[Float]] = [], starts: [Int] = [], sums: [(xa: Double, aa: Double)] = []
        var accStream: [Float] = []  // accompaniment samples from frame accBase on
        var accBase = 0
        var totalRead = 0

        func readBlock() throws(AudioError) -> Bool {
            if eof { return false }
            var b: [Float] = []
            b.reserveCapacity(block)
            while b.count < block {
                let got = try reader.read(into: &interleaved, frames: block - b.count)
                if got == 0 { eof = true; break }
                for f in 0..<got {
                    b.append(interleaved[f * n + o])
                    accStream.append(interleaved[f * n + c])
                }
            }
            if b.isEmpty { return false }
            orig.append(b)
            starts.append(totalRead)
            totalRead += b.count
            return true
        }

        /// The accompaniment aligned with the original over frames [start, start+count): acc[t − lag], 0 outside.
        func alignedAcc(_ start: Int, _ count: Int) -> [Float] {
            var out = [Float](repeating: 0, count: count)
            for i in 0..<count {
                let j = start + i - lag - accBase
                if j >= 0 && j < accStream.count { out[i] = accStream[j] }
            }
            return out
        }

        var frames = 0
        var energyOrig = 0.0, energyVoc = 0.0
        let activityLen = max(1, Int(0.05 * rate))
        var vocalFramesRMS: [Double] = []
        var pendingV = 0.0, pendingO = 0.0, pendingCount = 0
        var usedGains: [Double] = []
        var lastGain = gain

        func gainAt(_ k: Int) -> Double {
            var xa = 0.0, aa = 0.0
            for j in max(0, k - context)...min(sums.count - 1, k + context) {
                xa += sums[j].xa
                aa += sums[j].aa
            }
            // A near-silent accompaniment says nothing about the gain: keep the last one.
            let span = Double(orig[k].count * (2 * context + 1))
            if aa > 1e-7 * span { lastGain = xa / aa }
            return lastGain
        }

        var gainFit = SpectralGainFit(commonGain: gain)
        var aligned: [Int: [Float]] = [:]  // aligned accompaniment of blocks fitted but not yet written
        var k = 0
        var gainCache: [Int: Double] = [:]
        while true {
            // Read far enough ahead for block k+1's gain window and the lag.
            while orig.count < k + context + 3, try readBlock() {}
            if k >= orig.count { break }
            // Sums for every block whose aligned accompaniment is complete (or the file has ended).
            while sums.count < orig.count && (eof || sums.count + 1 < orig.count) {
                let j = sums.count
                let a = alignedAcc(starts[j], orig[j].count)
                sums.append(gainFit.sums(orig[j], a))
                aligned[j] = a
            }
            func g(_ j: Int) -> Double {
                if let v = gainCache[j] { return v }
                let v = gainAt(j)
                gainCache[j] = v
                return v
            }
            let cur = orig[k]
            let start = starts[k]
            let acc = aligned.removeValue(forKey: k) ?? alignedAcc(start, cur.count)
            let gk = g(k)
            let gPrev = k > 0 ? g(k - 1) : gk
            let gNext = k + 1 < orig.count ? g(k + 1) : gk
            usedGains.append(gk)
            let centre = Double(cur.count) / 2
            let prevHalf = k > 0 ? Double(orig[k - 1].count) / 2 : centre
            let nextHalf = k + 1 < orig.count ? Double(orig[k + 1].count) / 2 : centre
            // The gain ramps linearly from the previous block's centre to this one's, then to the next.
            var voc = [Float](repeating: 0, count: cur.count)
            let half = cur.count / 2
            let stepIn = Float((gk - gPrev) / (centre + prevHalf)), stepOut = Float((gNext - gk) / (centre + nextHalf))
            cur.withUnsafeBufferPointer { x in
                acc.withUnsafeBufferPointer { a in
                    voc.withUnsafeMutableBufferPointer { v in
                        for i in 0..<half {
                            let gi = Float(gk) - stepIn * (Float(centre) - Float(i) - 0.5)
                            v[i] = x[i] - gi * a[i]
                        }
                        for i in half..<x.count {
                            let gi = Float(gk) + stepOut * (Float(i) + 0.5 - Float(centre))
                            v[i] = x[i] - gi * a[i]
                        }
                    }
                }
            }
            if let w = origWriter { try w.write(mono: cur) }
            if let w = accWriter {
                // The accompaniment channel as it is (not shifted), same frames as the original.
                try w.write(mono: Array(accStream[(start - accBase)..<(start - accBase + cur.count)]))
            }
            if let w = vocWriter { try w.write(mono: voc) }
            // Statistics over 50 ms frames (a partial frame carries over to the next block).
            var i = 0
            while i < cur.count {
                let take = min(activityLen - pendingCount, cur.count - i)
                for j in i..<(i + take) {
                    pendingV += Double(voc[j] * voc[j])
                    pendingO += Double(cur[j] * cur[j])
                }
                pendingCount += take
                i += take
                if pendingCount == activityLen {
                    energyVoc += pendingV
                    energyOrig += pendingO
                    vocalFramesRMS.append((pendingV / Double(activityLen)).squareRoot())
                    pendingV = 0
                    pendingO = 0
                    pendingCount = 0
                }
            }
            frames += cur.count
            // Release what no later block needs: originals before k-1 and accompaniment before block k's start − |lag|.
            if k >= 1 { orig[k - 1] = [] }
            gainCache[k - 2] = nil
            let keepFrom = start - abs(lag) - 1
            if keepFrom > accBase {
                accStream.removeFirst(keepFrom - accBase)
                accBase = keepFrom
            }
            k += 1
        }
        energyVoc += pendingV
        energyOrig += pendingO
        try origWriter?.finish()
        try accWriter?.finish()
        try vocWriter?.finish()
        if frames == 0 { throw AudioError.empty(path: path) }
        let mixRMS = (energyOrig / Double(frames)).squareRoot()
        let threshold = max(1e-4, 0.05 * mixRMS)
        let active = vocalFramesRMS.filter { $0 > threshold }.count
        let sortedGains = usedGains.sorted()
        return SplitResult(analysis: analysis,
                           vocalEnergyShare: energyOrig > 0 ? energyVoc / energyOrig : 0,
                           vocalActivityShare: vocalFramesRMS.isEmpty ? 0 : Double(active) / Double(vocalFramesRMS.count),
                           gainMedian: sortedGains.isEmpty ? gain : sortedGains[sortedGains.count / 2],
                           frames: frames, sampleRate: rate, truncation: reader.truncation)
    }
}

/// Least-squares gain of the accompaniment in the original, fitted only on time-frequency bins whose
/// level difference is within 1.5 dB of the common level, i.e. where the accompaniment dominates.
/// A time-domain fit is biased whenever the voice sings notes of the accompaniment's chords: their
/// partials coincide and correlate over a block. Bins the voice touches are left out instead.
struct SpectralGainFit {
    static let size = 2048
    let fft = RealFFT(size: SpectralGainFit.size)
    let window = RealFFT.hannWindow(size: SpectralGainFit.size)
    /// The common level from the analysis, as a gain; bins are kept within ±1.5 dB of it.
    let low: Float, high: Float
    var fo = [Float](repeating: 0, count: SpectralGainFit.size), fa = [Float](repeating: 0, count: SpectralGainFit.size)
    var or: [Float] = [], oi: [Float] = [], ar: [Float] = [], ai: [Float] = []

    init(commonGain: Double) {
        let g = Float(max(commonGain, 1e-6))
        low = g * Float(pow(10, -1.5 / 20))
        high = g * Float(pow(10, 1.5 / 20))
    }

    /// Σ Re(O·conj A) and Σ |A|² over the kept bins of every other frame of the block (Hann).
    /// Falls back to the time-domain sums when no bin qualifies (a block of voice alone).
    mutating func sums(_ x: [Float], _ a: [Float]) -> (xa: Double, aa: Double) {
        let n = Self.size
        var xa = 0.0, aa = 0.0
        var t = 0
        while t + n <= x.count {
            for i in 0..<n {
                fo[i] = x[t + i] * window[i]
                fa[i] = a[t + i] * window[i]
            }
            fft.forward(fo, re: &or, im: &oi)
            fft.forward(fa, re: &ar, im: &ai)
            var peak: Float = 0
            for k in 1..<fft.bins { peak = max(peak, ar[k] * ar[k] + ai[k] * ai[k]) }
            let floor = peak * 1e-5  // bins within 50 dB of the frame's loudest accompaniment bin
            for k in 1..<fft.bins {
                let pa = ar[k] * ar[k] + ai[k] * ai[k]
                guard pa > floor, pa > 0 else { continue }
                let po = or[k] * or[k] + oi[k] * oi[k]
                let ratio = (po / pa).squareRoot()
                guard ratio >= low, ratio <= high else { continue }
                xa += Double(or[k] * ar[k] + oi[k] * ai[k])
                aa += Double(pa)
            }
            // Every other frame: half the work, and a gain changes far slower than 2 frames.
            t += 2 * n
        }
        if aa > 0 { return (xa, aa) }
        for i in 0..<x.count { xa += Double(x[i] * a[i]); aa += Double(a[i] * a[i]) }
        // Weak weight: a voice-only block barely informs the gain.
        return (xa * 1e-3, aa * 1e-3)
    }
}

/// A folder created for a set of outputs, and removed again (only what was created, only if empty)
/// when the outputs are abandoned.
struct FolderCreation {
    /// Folders created, deepest last.
    private var created: [String] = []

    init(_ folder: String?) throws(AudioError) {
        guard let folder else { return }
        var missing: [String] = []
        var p = (folder as NSString).standardizingPath
        var isDir: ObjCBool = false
        while !p.isEmpty, p != "/", !FileManager.default.fileExists(atPath: p, isDirectory: &isDir) {
            missing.append(p)
            p = (p as NSString).deletingLastPathComponent
        }
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), !isDir.boolValue {
            throw .cannotWrite(path: folder, reason: "exists and is not a folder")
        }
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw .cannotWrite(path: folder, reason: "cannot create the folder: \((error as NSError).localizedDescription)")
        }
        created = missing.reversed()
    }

    func undo() {
        for dir in created.reversed() { rmdir(dir) }
    }
}
