import CSoxr

/// Sample-rate conversion with libsoxr (the SoX resampler; high quality, linear phase).
///
/// A streaming worker: create once per stream and rate pair, feed blocks with `process`, end with
/// `flush`. Output samples are aligned with input samples (soxr compensates its own delay).
public final class Resampler {
    public let inputRate: Double
    public let outputRate: Double
    private let soxr: soxr_t
    private var out: [Float] = []

    /// soxr's quality recipes: `high` (SOXR_HQ, 20-bit, the default) for audio people listen to,
    /// `medium` (SOXR_MQ, 16-bit) where the result is only analysed, e.g. a voice for pitch tracking.
    public enum Quality: Sendable { case high, medium }

    public init(inputRate: Double, outputRate: Double, quality: Quality = .high) throws(AudioError) {
        guard inputRate > 0, outputRate > 0 else {
            throw .invalidArgument("resampling needs positive rates, not \(inputRate) → \(outputRate) Hz")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        var error: soxr_error_t?
        var io = soxr_io_spec(itype: SOXR_FLOAT32_I, otype: SOXR_FLOAT32_I, scale: 1, e: nil, flags: 0)
        var q = soxr_quality_spec(UInt(quality == .high ? SOXR_HQ : SOXR_MQ), 0)
        guard let s = soxr_create(inputRate, outputRate, 1, &error, &io, &q, nil), error == nil else {
            throw .resampler(error.map { String(cString: $0) } ?? "soxr_create failed")
        }
        soxr = s
    }

    deinit { soxr_delete(soxr) }

    /// Resamples a block; returns the output produced so far (it lags the input by soxr's delay until `flush`).
    public func process(_ input: [Float]) throws(AudioError) -> [Float] {
        try run(input, final: false)
    }

    /// Drains what soxr still holds.
    public func flush() throws(AudioError) -> [Float] {
        try run([], final: true)
    }

    private func run(_ input: [Float], final: Bool) throws(AudioError) -> [Float] {
        let capacity = Int((Double(input.count) * outputRate / inputRate).rounded(.up)) + 4096
        if out.count < capacity { out = [Float](repeating: 0, count: capacity) }
        var result: [Float] = []
        var consumed = 0
        repeat {
            var idone = 0, odone = 0
            let err: soxr_error_t? = input.withUnsafeBufferPointer { ip in
                out.withUnsafeMutableBufferPointer { op in
                    let inPtr = final ? nil : UnsafeRawPointer(ip.baseAddress.map { $0 + consumed })
                    return soxr_process(soxr, inPtr, final ? 0 : input.count - consumed, &idone,
                                        op.baseAddress, op.count, &odone)
                }
            }
            if let err { throw .resampler(String(cString: err)) }
            consumed += idone
            result.append(contentsOf: out[0..<odone])
            if final && odone == 0 { break }
            if !final && consumed >= input.count && odone < out.count { break }
        } while true
        return result
    }

    /// Resamples a whole signal.
    public static func resample(_ x: [Float], from inputRate: Double, to outputRate: Double) throws(AudioError) -> [Float] {
        if inputRate == outputRate { return x }
        let r = try Resampler(inputRate: inputRate, outputRate: outputRate)
        return try r.process(x) + r.flush()
    }
}
