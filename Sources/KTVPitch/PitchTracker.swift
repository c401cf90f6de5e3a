import Foundation
import KTVAudio
import KTVCore

/// Settings of the pitch tracker. Every number is declared once in `Spec` (unit, range, default).
public struct PitchConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let hopMs = Parameter<Double>("hopMs", unit: "ms", range: 1...100, default: 10,
            "Frame step: frame k is centred at k·hop in the input's own timeline.")
        public static let minHz = Parameter<Double>("minHz", unit: "Hz", range: 20...2000, default: 60,
            "Lowest f0 searched.")
        public static let maxHz = Parameter<Double>("maxHz", unit: "Hz", range: 40...12000, default: 1100,
            "Highest f0 searched; above minHz and at most a quarter of the analysis rate.")
        public static let analysisRateHz = Parameter<Double>("analysisRateHz", unit: "Hz", range: 8000...48000, default: 16000,
            "Rate the signal is resampled to before analysis (voices need no more).")
        public static let windowMs = Parameter<Double>("windowMs", unit: "ms", range: 1...200, default: 0, defaultText: "one period of minHz",
            "YIN integration window.")
        public static let energyFloorDb = Parameter<Double>("energyFloorDb", unit: "dB", range: -120...0, default: -35,
            "Frames quieter than this, relative to the input's loud level (95th-percentile frame RMS), are unvoiced.")
        public static let absoluteFloorDbfs = Parameter<Double>("absoluteFloorDbfs", unit: "dBFS", range: -150...0, default: -70,
            "Frames under this absolute RMS are unvoiced whatever the input's level.")
        public static let echoGateRatio = Parameter<Double>("echoGateRatio", range: 0...10, default: 0.35,
            "With an accompaniment: frames whose residual RMS is under this share of the predicted echo's are unvoiced.")
        public static let threads = Parameter<Int>("threads", unit: "threads", range: 1...64, default: 1,
            "Worker threads for the frame analysis.")
        public static let all: [ParameterInfo] = [hopMs.info, minHz.info, maxHz.info, analysisRateHz.info, windowMs.info,
                                                  energyFloorDb.info, absoluteFloorDbfs.info, echoGateRatio.info, threads.info]
    }

    public var hopMs = Spec.hopMs.defaultValue
    public var minHz = Spec.minHz.defaultValue
    public var maxHz = Spec.maxHz.defaultValue
    public var analysisRateHz = Spec.analysisRateHz.defaultValue
    /// nil = one period of `minHz`.
    public var windowMs: Double?
    public var energyFloorDb = Spec.energyFloorDb.defaultValue
    public var absoluteFloorDbfs = Spec.absoluteFloorDbfs.defaultValue
    public var costs = ViterbiCosts()
    public var echoGateRatio = Spec.echoGateRatio.defaultValue
    public var threads = Spec.threads.defaultValue

    public init() {}

    public func validated() throws(PitchError) -> PitchConfiguration {
        do {
            try Spec.hopMs.check(hopMs)
            try Spec.analysisRateHz.check(analysisRateHz)
            try Spec.minHz.check(minHz)
            try Spec.maxHz.check(maxHz)
            if let windowMs { try Spec.windowMs.check(windowMs) }
            try Spec.energyFloorDb.check(energyFloorDb)
            try Spec.absoluteFloorDbfs.check(absoluteFloorDbfs)
            try Spec.echoGateRatio.check(echoGateRatio)
            try Spec.threads.check(threads)
        } catch { throw PitchError(error) }
        guard maxHz > minHz, maxHz <= analysisRateHz / 4 else {
            throw .invalidParameter(name: "maxHz", value: "\(maxHz)", allowed: "above minHz (\(minHz)) and at most a quarter of the analysis rate (\(analysisRateHz / 4))")
        }
        _ = try yin.validated()
        return self
    }

    var yin: YinConfiguration {
        YinConfiguration(sampleRateHz: analysisRateHz, minHz: minHz, maxHz: maxHz, windowMs: windowMs)
    }
}

/// One frame of a pitch track, as a value: sample `k` of the track's contour with its confidence.
public struct PitchFrame: Sendable, Equatable {
    /// Centre of the frame in the input's timeline, seconds (k·hop).
    public var timeS: Double
    /// f0 in Hz; nil when unvoiced.
    public var f0Hz: Double?
    /// Probability that the frame is voiced (0…1), from the YIN dips.
    public var confidence: Double
}

public struct PitchTrack: Sendable {
    /// f0 per frame, frame k at k·hop; nil when unvoiced.
    public var contour: PitchContour
    /// Per frame: the probability that it is voiced (0…1), from the YIN dips.
    public var confidence: [Double]
    public var hopS: Double
    public var configuration: PitchConfiguration
    /// Duration of the input, seconds.
    public var durationS: Double
    /// With an accompaniment: its delay in the take (the recording latency), ms, and its level there.
    public var latencyMs: Double?
    public var accompanimentGain: Double?
    /// Inputs (the take, the accompaniment) that stopped decoding early; the track covers what was decoded.
    public var truncations: [AudioTruncation] = []
    /// Each frame's level and aperiodicity (same frames as `contour`); nil for a track read from a file.
    public var voice: VoiceFrames?

    public init(contour: PitchContour, confidence: [Double], hopS: Double, configuration: PitchConfiguration, durationS: Double,
                latencyMs: Double? = nil, accompanimentGain: Double? = nil) {
        self.contour = contour
        self.confidence = confidence
        self.hopS = hopS
        self.configuration = configuration
        self.durationS = durationS
        self.latencyMs = latencyMs
        self.accompanimentGain = accompanimentGain
    }

    public init(frames: [PitchFrame], hopS: Double, configuration: PitchConfiguration, durationS: Double,
                latencyMs: Double? = nil, accompanimentGain: Double? = nil) {
        self.init(contour: PitchContour(timesS: frames.map(\.timeS), f0Hz: frames.map(\.f0Hz)),
                  confidence: frames.map(\.confidence), hopS: hopS, configuration: configuration, durationS: durationS,
                  latencyMs: latencyMs, accompanimentGain: accompanimentGain)
    }

    /// The frames as values; the track itself keeps a contour and a confidence per frame.
    public var frames: [PitchFrame] {
        contour.timesS.indices.map { PitchFrame(timeS: contour.timesS[$0], f0Hz: contour.f0Hz[$0], confidence: confidence[$0]) }
    }

    /// Keeps the first `n` frames.
    mutating func keepFirst(_ n: Int) {
        guard n < contour.count else { return }
        contour = contour[0..<max(0, n)]
        confidence.removeLast(confidence.count - max(0, n))
        if var v = voice, v.count > max(0, n) {
            v.levelDb.removeLast(v.count - max(0, n))
            v.aperiodicity.removeLast(v.aperiodicity.count - max(0, n))
            v.brightnessDb.removeLast(v.brightnessDb.count - max(0, n))
            voice = v
        }
    }
}

/// Which channel of the input to track.
public enum ChannelSelection: Sendable, Equatable {
    case mix
    /// 0-based channel index.
    case channel(Int)

    /// `mix`, `left`, `right`, or a 1-based channel number (`3`).
    public init(parsing text: String) throws(ParameterError) {
        switch text {
        case "mix": self = .mix
        case "left": self = .channel(0)
        case "right": self = .channel(1)
        default:
            guard let n = Int(text), n >= 1 else {
                throw ParameterError(name: "channel", value: quoted(text), allowed: "left, right, mix or a 1-based channel number")
            }
            self = .channel(n - 1)
        }
    }
}

/// The pitch tracker: a reusable worker. YIN workers (FFT plans, buffers) are created once per
/// tracker; one tracker serves any number of inputs, one at a time. Use one tracker per thread.
public final class PitchTracker {
    public let configuration: PitchConfiguration
    let workers: [YinWorker]
    /// Held while the workers analyse a block: a session that ended early (its input failed) may
    /// still have a block in flight on its queue when the next input's session starts.
    let workersLock = NSLock()
    let yin: YinConfiguration
    /// The accompaniment canceller, made on first use and kept while its settings stay the same.
    private var cancellerWorker: AccompanimentCanceller?

    public init(configuration: PitchConfiguration = PitchConfiguration()) throws(PitchError) {
        let c = try configuration.validated()
        self.configuration = c
        yin = c.yin
        var ws: [YinWorker] = []
        for _ in 0..<c.threads { ws.append(try YinWorker(configuration: c.yin)) }
        workers = ws
    }

    /// A streaming session over one input: feed it blocks of mono samples at `sampleRateHz` as they
    /// come (any block size), then `finish()` (aubio's new/do/del lifecycle; the tracker's workers
    /// are reused, never rebuilt).
    public func session(sampleRateHz: Double) throws -> PitchSession {
        try PitchSession(tracker: self, inputRate: sampleRateHz)
    }

    /// Tracks a whole signal held in memory.
    public func track(samples: [Float], sampleRate: Double) throws -> PitchTrack {
        let session = try PitchSession(tracker: self, inputRate: sampleRate)
        try session.feed(samples)
        return try session.finish()
    }

    /// Tracks a file, streaming: memory stays bounded by the block size plus per-frame results.
    /// `stream`: the audio stream of a container (MP4, MKV, MOV, WebM; from 1; nil: the first).
    public func track(path: String, stream: Int? = nil, channel: ChannelSelection = .mix) throws -> PitchTrack {
        try track(reader: AudioReader(path: path, stream: stream), channel: channel)
    }

    /// Tracks an open reader (a file, or bytes in memory) from where it stands to its end.
    public func track(reader: AudioReader, channel: ChannelSelection = .mix) throws -> PitchTrack {
        let n = reader.info.channels
        if case let .channel(c) = channel, !(0..<n).contains(c) {
            throw AudioError.wrongChannelCount(path: reader.path, found: n, expected: "\(SplitReport.channelName(c)) was asked for", format: reader.info.formatName)
        }
        let session = try PitchSession(tracker: self, inputRate: reader.info.sampleRate)
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
        var result = try session.finish()
        result.truncations = reader.truncation.map { [$0] } ?? []
        return result
    }

    /// Tracks a take with the accompaniment's bleed cancelled first (see `AccompanimentCanceller`).
    public func track(path: String, stream: Int? = nil, channel: ChannelSelection = .mix, accompaniment: String) throws -> PitchTrack {
        try canceller(CancellerConfiguration()).track(tracker: self, take: path, stream: stream, channel: channel, accompaniment: accompaniment)
    }

    /// This tracker's canceller for `configuration` (at the analysis rate): made once, reused by every take.
    func canceller(_ configuration: CancellerConfiguration) throws -> AccompanimentCanceller {
        let c = try configuration.validated()
        if let w = cancellerWorker, w.configuration == c { return w }
        let w = try AccompanimentCanceller(configuration: c, rateHz: self.configuration.analysisRateHz)
        cancellerWorker = w
        return w
    }

    /// The singing voice of a recording: a dual-mono KTV track is split first and its vocal estimate
    /// tracked as it is made (no file written); anything else is tracked as a vocal stem (its mix).
    /// `note` says which happened, for reports. The track's `truncations` cover both passes.
    public func trackVocals(path: String, stream: Int? = nil, layout: SplitLayout = .auto) throws -> (track: PitchTrack, note: String, split: Bool) {
        let info = try AudioReader(path: path, stream: stream).info
        var note = "treated as a vocal stem"
        var truncations: [AudioTruncation] = []
        if info.channels >= 2 {
            var config = SplitConfiguration()
            config.layout = layout
            let session = try self.session(sampleRateHz: info.sampleRate)
            var outputs = SplitOutputs()
            outputs.vocalBlocks = { try session.feed($0) }
            let split = try DualMonoSplitter.split(path: path, stream: stream, configuration: config, outputs: outputs)
            if let t = split.truncation { truncations.append(t) }
            if split.analysis.dualMono {
                var track = try session.finish()
                track.truncations = truncations
                return (track, "dual-mono track split first (original = \(SplitReport.channelName(split.analysis.originalChannel ?? 0)))", true)
            }
            note = "not a dual-mono track (\(split.analysis.reason)); its mix was treated as a vocal stem"
        }
        var track = try self.track(path: path, stream: stream, channel: .mix)
        if !truncations.isEmpty { track.truncations = truncations }
        return (track, note, false)
    }

    /// Tracks a file, with the accompaniment's bleed cancelled when one is given.
    public func track(path: String, stream: Int? = nil, channel: ChannelSelection = .mix, accompaniment: String?) throws -> PitchTrack {
        if let accompaniment { return try track(path: path, stream: stream, channel: channel, accompaniment: accompaniment) }
        return try track(path: path, stream: stream, channel: channel)
    }

    static func select(_ block: [Float], frames: Int, channels n: Int, channel: ChannelSelection, into mono: inout [Float]) {
        if mono.count != frames { mono = [Float](repeating: 0, count: frames) }
        if n == 1 {
            // A mono file: its block is the signal (the loop below cost 5 % of `ktv pitch`).
            mono.withUnsafeMutableBufferPointer { m in block.withUnsafeBufferPointer { m.baseAddress!.update(from: $0.baseAddress!, count: frames) } }
            return
        }
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
}
