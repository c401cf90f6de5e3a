import KTVAudio
import KTVCore
import KTVSync

/// One take to score and how: what `ktv score` and each row of `ktv batch` describe, so both go
/// through one path (`Scorer.score(_:reference:)`).
public struct TakeRequest: Sendable {
    /// How the take is placed on the song's clock.
    public enum Timing: String, Sendable, CaseIterable {
        /// The take runs with the song: a latency (given, or measured from the accompaniment), or a progress log.
        case locked
        /// Aligned to the reference by dynamic time warping (`FreeTimingAligner`).
        case free
    }

    /// The take: audio (tracked), or a pitch track.
    public var take: String
    /// The accompaniment played during an audio take: its bleed is cancelled and the latency measured.
    public var accompaniment: String?
    /// A take given as one Hz value per line: the interval between values, ms.
    public var pitchIntervalMs: Int?
    /// The audio stream of a take in a container with several (`AudioReader.Spec.stream`); nil: the first.
    public var stream: Int?
    public var timing: Timing
    /// The take's delay against the song, ms; nil: measured from the accompaniment, else 0.
    public var latencyMs: Double?
    /// With no latency given and no accompaniment to measure it: estimate it from the take
    /// against the reference (`LatencyEstimator`).
    public var estimateLatency: Bool
    /// A progress log placing the take on the song through `device`'s events.
    public var progressLog: String?
    public var device: String?
    /// The judge.
    public var rules: any ScoringRules
    /// The key free timing aligns in (`auto`: estimated).
    public var keyShift: KeyShift

    public init(take: String, accompaniment: String? = nil, pitchIntervalMs: Int? = nil, timing: Timing = .locked,
                latencyMs: Double? = nil, progressLog: String? = nil, device: String? = nil,
                rules: any ScoringRules = KTVRules(), keyShift: KeyShift = .auto, estimateLatency: Bool = false, stream: Int? = nil) {
        self.estimateLatency = estimateLatency
        self.stream = stream
        self.take = take
        self.accompaniment = accompaniment
        self.pitchIntervalMs = pitchIntervalMs
        self.timing = timing
        self.latencyMs = latencyMs
        self.progressLog = progressLog
        self.device = device
        self.rules = rules
        self.keyShift = keyShift
    }

    /// The request with its settings checked: a latency in range, a log with its device, free
    /// timing without a clock of its own.
    public func validated() throws(ScoreError) -> TakeRequest {
        if let latencyMs { do { try ScoreConfiguration.Spec.latencyMs.check(latencyMs) } catch { throw ScoreError(error) } }
        if let pitchIntervalMs { do { try TakeReader.Spec.pitchIntervalMs.check(pitchIntervalMs) } catch { throw ScoreError(error) } }
        if let stream { do { try AudioReader.Spec.stream.check(stream) } catch { throw ScoreError(error) } }
        if (progressLog == nil) != (device == nil) {
            throw .invalidParameter(name: progressLog == nil ? "device" : "progressLog", value: "given alone",
                                    allowed: "a progress log together with the device that recorded the take")
        }
        if estimateLatency && (latencyMs != nil || progressLog != nil || timing == .free) {
            throw .invalidParameter(name: "latencyMs", value: "auto",
                                    allowed: "a number, or auto alone: not with a given latency, a progress log or free timing")
        }
        if timing == .free && (progressLog != nil || latencyMs != nil) {
            throw .invalidParameter(name: "timing", value: "free", allowed: "free timing aligns the take itself: no progress log or latency with it")
        }
        return self
    }
}

extension Scorer {
    /// A scored take: the card, the take on the song's clock (for pictures), and the inputs that
    /// stopped decoding early.
    public struct Result: Sendable {
        public var card: ScoreCard
        public var sung: SungTake
        public var truncations: [AudioTruncation]
    }

    /// Reads (or tracks) the take, places it on the song's clock as the request says, and judges it.
    public func score(_ request: TakeRequest, reference: ReferenceMelody) throws -> Result {
        let request = try request.validated()
        let take = try self.take(path: request.take, stream: request.stream, accompaniment: request.accompaniment, pitchIntervalMs: request.pitchIntervalMs)
        // Where the latency comes from: given, measured against the accompaniment, estimated from
        // the take, or none (0).
        var latencyMs = 0.0, source = "none"
        var estimate: LatencyEstimate?
        if let given = request.latencyMs {
            (latencyMs, source) = (given, "given")
        } else if let measured = take.measuredLatencyMs {
            (latencyMs, source) = (measured, "accompaniment")
        } else if request.estimateLatency {
            let e = try LatencyEstimator.estimate(take.contour, reference: reference)
            estimate = e
            if e.used { (latencyMs, source) = (e.latencyMs, "estimated") }
        }
        let aligner: any TakeAligner
        if request.timing == .free {
            aligner = FreeTimingAligner(reference: reference, keyShift: request.keyShift)
        } else if let log = request.progressLog, let device = request.device {
            aligner = try ProgressLogAligner(log: try LogReader.read(paths: [log]), device: device, latencyMs: latencyMs, logName: log)
        } else {
            aligner = LatencyAligner(latencyMs: latencyMs)
        }
        var (card, sung) = try judged(take, reference: reference, aligner: aligner, rules: request.rules)
        // An estimate checked against the onsets it leaves: a latency found from the take takes in
        // whatever delay the whole take shares, so a median onset beyond the grace after it is the
        // estimate's own error, not the singer's. The latency moves by it (within the estimate's
        // window) and the take is judged again, kept when that puts the median onset within the
        // grace. When it does not (a singer who drags or rushes, not a delay), the estimate stays
        // and the late or early finding says the singing, not the path, is off.
        if source == "estimated", var e = estimate, request.progressLog == nil,
           let residual = ScoreFindings.medianOnset(card), abs(residual.ms) > FindingsConfiguration.Spec.onsetGraceMs.defaultValue {
            let window = LatencyEstimatorConfiguration()
            let refined = min(window.maxMs, max(window.minMs, latencyMs + residual.ms))
            if abs(refined - latencyMs) >= 1 {
                let again = try judged(take, reference: reference, aligner: LatencyAligner(latencyMs: refined), rules: request.rules)
                if abs(ScoreFindings.medianOnset(again.card)?.ms ?? 0) <= FindingsConfiguration.Spec.onsetGraceMs.defaultValue {
                    (card, sung) = again
                    e.onsetCorrectionMs = refined - e.latencyMs
                    e.latencyMs = refined
                    estimate = e
                    latencyMs = refined
                }
            }
        }
        card.latencySource = request.timing == .free ? "none" : source
        card.latencyEstimate = estimate
        return Result(card: card, sung: sung, truncations: take.truncations)
    }
}

/// A latency as written (`--latency-ms`, a manifest's `latency_ms`): milliseconds, or `auto`
/// (estimated from the take against the reference, `LatencyEstimator`).
public enum LatencySetting: Sendable, Equatable {
    case ms(Double)
    case auto

    /// What is said of a text that is neither, after the text.
    public static let expected = "is neither a number of milliseconds nor auto"

    /// `auto` (in any case) or a finite number; nil for anything else.
    public init?(parsing text: String) {
        if text.lowercased() == "auto" { self = .auto; return }
        guard let v = Double(text), v.isFinite else { return nil }
        self = .ms(v)
    }

    /// The milliseconds given; nil for `auto`.
    public var ms: Double? { if case let .ms(v) = self { return v } else { return nil } }
    /// Whether the latency is to be estimated.
    public var estimates: Bool { self == .auto }
}

extension TakeRequest {
    /// Why an accompaniment cannot go with the take at `path`, named `name` in the sentence: a pitch
    /// track has no accompaniment bleed to cancel. Nil when it can (an audio take, or one that cannot
    /// be read yet: reading it says what is wrong).
    public static func accompanimentRefusal(takePath path: String, name: String) -> String? {
        (try? Scorer.isAudio(path: path)) == false
            ? "goes with an audio take, and \(name) is a pitch track: it has no accompaniment bleed to cancel" : nil
    }
}

extension Scorer {
    /// Reads the reference (a file, or a recording with `audio`) and scores the take on it, as `ktv
    /// score` does; the result's truncations are the reference recording's, then the take's.
    public func score(_ request: TakeRequest, referencePath: String?, audio: String? = nil, lyricsPath: String? = nil,
                      options: ReferenceOptions = ReferenceOptions()) throws -> Result {
        let (melody, truncations) = try readReference(path: referencePath, audio: audio, lyricsPath: lyricsPath, options: options)
        var result = try score(request, reference: melody)
        result.truncations = truncations + result.truncations
        return result
    }
}
