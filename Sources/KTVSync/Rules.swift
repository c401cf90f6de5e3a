/// The vendors' sync formulas, as pure functions of integer milliseconds (docs/progress-log.md).
/// Replay and the simulator both call these; the tests check each with hand-computed numbers.

public enum RuleSet: String, Sendable, CaseIterable {
    case zego, agora, tencent

    /// Seek threshold: ZEGO's sample seeks at md > 30; Agora's KTVApi at |diff| > 50; Tencent's
    /// docs say "typically 50 ms" (its code uses 60).
    public var defaultThresholdMs: Int {
        switch self {
        case .zego: return 30
        case .agora: return 50
        case .tencent: return 50
        }
    }

    /// The rule set a vendor's messages imply (Volcano has no chorus rule: display only).
    public init?(protocol p: SyncProtocol) {
        switch p {
        case .zego: self = .zego
        case .agora: self = .agora
        case .tencent: self = .tencent
        case .volcano: return nil
        }
    }
}

public enum ZegoRules {
    /// Mid-join: a device that receives the owner's progress `p` stamped `t0` at its own NTP time
    /// `t1` seeks to `p0 = t1 − t0 + p` (the owner has moved on by the time in flight).
    public static func midJoinTargetMs(remotePositionMs p: Int, remoteNtpMs t0: Int, localNtpMs t1: Int) -> Int {
        t1 - t0 + p
    }

    /// Drift `md = t′ − t − (p′ − p)` of the local player (p′ at t′) against the remote one (p at t):
    /// positive when the local player is behind.
    public static func driftMs(localPositionMs p1: Int, localNtpMs t1: Int, remotePositionMs p: Int, remoteNtpMs t: Int) -> Int {
        t1 - t - (p1 - p)
    }

    /// The seek target `p′ + md`: where the remote player was at t′. It ignores the time since the
    /// local callback, so a seek executed later lands short by that much.
    public static func driftTargetMs(localPositionMs p1: Int, driftMs md: Int) -> Int { p1 + md }

    /// The vendor sample corrects only a slow local player (`md > threshold`); two-sided also `md < −threshold`.
    public static func shouldSeek(driftMs md: Int, thresholdMs: Int, twoSided: Bool) -> Bool {
        md > thresholdMs || (twoSided && md < -thresholdMs)
    }
}

public enum AgoraRules {
    /// `expect = time + (localNtp − ntp) + local playout delay`: the sender's position less its
    /// playout delay, moved on by the time since it was stamped, plus the receiver's own delay.
    public static func expectedPositionMs(timeMs: Int, remoteNtpMs: Int, localNtpMs: Int, localPlayoutDelayMs: Int) -> Int {
        timeMs + (localNtpMs - remoteNtpMs) + localPlayoutDelayMs
    }

    /// The local position now, extrapolated from the last local player callback.
    public static func localPositionMs(lastPositionMs: Int, lastNtpMs: Int, nowNtpMs: Int) -> Int {
        lastPositionMs + (nowNtpMs - lastNtpMs)
    }

    /// Seek when `|expect − local| > threshold` and the target is inside the song.
    public static func shouldSeek(expectedMs: Int, localMs: Int, thresholdMs: Int, durationMs: Int?) -> Bool {
        abs(expectedMs - localMs) > thresholdMs && (durationMs.map { expectedMs < $0 } ?? true)
    }

    /// The first message to a device not yet playing: seek to `expect` when `1 ≤ expect < duration`.
    public static func joinAllowed(expectedMs: Int, durationMs: Int?) -> Bool {
        expectedMs >= 1 && (durationMs.map { expectedMs < $0 } ?? true)
    }
}

public enum TencentRules {
    /// `CHORUS_PRELOAD_MUSIC_DELAY`: a late joiner loads the song this far ahead and starts after it.
    public static let preloadMs = 400

    /// What a device not yet playing does with `startPlayMusicTS`.
    public enum StartPlan: Equatable, Sendable {
        /// Start from 0 at the NTP time given.
        case scheduled(startNtpMs: Int)
        /// The start has passed: seek to `seekToMs` and start at `startNtpMs` (now + preload).
        case lateJoin(seekToMs: Int, startNtpMs: Int)
        /// The song is already over (`delay ≤ −duration`).
        case ignored
    }

    /// `delay = start − now`; > 0 waits for the start, ≤ 0 joins late (`|delay| + 400` ms, start in 400 ms).
    public static func plan(startNtpMs: Int, nowNtpMs: Int, durationMs: Int?) -> StartPlan {
        let delay = startNtpMs - nowNtpMs
        if let d = durationMs, d > 0, delay <= -d { return .ignored }
        if delay > 0 { return .scheduled(startNtpMs: startNtpMs) }
        return .lateJoin(seekToMs: -delay + preloadMs, startNtpMs: nowNtpMs + preloadMs)
    }

    /// Expected progress `NTP − startPlayMusicTS`.
    public static func expectedPositionMs(ntpMs: Int, startNtpMs: Int) -> Int { ntpMs - startNtpMs }

    /// Difference expected − local at the last local callback (p′ at t′); the check applies once
    /// the expected position is not negative.
    public static func differenceMs(localPositionMs p1: Int, localNtpMs t1: Int, startNtpMs: Int) -> Int? {
        let expected = expectedPositionMs(ntpMs: t1, startNtpMs: startNtpMs)
        return expected >= 0 ? expected - p1 : nil
    }

    public static func shouldSeek(differenceMs: Int?, thresholdMs: Int) -> Bool {
        differenceMs.map { abs($0) > thresholdMs } ?? false
    }
}
