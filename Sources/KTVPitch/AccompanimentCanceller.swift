import KTVCore
import Foundation
import KTVAudio

// Accompaniment-aware tracking: a take recorded through a microphone contains the accompaniment from
// the speakers, delayed by the recording latency and coloured by the room. Pass 1 fits the echo path
// (the take's transfer function from the accompaniment) by robust deconvolution; its first arrival
// is the recording latency. Pass 2 subtracts the predicted echo (an FIR of `filterMs` from just before
// the first arrival) and tracks the residual; frames whose residual is not clearly above what is left
// of the echo count as accompaniment-only. Both passes stream; pass 1 keeps at most
// `estimationS` of spectra and of samples (which pass 2 replays, so nothing is decoded or
// resampled twice), so an hour-long take needs no more memory than a short one.
//
// Methods: iteratively reweighted least squares (Holland & Welsch 1977, see `EchoPathEstimator`);
// overlap-save convolution for pass 2 (Oppenheim & Schafer, "Discrete-Time Signal Processing",
// 3rd ed., §8.7.3, see `EchoConvolver`). `AccompanimentCanceller` is the reusable worker: spectra,
// buffers and one FFT plan made once, for every take a tracker scores.

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

    init(take: String, stream: Int? = nil, channel: ChannelSelection, accompaniment: String, rate: Double) throws {
        self.take = try AudioReader(path: take, stream: stream)
        acc = try AudioReader(path: accompaniment)
        if case let .channel(c) = channel, !(0..<self.take.info.channels).contains(c) {
            throw AudioError.wrongChannelCount(path: take, found: self.take.info.channels, expected: "\(SplitReport.channelName(c)) was asked for", format: self.take.info.formatName)
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
    /// Spectra of the frames collected, one after the other: per frame `bins` real parts, then
    /// `bins` imaginary parts.
    var takeSpectra: [Float] = [], accSpectra: [Float] = []
    var frames = 0
    /// Input not yet framed: samples from `bufStart` on (dropped in one go at the end of each `feed`).
    var bufT: [Float] = [], bufA: [Float] = []
    var bufStart = 0
    var scratch: [Float], spectrum: [Float]

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
        scratch = [Float](repeating: 0, count: size)
        spectrum = [Float](repeating: 0, count: 2 * fft.bins)
    }

    /// Forgets the input fed so far (buffers and the FFT plan are kept): the worker is ready for the next take.
    public func reset() {
        takeSpectra.removeAll(keepingCapacity: true)
        accSpectra.removeAll(keepingCapacity: true)
        frames = 0
        bufT.removeAll(keepingCapacity: true)
        bufA.removeAll(keepingCapacity: true)
        bufStart = 0
    }

    /// Makes room for the frames of a take of `seconds` (at most `estimationS`), so that collecting
    /// them does not move the spectra collected so far.
    func reserve(seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        let count = min(maxFrames, Int(seconds * rateHz) / hop + 2) * 2 * fft.bins
        takeSpectra.reserveCapacity(count)
        accSpectra.reserveCapacity(count)
    }

    /// True once `estimationS` have been collected: further blocks are ignored.
    public var isFull: Bool { frames >= maxFrames }

    /// Feeds the next blocks of the take and of the accompaniment (the accompaniment is taken as 0
    /// where it is shorter).
    public func feed(take: [Float], accompaniment: [Float]) {
        guard !isFull else { return }
        bufT += take
        bufA += accompaniment.prefix(take.count)
        if accompaniment.count < take.count { bufA += repeatElement(0, count: take.count - accompaniment.count) }
        while !isFull && bufT.count - bufStart >= size { frame() }
        compact()
    }

    private func compact() {
        guard bufStart > 0 else { return }
        bufT.removeFirst(bufStart)
        bufA.removeFirst(bufStart)
        bufStart = 0
    }

    /// The next frame (zero-padded past the input), its spectra appended; the input advances by a hop.
    private func frame() {
        let size = self.size, bins = fft.bins, start = bufStart
        let available = min(size, bufT.count - start)
        takeSpectra.append(contentsOf: repeatElement(0, count: 2 * bins))
        accSpectra.append(contentsOf: repeatElement(0, count: 2 * bins))
        let at = frames * 2 * bins
        func transform(_ input: [Float], into spectra: inout [Float]) {
            window.withUnsafeBufferPointer { w in
                scratch.withUnsafeMutableBufferPointer { x in
                    input.withUnsafeBufferPointer { b in
                        for i in 0..<available { x[i] = b[start + i] * w[i] }
                    }
                    for i in available..<size { x[i] = 0 }
                    spectrum.withUnsafeMutableBufferPointer { z in
                        fft.forward(x.baseAddress!, count: size, into: z.baseAddress!)
                        spectra.withUnsafeMutableBufferPointer { out in
                            let re = out.baseAddress! + at, im = re + bins
                            for k in 0..<bins {
                                re[k] = z[2 * k]
                                im[k] = z[2 * k + 1]
                            }
                        }
                    }
                }
            }
        }
        transform(bufT, into: &takeSpectra)
        transform(bufA, into: &accSpectra)
        frames += 1
        bufStart += min(hop, bufT.count - start)
    }

    /// Ends the input (the tail becomes a last, zero-padded frame) and fits the path.
    public func finish() throws -> EchoPath {
        while !isFull {
            let remaining = bufT.count - bufStart
            if remaining == 0 || (remaining < hop && frames > 0) { break }
            frame()
        }
        compact()
        guard frames > 0 else { throw PitchError.noAudio("the take has no samples") }
        let c = configuration, rate = rateHz, bins = fft.bins, m = self.m, pre = self.pre, maxLag = self.maxLag
        let fit = takeSpectra.withUnsafeBufferPointer { t in
            accSpectra.withUnsafeBufferPointer { a in
                EchoPathFit(take: t.baseAddress!, accompaniment: a.baseAddress!, frames: frames, bins: bins)
            }
        }
        let meanAA = fit.sAA.reduce(0, +) / Double(bins)
        guard meanAA > 1e-12 else {
            throw PitchError.noAudio("the accompaniment is silent; nothing to cancel")
        }
        let lambda = c.regularization * meanAA
        // Both weightings start from the same plain least-squares fit (every weight 1).
        let plain = takeSpectra.withUnsafeBufferPointer { t in
            accSpectra.withUnsafeBufferPointer { a in
                fit.solve(take: t.baseAddress!, accompaniment: a.baseAddress!, lambda: lambda)
            }
        }
        func refined(exponent: Int) -> (re: [Double], im: [Double]) {
            var h = takeSpectra.withUnsafeBufferPointer { t in
                accSpectra.withUnsafeBufferPointer { a in
                    fit.reweighted(plain, exponent: exponent, take: t.baseAddress!, accompaniment: a.baseAddress!,
                                   lambda: lambda, iterations: c.reweightingIterations)
                }
            }
            h.re[0] = 0
            h.im[0] = 0
            return h
        }
        // Two weightings, each for what it does best (measured on the shared scenes): squared
        // residuals (1/|r|²) give the sharpest first arrival, i.e. the latency; absolute residuals
        // (1/|r|, least absolute deviations) give the path that cancels best, also with no voice at all.
        let sharp = refined(exponent: 2)
        var hLatency: [Float] = []
        fft.inverse(re: sharp.re.map { Float($0) }, im: sharp.im.map { Float($0) }, into: &hLatency)
        let (hRe, hIm) = refined(exponent: 1)
        var echoPower = 0.0
        for k in 0..<bins { echoPower += (hRe[k] * hRe[k] + hIm[k] * hIm[k]) * fit.sAA[k] }
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
        let gain = (echoPower / fit.sAA.reduce(0, +)).squareRoot()
        return EchoPath(rate: rate, offset: offset, taps: taps, latencyMs: latency, gain: gain)
    }
}

/// The weighted least-squares solve of the echo path over stored spectra, and its reweighting
/// (Holland & Welsch 1977, see `EchoPathEstimator`). Spectra are `frames` rows of `bins` real
/// parts followed by `bins` imaginary parts. Per (frame, bin) values are Float (they only weigh); the sums over frames are
/// Double, per bin. Plain loops over pointers: the optimizer vectorizes them, and unoptimized (test)
/// builds stay usable, which generic SIMD types are not.
struct EchoPathFit {
    let frames: Int, bins: Int
    /// Σ_f |A|² per bin.
    let sAA: [Double]

    init(take: UnsafePointer<Float>, accompaniment a: UnsafePointer<Float>, frames: Int, bins: Int) {
        self.frames = frames
        self.bins = bins
        var s = [Double](repeating: 0, count: bins)
        s.withUnsafeMutableBufferPointer { s in
            guard let sum = s.baseAddress else { return }
            for f in 0..<frames {
                let ar = a + 2 * bins * f, ai = ar + bins
                for k in 0..<bins { sum[k] += Double(ar[k] * ar[k] + ai[k] * ai[k]) }
            }
        }
        sAA = s
    }

    /// Σ_f w·T·conj(A), Σ_f w·|A|² and Σ_f w per bin into `sums` (4 × bins: real part, imaginary
    /// part, denominator, weight), w = 1 / (`residual` + floor), or 1 when `residual` is nil.
    private func normalEquations(take t: UnsafePointer<Float>, accompaniment a: UnsafePointer<Float>,
                                 residual: UnsafePointer<Float>?, floor: Float, into sums: UnsafeMutablePointer<Double>) {
        let sr = sums, si = sums + bins, sd = sums + 2 * bins, sw = sums + 3 * bins
        sums.update(repeating: 0, count: 4 * bins)
        for f in 0..<frames {
            let xr = t + 2 * bins * f, xi = xr + bins, yr = a + 2 * bins * f, yi = yr + bins
            if let residual {
                let r = residual + bins * f
                for k in 0..<bins {
                    let w = 1 / (r[k] + floor)
                    let (tr, ti, ar, ai) = (xr[k], xi[k], yr[k], yi[k])
                    sr[k] += Double(w * (tr * ar + ti * ai))
                    si[k] += Double(w * (ti * ar - tr * ai))
                    sd[k] += Double(w * (ar * ar + ai * ai))
                    sw[k] += Double(w)
                }
            } else {
                for k in 0..<bins {
                    let (tr, ti, ar, ai) = (xr[k], xi[k], yr[k], yi[k])
                    sr[k] += Double(tr * ar + ti * ai)
                    si[k] += Double(ti * ar - tr * ai)
                    sd[k] += Double(ar * ar + ai * ai)
                    sw[k] += 1
                }
            }
        }
    }

    /// The plain least-squares path (every weight 1), λ added to the denominator.
    func solve(take t: UnsafePointer<Float>, accompaniment a: UnsafePointer<Float>, lambda: Double) -> (re: [Double], im: [Double]) {
        let sums = UnsafeMutablePointer<Double>.allocate(capacity: 4 * bins)
        defer { sums.deallocate() }
        normalEquations(take: t, accompaniment: a, residual: nil, floor: 0, into: sums)
        var re = [Double](repeating: 0, count: bins), im = [Double](repeating: 0, count: bins)
        for k in 0..<bins {
            re[k] = sums[k] / (sums[2 * bins + k] + lambda)
            im[k] = sums[bins + k] / (sums[2 * bins + k] + lambda)
        }
        return (re, im)
    }

    /// Iteratively reweighted least squares from `start`, weights 1/|residual|^exponent (1 or 2).
    func reweighted(_ start: (re: [Double], im: [Double]), exponent: Int, take t: UnsafePointer<Float>, accompaniment a: UnsafePointer<Float>,
                    lambda: Double, iterations: Int) -> (re: [Double], im: [Double]) {
        var hRe = start.re, hIm = start.im
        guard iterations > 0 else { return (hRe, hIm) }
        let bins = self.bins, n = frames * bins
        let residual = UnsafeMutablePointer<Float>.allocate(capacity: frames * bins)
        let hr = UnsafeMutablePointer<Float>.allocate(capacity: bins), hi = UnsafeMutablePointer<Float>.allocate(capacity: bins)
        let sums = UnsafeMutablePointer<Double>.allocate(capacity: 4 * bins)
        defer { residual.deallocate(); hr.deallocate(); hi.deallocate(); sums.deallocate() }
        hr.initialize(repeating: 0, count: bins)
        hi.initialize(repeating: 0, count: bins)
        for _ in 1...iterations {
            for k in 0..<bins { hr[k] = Float(hRe[k]); hi[k] = Float(hIm[k]) }
            // |residual|^exponent per (frame, bin), and their total.
            sums.update(repeating: 0, count: bins)
            for f in 0..<frames {
                let xr = t + 2 * bins * f, xi = xr + bins, yr = a + 2 * bins * f, yi = yr + bins, r = residual + bins * f
                for k in 0..<bins {
                    let (h1, h2, ar, ai) = (hr[k], hi[k], yr[k], yi[k])
                    let rr = xr[k] - (h1 * ar - h2 * ai)
                    let ri = xi[k] - (h1 * ai + h2 * ar)
                    r[k] = rr * rr + ri * ri
                }
                switch exponent {
                case 2: break
                case 1: for k in 0..<bins { r[k] = r[k].squareRoot() }
                default: for k in 0..<bins { r[k] = Float(pow(Double(r[k]), Double(exponent) / 2)) }
                }
                for k in 0..<bins { sums[k] += Double(r[k]) }
            }
            var total = 0.0
            for k in 0..<bins { total += sums[k] }
            let floor = Float(1e-3 * total / Double(n))
            // Weights 1/(|r|^e + floor) and the weighted normal equations, in one pass.
            normalEquations(take: t, accompaniment: a, residual: residual, floor: floor, into: sums)
            var wsum = 0.0
            for k in 0..<bins { wsum += sums[3 * bins + k] }
            // λ scaled like the weights, so the loading keeps its relative size across iterations.
            let load = lambda * (wsum / Double(n))
            for k in 0..<bins {
                hRe[k] = sums[k] / (sums[2 * bins + k] + load)
                hIm[k] = sums[bins + k] / (sums[2 * bins + k] + load)
            }
        }
        return (hRe, hIm)
    }
}

/// Pass 2 of the cancellation, as a streaming worker: subtracts the echo the path predicts from
/// each block of the take.
public final class EchoCanceller {
    public let path: EchoPath
    let convolver: EchoConvolver

    public init(path: EchoPath) {
        self.path = path
        convolver = EchoConvolver(taps: path.taps.count, fft: RealFFT(size: RealFFT.goodSize(atLeast: 4 * path.taps.count)))
        convolver.reset(path)
    }

    /// A canceller on a worker's convolver (its FFT plan reused), set to `path`.
    init(path: EchoPath, convolver: EchoConvolver) {
        self.path = path
        self.convolver = convolver
        convolver.reset(path)
    }

    /// The take's next block with the predicted echo removed, and that echo (for the voicing gate).
    public func process(take: [Float], accompaniment: [Float]) -> (residual: [Float], echo: [Float]) {
        var a = Array(accompaniment.prefix(take.count))
        if a.count < take.count { a += repeatElement(0, count: take.count - a.count) }
        let echo = convolver.process(a)
        var residual = take
        for i in 0..<take.count { residual[i] -= echo[i] }
        return (residual, echo)
    }
}

/// Pitch tracking of a take with the accompaniment's bleed cancelled: both passes, as a reusable
/// worker. The estimator's spectra and buffers and the one FFT plan (the echo path's frames and
/// the overlap-save blocks of pass 2 have the same size) are made once and serve every take; a
/// batch keeps one worker per tracker, i.e. per thread (`PitchTracker` makes it on first use).
///
/// Over files, both signals are decoded and resampled to the analysis rate once: pass 1 keeps what
/// it read (at most `estimationS` and one read block) and pass 2 replays it before reading on, so
/// memory stays bounded by `estimationS`, not by the take.
public final class AccompanimentCanceller {
    public let configuration: CancellerConfiguration
    public let rateHz: Double
    let estimator: EchoPathEstimator
    let convolver: EchoConvolver

    public init(configuration: CancellerConfiguration = CancellerConfiguration(), rateHz: Double) throws {
        estimator = try EchoPathEstimator(configuration: configuration, rateHz: rateHz)
        self.configuration = estimator.configuration
        self.rateHz = rateHz
        convolver = EchoConvolver(taps: estimator.m, fft: estimator.fft)
    }

    /// Both passes over files; `tracker` must analyse at this worker's rate.
    func track(tracker: PitchTracker, take: String, stream: Int? = nil, channel: ChannelSelection, accompaniment: String) throws -> PitchTrack {
        let rate = rateHz
        estimator.reset()
        let reader = try LockstepReader(take: take, stream: stream, channel: channel, accompaniment: accompaniment, rate: rate)
        estimator.reserve(seconds: reader.take.info.durationS)
        // Pass 1: the echo path from the first `estimationS`, kept for pass 2.
        var held: [(take: [Float], acc: [Float])] = []
        while !estimator.isFull {
            let (t, a) = try reader.next(65536)
            if t.isEmpty { break }
            estimator.feed(take: t, accompaniment: a)
            held.append((t, a))
        }
        let path: EchoPath
        do { path = try estimator.finish() } catch let PitchError.noAudio(detail) {
            throw PitchError.noAudio("\(accompaniment): \(detail)")
        }
        // Pass 2: subtract the predicted echo, block by block (what pass 1 read, then the rest), and track the residual.
        let session = try PitchSession(tracker: tracker, inputRate: rate)
        let canceller = EchoCanceller(path: path, convolver: convolver)
        for i in held.indices {
            let (residual, echo) = canceller.process(take: held[i].take, accompaniment: held[i].acc)
            held[i] = ([], [])
            try session.feed(residual, echo: echo)
        }
        held = []
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

    /// Both passes over arrays already at this worker's rate; `durationS` is the take's own duration.
    func track(tracker: PitchTracker, take t: [Float], accompaniment a: [Float], durationS: Double) throws -> PitchTrack {
        estimator.reset()
        estimator.feed(take: t, accompaniment: a)
        let path = try estimator.finish()
        let session = try PitchSession(tracker: tracker, inputRate: rateHz)
        let (residual, echo) = EchoCanceller(path: path, convolver: convolver).process(take: t, accompaniment: a)
        try session.feed(residual, echo: echo)
        var result = try session.finish()
        result.durationS = durationS
        result.keepFirst(Int((result.durationS / result.hopS).rounded(.down)) + 1)
        result.latencyMs = path.latencyMs
        result.accompanimentGain = path.gain
        return result
    }
}

/// Streaming convolution of the accompaniment with the echo path (overlap-save: Oppenheim &
/// Schafer, "Discrete-Time Signal Processing", 3rd ed., §8.7.3). Blocks of N − M + 1 outputs come
/// from one N-point FFT product each, N the size of the given FFT, M the taps; the path's offset is
/// a plain delay of the input (history), so N does not depend on it and one plan serves every take.
final class EchoConvolver {
    let m: Int
    let fft: RealFFT
    /// Outputs per FFT block.
    let block: Int
    var offset = 0
    /// The taps' spectrum, `bins` interleaved (re, im) pairs.
    var taps: [Float]
    var spectrum: [Float], y: [Float]
    /// Accompaniment history: the last offset + m − 1 samples before the next block.
    var history: [Float] = []

    init(taps m: Int, fft: RealFFT) {
        precondition(m >= 1 && fft.size >= m + 1, "the FFT must be longer than the path")
        self.m = m
        self.fft = fft
        block = fft.size - m + 1
        taps = [Float](repeating: 0, count: 2 * fft.bins)
        spectrum = [Float](repeating: 0, count: 2 * fft.bins)
        y = [Float](repeating: 0, count: fft.size)
    }

    /// Sets the path (its taps count must be this convolver's) and clears the history.
    func reset(_ path: EchoPath) {
        precondition(path.taps.count == m, "the path has \(path.taps.count) taps, the convolver \(m)")
        offset = path.offset
        path.taps.withUnsafeBufferPointer { h in taps.withUnsafeMutableBufferPointer { fft.forward(h.baseAddress!, count: m, into: $0.baseAddress!) } }
        history = [Float](repeating: 0, count: offset + m - 1)
    }

    /// echo[n] = Σ_k h[k]·a[n − offset − k] for the samples of `a` (continuing the previous calls).
    func process(_ a: [Float]) -> [Float] {
        var out = [Float](repeating: 0, count: a.count)
        let m = self.m, bins = fft.bins, keep = offset + m - 1
        // s[j] = a[j − keep]: history, then the new samples.
        let s = history + a
        s.withUnsafeBufferPointer { s in
            taps.withUnsafeBufferPointer { h in
                spectrum.withUnsafeMutableBufferPointer { x in
                    y.withUnsafeMutableBufferPointer { y in
                        out.withUnsafeMutableBufferPointer { out in
                            var i = 0
                            while i < a.count {
                                let n = min(block, a.count - i)
                                // Outputs i ..< i + n read a[i − offset − m + 1 ..< i + n − offset] = s[i ..< i + n + m − 1].
                                fft.forward(s.baseAddress! + i, count: n + m - 1, into: x.baseAddress!)
                                for k in 0..<bins {
                                    let xr = x[2 * k], xi = x[2 * k + 1], hr = h[2 * k], hi = h[2 * k + 1]
                                    x[2 * k] = xr * hr - xi * hi
                                    x[2 * k + 1] = xr * hi + xi * hr
                                }
                                fft.inverse(x.baseAddress!, into: y.baseAddress!)
                                // The first m − 1 outputs of the circular convolution wrap; the next n are the linear ones.
                                for j in 0..<n { out[i + j] = y[m - 1 + j] }
                                i += n
                            }
                        }
                    }
                }
            }
        }
        history = Array(s[(s.count - keep)...])
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
        return try canceller(configuration).track(tracker: self, take: t, accompaniment: a, durationS: Double(take.count) / takeRate)
    }
}
