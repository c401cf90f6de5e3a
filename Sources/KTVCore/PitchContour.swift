/// A pitch contour: f0 samples in time order. The one contour type in ktv: a tracker's output, a
/// reference melody given as a contour (Agora's binary pitch, ktv's JSON), and the series the
/// melody measures compare are all `PitchContour`s.
///
/// Unvoiced is `nil`. Writers choose how to spell it (0 Hz in CSV and Agora's formats, `null` in
/// JSON); readers turn every spelling back into `nil` here, so no code downstream tests for 0.
///
/// Some estimators offer a pitch for a frame they judge unvoiced; mir_eval writes it as a negative
/// f0 and scores it in raw pitch accuracy. Such a guess is kept apart in `unvoicedGuessHz`, never in
/// `f0Hz`. Use `init(timesS:signedHz:)` and `signedHz` to read and write that convention.
public struct PitchContour: Sendable, Equatable {
    /// Sample times, seconds (frame centres for a tracker; k·interval for a fixed-interval contour).
    public var timesS: [Double]
    /// f0 per sample, Hz; nil when unvoiced.
    public var f0Hz: [Double?]
    /// A pitch guess (Hz) for unvoiced samples, or nil; empty when the source offers no guesses.
    public var unvoicedGuessHz: [Double?]

    public init(timesS: [Double], f0Hz: [Double?], unvoicedGuessHz: [Double?] = []) {
        self.timesS = timesS
        self.f0Hz = f0Hz
        self.unvoicedGuessHz = unvoicedGuessHz
    }

    /// A contour with one value every `intervalMs`, sample k at k·interval (Agora's binary pitch).
    public init(intervalMs: Int, f0Hz: [Double?]) {
        let intervalS = Double(intervalMs) / 1000
        self.init(timesS: f0Hz.indices.map { Double($0) * intervalS }, f0Hz: f0Hz)
    }

    /// Reads mir_eval's signed convention: f > 0 voiced; f < 0 unvoiced with the guess |f|; 0 unvoiced
    /// without a guess. A subnormal value has no usable logarithm and is no pitch at all; infinities and
    /// NaN are kept as f0 so that `validated` reports them.
    public init(timesS: [Double], signedHz: [Double]) {
        var f0: [Double?] = []
        var guesses: [Double?] = []
        f0.reserveCapacity(signedHz.count)
        var anyGuess = false
        for v in signedHz {
            f0.append((v.isNormal && v > 0) || !v.isFinite ? v : nil)
            let guess: Double? = v.isNormal && v < 0 ? -v : nil
            if guess != nil { anyGuess = true }
            guesses.append(guess)
        }
        self.init(timesS: timesS, f0Hz: f0, unvoicedGuessHz: anyGuess ? guesses : [])
    }

    public var count: Int { timesS.count }
    public var isEmpty: Bool { timesS.isEmpty }
    public var voicedCount: Int { f0Hz.lazy.filter { $0 != nil }.count }

    /// The pitch offered at sample `i`: f0 when voiced, else the guess, else nil.
    @inline(__always)
    public func offeredHz(_ i: Int) -> Double? {
        if let f = f0Hz[i] { return f }
        return unvoicedGuessHz.isEmpty ? nil : unvoicedGuessHz[i]
    }

    /// mir_eval's signed values: f0, −guess, or 0.
    public var signedHz: [Double] {
        f0Hz.indices.map { i in f0Hz[i] ?? (unvoicedGuessHz.isEmpty ? nil : unvoicedGuessHz[i]).map { -$0 } ?? 0 }
    }

    /// The interval in whole milliseconds when sample k sits at k·interval (within 1 µs), else nil.
    public var regularIntervalMs: Int? {
        guard count >= 2 else { return nil }
        let intervalMs = Int((timesS[1] * 1000).rounded())
        guard intervalMs > 0 else { return nil }
        let intervalS = Double(intervalMs) / 1000
        for (k, t) in timesS.enumerated() where abs(t - Double(k) * intervalS) > 1e-6 { return nil }
        return intervalMs
    }

    /// The samples from `range`, guesses included.
    public subscript(range: Range<Int>) -> PitchContour {
        PitchContour(timesS: Array(timesS[range]), f0Hz: Array(f0Hz[range]),
                     unvoicedGuessHz: unvoicedGuessHz.isEmpty ? [] : Array(unvoicedGuessHz[range]))
    }

    /// Checks the contour can be measured: at least one sample, as many times as values, times finite,
    /// ≥ 0 and strictly increasing, every pitch finite and positive. `name` prefixes the messages.
    public func validated(name: String = "contour") throws(ParameterError) -> PitchContour {
        guard timesS.count == f0Hz.count else {
            throw ParameterError(name: "\(name).f0Hz.count", value: String(f0Hz.count), allowed: "the number of times (\(timesS.count))")
        }
        guard unvoicedGuessHz.isEmpty || unvoicedGuessHz.count == f0Hz.count else {
            throw ParameterError(name: "\(name).unvoicedGuessHz.count", value: String(unvoicedGuessHz.count),
                                 allowed: "0 or the number of times (\(timesS.count))")
        }
        guard !timesS.isEmpty else { throw ParameterError(name: "\(name).count", value: "0", allowed: "at least one sample") }
        for (i, t) in timesS.enumerated() {
            guard t.isFinite, t >= 0 else {
                throw ParameterError(name: "\(name).timesS[\(i)]", value: String(t), allowed: "finite and ≥ 0")
            }
            if i > 0, !(t > timesS[i - 1]) {
                throw ParameterError(name: "\(name).timesS[\(i)]", value: String(t),
                                     allowed: "greater than the previous time (\(timesS[i - 1]))")
            }
        }
        for (values, field) in [(f0Hz, "f0Hz"), (unvoicedGuessHz, "unvoicedGuessHz")] {
            for (i, f) in values.enumerated() {
                if let f, !(f.isFinite && f > 0) {
                    throw ParameterError(name: "\(name).\(field)[\(i)]", value: String(f), allowed: "finite and > 0 (nil for an unvoiced frame)")
                }
            }
        }
        return self
    }
}
