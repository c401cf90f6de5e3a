import KTVCore

/// ZEGO chorus sync: a mid-join seeks to `p0 = t1 − t0 + p`; a playing singer computes its drift
/// `md = t′ − t − (p′ − p)` against each progress SEI and seeks to `p′ + md` when `md > 30` ms.
///
/// Reference: ZEGO's chorus sample as docs/progress-log.md describes it (section "ZEGO (threshold
/// 30 ms)"; the sample project is not named there): the progress SEI
/// `{"kTotalKey","kState","kRole","kProgressKey","kPointTimeKey","kResourceID"}` and the
/// `{"message":"Mediaplayer-StartInFuture","kStartTime"}` start, which the demo code sends 2 s ahead.
public struct ZegoRules: SyncRuleSet {
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

    // MARK: the rule set

    var name: RuleSet { .zego }
    var wireProtocol: SyncProtocol { .zego }
    /// The sample seeks at md > 30.
    var defaultThresholdMs: Int { 30 }
    func twoSided(requested: Bool) -> Bool { requested }

    func decide(_ message: SyncMessage, state: ChorusState, nowNtpMs n: Int, thresholdMs: Int, twoSided: Bool) -> RuleDecision? {
        switch message {
        case let .progress(rp):
            guard rp.state == nil || rp.state == .playing else { return nil }
            if state.awaitingStart {
                let target = Self.midJoinTargetMs(remotePositionMs: rp.positionMs, remoteNtpMs: rp.ntpMs, localNtpMs: n)
                return RuleDecision(rule: "zego.join", action: .join(seekToMs: target))
            }
            guard let lp = state.freshPlayingProgress else { return nil }
            let md = Self.driftMs(localPositionMs: lp.positionMs, localNtpMs: lp.ntpMs, remotePositionMs: rp.positionMs, remoteNtpMs: rp.ntpMs)
            guard Self.shouldSeek(driftMs: md, thresholdMs: thresholdMs, twoSided: twoSided) else { return nil }
            return RuleDecision(rule: "zego.drift", action: .drift(seekToMs: Self.driftTargetMs(localPositionMs: lp.positionMs, driftMs: md)),
                                valueMs: md, thresholdMs: thresholdMs)
        case let .start(startNtp, _):
            // A start already in the past is the mid-join's job.
            guard state.awaitingStart, startNtp > n else { return nil }
            return RuleDecision(rule: "zego.start", action: .start(startNtpMs: startNtp))
        case .stop, .display, .other:
            return nil
        }
    }

    // MARK: the wire

    func decode(_ f: PayloadFields, notes: inout NoteCounter) throws(SyncError) -> SyncMessage {
        if f.message == "Mediaplayer-StartInFuture" {
            return .start(startNtpMs: try f.needStamp(.kStartTime, "the NTP ms playback starts"), durationMs: f.optional(.kTotalKey))
        }
        if f.has(.kProgressKey) {
            let pos = try f.need(.kProgressKey, "the sender's progress in ms")
            let t = try f.needStamp(.kPointTimeKey, "the NTP ms of that progress")
            // kState: 1 playing, 2 paused, 0 and 3 stopped.
            let state = f.optional(.kState).map { $0 == 1 ? PlayerState.playing : $0 == 2 ? .paused : .stopped }
            return .progress(RemoteProgress(positionMs: pos, ntpMs: t, state: state, durationMs: f.optional(.kTotalKey)))
        }
        return f.ignored(&notes, "payload-ignored", key: "zego", "a zego payload that is neither a progress SEI nor Mediaplayer-StartInFuture is ignored")
    }

    func encode(_ message: SyncMessage, ntp1900: Bool, into j: inout LineWriter) {
        j.raw("{")
        switch message {
        case let .progress(rp):
            if let d = rp.durationMs { j.member("kTotalKey", d) }
            if let st = rp.state { j.member("kState", st == .playing ? 1 : st == .paused ? 2 : 3) }
            j.member("kRole", 1)
            j.member("kProgressKey", rp.positionMs)
            j.member("kPointTimeKey", rp.ntpMs)
            j.member("kResourceID", text: "song-1")
        case let .start(startNtp, duration):
            j.member("message", text: "Mediaplayer-StartInFuture")
            j.member("kStartTime", startNtp)
            if let d = duration { j.member("kTotalKey", d) }
            j.member("kBehaviorType", 0)
            j.member("kResourceID", text: "song-1")
        case .stop, .display, .other:
            break
        }
        j.raw("}")
    }

    // MARK: the simulator

    var leadStart: LeadStart { .announceOnce }
    var leadPauses: Bool { true }
    var logsPlayoutDelay: Bool { false }
    /// The demo's progress timer.
    var defaultCallbackMs: Int { 60 }
    /// `StartInFuture` lead time of the demo code.
    var defaultStartDelayMs: Int { 2_000 }

    /// A progress SEI at every callback, to singers and listeners.
    func leadCallbackMessage(positionMs: Int, ntpMs: Int, playoutDelayMs: Int, songMs: Int) -> (message: SyncMessage, to: Set<DeviceRole>)? {
        (.progress(RemoteProgress(positionMs: positionMs, ntpMs: ntpMs, state: .playing, durationMs: songMs)), [.chorus, .audience])
    }
}
