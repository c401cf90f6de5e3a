import KTVCore

/// Tencent chorus sync: everyone starts at `startPlayMusicTS` (a late joiner preloads 400 ms ahead)
/// and a singer expects the progress `NTP − startPlayMusicTS`, seeking when it is off by more than 50 ms.
///
/// Reference: Tencent TRTC's chorus as docs/progress-log.md describes it (section "Tencent
/// (threshold 50 ms; the vendor code uses 60)"): the docs' "typically 50 ms" threshold,
/// `CHORUS_PRELOAD_MUSIC_DELAY` = 400 ms from the vendor code, the `startChorus` message
/// `{"cmd":"startChorus","startPlayMusicTS","music_duration"}` resent every second, `stopChorus`
/// `{"requestStopTS"}`, and the audience SEI `{"musicCurrentTS","musicCurrentId"}`.
public struct TencentRules: SyncRuleSet {
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

    // MARK: the rule set

    var name: RuleSet { .tencent }
    var wireProtocol: SyncProtocol { .tencent }
    /// The docs' "typically 50 ms" (the code uses 60).
    var defaultThresholdMs: Int { 50 }
    func twoSided(requested: Bool) -> Bool { true }

    /// Only start signals drive the rule (it assumes the song never pauses); progress messages do not.
    func decide(_ message: SyncMessage, state: ChorusState, nowNtpMs n: Int, thresholdMs: Int, twoSided: Bool) -> RuleDecision? {
        guard case let .start(startNtp, duration) = message, startNtp >= state.lastStopRequestNtpMs else { return nil }
        if !state.started {
            guard state.pendingStartNtpMs == nil else { return nil }
            switch Self.plan(startNtpMs: startNtp, nowNtpMs: n, durationMs: duration) {
            case let .scheduled(s): return RuleDecision(rule: "tencent.start", action: .start(startNtpMs: s))
            case let .lateJoin(seekTo, s): return RuleDecision(rule: "tencent.join", action: .lateJoin(seekToMs: seekTo, startNtpMs: s))
            case .ignored: return nil
            }
        }
        guard let lp = state.freshPlayingProgress else { return nil }
        let diff = Self.differenceMs(localPositionMs: lp.positionMs, localNtpMs: lp.ntpMs, startNtpMs: startNtp)
        guard Self.shouldSeek(differenceMs: diff, thresholdMs: thresholdMs) else { return nil }
        return RuleDecision(rule: "tencent.drift", action: .drift(seekToMs: Self.expectedPositionMs(ntpMs: n, startNtpMs: startNtp)),
                            valueMs: diff, thresholdMs: thresholdMs)
    }

    // MARK: the wire

    func decode(_ f: PayloadFields, notes: inout NoteCounter) throws(SyncError) -> SyncMessage {
        if f.cmd == "startChorus" {
            return .start(startNtpMs: try f.needStamp(.startPlayMusicTS, "the NTP ms playback starts"), durationMs: f.optional(.music_duration))
        }
        if f.cmd == "stopChorus" {
            return .stop(requestNtpMs: try f.needStamp(.requestStopTS, "the NTP ms of the stop request"))
        }
        if f.has(.musicCurrentTS) { return .display(positionMs: try f.need(.musicCurrentTS, "the lead's progress in ms")) }
        return f.ignored(&notes, "payload-ignored", key: "tencent", "a tencent payload that is not startChorus, stopChorus or an audience SEI is ignored")
    }

    func encode(_ message: SyncMessage, ntp1900: Bool, into j: inout LineWriter) {
        j.raw("{")
        switch message {
        case let .start(startNtp, duration):
            j.member("cmd", text: "startChorus")
            j.member("startPlayMusicTS", startNtp)
            j.member("music_id", text: "song-1")
            // Tencent sends the duration as a string.
            if let d = duration { j.member("music_duration", quoted: d) }
        case let .stop(request):
            j.member("cmd", text: "stopChorus")
            j.member("requestStopTS", request)
            j.member("music_id", text: "song-1")
        case let .display(pos):
            j.member("musicCurrentTS", pos)
            j.member("musicCurrentId", text: "song-1")
        case .progress, .other:
            break
        }
        j.raw("}")
    }

    // MARK: the simulator

    var leadStart: LeadStart { .announceRepeatedly(everyMs: 1_000) }
    var leadPauses: Bool { false }
    var logsPlayoutDelay: Bool { false }
    var defaultCallbackMs: Int { 100 }
    /// `startChorus` lead time.
    var defaultStartDelayMs: Int { 3_000 }

    /// The audience SEI: a display position for listeners; singers follow the start signal alone.
    func leadCallbackMessage(positionMs: Int, ntpMs: Int, playoutDelayMs: Int, songMs: Int) -> (message: SyncMessage, to: Set<DeviceRole>)? {
        (.display(positionMs: positionMs), [.audience])
    }
}
