import CFFTW
import Foundation

/// Real-input FFT of one size, on FFTW (single precision). The only file that imports FFTW.
///
/// A worker: the plans and aligned buffers are made once, in `init`, and reused by every call. FFTW's
/// planner is not thread-safe, so plan creation and destruction take a process-wide lock; executing a
/// plan is thread-safe, so workers on different threads run in parallel. One worker per thread.
public final class RealFFT {
    public let size: Int
    /// Bins of the half spectrum: size/2 + 1.
    public var bins: Int { size / 2 + 1 }

    private let input: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<fftwf_complex>
    private let forwardPlan: fftwf_plan
    private let inversePlan: fftwf_plan

    /// FFTW's planner is global state inside the library; this lock is the only shared state here.
    private static let plannerLock = NSLock()

    public init(size: Int) {
        precondition(size >= 2 && size % 2 == 0, "FFT size must be even and at least 2")
        self.size = size
        input = fftwf_alloc_real(size)!
        spectrum = fftwf_alloc_complex(size / 2 + 1)!
        input.initialize(repeating: 0, count: size)
        Self.plannerLock.lock()
        forwardPlan = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrum, UInt32(FFTW_ESTIMATE))!
        inversePlan = fftwf_plan_dft_c2r_1d(Int32(size), spectrum, input, UInt32(FFTW_ESTIMATE))!
        Self.plannerLock.unlock()
    }

    deinit {
        Self.plannerLock.lock()
        fftwf_destroy_plan(forwardPlan)
        fftwf_destroy_plan(inversePlan)
        Self.plannerLock.unlock()
        fftwf_free(input)
        fftwf_free(spectrum)
    }

    /// Forward transform of `x` (zero-padded or truncated to `size`) into `re`/`im` (`bins` values each).
    public func forward(_ x: UnsafeBufferPointer<Float>, re: inout [Float], im: inout [Float]) {
        let n = min(x.count, size)
        if n > 0 { input.update(from: x.baseAddress!, count: n) }
        if n < size { (input + n).update(repeating: 0, count: size - n) }
        fftwf_execute(forwardPlan)
        if re.count != bins { re = [Float](repeating: 0, count: bins) }
        if im.count != bins { im = [Float](repeating: 0, count: bins) }
        let raw = UnsafeMutableRawPointer(spectrum).assumingMemoryBound(to: Float.self)
        for k in 0..<bins {
            re[k] = raw[2 * k]
            im[k] = raw[2 * k + 1]
        }
    }

    public func forward(_ x: [Float], re: inout [Float], im: inout [Float]) {
        x.withUnsafeBufferPointer { forward($0, re: &re, im: &im) }
    }

    /// Inverse transform of a half spectrum into `out` (`size` values), scaled by 1/size so that
    /// inverse(forward(x)) == x.
    public func inverse(re: [Float], im: [Float], into out: inout [Float]) {
        let raw = UnsafeMutableRawPointer(spectrum).assumingMemoryBound(to: Float.self)
        for k in 0..<bins {
            raw[2 * k] = re[k]
            raw[2 * k + 1] = im[k]
        }
        fftwf_execute(inversePlan)
        if out.count != size { out = [Float](repeating: 0, count: size) }
        let scale = 1 / Float(size)
        for i in 0..<size { out[i] = input[i] * scale }
    }

    /// Forward transform into `out`: `bins` interleaved (re, im) pairs. No allocation: for inner loops.
    public func forward(_ x: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>) {
        let n = min(count, size)
        if n > 0 { input.update(from: x, count: n) }
        if n < size { (input + n).update(repeating: 0, count: size - n) }
        fftwf_execute(forwardPlan)
        out.update(from: UnsafeMutableRawPointer(spectrum).assumingMemoryBound(to: Float.self), count: 2 * bins)
    }

    /// Inverse transform of `bins` interleaved (re, im) pairs into `out` (`size` values), scaled by 1/size.
    public func inverse(_ spectrumIn: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(spectrum).assumingMemoryBound(to: Float.self).update(from: spectrumIn, count: 2 * bins)
        fftwf_execute(inversePlan)
        let scale = 1 / Float(size)
        for i in 0..<size { out[i] = input[i] * scale }
    }

    /// A periodic Hann window of `size` samples (the frames of every short-time analysis here).
    public static func hannWindow(size: Int) -> [Float] {
        (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
    }

    /// The smallest even size ≥ n whose only prime factors are 2, 3 and 5 (fast for FFTW).
    public static func goodSize(atLeast n: Int) -> Int { size(atLeast: n, maxThreesAndFives: .max) }

    /// The smallest even size ≥ n of the form 2^a·3^b·5^c with b + c ≤ 2: sizes FFTW's estimating
    /// planner does best, for a transform run on every frame. More factors of 3 and 5 cost it up to
    /// twice the time a point (540 = 2²·3³·5, YIN's size at 60 Hz, took 3.6 ns a point; 576 =
    /// 2⁶·3², 2.0), more than a few points more cost. (`goodSize` stays where a size sets more
    /// than speed: the canceller's hop is half its size.)
    public static func fastSize(atLeast n: Int) -> Int { size(atLeast: n, maxThreesAndFives: 2) }

    private static func size(atLeast n: Int, maxThreesAndFives: Int) -> Int {
        var m = max(2, n + (n & 1))
        while true {
            var r = m, threesAndFives = 0
            while r % 2 == 0 { r /= 2 }
            for p in [3, 5] { while r % p == 0 { r /= p; threesAndFives += 1 } }
            if r == 1, threesAndFives <= maxThreesAndFives { return m }
            m += 2
        }
    }
}

/// Cross-correlation by FFT.
public enum CrossCorrelation {
    /// `c[lag] = Σ_t a[t + lag] · b[t]` for lag in −maxLag…maxLag (index lag + maxLag).
    /// A positive peak lag means `b`'s content appears `lag` samples later in `a`.
    public static func compute(_ a: [Float], _ b: [Float], maxLag: Int, fft: RealFFT? = nil) -> [Float] {
        let n = RealFFT.goodSize(atLeast: max(a.count, b.count) + maxLag + 1)
        let f = fft.flatMap { $0.size == n ? $0 : nil } ?? RealFFT(size: n)
        var ar: [Float] = [], ai: [Float] = [], br: [Float] = [], bi: [Float] = []
        f.forward(a, re: &ar, im: &ai)
        f.forward(b, re: &br, im: &bi)
        // A · conj(B)
        var pr = [Float](repeating: 0, count: f.bins), pi = [Float](repeating: 0, count: f.bins)
        for k in 0..<f.bins {
            pr[k] = ar[k] * br[k] + ai[k] * bi[k]
            pi[k] = ai[k] * br[k] - ar[k] * bi[k]
        }
        var r: [Float] = []
        f.inverse(re: pr, im: pi, into: &r)
        var out = [Float](repeating: 0, count: 2 * maxLag + 1)
        for lag in -maxLag...maxLag {
            out[lag + maxLag] = r[(lag + n) % n]
        }
        return out
    }
}
