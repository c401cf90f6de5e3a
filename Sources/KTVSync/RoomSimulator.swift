import KTVCore

/// The result of a simulation: the log (JSON Lines, `truth` events included), its line count and
/// the scenario that ran (with the seed used).
public struct SimulatedRoom: Sendable {
    public var log: [UInt8]
    public var events: Int
    public var scenario: Scenario
}

/// Simulates a karaoke room millisecond by millisecond and writes what every device would log.
///
/// Each device has its own clock error, player rate, callback timer and network delay; the chorus
/// devices run the vendor's rules as the vendor code does (on each message, from their own last
/// callback), so the log holds the same numbers replay will read. Faults make a device deviate
/// from its rules. `truth` events record every decision with its verdict, every fault, and the
/// exact drift, lag and start statistics, measured on the devices' NTP clocks as replay measures
/// them (docs/progress-log.md, "Truth events").
public enum RoomSimulator {
    public static func run(_ scenario: Scenario) throws(SyncError) -> SimulatedRoom {
        try scenario.check()
        var sim = Simulation(scenario)
        sim.run()
        return SimulatedRoom(log: sim.w.bytes, events: sim.w.lines, scenario: scenario)
    }

    /// `ktv replay simulate`: the built-in scenario of that name or the scenario file at that path,
    /// with `seed` in place of the scenario's when given.
    public static func run(scenario nameOrPath: String, seed: UInt64? = nil) throws(SyncError) -> SimulatedRoom {
        var s = try Scenario.load(nameOrPath)
        if let seed { s.seed = seed }
        return try run(s)
    }
}

/// One run of the room. The vendor's part (what the lead sends, how it starts, what a singer
/// decides) is the rule set's; this is the clock, the players, the network and the faults.
struct Simulation {
    let s: Scenario
    let rules: any SyncRuleSet
    var w = LineWriter()
    var rng: SeededGenerator
    var devices: [SimDevice]
    var messages: [SimMessage] = []
    let leadIndex: Int
    /// Snapshots of the lead's player after each change (true time), for exact truth positions.
    var leadHistory: [(tau: Double, player: SimPlayer)] = []
    var startTruths: [(device: Int, scheduled: Int, errorMs: Double)] = []
    /// The start the lead announced, while it keeps repeating it.
    var repeatedStart: Int?
    let threshold: Int
    let window = 200
    let leadStart: LeadStart
    let leadPauses: Bool

    init(_ scenario: Scenario) {
        s = scenario
        rules = scenario.rules.rules
        rng = SeededGenerator(seed: scenario.seed)
        var devs: [SimDevice] = []
        for (k, d) in scenario.devices.enumerated() {
            var dev = SimDevice(d, boot: 1_000_000 * (k + 1) + Int.random(in: 0...999_999, using: &rng), base: scenario.startNtpMs)
            dev.faults = scenario.faults.filter { $0.device == d.name && $0.kind != .lostMessages }.sorted { $0.atMs < $1.atMs }
            dev.lossSpans = scenario.faults.filter { $0.device == d.name && $0.kind == .lostMessages }.map { Scenario.Span(atMs: $0.atMs, durationMs: $0.durationMs) }
            devs.append(dev)
        }
        devices = devs
        leadIndex = scenario.devices.firstIndex { $0.role == .lead }!
        threshold = scenario.thresholdUsedMs
        leadStart = rules.leadStart
        leadPauses = rules.leadPauses
        w = LineWriter(capacity: min(1 << 30, scenario.roomMs * 18))
    }

    func nowNtp(_ d: Int, _ tau: Int) -> Int { devices[d].ntp(tau) }

    // MARK: the room

    mutating func run() {
        // Clock errors and the scenario, for the record.
        let f = Self.fields { w in
            w.raw("\"type\":\"scenario\",\"name\":"); w.string(s.name)
            w.raw(",\"rules\":\""); w.raw(Array(s.rules.rawValue.utf8)); w.raw("\",\"seed\":"); w.int(Int(s.seed))
            w.raw(",\"threshold_ms\":"); w.int(threshold)
        }
        truth(leadIndex, 0, f)
        let pauseStarts = Dictionary(s.pauses.map { ($0.atMs, $0.durationMs) }, uniquingKeysWith: { a, _ in a })
        let pauseEnds = Set(s.pauses.map { $0.atMs + $0.durationMs })
        let losses = s.faults.filter { $0.kind == .lostMessages }
        for tau in 0...s.roomMs {
            for d in devices.indices where !devices[d].joined && devices[d].cfg.joinMs == tau { join(d, tau) }
            for f in losses where f.atMs == tau {
                let d = devices.firstIndex { $0.cfg.name == f.device }!
                let end = devices[d].ntp(tau + f.durationMs)
                truth(d, tau, Self.fields { w in
                    w.raw("\"type\":\"fault\",\"fault\":\"lost_messages\",\"end_ntp\":"); w.int(end)
                })
            }
            leadStep(tau, pauseStarts: pauseStarts, pauseEnds: pauseEnds)
            for d in devices.indices where d != leadIndex && devices[d].joined {
                while devices[d].head < devices[d].inbox.count, devices[d].inbox[devices[d].head].arrive <= tau {
                    let m = devices[d].inbox[devices[d].head].message
                    devices[d].head += 1
                    receive(d, tau, m)
                }
                if devices[d].head > 4096 {
                    devices[d].inbox.removeFirst(devices[d].head)
                    devices[d].head = 0
                }
                if devices[d].cfg.role == .chorus { followerTimers(d, tau) }
            }
        }
        writeSummary()
    }

    mutating func join(_ d: Int, _ tau: Int) {
        devices[d].joined = true
        begin(d, tau, "role")
        w.raw(",\"role\":\"")
        w.raw(Array(devices[d].cfg.role.rawValue.utf8))
        w.raw("\"")
        if rules.logsPlayoutDelay, devices[d].cfg.role != .audience {
            w.raw(",\"playout_delay\":")
            w.int(devices[d].cfg.playoutDelayMs)
        }
        w.end()
        let f = Self.fields { w in
            w.raw("\"type\":\"clock\",\"error_ms\":"); w.number(devices[d].cfg.clockErrorMs)
            w.raw(",\"rate\":"); w.number(devices[d].cfg.rate, digits: 7)
        }
        truth(d, tau, f)
    }

    // MARK: the lead

    mutating func leadStep(_ tau: Int, pauseStarts: [Int: Int], pauseEnds: Set<Int>) {
        let l = leadIndex
        guard devices[l].joined else { return }
        if tau == s.announceMs { announce(tau) }
        if case let .announceRepeatedly(every) = leadStart, let start = repeatedStart, tau >= s.announceMs, (tau - s.announceMs) % every == 0 {
            broadcast(tau, .start(startNtpMs: start, durationMs: s.songMs), to: [.chorus])
        }
        if let st = devices[l].startTau, st == tau { startPlaying(l, tau) }
        if pauseStarts[tau] != nil, devices[l].player.playing, leadPauses {
            logSimple(l, tau, "pause")
            devices[l].player.pause(at: Double(tau))
            leadHistory.append((Double(tau), devices[l].player))
            let pos = Int(devices[l].player.position(at: Double(tau)).rounded())
            logProgress(l, tau, pos, .paused)
            devices[l].nextCallback = nil
            devices[l].paused = true
            let rp = RemoteProgress(positionMs: pos, timeMs: pos - devices[l].cfg.playoutDelayMs, ntpMs: nowNtp(l, tau), state: .paused, durationMs: s.songMs)
            broadcast(tau, .progress(rp), to: [.chorus, .audience])
        }
        if pauseEnds.contains(tau), devices[l].paused {
            logSimple(l, tau, "resume")
            devices[l].player.play(at: Double(tau))
            leadHistory.append((Double(tau), devices[l].player))
            devices[l].paused = false
            devices[l].nextCallback = tau + devices[l].cfg.callbackMs
        }
        if let cb = devices[l].nextCallback, cb == tau {
            scheduleNextCallback(l, tau)
            if inStall(l, tau) { return }
            let pos = Int(devices[l].player.position(at: Double(tau)).rounded())
            let ntp = nowNtp(l, tau)
            logProgress(l, tau, pos, .playing)
            if let m = rules.leadCallbackMessage(positionMs: pos, ntpMs: ntp, playoutDelayMs: devices[l].cfg.playoutDelayMs, songMs: s.songMs) {
                broadcast(tau, m.message, to: m.to)
            }
        }
    }

    /// The lead picks the song and starts it the vendor's way.
    mutating func announce(_ tau: Int) {
        let l = leadIndex
        switch leadStart {
        case .playAtOnce:
            startPlaying(l, tau)
        case .announceOnce, .announceRepeatedly:
            let start = nowNtp(l, tau) + s.startDelayMs
            // The one-off announcement goes out before the lead schedules itself, the repeated one
            // after (in `leadStep`): the order the random draws were made in, so a seed keeps its log.
            if leadStart == .announceOnce { broadcast(tau, .start(startNtpMs: start, durationMs: nil), to: [.chorus]) } else { repeatedStart = start }
            logSchedule(l, tau, start)
        }
    }

    mutating func scheduleNextCallback(_ d: Int, _ tau: Int) {
        let c = devices[d].cfg
        devices[d].nextCallback = tau + c.callbackMs + Int.random(in: 0...c.callbackJitterMs, using: &rng)
    }

    /// Inside a callback stall the timer fires but nothing is logged.
    func inStall(_ d: Int, _ tau: Int) -> Bool {
        devices[d].cfg.callbackStalls.contains { tau >= $0.atMs && tau < $0.atMs + $0.durationMs }
    }

    /// A scheduled start (or a join's play): the player starts, callbacks begin.
    mutating func startPlaying(_ d: Int, _ tau: Int) {
        logSimple(d, tau, "play")
        devices[d].player.play(at: Double(tau))
        if d == leadIndex { leadHistory.append((Double(tau), devices[d].player)) }
        if let scheduled = devices[d].sync.pendingStartNtpMs {
            startTruths.append((d, scheduled, Double(tau - (scheduled - devices[d].base)) + devices[d].cfg.clockErrorMs))
        }
        devices[d].sync.command(.play)
        devices[d].startTau = nil
        devices[d].nextCallback = tau + devices[d].cfg.callbackMs + Int.random(in: 0...devices[d].cfg.callbackJitterMs, using: &rng)
    }

    // MARK: chorus and audience

    mutating func receive(_ d: Int, _ tau: Int, _ index: Int) {
        let m = messages[index]
        logReceived(d, tau, m)
        let n = nowNtp(d, tau)
        if devices[d].cfg.role == .audience {
            audienceTruth(d, n, m.message)
            return
        }
        // A singer mirrors the lead's pause and resume before any rule.
        if case let .progress(rp) = m.message {
            if rp.state == .paused {
                if devices[d].sync.started, !devices[d].paused { mirrorPause(d, tau) }
                return
            }
            if devices[d].paused {
                logSimple(d, tau, "resume")
                devices[d].player.play(at: Double(tau))
                devices[d].paused = false
                scheduleNextCallback(d, tau)
                return
            }
        }
        guard let decision = rules.decide(m.message, state: devices[d].sync, nowNtpMs: n, thresholdMs: threshold, twoSided: s.twoSided),
              let target = record(d, tau, decision.rule, decision.expectedMs, drift: decision.isDrift) else { return }
        switch decision.action {
        case .join:
            logSeek(d, tau, target)
            startPlaying(d, tau)
        case let .lateJoin(_, startNtp):
            logSeek(d, tau, target)
            logSchedule(d, tau, startNtp)
        case .start:
            logSchedule(d, tau, target)
        case .drift:
            logSeek(d, tau, target)
        }
    }

    mutating func mirrorPause(_ d: Int, _ tau: Int) {
        logSimple(d, tau, "pause")
        devices[d].player.pause(at: Double(tau))
        let pos = Int(devices[d].player.position(at: Double(tau)).rounded())
        logProgress(d, tau, pos, .paused)
        devices[d].sync.progress(positionMs: pos, ntpMs: nowNtp(d, tau), state: .paused)
        devices[d].paused = true
        devices[d].nextCallback = nil
    }

    mutating func followerTimers(_ d: Int, _ tau: Int) {
        if let st = devices[d].startTau, st == tau { startPlaying(d, tau) }
        for lag in devices[d].cfg.headphoneLags where lag.atMs == tau {
            devices[d].player.hold(at: Double(tau), for: Double(lag.lagMs))
            let f = Self.fields { w in
                w.raw("\"type\":\"headphone_lag\",\"lag_ms\":"); w.int(lag.lagMs)
            }
            truth(d, tau, f)
        }
        guard let cb = devices[d].nextCallback, cb == tau, devices[d].player.playing else { return }
        scheduleNextCallback(d, tau)
        if inStall(d, tau) { return }
        let exact = devices[d].player.position(at: Double(tau))
        let pos = Int(exact.rounded())
        let n = nowNtp(d, tau)
        logProgress(d, tau, pos, .playing)
        devices[d].sync.progress(positionMs: pos, ntpMs: n, state: .playing)
        devices[d].samples.append((n, exact, tau))
        // A spurious seek comes at a quiet moment, so no decision can claim it.
        if let k = devices[d].faults.firstIndex(where: { $0.kind == .spuriousSeek && $0.atMs <= tau }),
           !devices[d].paused, tau - devices[d].lastDecisionTau > window + 50 {
            let fault = devices[d].faults.remove(at: k)
            logSeek(d, tau, max(0, pos + fault.offsetMs))
            recordUnprompted(d, tau)
        }
    }
}
