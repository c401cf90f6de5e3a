import KTVCore
import Foundation
import KTVAudio

// Accompaniment-aware tracking: a take recorded through a microphone contains the accompaniment from
// the speakers, delayed by the recording latency and coloured by the room. Pass 1 fits the echo path
// (the take's transfer function from the accompaniment) by robust deconvolution; its first arrival
// is the recording latency. Pass 2 subtracts the predicted echo (an FIR of `filterMs` from just before
// the first arrival) and tracks the residual; frames whose residual is not clearly above what is left
// of the echo count as accompaniment-only. Both passes stream; pass 1 keeps at most
// `estimationS` of spectra, so an hour-long take needs no more memory than a short one.

/// Settings of the canceller. Every number is declared once in `Spec` (unit, range, default).
public struct CancellerConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let minLatencyMs = Parameter<Double>("minLatencyMs", unit: "ms", range: 0...5000, default: 10,
            "Shortest recording latency searched (a microphone chain always buffers, and the voice's own correlation with the backing shows up near 0); below maxLatencyMs.")
        public static let maxLatencyMs = Parameter<Double>("maxLatencyMs", unit: "ms", range: 10...5000, default: 1000,
            "Longest recording latency searched.")
        public static let filterMs = Parameter<Double>("filterMs", unit: "ms", range: 10...2000, default: 500,
            "Length of the modelled echo path: direct sound, reflections and reverberant tail.")
        public static let preDelayMs = Parameter<Double>("preDelayMs", unit: "ms", range: 0...100, default: 5,
            "Taps kept before the direct sound (its peak is not its start).")
        public static let regularization = Parameter<Double>("regularization", range: 0...1, lowerExclusive: true, upperExclusive: true, default: 0.01,
            "λ of the deconvolution, relative to the accompaniment's mean power spectrum.")
        public static let reweightingIterations = Parameter<Int>("reweightingIterations", unit: "iterations", range: 0...10, default: 4,
            "Reweighting passes of the robust fit (0 = plain least squares).")
        public static let estimationS = Parameter<Double>("estimationS", unit: "s", range: 5...3600, default: 180,
            "Seconds of the take, from its start, the echo path is fitted on.")
        public static let all: [ParameterInfo] = [minLatencyMs.info, maxLatencyMs.info, filterMs.info, preDelayMs.info,
                                                  regularization.info, reweightingIterations.info, estimationS.info]
    }

    public var minLatencyMs = Spec.minLatencyMs.defaultValue
    public var maxLatencyMs = Spec.maxLatencyMs.defaultValue
    public var filterMs = Spec.filterMs.defaultValue
    public var preDelayMs = Spec.preDelayMs.defaultValue
    public var regularization = Spec.regularization.defaultValue
    public var reweightingIterations = Spec.reweightingIterations.defaultValue
    public var estimationS = Spec.estimationS.defaultValue

    public init() {}

    public func validated() throws(PitchError) -> CancellerConfiguration {
        do {
            try Spec.maxLatencyMs.check(maxLatencyMs)
            try Spec.minLatencyMs.check(minLatencyMs)
            try Spec.filterMs.check(filterMs)
            try Spec.preDelayMs.check(preDelayMs)
            try Spec.reweightingIterations.check(reweightingIterations)
            try Spec.estimationS.check(estimationS)
            try Spec.regularization.check(regularization)
        } catch { throw PitchError(error) }
        guard minLatencyMs < maxLatencyMs else {
            throw .invalidParameter(name: "minLatencyMs", value: "\(minLatencyMs)", allowed: "below maxLatencyMs (\(maxLatencyMs))")
        }
        return self
    }
}

/// The fitted echo path.
public struct EchoPath: Sendable {
    /// Rate of the taps, Hz.
    public var rate: Double
    /// First modelled delay, samples (latency − pre-delay).
    public var offset: Int
    public var taps: [Float]
    /// Delay of the strongest tap (the direct sound), ms: the recording latency.
    public var latencyMs: Double
    /// RMS of the predicted echo over RMS of the accompaniment (linear).
    public var gain: Double
}

/// Reads two files in lockstep as mono at one rate.
final class LockstepReader {
    let take: AudioReader, acc: AudioReader
    let takeChannel: ChannelSelection
    let rsTake: Resampler?, rsAcc: Resampler?
    var bufTake: [Float] = [], bufAcc: [Float] = []
    var endTake = false, endAcc = false
    var block: [Float] = [], mono: [Float] = []
    var takeFrames = 0

    init(take: String, channel: ChannelSelection, accompaniment: String, rate: Double) throws {
        self.take = try AudioReader(path: take)
        acc = try AudioReader(path: accompaniment)
        if case let .channel(c) = channel, !(0..<self.take.info.channels).contains(c) {
            throw AudioError.wrongChannelCount(path: take, found: self.take.info.channels, expected: "channel \(c + 1) was asked for", format: self.take.info.formatName)
        }
        takeChannel = channel
        rsTake = self.take.info.sampleRate == rate ? nil : try Resampler(inputRate: self.take.info.sampleRate, outputRate: rate, quality: .medium)
        rsAcc = acc.info.sampleRate == rate ? nil : try Resampler(inputRate: acc.info.sampleRate, outputRate: rate, quality: .medium)
    }

    private func pull(_ r: AudioReader, _ rs: Resampler?, channel: ChannelSelection, ended: inout Bool, into buf: inout [Float], countFrames: Bool) throws {
        guard !ended else { return }
        let got = try r.read(into: &block, frames: 32768)
        if got == 0 {
            ended = true
            if let rs { buf += try rs.flush() }
            return
        }
        if countFrames { takeFrames += got }
        PitchTracker.select(block, frames: got, channels: r.info.channels, channel: channel, into: &mono)
        buf += try rs?.process(mono) ?? mono
    }

    /// Up to `count` aligned samples of each; the accompaniment is zero past its end. Empty at the take's end.
    func next(_ count: Int) throws -> (take: [Float], acc: [Float]) {
        while bufTake.count < count && !endTake { try pull(take, rsTake, channel: takeChannel, ended: &endTake, into: &bufTake, countFrames: true) }
        let n = min(count, bufTake.count)
        while bufAcc.count < n && !endAcc { try pull(acc, rsAcc, channel: .mix, ended: &endAcc, into: &bufAcc, countFrames: false) }
        let t = Array(bufTake[0..<n])
        bufTake.removeFirst(n)
        var a = [Float](repeating: 0, count: n)
        let m = min(n, bufAcc.count)
        for i in 0..<m { a[i] = bufAcc[i] }
        bufAcc.removeFirst(m)
        return (t, a)
    }
}

/// Pass 1 of the cancellation, as a streaming worker: the echo path H and the latency, by robust
/// deconvolution of blocks of the take against blocks of the accompaniment (same rate, aligned at
/// their starts).
///
/// The take is T = H·A + V per frame and bin. The voice V is not independent of the backing A (the
/// singer follows its notes and beat), so a plain least-squares H = Σ T·A* / Σ|A|² absorbs part of
/// the voice. Iteratively reweighted least squares (Holland & Welsch, "Robust regression using
/// iteratively reweighted least-squares", Commun. Statist. A6(9), 1977) fixes that: every (frame,
/// bin) is weighted by the inverse of its residual power |T − H·A|², so the bins the voice dominates
/// stop counting, wherever they are. λ (relative to the mean of |A|²) keeps bands the backing barely
/// uses from being divided by almost nothing. Frames: Hann, 50 % overlap, long enough for latency +
/// path; the first `estimationS` of the take are kept for the iterations (a room does not change).
public final class EchoPathEstimator {
    public let configuration: CancellerConfiguration
    public let rateHz: Double
    let maxLag: Int, m: Int, pre: Int, size: Int, hop: Int, maxFrames: Int
    let fft: RealFFT
    let window: [Float]
    var takeSpectra: [[Float]] = [], accSpectra: [[Float]] = []  // interleaved re, im per frame
    var tr: [Float] = [], ti: [Float] = [], ar: [Float] = [], ai: [Float] = []
    var ft: [Float], fa: [Float]
    var bufT: [Float] = [], bufA: [Float] = []

    public init(configuration: CancellerConfiguration = CancellerConfiguration(), rateHz: Double) throws {
        let c = try configuration.validated()
        guard rateHz >= 1000, rateHz <= 192_000 else {
            throw PitchError.invalidParameter(name: "rateHz", value: "\(rateHz)", allowed: "1000…192000 Hz")
        }
        self.configuration = c
        self.rateHz = rateHz
        maxLag = Int(c.maxLatencyMs * rateHz / 1000)
        m = Int(c.filterMs * rateHz / 1000)
        pre = Int(c.preDelayMs * rateHz / 1000)
        size = RealFFT.goodSize(atLeast: 2 * (maxLag + m + pre))
        hop = size / 2
        fft = RealFFT(size: size)
        window = RealFFT.hannWindow(size: size)
        maxFrames = max(1, Int(c.estimationS * rateHz) / hop)
        ft = [Float](repeating: 0, count: size)
        fa = [Float](repeating: 0, count: size)
    }

    /// True once `estimationS` have been collected: further blocks are ignored.
    public var isFull: Bool { takeSpectra.count >= maxFrames }

    /// Feeds the next blocks of the take and of the accompaniment (the accompaniment is taken as 0
    /// where it is shorter).
    public func feed(take: [Float], accompaniment: [Float]) {
        guard !isFull else { return }
        bufT += take
        bufA += accompaniment.prefix(take.count)
        if accompaniment.count < take.count { bufA += [Float](repeating: 0, count: take.count - accompaniment.count) }
        while !isFull && bufT.count >= size { frame() }
    }

    private func frame() {
        let bins = fft.bins
        for i in 0..<size {
            ft[i] = i < bufT.count ? bufT[i] * window[i] : 0
            fa[i] = i < bufA.count ? bufA[i] * window[i] : 0
        }
        fft.forward(ft, re: &tr, im: &ti)
        fft.forward(fa, re: &ar, im: &ai)
        var ts = [Float](repeating: 0, count: 2 * bins), as_ = [Float](repeating: 0, count: 2 * bins)
        for k in 0..<bins {
            ts[2 * k] = tr[k]; ts[2 * k + 1] = ti[k]
            as_[2 * k] = ar[k]; as_[2 * k + 1] = ai[k]
        }
        takeSpectra.append(ts)
        accSpectra.append(as_)
        let drop = min(hop, bufT.count)
        bufT.removeFirst(drop)
        bufA.removeFirst(min(drop, bufA.count))
    }

    /// Ends the input (the tail becomes a last, zero-padded frame) and fits the path.
    public func finish() throws -> EchoPath {
        while !isFull {
            if bufT.isEmpty || (bufT.count < hop && !takeSpectra.isEmpty) { break }
            frame()
        }
        guard !takeSpectra.isEmpty else { throw PitchError.noAudio("the take has no samples") }
        let c = configuration, rate = rateHz, bins = fft.bins, fft = self.fft, m = self.m, pre = self.pre, maxLag = self.maxLag
        let takeSpectra = self.takeSpectra, accSpectra = self.accSpectra
        let frames = takeSpectra.count
        var sAA = [Double](repeating: 0, count: bins)
        for f in 0..<frames {
            let a = accSpectra[f]
            for k in 0..<bins { sAA[k] += Double(a[2 * k] * a[2 * k] + a[2 * k + 1] * a[2 * k + 1]) }
        }
        let meanAA = sAA.reduce(0, +) / Double(bins)
        guard meanAA > 1e-12 else {
            throw PitchError.noAudio("the accompaniment is silent; nothing to cancel")
        }
        let lambda = c.regularization * meanAA
        /// Iteratively reweighted least squares with weights 1/|residual|^exponent.
        func fit(exponent: Double) -> (re: [Double], im: [Double]) {
            var hRe = [Double](repeating: 0, count: bins), hIm = [Double](repeating: 0, count: bins)
            var weights = [[Float]](repeating: [Float](repeating: 1, count: bins), count: frames)
            var meanWeight = 1.0
            for iteration in 0...c.reweightingIterations {
                if iteration > 0 {
                    var total = 0.0
                    for f in 0..<frames {
                        let t = takeSpectra[f], a = accSpectra[f]
                        for k in 0..<bins {
                            let rr = Double(t[2 * k]) - (hRe[k] * Double(a[2 * k]) - hIm[k] * Double(a[2 * k + 1]))
                            let ri = Double(t[2 * k + 1]) - (hRe[k] * Double(a[2 * k + 1]) + hIm[k] * Double(a[2 * k]))
                            let r = pow(rr * rr + ri * ri, exponent / 2)
                            weights[f][k] = Float(r)
                            total += r
                        }
                    }
                    let floor = 1e-3 * total / Double(frames * bins)
                    var wsum = 0.0
                    for f in 0..<frames {
                        for k in 0..<bins {
                            let w = 1 / (Double(weights[f][k]) + floor)
                            weights[f][k] = Float(w)
                            wsum += w
                        }
                    }
                    meanWeight = wsum / Double(frames * bins)
                }
                var numRe = [Double](repeating: 0, count: bins), numIm = [Double](repeating: 0, count: bins), den = [Double](repeating: 0, count: bins)
                for f in 0..<frames {
                    let t = takeSpectra[f], a = accSpectra[f], w = weights[f]
                    for k in 0..<bins {
                        let wk = Double(w[k])
                        let (xr, xi, yr, yi) = (Double(t[2 * k]), Double(t[2 * k + 1]), Double(a[2 * k]), Double(a[2 * k + 1]))
                        numRe[k] += wk * (xr * yr + xi * yi)
                        numIm[k] += wk * (xi * yr - xr * yi)
                        den[k] += wk * (yr * yr + yi * yi)
                    }
                }
                // λ scaled like the weights, so the loading keeps its relative size across iterations.
                let load = lambda * meanWeight
                for k in 0..<bins {
                    hRe[k] = numRe[k] / (den[k] + load)
                    hIm[k] = numIm[k] / (den[k] + load)
                }
            }
            hRe[0] = 0
            hIm[0] = 0
            return (hRe, hIm)
        }
        // Two weightings, each for what it does best (measured on the shared scenes): squared
        // residuals (1/|r|²) give the sharpest first arrival, i.e. the latency; absolute residuals
        // (1/|r|, least absolute deviations) give the path that cancels best, also with no voice at all.
        let sharp = fit(exponent: 2)
        var hLatency: [Float] = []
        fft.inverse(re: sharp.re.map { Float($0) }, im: sharp.im.map { Float($0) }, into: &hLatency)
        let (hRe, hIm) = fit(exponent: 1)
        var echoPower = 0.0
        for k in 0..<bins { echoPower += (hRe[k] * hRe[k] + hIm[k] * hIm[k]) * sAA[k] }
        var h: [Float] = []
        fft.inverse(re: hRe.map { Float($0) }, im: hIm.map { Float($0) }, into: &h)
        // Latency: the first arrival. The strongest tap is often a reflection (the direct sound was
        // ~0.5-0.6 of the strongest reflection in the shared scenes), so take the earliest lag within
        // 40 ms before the peak that reaches 35 % of it.
        let minLag = Int(c.minLatencyMs * rate / 1000)
        var peak = minLag
        for k in minLag...maxLag where abs(hLatency[k]) > abs(hLatency[peak]) { peak = k }
        let level = 0.35 * abs(hLatency[peak])
        var local = peak
        for k in Swift.stride(from: peak, through: max(minLag, peak - Int(0.04 * rate)), by: -1) where abs(hLatency[k]) >= level { local = k }
        // Climb to that arrival's own peak, and interpolate it.
        while local + 1 <= peak && abs(hLatency[local + 1]) > abs(hLatency[local]) { local += 1 }
        var frac = 0.0
        if local > 0 && local + 1 < hLatency.count {
            frac = Parabola.peakOffset(Double(abs(hLatency[local - 1])), Double(abs(hLatency[local])), Double(abs(hLatency[local + 1])))
        }
        let latency = (Double(local) + frac) / rate * 1000
        // The model starts before every arrival the search considered, so a wrong pick of the first
        // arrival costs the latency figure, never the cancellation.
        let offset = max(0, min(local, peak - Int(0.04 * rate)) - pre)
        let taps = (0..<m).map { offset + $0 < h.count ? h[offset + $0] : 0 }
        let gain = (echoPower / sAA.reduce(0, +)).squareRoot()
        return EchoPath(rate: rate, offset: offset, taps: taps, latencyMs: latency, gain: gain)
    }
}

/// Pass 2 of the cancellation, as a streaming worker: subtracts the echo the path predicts from
/// each block of the take.
public final class EchoCanceller {
    public let path: EchoPath
    let convolver: EchoConvolver

    public init(path: EchoPath) {
        self.path = path
        convolver = EchoConvolver(path)
    }

    /// The take's next block with the predicted echo removed, and that echo (for the voicing gate).
    public func process(take: [Float], accompaniment: [Float]) -> (residual: [Float], echo: [Float]) {
        var a = Array(accompaniment.prefix(take.count))
        if a.count < take.count { a += [Float](repeating: 0, count: take.count - a.count) }
        let echo = convolver.process(a)
        var residual = take
        for i in 0..<take.count { residual[i] -= echo[i] }
        return (residual, echo)
    }
}

/// Pitch tracking of a take with the accompaniment's bleed cancelled: both passes over files.
enum AccompanimentCanceller {
    static func track(tracker: PitchTracker, take: String, channel: ChannelSelection, accompaniment: String,
                      configuration: CancellerConfiguration = CancellerConfiguration()) throws -> PitchTrack {
        let rate = tracker.configuration.analysisRateHz
        // Pass 1: the echo path from the first `estimationS`.
        let estimator = try EchoPathEstimator(configuration: configuration, rateHz: rate)
        let first = try LockstepReader(take: take, channel: channel, accompaniment: accompaniment, rate: rate)
        while !estimator.isFull {
            let (t, a) = try first.next(65536)
            if t.isEmpty { break }
            estimator.feed(take: t, accompaniment: a)
        }
        let path: EchoPath
        do { path = try estimator.finish() } catch let PitchError.noAudio(detail) {
            throw PitchError.noAudio("\(accompaniment): \(detail)")
        }
        // Pass 2: subtract the predicted echo, block by block, and track the residual.
        let reader = try LockstepReader(take: take, channel: channel, accompaniment: accompaniment, rate: rate)
        let session = try PitchSession(tracker: tracker, inputRate: rate)
        let canceller = EchoCanceller(path: path)
        while true {
            let (t, a) = try reader.next(32768)
            if t.isEmpty { break }
            let (residual, echo) = canceller.process(take: t, accompaniment: a)
            try session.feed(residual, echo: echo)
        }
        var result = try session.finish()
        // The track covers the take's own duration.
        result.durationS = Double(reader.takeFrames) / reader.take.info.sampleRate
        result.keepFirst(Int((result.durationS / result.hopS).rounded(.down)) + 1)
        result.latencyMs = path.latencyMs
        result.accompanimentGain = path.gain
        result.truncations = [reader.take.truncation, reader.acc.truncation].compactMap { $0 }
        return result
    }
}

/// Streaming convolution of the accompaniment with the echo path (overlap-save with FFTs).
final class EchoConvolver {
    let path: EchoPath
    let fft: RealFFT
    let hr: [Float], hi: [Float]
    let block: Int
    /// Accompaniment history: the last offset + taps − 1 samples before the current block.
    var history: [Float]

    init(_ path: EchoPath) {
        self.path = path
        let m = path.taps.count
        block = max(4096, RealFFT.goodSize(atLeast: m))
        fft = RealFFT(size: RealFFT.goodSize(atLeast: block + m + path.offset))
        var r: [Float] = [], i: [Float] = []
        fft.forward(path.taps.map { $0 }, re: &r, im: &i)
        hr = r
        hi = i
        history = [Float](repeating: 0, count: path.offset + m - 1)
    }

    /// echo[n] = Σ_k h[k]·a[n − offset − k] for the samples of `a` (continuing the previous calls).
    func process(_ a: [Float]) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(a.count)
        var i = 0
        let m = path.taps.count, off = path.offset
        var xr: [Float] = [], xi: [Float] = [], y: [Float] = []
        var pr = [Float](repeating: 0, count: fft.bins), pi = [Float](repeating: 0, count: fft.bins)
        while i < a.count {
            let n = min(block, a.count - i)
            // Segment: history (off + m − 1) followed by the new samples, shifted so index 0 is a[i − off − m + 1].
            let segment = history + a[i..<(i + n)]
            segment.withUnsafeBufferPointer { fft.forward($0, re: &xr, im: &xi) }
            for k in 0..<fft.bins {
                pr[k] = xr[k] * hr[k] - xi[k] * hi[k]
                pi[k] = xr[k] * hi[k] + xi[k] * hr[k]
            }
            fft.inverse(re: pr, im: pi, into: &y)
            // Linear convolution sample for output n' sits at segment index (off + m − 1) + n' , using
            // taps over segment indices n' + (m − 1) … n' : take y[(m − 1) + n'] and shift by off.
            for j in 0..<n { out.append(y[m - 1 + j]) }
            let keep = off + m - 1
            history = Array(segment[(segment.count - keep)...])
            i += n
        }
        return out
    }
}

extension PitchTracker {
    /// Tracks a take held in memory with the accompaniment's bleed cancelled first (both mono, each
    /// at its own rate): the same two passes as for files, on arrays.
    public func track(samples take: [Float], sampleRate takeRate: Double, accompaniment: [Float], accompanimentRate: Double,
                      canceller configuration: CancellerConfiguration = CancellerConfiguration()) throws -> PitchTrack {
        let rate = self.configuration.analysisRateHz
        func atAnalysisRate(_ x: [Float], _ r: Double) throws -> [Float] {
            guard r != rate else { return x }
            let rs = try Resampler(inputRate: r, outputRate: rate, quality: .medium)
            return try rs.process(x) + rs.flush()
        }
        let t = try atAnalysisRate(take, takeRate), a = try atAnalysisRate(accompaniment, accompanimentRate)
        let estimator = try EchoPathEstimator(configuration: configuration, rateHz: rate)
        estimator.feed(take: t, accompaniment: a)
        let path = try estimator.finish()
        let session = try PitchSession(tracker: self, inputRate: rate)
        let (residual, echo) = EchoCanceller(path: path).process(take: t, accompaniment: a)
        try session.feed(residual, echo: echo)
        var result = try session.finish()
        result.durationS = Double(take.count) / takeRate
        result.keepFirst(Int((result.durationS / result.hopS).rounded(.down)) + 1)
        result.latencyMs = path.latencyMs
        result.accompanimentGain = path.gain
        return result
    }
}
