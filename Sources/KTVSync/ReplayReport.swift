public enum Verdict: String, Sendable, CaseIterable {
    case ok, missing, unexpected
    case wrongTarget = "wrong_target"
}

/// One thing the rules say a device should have done, matched with what it logged.
public struct Decision: Sendable, Equatable {
    public enum Action: String, Sendable { case seek, start }

    public var device: String
    /// Local NTP time of the decision (the `recv`), or of the seek for `unexpected`.
    public var ntpMs: Int
    /// `zego.join`, `zego.drift`, `zego.start`, `agora.join`, `agora.drift`, `tencent.start`,
    /// `tencent.join`, `tencent.drift`.
    public var rule: String
    public var action: Action
    /// The quantity compared with the threshold: ZEGO md, Agora expect − local, Tencent expected − local.
    public var valueMs: Int?
    public var thresholdMs: Int?
    /// The seek target (or, for `start`, the NTP start time) the rule implies; nil for `unexpected`.
    public var expectedMs: Int?
    /// What the device logged: seek target or scheduled NTP start.
    public var loggedMs: Int?
    public var loggedNtpMs: Int?
    public var verdict: Verdict
    /// Drift at the device's first callback after the seek.
    public var residualMs: Double?
    /// The line that triggered the decision (or the unexpected seek).
    public var source: SourceRef

    public init(device: String, ntpMs: Int, rule: String, action: Action, valueMs: Int? = nil, thresholdMs: Int? = nil,
                expectedMs: Int?, loggedMs: Int? = nil, loggedNtpMs: Int? = nil, verdict: Verdict, residualMs: Double? = nil,
                source: SourceRef = SourceRef(file: 0, line: 0)) {
        self.device = device
        self.ntpMs = ntpMs
        self.rule = rule
        self.action = action
        self.valueMs = valueMs
        self.thresholdMs = thresholdMs
        self.expectedMs = expectedMs
        self.loggedMs = loggedMs
        self.loggedNtpMs = loggedNtpMs
        self.verdict = verdict
        self.residualMs = residualMs
        self.source = source
    }
}

public struct IntervalStats: Sendable, Equatable {
    public var medianMs: Double
    public var p95Ms: Double
    public var maxMs: Double
}

public struct DeviceReport: Sendable {
    public struct Jump: Sendable, Equatable { public var ntpMs: Int; public var fromMs: Int; public var toMs: Int }
    public struct Stall: Sendable, Equatable { public var ntpMs: Int; public var gapMs: Int }
    public struct StateChange: Sendable, Equatable { public var ntpMs: Int; public var from: PlayerState; public var to: PlayerState }

    public var name: String
    public var role: DeviceRole?
    /// True when the log has no `role` event for the device and replay guessed it.
    public var roleInferred: Bool
    public var events: Int
    public var progressEvents: Int
    public var callbackInterval: IntervalStats?
    public var backwardJumps: [Jump]
    public var stalls: [Stall]
    public var stateChanges: [StateChange]
    public var seeks: Int
    public var hasNTP: Bool
}

public struct DriftSample: Sendable, Equatable {
    public var ntpMs: Int
    public var followerPositionMs: Int
    public var leadPositionMs: Double
    public var driftMs: Double { Double(followerPositionMs) - leadPositionMs }
}

public struct PairReport: Sendable {
    public var lead: String
    public var follower: String
    public var rules: RuleSet
    public var thresholdMs: Int
    public var twoSided: Bool
    public var drift: DriftStats?
    /// Every drift sample in time order (the CSV and SVG timeline).
    public var samples: [DriftSample]
}

public struct SeekStorm: Sendable, Equatable {
    public var device: String
    public var startNtpMs: Int
    public var endNtpMs: Int
    public var seeks: Int
}

public struct StartReport: Sendable, Equatable {
    public var device: String
    public var scheduledNtpMs: Int
    public var startedNtpMs: Int?
    public var errorMs: Int? { startedNtpMs.map { $0 - scheduledNtpMs } }
}

public struct AudienceReport: Sendable {
    public var device: String
    public var samples: Int
    public var lagMedianMs: Double?
    public var lagP95Ms: Double?
    public var wrongLineShare: Double?
    public var wrongWordShare: Double?
}

public struct MessageGap: Sendable, Equatable {
    public var device: String
    public var from: String?
    public var startNtpMs: Int
    public var endNtpMs: Int
    public var gapMs: Int { endNtpMs - startNtpMs }
}

/// Replay's result compared with the simulator's `truth` events, when the log has them.
public struct TruthCheck: Sendable {
    public struct DecisionCheck: Sendable { public var truth: Int; public var reproduced: Int; public var missingInReplay: [String]; public var extraInReplay: [String] }
    public struct PairCheck: Sendable {
        public var lead: String, follower: String
        public var truth: DriftStats
        public var replay: DriftStats?
        /// Largest difference among median, p95 |drift| and max |drift|, in ms.
        public var maxDifferenceMs: Double?
    }
    public struct FaultCheck: Sendable {
        public var device: String
        public var fault: String
        public var ntpMs: Int
        /// How replay reported it (`missing`, `wrong_target`, `unexpected`, `message_gap`), nil if not found.
        public var foundAs: String?
        /// Replay's time for it minus the truth's.
        public var timeErrorMs: Int?
    }
    public struct AudienceCheck: Sendable { public var device: String; public var truthLagMedianMs: Double; public var replayLagMedianMs: Double? }
    public struct StartCheck: Sendable { public var device: String; public var truthErrorMs: Double; public var replayErrorMs: Int? }

    public var scenario: String?
    public var decisions: DecisionCheck
    public var pairs: [PairCheck]
    public var faults: [FaultCheck]
    public var audience: [AudienceCheck]
    public var starts: [StartCheck]
}

public struct ReplayReport: Sendable {
    public var files: [String]
    public var events: Int
    public var rules: ReplayConfiguration.Rules
    public var devices: [DeviceReport]
    public var pairs: [PairReport]
    public var decisions: [Decision]
    public var storms: [SeekStorm]
    public var starts: [StartReport]
    public var audience: [AudienceReport]
    public var gaps: [MessageGap]
    public var notes: [LogNote]
    public var truth: TruthCheck?
    /// NTP time of the first event, for relative times in reports and plots.
    public var originNtpMs: Int

    public func count(_ v: Verdict) -> Int { decisions.reduce(0) { $0 + ($1.verdict == v ? 1 : 0) } }

    /// Exit 1 when any verdict is not `ok`.
    public var allOK: Bool { !decisions.contains { $0.verdict != .ok } }
}
