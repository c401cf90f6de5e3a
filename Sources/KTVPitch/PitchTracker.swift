import Foundation
import KTVAudio

/// Settings of the pitch tracker. Units are in the names; `validated()` checks every range.
public struct PitchConfiguration: Sendable, Equatable {
    /// Frame step, ms: frame k is centred at k·hop in the input's own timeline. 1…100, default 10.
    public var hopMs: Double = 10
    /// Frequency range searched, Hz. Default 60-1100 (voices).
    public var minHz: Double = 60
    public var maxHz: Double = 1100
    /// Rate the signal is resampled to before analysis, Hz (speed; voices need no more). 8000…48000.
    public var analysisRateHz: Double = 16000
    /// YIN integration window, ms; nil = one period of `minHz`.
    public var windowMs: Double?
    /// Frames quieter than this, in dB relative to the loud level of the input (its 95th-percentile
    /// frame RMS), are treated as unvoiced. −120…0, default −35.
    public var energyFloorDb: Double = -35
    /// Frames under this absolute RMS (dBFS) are unvoiced whatever the input's level. Default −70.
    public var absoluteFloorDbfs: Double = -70
    public var costs = ViterbiCosts()
    /// With an accompaniment: frames whose residual RMS is under this share of the predicted echo's RMS
    /// are unvoiced (a voice is well above the bleed; what cancellation leaves is well under it). 0…10.
    public var echoGateRatio: Double = 0.35
    /// Worker threads for the frame analysis. 1…64.
    public var threads: Int = 1

    public init() {}

    public func validated() throws(PitchError) -> PitchConfiguration {
        guard (1...100).contains(hopMs) else { throw .invalidParameter(name: "hopMs", value: "\(hopMs)", allowed: "1…100") }
        guard (8000...48000).contains(analysisRateHz) else {
            throw .invalidParameter(name: "analysisRateHz", value: "\(analysisRateHz)", allowed: "8000…48000")
        }
        guard (20...2000).contains(minHz) else { throw .invalidParameter(name: "minHz", value: "\(minHz)", allowed: "20…2000") }
        guard maxHz > minHz, maxHz <= analysisRateHz / 4 else {
            throw .invalidParameter(name: "maxHz", value: "\(maxHz)", allowed: "above minHz (\(minHz)) and at most a quarter of the analysis rate (\(analysisRateHz / 4))")
        }
        guard (-120...0).contains(energyFloorDb) else { throw .invalidParameter(name: "energyFloorDb", value: "\(energyFloorDb)", allowed: "−120…0") }
        guard (-150...0).contains(absoluteFloorDbfs) else { throw .invalidParameter(name: "absoluteFloorDbfs", value: "\(absoluteFloorDbfs)", allowed: "−150…0") }
        guard (0...10).contains(echoGateRatio) else { throw .invalidParameter(name: "echoGateRatio", value: "\(echoGateRatio)", allowed: "0…10") }
        guard (1...64).contains(threads) else { throw .invalidParameter(name: "threads", value: "\(threads)", allowed: "1…64") }
        _ = try yin.validated()
        return self
    }

    var yin: YinConfiguration {
        YinConfiguration(sampleRateHz: analysisRateHz, minHz: minHz, maxHz: maxHz, windowMs: windowMs)
    }
}

/// One frame of a pitch track.
public struct PitchFrame: Sendable, Equatable {
    /// Centre of the frame in the input's timeline, seconds (k·hop).
    public var timeS: Double
    /// f0 in Hz; nil when unvoiced.
    public var f0Hz: Double?
    /// Probability that the frame is voiced (0…1), from the YIN dips.
    public var confidence: Double
}

public struct PitchTrack: Sendable {
    public var frames: [PitchFrame]
    public var hopS: Double
    public var configuration: PitchConfiguration
    /// Duration of the input, seconds.
    public var durationS: Double
    /// With an accompaniment: its delay in the take (the recording latency), ms, and its level there.
    public var latencyMs: Double?
    public var accompanimentGain: Double?
    /// Inputs (the take, the accompaniment) that stopped decoding early; the track covers what was decoded.
    public var truncations: [AudioTruncation] = []
}

/// Which channel of the input to track.
public enum ChannelSelection: Sendable, Equatable {
    case mix
    /// 0-based channel index.
    case channel(Int)
}

/// The pitch tracker: a reusable worker. YIN workers (FFT plans, buffers) are created once per
/// tracker; one tracker serves any number of inputs, one at a time. Use one tracker per thread.
public final class PitchTracker {
    public let configuration: PitchConfiguration
    private let workers: [YinWorker]
    private let yin: YinConfiguration

    public init(configuration: PitchConfiguration = PitchConfiguration()) throws(PitchError) {
        let c = try configuration.validated()
        self.configuration = c
        yin = c.yin
        var ws: [YinWorker] = []
        for _ in 0..<c.threads { ws.append(try YinWorker(configuration: c.yin)) }
        workers = ws
    }

    /// Tracks a whole signal held in memory.
    public func track(samples: [Float], sampleRate: Double) throws -> PitchTrack {
        let session = try Session(tracker: self, inputRate: sampleRate)
        try session.feed(samples)
        return try session.finish(inputFrames: samples.count)
    }

    /// Tracks a file, streaming: memory stays bounded by the block size plus per-frame results.
    public func track(path: String, channel: ChannelSelection = .mix) throws -> PitchTrack {
        try track(reader: AudioReader(path: path), channel: channel)
    }

    /// Tracks an open reader (a file, or bytes in memory) from where it stands to its end.
    public func track(reader: AudioReader, channel: ChannelSelection = .mix) throws -> PitchTrack {
        let n = reader.info.channels
        if case let .channel(c) = channel, !(0..<n).contains(c) {
            throw AudioError.wrongChannelCount(path: reader.path, found: n, expected: "channel \(c + 1) was asked for", format: reader.info.formatName)
        }
        let session = try Session(tracker: self, inputRate: reader.info.sampleRate)
        var block: [Float] = []
        var mono: [Float] = []
        var total = 0
        while true {
            let got = try reader.read(into: &block, frames: 65536)
            if got == 0 { break }
            Self.select(block, frames: got, channels: n, channel: channel, into: &mono)
            try session.feed(mono)
            total += got
        }
        var result = try session.finish(inputFrames: total)
        result.truncations = reader.truncation.map { [$0] } ?? []
        return result
    }

    /// Tracks a take with the accompaniment's bleed cancelled first (see `AccompanimentCanceller`).
    public func track(path: String, channel: ChannelSelection = .mix, accompaniment: String) throws -> PitchTrack {
        try AccompanimentCanceller.track(tracker: self, take: path, channel: channel, accompaniment: accompaniment)
    }

    static func select(_ block: [Float], frames: Int, channels n: Int, channel: ChannelSelection, into mono: inout [Float]) {
        if mono.count != frames { mono = [Float](repeating: 0, count: frames) }
        switch channel {
        case let .channel(c):
            for f in 0..<frames { mono[f] = block[f * n + c] }
        case .mix:
            let scale = 1 / Float(n)
            for f in 0..<frames {
                var s: Float = 0
                for c in 0..<n { s += block[f * n + c] }
                mono[f] = s * scale
            }
        }
    }

    /// One input being tracked: resampling, framing, analysis; then decoding in `finish`.
    final class Session: @unchecked Sendable {
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

        init(tracker: PitchTracker, inputRate: Double) throws {
            self.tracker = tracker
            self.inputRate = inputRate
            rate = tracker.configuration.analysisRateHz
            guard inputRate > 0 else { throw PitchError.noAudio("the input has no sample rate") }
            // Medium quality: the analysis band (f0 ≤ 1100 Hz and its first harmonics) sits far below
            // where HQ and MQ differ, and MQ is much cheaper.
            resampler = inputRate == rate ? nil : try Resampler(inputRate: inputRate, outputRate: rate, quality: .medium)
            hop = tracker.configuration.hopMs * rate / 1000
            buffer = tracker.yin.bufferSamples
            window = tracker.yin.windowSamples
            maxLag = tracker.yin.lagRange.upperBound
            table = CandidateTable(stride: tracker.yin.maxCandidates)
        }

        /// First analysis sample of frame k's buffer: chosen so the longest lag's samples are centred on k·hop.
        func start(_ k: Int) -> Int {
            Int((Double(k) * hop - Double(window + maxLag - 1) / 2).rounded())
        }

        func feed(_ input: [Float]) throws {
            let x = try resampler?.process(input) ?? input
            append(x)
            analyzeAvailable(final: false)
        }

        /// Feeds analysis-rate samples with a reference of the same length (no resampling).
        func feed(analysisRate x: [Float], reference ref: [Float]) {
            precondition(resampler == nil && x.count == ref.count)
            if reference == nil { reference = [] }
            reference!.append(contentsOf: ref)
            append(x)
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
            let results = analyze(frames: ready)
            for (i, r) in results.enumerated() { table.append(r.0, rms: r.1, referenceRMS: referenceRMS(ready[i])) }
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

        /// RMS of the reference over frame k's buffer; nil without a reference.
        private func referenceRMS(_ k: Int) -> Float? {
            guard let ref = reference else { return nil }
            let s = start(k)
            var e = 0.0
            for i in 0..<buffer {
                let j = s + i - base
                if j >= 0 && j < ref.count { e += Double(ref[j] * ref[j]) }
            }
            return Float((e / Double(buffer)).squareRoot())
        }

        /// Copies frame k's buffer (zero outside the signal) and runs one worker on it.
        private func runFrame(_ k: Int, _ worker: YinWorker, _ scratch: inout [Float]) -> ([YinCandidate], Float) {
            let s = start(k)
            for i in 0..<buffer {
                let j = s + i - base
                scratch[i] = j >= 0 && j < signal.count ? signal[j] : 0
            }
            let r = scratch.withUnsafeBufferPointer { worker.analyze($0) }
            return (r.candidates, r.rms)
        }

        private func analyze(frames: [Int]) -> [([YinCandidate], Float)] {
            let workers = tracker.workers
            if workers.count == 1 || frames.count < 64 {
                var scratch = [Float](repeating: 0, count: buffer)
                return frames.map { runFrame($0, workers[0], &scratch) }
            }
            final class Results: @unchecked Sendable {
                // Each slot is written by one thread only.
                var items: [([YinCandidate], Float)]
                init(_ n: Int) { items = .init(repeating: ([], 0), count: n) }
            }
            let results = Results(frames.count)
            let chunk = (frames.count + workers.count - 1) / workers.count
            // The session's signal is only read while the threads run; worker t belongs to thread t.
            DispatchQueue.concurrentPerform(iterations: workers.count) { t in
                var scratch = [Float](repeating: 0, count: self.buffer)
                let lo = t * chunk, hi = min(frames.count, lo + chunk)
                guard lo < hi else { return }
                for i in lo..<hi { results.items[i] = self.runFrame(frames[i], workers[t], &scratch) }
            }
            return results.items
        }

        func finish(inputFrames: Int) throws -> PitchTrack {
            if let r = resampler { append(try r.flush()) }
            let durationS = Double(inputFrames) / inputRate
            guard inputFrames > 0 else { throw PitchError.noAudio("the input has no samples") }
            let hopS = tracker.configuration.hopMs / 1000
            let lastFrame = Int((durationS / hopS).rounded(.down))
            analyzeAvailable(final: true, lastFrame: lastFrame)
            // Energy floor: relative to the loud level (95th percentile of frame RMS), and absolute.
            let sorted = table.rms.sorted()
            let loud = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.95))]
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
            let frames = Self.frames(decoded, hopS: hopS, rate: rate, start: start, window: window)
            return PitchTrack(frames: Array(frames.prefix(lastFrame + 1)), hopS: hopS, configuration: c, durationS: durationS)
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
}
