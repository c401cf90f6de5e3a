import KTVCore

/// The sung pitch on the song's clock: what a judge sees. Produced by a `TakeAligner`.
public struct SungTake: Sendable, Equatable {
    /// Pitch samples at song times (seconds from the song's start), in the order they were sung;
    /// unvoiced = nil. A sample is what the singer sang at that song position.
    public var contour: PitchContour
    /// The span of song time the recording covers, ms, from its first moment to its last.
    public var coveredMs: ClosedRange<Int>
    /// The stretches of song time actually sung against, in song order (a forward seek leaves a
    /// gap); `[coveredMs]` for a take that ran with the song throughout. Notes outside are not judged.
    public var spansMs: [ClosedRange<Int>]
    /// The delay compensated, ms.
    public var latencyMs: Double
    /// Set when the take was placed by free-timing alignment: what the warping did.
    public var warp: WarpSummary?
    /// The recording's own time of each contour sample, seconds, parallel to `contour` (both in the
    /// order sung, so non-decreasing): the map between the recording's clock and the song's, for a
    /// player that follows the song while it plays the recording. Nil when the aligner did not say.
    public var recordingTimesS: [Double]?
    /// What the tracker heard of the voice, on the recording's clock (`recordingTimesS` maps a
    /// contour sample to its frame); nil for a take given as a pitch track.
    public var voice: VoiceFrames?

    public init(contour: PitchContour, coveredMs: ClosedRange<Int>, spansMs: [ClosedRange<Int>]? = nil, latencyMs: Double) {
        self.contour = contour
        self.coveredMs = coveredMs
        self.spansMs = spansMs ?? [coveredMs]
        self.latencyMs = latencyMs
    }

    /// Whether the take ran against the song over the whole of [startMs, endMs].
    public func covers(_ startMs: Int, _ endMs: Int) -> Bool {
        spansMs.contains { $0.contains(startMs) && $0.contains(endMs) }
    }
}

/// A rule set: judges a take on the song's clock against a reference. One type per rule set
/// (`KTVRules`, `AgoraRules`, `UltraStarRules`); `ScoringRuleSet` names them once.
public protocol ScoringRules: Sendable {
    /// The name the reports use.
    var name: String { get }
    func judge(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> ScoreCard
}
