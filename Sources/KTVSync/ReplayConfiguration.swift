import KTVCore
import KTVLyrics

/// How replay judges a log. Every threshold of docs/progress-log.md is here, and every number is
/// declared once in `Spec` (name with its unit, range, default, what it does): `validated()` checks
/// against the declarations and the CLI takes its help and defaults from them.
public struct ReplayConfiguration: Sendable {
    public enum Rules: String, Sendable, CaseIterable { case auto, zego, agora, tencent }

    public enum Spec {
        public static let thresholdMs = Parameter<Int>("thresholdMs", unit: "ms", range: 1...10_000, default: 0,
            defaultText: "the rule set's (" + RuleSet.allCases.map { "\($0.rawValue) \($0.defaultThresholdMs)" }.joined(separator: ", ") + ")",
            "Seek threshold: a drift beyond it calls for a seek.")
        public static let windowMs = Parameter<Int>("windowMs", unit: "ms", range: 1...60_000, default: 200,
            "A logged seek (or schedule) belongs to the latest decision at most this long before it.")
        public static let toleranceMs = Parameter<Int>("toleranceMs", unit: "ms", range: 0...10_000, default: 20,
            "A seek (or scheduled start) further than this from the decision's target is wrong_target.")
        public static let maxExtrapolationMs = Parameter<Int>("maxExtrapolationMs", unit: "ms", range: 0...60_000, default: 500,
            "The lead's position is never extrapolated further than this from a callback.")
        public static let stallFactor = Parameter<Int>("stallFactor", unit: "intervals", range: 2...1_000, default: 3,
            "A gap between callbacks longer than this many median intervals is a stall.")
        public static let stormGapMs = Parameter<Int>("stormGapMs", unit: "ms", range: 1...3_600_000, default: 1_000,
            "Seeks of one device each within this of the previous one form a storm.")
        public static let stormMinSeeks = Parameter<Int>("stormMinSeeks", unit: "seeks", range: 2...1_000_000, default: 3,
            "The fewest seeks that make a storm.")
        public static let displayStalenessMs = Parameter<Int>("displayStalenessMs", unit: "ms", range: 0...3_600_000, default: 1_000,
            "Audience display: a received position is extrapolated at most this long, then the sample is skipped.")
        public static let displayGridMs = Parameter<Int>("displayGridMs", unit: "ms", range: 1...60_000, default: 10,
            "Step of the grid on which the audience's wrong-line and wrong-word shares are measured.")
        public static let all: [ParameterInfo] = [thresholdMs.info, windowMs.info, toleranceMs.info, maxExtrapolationMs.info, stallFactor.info,
                                                  stormGapMs.info, stormMinSeeks.info, displayStalenessMs.info, displayGridMs.info]
    }

    /// `auto` applies each message's own vendor rules; a named set applies its rules to every
    /// progress message it can read (ZEGO and Agora payloads carry the same facts).
    public var rules: Rules = .auto
    /// Overrides the rule set's seek threshold; nil = the rule set's.
    public var thresholdMs: Int?
    /// Also correct a local player that runs ahead under ZEGO (the vendor sample does not).
    public var twoSided = false
    public var windowMs = Spec.windowMs.defaultValue
    public var toleranceMs = Spec.toleranceMs.defaultValue
    public var maxExtrapolationMs = Spec.maxExtrapolationMs.defaultValue
    public var stallFactor = Spec.stallFactor.defaultValue
    public var stormGapMs = Spec.stormGapMs.defaultValue
    public var stormMinSeeks = Spec.stormMinSeeks.defaultValue
    public var displayStalenessMs = Spec.displayStalenessMs.defaultValue
    public var displayGridMs = Spec.displayGridMs.defaultValue
    /// Lyrics to measure the audience's wrong-line share against.
    public var lyrics: Lyrics?

    public init() {}

    public func threshold(for rules: RuleSet) -> Int { thresholdMs ?? rules.defaultThresholdMs }

    /// The configuration itself when every value is in its declared range; otherwise an error naming
    /// the parameter (the CLI renames it to its flag).
    public func validated() throws(SyncError) -> ReplayConfiguration {
        do {
            if let thresholdMs { try Spec.thresholdMs.check(thresholdMs) }
            try Spec.windowMs.check(windowMs)
            try Spec.toleranceMs.check(toleranceMs)
            try Spec.maxExtrapolationMs.check(maxExtrapolationMs)
            try Spec.stallFactor.check(stallFactor)
            try Spec.stormGapMs.check(stormGapMs)
            try Spec.stormMinSeeks.check(stormMinSeeks)
            try Spec.displayStalenessMs.check(displayStalenessMs)
            try Spec.displayGridMs.check(displayGridMs)
        } catch { throw .invalidParameter(error) }
        return self
    }

    /// Checks the ranges (see `validated()`).
    public func validate() throws(SyncError) { _ = try validated() }
}
