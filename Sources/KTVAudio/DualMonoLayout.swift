import Foundation
import KTVCore

// Steps 1-2 of the dual-mono split: the lag between the channels and which one is the original.
//
// The layout test reads the histogram of inter-channel level differences over time-frequency bins,
// the amplitude half of DUET's mixing-parameter histogram (Jourjine, Rickard & Yilmaz, "Blind
// separation of disjoint orthogonal signals: demixing N sources from 2 mixtures", ICASSP 2000;
// Yilmaz & Rickard, "Blind separation of speech mixtures via time-frequency masking", IEEE Trans.
// Signal Processing 52(7), 2004). Here one source (the accompaniment) is in both channels and the
// other (the voice) in one: bins the voice does not touch pile up at the accompaniment's level
// difference, and the voice's bins fall on one side of it only, the original's.

/// The thresholds of the layout decision, named once.
enum LayoutThresholds {
    /// Analysis frame and hop of the level-difference histogram, samples.
    static let frameSamples = 2048, hopSamples = 1024
    /// The band where the voice is, Hz.
    static let bandLowHz = 100.0, bandHighHz = 5000.0
    /// Bins above this share of the frame's loudest magnitude (−50 dB, in either channel) carry signal.
    static let signalFloorRatio: Float = 0.00316
    /// Frames whose loudest bin is under this magnitude are silence.
    static let silentPeak: Float = 1e-5
    /// Histogram: ±60 dB in 0.25 dB steps; the mode is searched 20 dB away from the edges, where
    /// bins silent in one channel pile up.
    static let histogramRangeDb = 60.0, histogramStepDb = 0.25, modeEdgeMarginDb = 20.0
    /// Bins within ±1.5 dB of the mode are "common" (the accompaniment alone); over +6 dB or under
    /// −6 dB they hold a voice on that side.
    static let commonHalfWidthDb = 1.5, voiceMarginDb = 6.0
    /// Full confidence takes 40 % of bins at the common level and a peak correlation of 0.5.
    static let fullCommonShare = 0.4, fullCorrelation = 0.5
    /// Under these the channels do not share a signal: not a dual-mono track.
    static let minCorrelation = 0.2, minCommonShare = 0.1
    /// Under this share of voiced bins neither channel holds an extra voice.
    static let minVoicedShare = 0.01
    /// Confidence given to a track found not dual-mono.
    static let notDualMonoConfidence = 0.2
}

extension DualMonoSplitter {
    /// Reads `analysisWindows` windows spread evenly over the file (the whole file when it is short).
    static func analysisWindows(_ reader: AudioReader, config: SplitConfiguration, channels: (Int, Int)) throws(AudioError) -> [([Float], [Float])] {
        let info = reader.info
        let w = Int(config.analysisWindowS * info.sampleRate)
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
            r.reason = "layout given: \(SplitReport.channelName(o)) original, \(SplitReport.channelName(a)) accompaniment"
            return r
        }
        var r = base
        let shared = min(1, stats.common / LayoutThresholds.fullCommonShare) * min(1, max(0, correlation) / LayoutThresholds.fullCorrelation)
        let voiced = stats.above + stats.below
        r.confidence = max(0, min(1, shared * abs(asymmetry)))
        if correlation < LayoutThresholds.minCorrelation || stats.common < LayoutThresholds.minCommonShare {
            r.reason = String(format: "the channels do not share a signal (peak correlation %.2f, %.0f%% of bins at a common level): not a dual-mono KTV track", correlation, stats.common * 100)
            r.confidence = min(r.confidence, LayoutThresholds.notDualMonoConfidence)
        } else if voiced < LayoutThresholds.minVoicedShare {
            r.reason = "the channels carry the same signal (no voice in either beyond the other): not a dual-mono KTV track"
            r.confidence = min(r.confidence, LayoutThresholds.notDualMonoConfidence)
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
        let size = LayoutThresholds.frameSamples, hop = LayoutThresholds.hopSamples
        let fft = RealFFT(size: size)
        let window = RealFFT.hannWindow(size: size)
        let lo = max(1, Int(LayoutThresholds.bandLowHz * Double(size) / sampleRate)), hi = min(size / 2, Int(LayoutThresholds.bandHighHz * Double(size) / sampleRate))
        // The 100 Hz-5 kHz band holds no FFT bin at all when the rate is absurdly low.
        guard hi > lo else { return LevelStats(mode: 0, common: 0, above: 0, below: 0) }
        let range = LayoutThresholds.histogramRangeDb, perDb = 1 / LayoutThresholds.histogramStepDb
        var histogram = [Int](repeating: 0, count: Int(2 * range * perDb) + 1)
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
                let floor = max(peak * LayoutThresholds.signalFloorRatio, 1e-7)
                if peak > LayoutThresholds.silentPeak {
                    for k in 0..<(hi - lo) where magsX[k] > floor || magsY[k] > floor {
                        let d = 20 * log10(Double(max(magsX[k], 1e-9)) / Double(max(magsY[k], 1e-9)))
                        let bin = Int(((max(-range, min(range, d)) + range) * perDb).rounded())
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
        let edge = Int(LayoutThresholds.modeEdgeMarginDb * perDb)
        var modeBin = histogram.count / 2, modeCount = -1
        for b in edge..<(histogram.count - edge) {
            var s = 0
            for k in max(0, b - 2)...min(histogram.count - 1, b + 2) { s += histogram[k] }
            if s > modeCount { modeCount = s; modeBin = b }
        }
        let mode = Double(modeBin) / perDb - range
        var common = 0, above = 0, below = 0
        for b in 0..<histogram.count {
            let d = Double(b) / perDb - range - mode
            if abs(d) <= LayoutThresholds.commonHalfWidthDb { common += histogram[b] }
            if d > LayoutThresholds.voiceMarginDb { above += histogram[b] }
            if d < -LayoutThresholds.voiceMarginDb { below += histogram[b] }
        }
        let n = Double(total)
        return LevelStats(mode: mode, common: Double(common) / n, above: Double(above) / n, below: Double(below) / n)
    }

}
