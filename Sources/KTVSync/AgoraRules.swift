import KTVCore

/// Agora chorus sync: a singer expects the lead at `expect = time + (localNtp − ntp) + playoutDelay`
/// and seeks there when it is more than 50 ms off (either way) or has not started yet.
///
/// Reference: Agora's KTVApi as docs/progress-log.md describes it (section "Agora (threshold 50 ms,
/// two-sided)"): the `setLrcTime` stream message `{"cmd":"setLrcTime","duration","time","realTime",
/// "ntp","playerState"}`, with `ntp` from `getNtpTimeInMs()` (NTP-1900 epoch).
public struct AgoraRules: SyncRuleSet {
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

    // MARK: the rule set

    var name: RuleSet { .agora }
    var wireProtocol: SyncProtocol { .agora }
    /// KTVApi seeks at |diff| > 50.
    var defaultThresholdMs: Int { 50 }
    /// `|expect − local|`: both directions, always.
    func twoSided(requested: Bool) -> Bool { true }

    func decide(_ message: SyncMessage, state: ChorusState, nowNtpMs n: Int, thresholdMs: Int, twoSided: Bool) -> RuleDecision? {
        guard case let .progress(rp) = message, rp.state == nil || rp.state == .playing else { return nil }
        let expect = Self.expectedPositionMs(timeMs: rp.timeMs, remoteNtpMs: rp.ntpMs, localNtpMs: n, localPlayoutDelayMs: state.playoutDelayMs)
        if state.awaitingStart {
            guard Self.joinAllowed(expectedMs: expect, durationMs: rp.durationMs) else { return nil }
            return RuleDecision(rule: "agora.join", action: .join(seekToMs: expect))
        }
        guard let lp = state.freshPlayingProgress else { return nil }
        let local = Self.localPositionMs(lastPositionMs: lp.positionMs, lastNtpMs: lp.ntpMs, nowNtpMs: n)
        guard Self.shouldSeek(expectedMs: expect, localMs: local, thresholdMs: thresholdMs, durationMs: rp.durationMs) else { return nil }
        return RuleDecision(rule: "agora.drift", action: .drift(seekToMs: expect), valueMs: expect - local, thresholdMs: thresholdMs)
    }

    // MARK: the wire

    func decode(_ f: PayloadFields, notes: inout NoteCounter) throws(SyncError) -> SyncMessage {
        guard f.cmd == "setLrcTime" else {
            return f.ignored(&notes, "payload-ignored", key: "agora-\(f.cmd ?? "")",
                             "agora `\(f.cmd ?? "(no cmd)")` messages do not drive the sync rules; ignored")
        }
        let time = try f.need(.time, "position minus the sender's playout delay, in ms")
        guard f.has(.ntp) else {
            return f.ignored(&notes, "legacy-setlrctime", "a setLrcTime without `ntp` (the 2021-22 format) cannot be placed in time; ignored")
        }
        let ntp = try f.needStamp(.ntp, "the NTP ms of that position")
        let real = f.has(.realTime) ? try f.need(.realTime, "the sender's position in ms") : time
        // playerState: 3 playing, 4 paused, other values stopped.
        let state = f.optional(.playerState).map { $0 == 3 ? PlayerState.playing : $0 == 4 ? .paused : .stopped }
        return .progress(RemoteProgress(positionMs: real, timeMs: time, ntpMs: ntp, state: state, durationMs: f.optional(.duration)))
    }

    func encode(_ message: SyncMessage, ntp1900: Bool, into j: inout LineWriter) {
        j.raw("{")
        if case let .progress(rp) = message {
            j.member("cmd", text: "setLrcTime")
            if let d = rp.durationMs { j.member("duration", d) }
            j.member("time", rp.timeMs)
            j.member("realTime", rp.positionMs)
            // getNtpTimeInMs() counts from 1900.
            j.member("ntp", rp.ntpMs + (ntp1900 ? NTPTime.epoch1900OffsetMs : 0))
            if let st = rp.state { j.member("playerState", st == .playing ? 3 : st == .paused ? 4 : 0) }
            j.member("songIdentifier", text: "song-1")
            j.member("ver", 2)
        }
        j.raw("}")
    }

    // MARK: the simulator

    var leadStart: LeadStart { .playAtOnce }
    var leadPauses: Bool { true }
    var logsPlayoutDelay: Bool { true }
    var defaultCallbackMs: Int { 100 }
    /// Unused (the lead plays at once); the ZEGO value.
    var defaultStartDelayMs: Int { 2_000 }

    /// KTVApi sends `setLrcTime` only once the position is past the sender's playout delay.
    func leadCallbackMessage(positionMs: Int, ntpMs: Int, playoutDelayMs: Int, songMs: Int) -> (message: SyncMessage, to: Set<DeviceRole>)? {
        guard positionMs > playoutDelayMs else { return nil }
        let rp = RemoteProgress(positionMs: positionMs, timeMs: positionMs - playoutDelayMs, ntpMs: ntpMs, state: .playing, durationMs: songMs)
        return (.progress(rp), [.chorus, .audience])
    }
}
