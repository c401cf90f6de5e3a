import KTVCore

/// The sung pitch on the song's clock: what a judge sees. Produced by a `TakeAligner`.
public struct SungTake: Sendable, Equatable {
    /// Pitch samples at song times (seconds from the song's start), in the order they were sung;
    /// unvoiced = nil. A sample is what the singer sang at that song position.
    public var contour: PitchContour
    /// The span of song time the recording covers, ms; notes outside it are not judged.
    public var coveredMs: ClosedRange<Int>
    /// The delay compensated, ms.
    public var latencyMs: Double

    public init(contour: PitchContour, coveredMs: ClosedRange<Int>, latencyMs: Double) {
        self.contour = contour
        self.coveredMs = coveredMs
        self.latencyMs = latencyMs
    }
}

/// A rule set: judges a take on the song's clock against a reference. One type per rule set
/// (`KTVRules`, `AgoraRules`, `UltraStarRules`); `ScoringRuleSet` names them once.
public protocol ScoringRules: Sendable {
    /// The name the reports use.
    var name: String { get }
    func judge(_ take: SungTake, against reference: ReferenceMelody) throws(ScoreError) -> ScoreCard
}
