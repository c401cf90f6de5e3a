/// What a vendor brings to sync: its payloads on the wire (`PayloadCodec`) and, for the vendors with
/// a chorus rule, its threshold, its decision math and how its devices behave in the simulator
/// (`SyncRuleSet`). One type per vendor implements them (ZegoRules, AgoraRules, TencentRules,
/// VolcanoCodec); `Vendors.swift` is the one place a vendor name picks its type. Replay and the
/// simulator ask the rule set and never test the vendor themselves.

/// A vendor's payloads: what replay reads from a received message and what the simulated lead sends.
protocol PayloadCodec: Sendable {
    /// The `protocol` value its messages carry.
    var wireProtocol: SyncProtocol { get }
    /// The chorus rules its messages drive; nil for a display-only vendor (Volcano).
    var chorusRules: RuleSet? { get }
    /// The payload, normalized. A payload the rules do not use is counted in `notes` and read as
    /// `.other`; one the rules use that lacks a number is an error naming `message.<key>`.
    func decode(_ payload: PayloadFields, notes: inout NoteCounter) throws(SyncError) -> SyncMessage
    /// The payload JSON for `message` (the simulator's lead), with every stamp in Unix ms unless
    /// `ntp1900` asks for the vendor's NTP-1900 stamps. Messages the vendor never sends give `{}`.
    func encode(_ message: SyncMessage, ntp1900: Bool, into json: inout LineWriter)
}

/// A vendor's chorus rules.
protocol SyncRuleSet: PayloadCodec {
    var name: RuleSet { get }
    /// The seek threshold the vendor's code uses.
    var defaultThresholdMs: Int { get }
    /// Whether a follower running ahead is corrected too, when `requested` (`--two-sided`) says so
    /// or not: only ZEGO's sample corrects one direction.
    func twoSided(requested: Bool) -> Bool
    /// What a chorus device in `state` does on `message` received at its NTP time `nowNtpMs`; nil
    /// for nothing. Pure: replay and the simulator both call it with the state they keep.
    func decide(_ message: SyncMessage, state: ChorusState, nowNtpMs: Int, thresholdMs: Int, twoSided: Bool) -> RuleDecision?

    // The simulator.

    /// How the lead starts the song once it picks it.
    var leadStart: LeadStart { get }
    /// Whether the lead may pause (Tencent's rule assumes a song never pauses).
    var leadPauses: Bool { get }
    /// Whether devices log `playout_delay` (Agora's rule uses it).
    var logsPlayoutDelay: Bool { get }
    /// Progress callback interval of the devices a scenario file lists.
    var defaultCallbackMs: Int { get }
    /// How far ahead the lead schedules the start, in a scenario file without a base.
    var defaultStartDelayMs: Int { get }
    /// What the lead sends at each of its playing callbacks, and to which roles; nil for nothing.
    func leadCallbackMessage(positionMs: Int, ntpMs: Int, playoutDelayMs: Int, songMs: Int) -> (message: SyncMessage, to: Set<DeviceRole>)?
}

extension SyncRuleSet {
    var chorusRules: RuleSet? { name }
}

/// How a simulated lead starts the song.
enum LeadStart: Equatable {
    /// It plays at once; singers join from its progress messages (Agora).
    case playAtOnce
    /// It announces a start in the future once, then schedules its own (ZEGO `StartInFuture`).
    case announceOnce
    /// It schedules the start and repeats the start signal every `everyMs` from then on, for late
    /// joiners too (Tencent `startChorus`).
    case announceRepeatedly(everyMs: Int)
}

/// What a chorus device's sync code knows when a message arrives. Replay keeps it from the log,
/// the simulator from what its device does; both update it with the same calls.
struct ChorusState {
    /// A `play`/`resume` or a playing callback since the last stop; pausing does not un-start.
    var started = false
    /// A scheduled start not reached yet.
    var pendingStartNtpMs: Int?
    /// The latest progress callback.
    var lastProgress: (positionMs: Int, ntpMs: Int, state: PlayerState)?
    /// A callback since the last seek: the vendor code reads the last callback's position, which is
    /// stale right after a seek (it would count the correction twice).
    var progressSinceSeek = false
    /// Start signals before the latest stop request are void (Tencent `stopChorus`).
    var lastStopRequestNtpMs = Int.min
    /// The device's own audio playout delay (Agora).
    var playoutDelayMs = 0

    /// Neither playing nor waiting for a scheduled start: a message may start it or join it.
    var awaitingStart: Bool { !started && pendingStartNtpMs == nil }

    /// The latest callback when the device plays, its latest callback was playing and it is fresh.
    var freshPlayingProgress: (positionMs: Int, ntpMs: Int)? {
        guard started, progressSinceSeek, let lp = lastProgress, lp.state == .playing else { return nil }
        return (lp.positionMs, lp.ntpMs)
    }

    mutating func progress(positionMs: Int, ntpMs: Int, state: PlayerState) {
        lastProgress = (positionMs, ntpMs, state)
        progressSinceSeek = true
        if state == .playing { started = true; pendingStartNtpMs = nil }
        if state == .stopped { started = false }
    }

    mutating func command(_ c: PlayerCommand) {
        switch c {
        case .play, .resume: started = true; pendingStartNtpMs = nil
        case .stop: started = false; pendingStartNtpMs = nil
        case .pause: break
        }
    }

    mutating func scheduled(startNtpMs: Int) { pendingStartNtpMs = startNtpMs }

    mutating func seeked() { progressSinceSeek = false }

    mutating func stopRequested(ntpMs: Int) { lastStopRequestNtpMs = max(lastStopRequestNtpMs, ntpMs) }
}

/// One thing a rule tells a chorus device to do.
struct RuleDecision: Equatable {
    enum Action: Equatable {
        /// Seek and play now (a mid-join).
        case join(seekToMs: Int)
        /// Seek now, start at an NTP time (Tencent's preload of a late joiner).
        case lateJoin(seekToMs: Int, startNtpMs: Int)
        /// Schedule playback from 0 at an NTP time.
        case start(startNtpMs: Int)
        /// Seek to correct the drift.
        case drift(seekToMs: Int)
    }

    /// `zego.drift`, `agora.join`, `tencent.start` …
    var rule: String
    var action: Action
    /// The quantity compared with the threshold (drift decisions).
    var valueMs: Int?
    var thresholdMs: Int?

    /// The seek target, or the NTP start time for a start.
    var expectedMs: Int {
        switch action {
        case let .join(to), let .lateJoin(to, _), let .drift(to): return to
        case let .start(ntp): return ntp
        }
    }

    var isStart: Bool { if case .start = action { return true } else { return false } }
    var isDrift: Bool { if case .drift = action { return true } else { return false } }
}
