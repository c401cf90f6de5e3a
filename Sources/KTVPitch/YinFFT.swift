import KTVAudio

// YIN, computed exactly with FFTs.
//
// de Cheveigné, A. & Kawahara, H. (2002). "YIN, a fundamental frequency estimator for speech and
// music." J. Acoust. Soc. Am. 111(4), 1917-1930.
//
// For a buffer x of W + τmax samples, the difference function (YIN eq. 6) is
//     d(τ) = Σ_{j<W} (x_j − x_{j+τ})² = E(0) + E(τ) − 2·r(τ),
// with E(τ) = Σ_{j=τ}^{τ+W−1} x_j² (from prefix sums) and r(τ) = Σ_{j<W} x_j·x_{j+τ}. r is the
// cross-correlation of the first W samples with the whole buffer: with both zero-padded to
// N ≥ W + τmax, the circular correlation never wraps for j < W and τ ≤ τmax, so r is exact for every
// lag searched (this is not the windowed autocorrelation that only approximates YIN). Then the
// cumulative mean normalized difference d'(τ) = d(τ)·τ / Σ_{k=1..τ} d(k) (eq. 8), its dips, and
// parabolic interpolation of each dip (step 5 of the paper).

/// One dip of d′: a period candidate.
public struct YinCandidate: Sendable, Equatable {
    /// Period in samples of the analysis rate, interpolated.
    public var lag: Float
    /// d′ at the dip (0 = perfectly periodic).
    public var dprime: Float
}

/// Settings of the YIN worker, with checked ranges.
public struct YinConfiguration: Sendable, Equatable {
    /// Rate of the samples handed to the worker, Hz. 4000…96000.
    public var sampleRateHz: Double
    /// Lowest and highest f0 searched, Hz.
    public var minHz: Double
    public var maxHz: Double
    /// Integration window W, ms. Default: one period of `minHz` (so the lowest pitch fits once).
    public var windowMs: Double?
    /// Most candidates kept per frame (the lowest dips). 1…16.
    public var maxCandidates: Int = 6

    public init(sampleRateHz: Double, minHz: Double, maxHz: Double, windowMs: Double? = nil) {
        self.sampleRateHz = sampleRateHz
        self.minHz = minHz
        self.maxHz = maxHz
        self.windowMs = windowMs
    }

    public func validated() throws(PitchError) -> YinConfiguration {
        guard (4000...96000).contains(sampleRateHz) else {
            throw .invalidParameter(name: "sampleRateHz", value: "\(sampleRateHz)", allowed: "4000…96000")
        }
        guard minHz >= 20, minHz < maxHz else {
            throw .invalidParameter(name: "minHz", value: "\(minHz)", allowed: "20 ≤ minHz < maxHz")
        }
        guard maxHz <= sampleRateHz / 4 else {
            throw .invalidParameter(name: "maxHz", value: "\(maxHz)", allowed: "≤ a quarter of the analysis rate (\(sampleRateHz / 4) Hz)")
        }
        if let w = windowMs, !(1...200).contains(w) {
            throw .invalidParameter(name: "windowMs", value: "\(w)", allowed: "1…200")
        }
        guard (1...16).contains(maxCandidates) else {
            throw .invalidParameter(name: "maxCandidates", value: "\(maxCandidates)", allowed: "1…16")
        }
        return self
    }

    /// Shortest and longest lag searched, samples.
    public var lagRange: ClosedRange<Int> {
        max(2, Int((sampleRateHz / maxHz).rounded(.down)))...Int((sampleRateHz / minHz).rounded(.up)) + 1
    }

    /// Integration window W, samples.
    public var windowSamples: Int {
        Int(((windowMs ?? 1000 / minHz) * sampleRateHz / 1000).rounded(.up))
    }

    /// Samples one frame reads: W + τmax (+1 for the interpolation neighbour).
    public var bufferSamples: Int { windowSamples + lagRange.upperBound + 1 }
}

/// The YIN worker: buffers and FFT plans are made once; `analyze` is called per frame.
/// Not thread-safe: one worker per thread (it is Sendable so it can be handed to that thread).
/// Buffers are raw allocations: the per-frame loops then run without Swift's copy-on-write and
/// exclusivity checks, which otherwise cost a third of the run time.
public final class YinWorker: @unchecked Sendable {
    public let configuration: YinConfiguration
    public let lagMin: Int, lagMax: Int, window: Int, bufferLength: Int
    private let fft: RealFFT
    private let specA: UnsafeMutablePointer<Float>, specB: UnsafeMutablePointer<Float>
    private let r: UnsafeMutablePointer<Float>
    private let prefix: UnsafeMutablePointer<Double>
    private let d: UnsafeMutablePointer<Float>, dprime: UnsafeMutablePointer<Float>

    public init(configuration: YinConfiguration) throws(PitchError) {
        let c = try configuration.validated()
        self.configuration = c
        lagMin = c.lagRange.lowerBound
        lagMax = c.lagRange.upperBound
        window = c.windowSamples
        bufferLength = c.bufferSamples
        fft = RealFFT(size: RealFFT.fastSize(atLeast: bufferLength))
        specA = .allocate(capacity: 2 * fft.bins)
        specB = .allocate(capacity: 2 * fft.bins)
        r = .allocate(capacity: fft.size)
        prefix = .allocate(capacity: bufferLength + 1)
        d = .allocate(capacity: lagMax + 2)
        dprime = .allocate(capacity: lagMax + 2)
        d.initialize(repeating: 0, count: lagMax + 2)
        dprime.initialize(repeating: 1, count: lagMax + 2)
    }

    deinit {
        specA.deallocate()
        specB.deallocate()
        r.deallocate()
        prefix.deallocate()
        d.deallocate()
        dprime.deallocate()
    }

    /// Analyses one buffer of `bufferLength` samples. Returns the dips of d′ in lag order (at most
    /// `maxCandidates`: the shortest lags and the deepest dip), the buffer's RMS, and the lowest d′.
    public func analyze(_ x: UnsafeBufferPointer<Float>) -> (candidates: [YinCandidate], rms: Float, minDprime: Float, brightness: Float) {
        precondition(x.count >= bufferLength)
        let xp = x.baseAddress!
        // Energy prefix sums, in Double: d(τ) is a small difference of large terms.
        var acc = 0.0
        prefix[0] = 0
        for i in 0..<bufferLength {
            let v = Double(xp[i])
            acc += v * v
            prefix[i + 1] = acc
        }
        let e0 = prefix[window]
        let rms = Float((acc / Double(bufferLength)).squareRoot())
        if e0 <= 1e-12 { return ([], rms, 1, 0) }
        // Brightness: the second difference's energy over the window's, a high-pass of 12 dB per
        // octave (|2 sin(πf/fs)|⁴): how much of the voice sits in its upper harmonics (VoiceFrames).
        // Float, eight partial sums (a single sum is one long chain of dependent adds the compiler
        // may not reorder): a ratio in dB needs no more.
        var lanes = SIMD8<Float>()
        var i = 2
        let raw = UnsafeRawPointer(xp)
        while i + 8 <= window {
            let a = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            let b = raw.loadUnaligned(fromByteOffset: (i - 1) * 4, as: SIMD8<Float>.self)
            let c = raw.loadUnaligned(fromByteOffset: (i - 2) * 4, as: SIMD8<Float>.self)
            let v = a - 2 * b + c
            lanes += v * v
            i += 8
        }
        var e2 = lanes.sum()
        while i < window {
            let v = xp[i] - 2 * xp[i - 1] + xp[i - 2]
            e2 += v * v
            i += 1
        }
        let brightness = Float(Double(e2) / max(prefix[window] - prefix[2], 1e-12))

        // r(τ) by FFT: conj(A)·B, A = first W samples, B = whole buffer.
        fft.forward(xp, count: window, into: specA)
        fft.forward(xp, count: bufferLength, into: specB)
        for k in 0..<fft.bins {
            let ar = specA[2 * k], ai = specA[2 * k + 1], br = specB[2 * k], bi = specB[2 * k + 1]
            specB[2 * k] = ar * br + ai * bi
            specB[2 * k + 1] = ar * bi - ai * br
        }
        fft.inverse(specB, into: r)

        // d(τ) and d′(τ).
        var running = 0.0
        dprime[0] = 1
        for tau in 1...lagMax {
            let dv = max(0, e0 + (prefix[tau + window] - prefix[tau]) - 2 * Double(r[tau]))
            d[tau] = Float(dv)
            running += dv
            dprime[tau] = running > 0 ? Float(dv * Double(tau) / running) : 1
        }
        // Dips: local minima of d′ inside the searched range.
        var found: [YinCandidate] = []
        var minD: Float = 1
        for tau in max(lagMin, 2)..<lagMax {
            let y1 = dprime[tau]
            minD = min(minD, y1)
            guard y1 < dprime[tau - 1], y1 <= dprime[tau + 1], y1 < 1 else { continue }
            // Parabolic interpolation of the dip, on the raw difference function d (closer to a
            // parabola near the period than d′); the value from d′.
            let a = d[tau - 1], b = d[tau], c = d[tau + 1]
            let den = a - 2 * b + c
            var shift: Float = den > 0 ? 0.5 * (a - c) / den : 0
            shift = max(-1, min(1, shift))
            let p0 = dprime[tau - 1], p2 = dprime[tau + 1]
            let value = max(0, y1 - 0.25 * (p0 - p2) * shift)
            found.append(YinCandidate(lag: Float(tau) + shift, dprime: min(value, y1)))
        }
        // Keep the shortest-lag dips (the absolute-threshold rule looks for the first dip below a
        // threshold; every multiple of the period is a dip too, so "the lowest dips" would keep the
        // sub-harmonics and drop the period) and always the deepest dip.
        if found.count > configuration.maxCandidates {
            var deepest = 0
            for i in 1..<found.count where found[i].dprime < found[deepest].dprime { deepest = i }
            let keep = found[deepest]
            found.removeLast(found.count - configuration.maxCandidates)
            if !found.contains(keep) { found[found.count - 1] = keep }
        }
        return (found, rms, minD, brightness)
    }
}
