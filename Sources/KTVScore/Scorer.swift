import Foundation
import KTVAudio
import KTVCore
import KTVPitch

/// The rule sets by name: the one place a name picks a type.
public enum ScoringRuleSet: String, Sendable, CaseIterable {
    case ktv, agora, ultrastar

    /// What the rule sets can be told; each takes what it understands.
    public struct Options: Sendable {
        public var keyShift: KeyShift = .auto
        public var wholeSong = false
        public var agora = AgoraRulesConfiguration()
        public var ultrastar = UltraStarRulesConfiguration()
        public init() {}

        /// The options as a command line writes them: the key shift `auto`, `none` or in cents, and
        /// the UltraStar difficulty by name (`easy`, `medium`, `hard`). Not yet checked: `rules(_:)` checks them.
        public init(keyShift: String, wholeSong: Bool, agora: AgoraRulesConfiguration, difficulty: String) throws(ParameterError) {
            self.keyShift = try KeyShift(parsing: keyShift)
            self.ultrastar.difficulty = try UltraStarRulesConfiguration.Difficulty(parsing: difficulty)
            self.wholeSong = wholeSong
            self.agora = agora
        }
    }

    /// The rule set, its settings checked.
    public func rules(_ options: Options) throws(ScoreError) -> any ScoringRules {
        switch self {
        case .ktv: return KTVRules(keyShift: options.keyShift, wholeSong: options.wholeSong)
        case .agora: return AgoraRules(configuration: try options.agora.validated())
        case .ultrastar: return UltraStarRules(configuration: try options.ultrastar.validated())
        }
    }
}

/// What a scoring run needs besides its inputs, checked once.
public struct ScoreConfiguration: Sendable {
    public enum Spec {
        public static let latencyMs = Parameter<Double>("latencyMs", unit: "ms", range: -10_000...10_000, default: 0,
            defaultText: "measured with an accompaniment, else 0", "The take's delay against the song (the recording path's latency).")
        public static let all: [ParameterInfo] = [latencyMs.info]
    }

    /// The judge.
    public var rules: any ScoringRules
    /// The recording's delay against the song, ms; nil: estimated from the accompaniment when one
    /// is given, else 0.
    public var latencyMs: Double?
    /// The pitch tracker's settings, for takes given as audio.
    public var tracker: PitchConfiguration

    public init(rules: any ScoringRules = KTVRules(), latencyMs: Double? = nil, tracker: PitchConfiguration = PitchConfiguration()) {
        self.rules = rules
        self.latencyMs = latencyMs
        self.tracker = tracker
    }

    public func validated() throws(ScoreError) -> ScoreConfiguration {
        if let latencyMs { do { try Spec.latencyMs.check(latencyMs) } catch { throw ScoreError(error) } }
        return self
    }
}

/// Scores takes against a reference: a reusable worker (the pitch tracker is made once, when the
/// first audio comes: pitch-track takes never pay for its FFT plans), one take
/// at a time; use one scorer per thread.
///
/// Stages, each replaceable: the take → a pitch contour on its own clock (tracked, or read) →
/// `TakeAligner` (song clock) → `ScoringRules.judge` → `ScoreCard`.
public final class Scorer {
    public let configuration: ScoreConfiguration
    private var madeTracker: PitchTracker?

    public init(configuration: ScoreConfiguration) throws {
        self.configuration = try configuration.validated()
        _ = try configuration.tracker.validated()
    }

    /// A take's pitch on its own clock and the latency measured on the way (audio with an accompaniment).
    public struct Take: Sendable {
        public var contour: PitchContour
        public var measuredLatencyMs: Double?
        public var truncations: [AudioTruncation]
        /// The take's file, for messages.
        public var path: String = ""
        /// Level and aperiodicity per frame, for an audio take.
        public var voice: VoiceFrames?

        public init(contour: PitchContour, measuredLatencyMs: Double? = nil, truncations: [AudioTruncation] = [], path: String = "") {
            self.contour = contour
            self.measuredLatencyMs = measuredLatencyMs
            self.truncations = truncations
            self.path = path
        }
    }

    /// Tracks an audio take (cancelling the accompaniment's bleed when given), or reads a pitch track.
    /// `stream`: the audio stream of a container (from 1; nil: the first).
    public func take(path: String, stream: Int? = nil, accompaniment: String? = nil, pitchIntervalMs: Int? = nil) throws -> Take {
        // A reference, lyrics or a manifest given as the take: say what it is.
        if let m = MisplacedInput.check(path: path, slot: .take) { throw ScoreError.misplaced(m) }
        if try Self.isAudio(path: path) {
            let track = try tracker().track(path: path, stream: stream, channel: .mix, accompaniment: accompaniment)
            var take = Take(contour: track.contour, measuredLatencyMs: track.latencyMs, truncations: track.truncations, path: path)
            take.voice = track.voice
            return take
        }
        if let accompaniment {
            throw ScoreError.invalidParameter(name: "accompaniment", value: accompaniment,
                                              allowed: "an audio take; \(path) is a pitch track, with no accompaniment bleed to cancel")
        }
        return Take(contour: try TakeReader.read(path: path, pitchIntervalMs: pitchIntervalMs), measuredLatencyMs: nil, truncations: [], path: path)
    }

    /// Whether `path` is read as audio (tracked) rather than as a pitch track: a known audio
    /// container, or binary bytes (whose audio reader's error says what the file looks like, where
    /// a pitch-track reader could only say "not text").
    public static func isAudio(path: String) throws -> Bool {
        let prefix = try FileIO.readPrefix(path, count: 64)
        let binary = prefix.contains { $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) || $0 == 0x7F }
        return binary || FormatSniffer.isAudio(prefix: prefix)
    }

    /// A reference melody from a file, or sung in a recording (`audio`: a dual-mono KTV track is
    /// split and its vocal tracked, with this scorer's tracker).
    public func reference(path: String?, audio: String? = nil, lyricsPath: String? = nil,
                          options: ReferenceOptions = ReferenceOptions()) throws -> ReferenceMelody {
        try readReference(path: path, audio: audio, lyricsPath: lyricsPath, options: options).melody
    }

    /// `reference(…)`, with where a reference recording stopped short of what its header claimed.
    public func readReference(path: String?, audio: String? = nil, lyricsPath: String? = nil,
                              options: ReferenceOptions = ReferenceOptions()) throws -> (melody: ReferenceMelody, truncations: [AudioTruncation]) {
        if let audio { return try ReferenceReader.read(audioPath: audio, lyricsPath: lyricsPath, tracker: try tracker(), segmenter: options.segmenter) }
        guard let path else { throw ScoreError.invalidParameter(name: "reference", value: "none", allowed: "a reference file or a reference recording") }
        return (try ReferenceReader.read(path: path, lyricsPath: lyricsPath, options: options), [])
    }

    /// Aligns and judges a take.
    public func score(_ take: Take, reference: ReferenceMelody, aligner: (any TakeAligner)? = nil) throws -> ScoreCard {
        try judged(take, reference: reference, aligner: aligner).card
    }

    /// Aligns and judges a take, keeping the take on the song's clock (for pictures).
    /// `rules`: this take's judge instead of the configuration's.
    public func judged(_ take: Take, reference: ReferenceMelody, aligner: (any TakeAligner)? = nil,
                       rules: (any ScoringRules)? = nil) throws -> (card: ScoreCard, sung: SungTake) {
        let takeName = take.path.isEmpty ? "the take" : take.path
        // The readers check their values already; a take or melody built by hand is held to the same bounds.
        if let (i, detail) = take.contour.songBoundsViolation() {
            throw ScoreError.badTake(path: takeName, line: nil, detail: "pitch sample \(i + 1): \(detail)")
        }
        let reference = try reference.validated(path: "the reference melody")
        let latency = configuration.latencyMs ?? take.measuredLatencyMs ?? 0
        // The stages after the readers know no file names: a message about the take names it here.
        switch Self.stages(take.contour, voice: take.voice, reference: reference, aligner: aligner ?? LatencyAligner(latencyMs: latency),
                           rules: rules ?? configuration.rules) {
        case var .success(judged):
            judged.card.latencySource = configuration.latencyMs != nil ? "given" : take.measuredLatencyMs != nil ? "accompaniment" : "none"
            return judged
        case let .failure(error): throw error.naming(take: takeName)
        }
    }

    private static func stages(_ contour: PitchContour, voice: VoiceFrames?, reference: ReferenceMelody, aligner: any TakeAligner,
                               rules: any ScoringRules) -> Swift.Result<(card: ScoreCard, sung: SungTake), ScoreError> {
        do {
            var sung = try aligner.align(contour)
            sung.voice = voice
            var card = try rules.judge(sung, against: reference)
            card.timing = sung.warp == nil ? "locked" : "free"
            card.warp = sung.warp
            return .success((card, sung))
        } catch {
            return .failure(error)
        }
    }

    func tracker() throws -> PitchTracker {
        if let t = madeTracker { return t }
        let t = try PitchTracker(configuration: configuration.tracker)
        madeTracker = t
        return t
    }
}
