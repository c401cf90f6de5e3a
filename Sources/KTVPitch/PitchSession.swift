import Foundation
import KTVAudio
import KTVCore

/// One input being tracked: resampling, framing and YIN analysis as blocks arrive; pYIN-style
/// decoding over the whole input in `finish()` (the Viterbi path needs every frame).
///
/// Memory holds the samples of the frames not yet analysed plus per-frame candidates, whatever the
/// input's length. One session per input; not thread-safe (it uses the tracker's workers).
public final class PitchSession: @unchecked Sendable {
    let tracker: PitchTracker
    let inputRate: Double
    let resampler: Resampler?
    let rate: Double
    let hop: Double          // analysis samples per frame
    let buffer: Int
    let window: Int
    let maxLag: Int
    var signal: [Float] = []  // analysis-rate samples from `base` on
    /// A parallel signal, same indexing (the predicted accompaniment echo), for the voicing gate.
    var reference: [Float]?
    var base = 0
    var produced = 0          // analysis samples produced so far
    var table: CandidateTable
    var nextFrame = 0
    /// With more than one worker, blocks of frames are analysed on this queue while the caller
    /// reads and resamples the next block (two cores were idle for a quarter of `ktv pitch`); the
    /// table is then written there only, and read after `settle()`. At most two blocks wait
    /// (`inFlight`), so memory stays bounded however fast the input comes.
    private let pipeline: DispatchQueue?
    private let inFlight = DispatchSemaphore(value: 2)
    private let pending = DispatchGroup()
    /// Input samples fed so far.
    public private(set) var inputFrames = 0

    init(tracker: PitchTracker, inputRate: Double) throws {
        self.tracker = tracker
        self.inputRate = inputRate
        rate = tracker.configuration.analysisRateHz
        // The same rates the audio reader accepts: a 1 Hz "signal" would be upsampled 16000-fold.
        guard AudioReader.sampleRateRangeHz.contains(inputRate) else {
            throw PitchError.invalidParameter(name: "sampleRateHz", value: "\(inputRate)",
                                              allowed: "\(Int(AudioReader.sampleRateRangeHz.lowerBound))…\(Int(AudioReader.sampleRateRangeHz.upperBound)) Hz")
        }
        // Medium quality: the analysis band (f0 ≤ 1100 Hz and its first harmonics) sits far below
        // where HQ and MQ differ, and MQ is much cheaper.
        resampler = inputRate == rate ? nil : try Resampler(inputRate: inputRate, outputRate: rate, quality: .medium)
        hop = tracker.configuration.hopMs * rate / 1000
        buffer = tracker.yin.bufferSamples
        window = tracker.yin.windowSamples
        maxLag = tracker.yin.lagRange.upperBound
        table = CandidateTable(stride: tracker.yin.maxCandidates)
        pipeline = tracker.workers.count > 1 ? DispatchQueue(label: "ktv.pitch.session") : nil
    }

    /// Waits for the blocks still being analysed: the table is whole after this.
    private func settle() { pending.wait() }

    /// First analysis sample of frame k's buffer: chosen so the longest lag's samples are centred on k·hop.
    func start(_ k: Int) -> Int {
        Int((Double(k) * hop - Double(window + maxLag - 1) / 2).rounded())
    }

    /// Feeds the next block of mono samples at the session's input rate.
    public func feed(_ input: [Float]) throws {
        inputFrames += input.count
        let x = try resampler?.process(input) ?? input
        append(x)
        analyzeAvailable(final: false)
    }

    public func feed(_ input: UnsafeBufferPointer<Float>) throws {
        try feed(Array(input))
    }

    /// Feeds a block of what is left of a take after echo cancellation, with the echo that was
    /// subtracted (same length): frames whose residual is not clearly above that echo are unvoiced
    /// (`PitchConfiguration.echoGateRatio`). The session's input rate must be the analysis rate.
    public func feed(_ residual: [Float], echo: [Float]) throws {
        guard resampler == nil, residual.count == echo.count else {
            throw PitchError.invalidParameter(name: "echo", value: "\(echo.count) samples at \(inputRate) Hz",
                                              allowed: "as many samples as the residual (\(residual.count)), at the analysis rate (\(rate) Hz)")
        }
        inputFrames += residual.count
        if reference == nil { reference = [] }
        reference?.append(contentsOf: echo)
        append(residual)
        analyzeAvailable(final: false)
    }

    private func append(_ x: [Float]) {
        signal.append(contentsOf: x)
        produced += x.count
    }

    /// Analyses every frame whose buffer is complete (at the end, zero-padded).
    private func analyzeAvailable(final: Bool, lastFrame: Int = Int.max) {
        var ready: [Int] = []
        var k = nextFrame
        while k <= lastFrame, final || start(k) + buffer <= produced {
            if final && start(k) >= produced + buffer { break }
            ready.append(k)
            k += 1
        }
        guard !ready.isEmpty else { return }
        let echoRMS = ready.map(referenceRMS)
        if let pipeline, !final {
            // The block's samples, copied: the caller goes on appending to (and dropping from) `signal`.
            let from = max(0, start(ready[0]) - base), to = min(signal.count, max(from, start(ready[ready.count - 1]) + buffer - base))
            let samples = Array(signal[from..<to]), samplesBase = base + from, frames = ready
            inFlight.wait()
            pending.enter()
            pipeline.async { [self] in
                let results = analyze(frames: frames, signal: samples, base: samplesBase)
                record(results, echoRMS: echoRMS)
                inFlight.signal()
                pending.leave()
            }
        } else {
            settle()
            record(analyze(frames: ready, signal: signal, base: base), echoRMS: echoRMS)
        }
        nextFrame = k
        // Drop samples no later frame reads.
        let keepFrom = max(0, start(nextFrame))
        if keepFrom > base {
            let drop = min(keepFrom - base, signal.count)
            signal.removeFirst(drop)
            reference?.removeFirst(drop)
            base += drop
        }
    }

    private func record(_ results: [FrameResult], echoRMS: [Float?]) {
        for (i, r) in results.enumerated() {
            table.append(r.candidates, rms: r.rms, minDprime: r.minDprime, brightness: r.brightness, referenceRMS: echoRMS[i])
        }
    }

    /// RMS of the reference over frame k's buffer; nil without a reference.
    private func referenceRMS(_ k: Int) -> Float? {
        guard let ref = reference else { return nil }
        let s = start(k) - base
        let lo = max(0, s), hi = min(ref.count, s + buffer)
        var e = 0.0
        if hi > lo { ref.withUnsafeBufferPointer { r in for j in lo..<hi { e += Double(r[j] * r[j]) } } }
        return Float((e / Double(buffer)).squareRoot())
    }

    /// Copies frame k's buffer (zero outside the signal) and runs one worker on it.
    typealias FrameResult = (candidates: [YinCandidate], rms: Float, minDprime: Float, brightness: Float)

    private func runFrame(_ k: Int, _ worker: YinWorker, _ scratch: inout [Float], signal: [Float], base: Int) -> FrameResult {
        // Samples i with 0 ≤ s + i − base < signal.count come from the signal, the rest are 0.
        let s = start(k) - base
        let lo = min(buffer, max(0, -s)), hi = max(lo, min(buffer, signal.count - s))
        scratch.withUnsafeMutableBufferPointer { x in
            let x = x.baseAddress!
            if lo > 0 { x.update(repeating: 0, count: lo) }
            if hi > lo { signal.withUnsafeBufferPointer { (x + lo).update(from: $0.baseAddress! + s + lo, count: hi - lo) } }
            if hi < buffer { (x + hi).update(repeating: 0, count: buffer - hi) }
        }
        return scratch.withUnsafeBufferPointer { worker.analyze($0) }
    }

    /// Frames `frames` of `signal`, whose first sample is analysis sample `base`.
    private func analyze(frames: [Int], signal: [Float], base: Int) -> [FrameResult] {
        tracker.workersLock.lock()
        defer { tracker.workersLock.unlock() }
        let workers = tracker.workers
        if workers.count == 1 || frames.count < 64 {
            var scratch = [Float](repeating: 0, count: buffer)
            return frames.map { runFrame($0, workers[0], &scratch, signal: signal, base: base) }
        }
        final class Results: @unchecked Sendable {
            // Each slot is written by one thread only.
            var items: [FrameResult]
            init(_ n: Int) { items = .init(repeating: ([], 0, 1, 0), count: n) }
        }
        let results = Results(frames.count)
        let chunk = (frames.count + workers.count - 1) / workers.count
        // The session's signal is only read while the threads run; worker t belongs to thread t.
        DispatchQueue.concurrentPerform(iterations: workers.count) { t in
            var scratch = [Float](repeating: 0, count: self.buffer)
            let lo = t * chunk, hi = min(frames.count, lo + chunk)
            guard lo < hi else { return }
            for i in lo..<hi { results.items[i] = self.runFrame(frames[i], workers[t], &scratch, signal: signal, base: base) }
        }
        return results.items
    }

    /// Ends the input: analyses the last frames and decodes the track.
    public func finish() throws -> PitchTrack {
        if let r = resampler { append(try r.flush()) }
        let durationS = Double(inputFrames) / inputRate
        guard inputFrames > 0 else { throw PitchError.noAudio("the input has no samples") }
        let hopS = tracker.configuration.hopMs / 1000
        let lastFrame = Int((durationS / hopS).rounded(.down))
        analyzeAvailable(final: true, lastFrame: lastFrame)
        settle()
        // Energy floor: relative to the loud level (95th percentile of frame RMS), and absolute.
        let loud = Stats.upperOrderStatistic(table.rms.sorted(), 0.95) ?? 0
        let c = tracker.configuration
        let floor = max(Double(loud) * pow(10, c.energyFloorDb / 20), pow(10, c.absoluteFloorDbfs / 20))
        var quiet = table.rms.map { Double($0) < floor }
        // With a cancelled accompaniment: a frame whose residual is not clearly above the echo
        // that was there is what the cancellation left of the accompaniment, not a voice.
        if table.referenceRMS.count == table.rms.count {
            for k in quiet.indices where Double(table.rms[k]) < c.echoGateRatio * Double(table.referenceRMS[k]) { quiet[k] = true }
        }
        let loudLevel = floor * pow(10, c.costs.loudMarginDb / 20)
        let loudFrames = table.rms.map { Double($0) >= loudLevel }
        let decoded = PitchDecoder.decode(table, quiet: quiet, loud: loudFrames, rate: rate, costs: c.costs)
        // The candidates are decoded: their memory goes before the voice frames are made.
        table.lags = []
        table.dprimes = []
        let frames = Self.frames(decoded, hopS: hopS, rate: rate, start: start, window: window)
        var track = PitchTrack(frames: Array(frames.prefix(lastFrame + 1)), hopS: hopS, configuration: c, durationS: durationS)
        track.voice = voiceFrames(count: track.contour.count, hopS: hopS)
        return track
    }

    /// Level, aperiodicity and brightness per frame, from what the YIN pass kept.
    private func voiceFrames(count: Int, hopS: Double) -> VoiceFrames {
        let n = min(count, table.frames)
        var level = [Double](repeating: -120, count: count), aperiodicity = [Double](repeating: 1, count: count)
        var brightness = [Double](repeating: -60, count: count)
        for k in 0..<n {
            level[k] = levelDb(rms: Double(table.rms[k]))
            aperiodicity[k] = Double(table.minDprime[k])
            brightness[k] = table.brightness[k] > 1e-6 ? 10 * log10(Double(table.brightness[k])) : -60
        }
        return VoiceFrames(hopS: hopS, levelDb: level, aperiodicity: aperiodicity, brightnessDb: brightness)
    }

    /// Frame k's estimate at lag τ belongs to the centre of the samples d(τ) integrated,
    /// start(k) + (W + τ − 1)/2, slightly before k·hop; the f0 reported at k·hop is interpolated
    /// (in cents) between the estimates that bracket it, so the time stamps are exact under vibrato.
    static func frames(_ decoded: [Decoded], hopS: Double, rate: Double, start: (Int) -> Int, window: Int) -> [PitchFrame] {
        let n = decoded.count
        var actual = [Double](repeating: 0, count: n)
        var cents = [Double?](repeating: nil, count: n)
        for k in 0..<n {
            if let lag = decoded[k].lag {
                actual[k] = (Double(start(k)) + (Double(window) + Double(lag) - 1) / 2) / rate
                cents[k] = 1200 * log2(rate / Double(lag))
            } else {
                actual[k] = Double(k) * hopS
            }
        }
        var out: [PitchFrame] = []
        out.reserveCapacity(n)
        for k in 0..<n {
            let t = Double(k) * hopS
            var f0: Double?
            // Voicing, like pitch, belongs to the analysis nearest in time: at an onset the next
            // frame's samples can be centred closer to k·hop than this frame's own.
            if cents[k] == nil, k + 1 < n, let cn = cents[k + 1], abs(actual[k + 1] - t) < hopS / 2 {
                out.append(PitchFrame(timeS: t, f0Hz: pow(2, cn / 1200), confidence: decoded[k + 1].voicedProbability))
                continue
            }
            if let ck = cents[k] {
                var value = ck
                // Bracket t with voiced neighbours' actual times.
                if actual[k] < t, k + 1 < n, let cn = cents[k + 1], actual[k + 1] > actual[k] {
                    let w = min(1, (t - actual[k]) / (actual[k + 1] - actual[k]))
                    value = ck + (cn - ck) * w
                } else if actual[k] > t, k > 0, let cp = cents[k - 1], actual[k] > actual[k - 1] {
                    let w = min(1, (actual[k] - t) / (actual[k] - actual[k - 1]))
                    value = ck + (cp - ck) * w
                }
                f0 = pow(2, value / 1200)
            }
            out.append(PitchFrame(timeS: t, f0Hz: f0, confidence: decoded[k].voicedProbability))
        }
        return out
    }
}
