import KTVCore

/// The result of a simulation: the log (JSON Lines, `truth` events included) and its line count.
public struct SimulatedRoom: Sendable {
    public var log: [UInt8]
    public var events: Int
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
        return SimulatedRoom(log: sim.w.bytes, events: sim.w.lines)
    }
}

/// A player: position advances at `rate` while playing; a headphone lag holds it for a while.
struct SimPlayer {
    var playing = false
    var basePos: Double = 0
    var baseTau: Double = 0
    var rate: Double

    func position(at tau: Double) -> Double {
        playing ? basePos + rate * max(0, tau - baseTau) : basePos
    }

    mutating func seek(to p: Double, at tau: Double) {
        basePos = p
        baseTau = tau
    }

    mutating func play(at tau: Double) {
        basePos = position(at: tau)
        baseTau = tau
        playing = true
    }

    mutating func pause(at tau: Double) {
        basePos = position(at: tau)
        baseTau = tau
        playing = false
    }

    /// The output route changes: the player stops advancing for `lag` ms.
    mutating func hold(at tau: Double, for lag: Double) {
        basePos = position(at: tau)
        baseTau = tau + lag
    }
}

/// What a message means to its receiver (the numbers its payload carries, Unix epoch).
enum SimPayload {
    case progress(RemoteProgress)
    case start(startNtpMs: Int, durationMs: Int?)
    case display(positionMs: Int)
}

struct SimMessage {
    var proto: SyncProtocol
    var payload: SimPayload
    var json: [UInt8]
}

struct SimDevice {
    let cfg: Scenario.Device
    let name: [UInt8]
    let boot: Int
    /// NTP time (Unix ms) at true time 0.
    let base: Int
    var player: SimPlayer
    var joined = false
    var nextCallback: Int?
    var inbox: [(arrive: Int, message: Int)] = []
    var head = 0
    var lastArrival = Int.min
    // The rules' state, as the device itself keeps it.
    var started = false
    var paused = false
    var pendingStart: Int?
    var startTau: Int?
    var startBase: Double = 0
    var lastProgress: (pos: Int, ntp: Int, state: PlayerState)?
    var progressSinceSeek = false
    var lastStopRequest = Int.min
    var lastDecisionTau = Int.min / 2
    var faults: [Scenario.Fault] = []
    var lossSpans: [Scenario.Span] = []
    // Truth: (follower NTP stamp, exact position) at each playing callback; audience lags.
    var samples: [(ntp: Int, pos: Double, tau: Int)] = []
    var lags: [Double] = []

    init(_ cfg: Scenario.Device, boot: Int, base: Int) {
        self.cfg = cfg
        name = LineWriter.quoted(cfg.name)
        self.boot = boot
        self.base = base
        player = SimPlayer(rate: cfg.rate)
    }

    /// What the device's NTP clock reads at true time `tau`.
    func ntp(_ tau: Int) -> Int { base + Int((Double(tau) + cfg.clockErrorMs).rounded()) }
    func at(_ tau: Int) -> Int { tau + boot }
    /// The first whole true millisecond at which this device's clock reads `ntp` or later.
    func tau(whenClockReads ntp: Int) -> Int { Int((Double(ntp - base) - cfg.clockErrorMs).rounded(.up)) }
}

struct Simulation {
    let s: Scenario
    var w = LineWriter()
    var rng: SeededGenerator
    var devices: [SimDevice]
    var messages: [SimMessage] = []
    let leadIndex: Int
    /// Snapshots of the lead's player after each change (true time), for exact truth positions.
    var leadHistory: [(tau: Double, player: SimPlayer)] = []
    var startTruths: [(device: Int, scheduled: Int, errorMs: Double)] = []
    var leadStart: Int?
    var tencentStart: Int?
    let threshold: Int
    let window = 200

    init(_ scenario: Scenario) {
        s = scenario
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
        w = LineWriter(capacity: min(1 << 30, scenario.roomMs * 18))
    }

    // MARK: time base

    func nowNtp(_ d: Int, _ tau: Int) -> Int { devices[d].ntp(tau) }

    // MARK: writing

    mutating func begin(_ d: Int, _ tau: Int, _ kind: StaticString) {
        w.begin(device: devices[d].name, at: devices[d].at(tau), ntp: devices[d].ntp(tau), kind: kind)
    }

    /// Builds the fields of a truth object (before the mutating write, so they may read the state).
    static func fields(_ build: (inout LineWriter) -> Void) -> [UInt8] {
        var f = LineWriter()
        build(&f)
        return f.bytes
    }

    mutating func truth(_ d: Int, _ tau: Int, _ fields: [UInt8]) {
        begin(d, tau, "truth")
        w.raw(",\"truth\":{")
        w.raw(fields)
        w.raw("}")
        w.end()
    }

    mutating func logProgress(_ d: Int, _ tau: Int, _ pos: Int, _ state: PlayerState) {
        begin(d, tau, "progress")
        w.raw(",\"position\":")
        w.int(pos)
        w.raw(state == .playing ? ",\"state\":\"playing\"" : state == .paused ? ",\"state\":\"paused\"" : ",\"state\":\"stopped\"")
        w.end()
    }

    mutating func logSimple(_ d: Int, _ tau: Int, _ kind: StaticString) {
        begin(d, tau, kind)
        w.end()
    }

    mutating func logSeek(_ d: Int, _ tau: Int, _ to: Int) {
        begin(d, tau, "seek")
        w.raw(",\"to\":")
        w.int(to)
        w.end()
        devices[d].player.seek(to: Double(to), at: Double(tau))
        devices[d].progressSinceSeek = false
        if d == leadIndex { leadHistory.append((Double(tau), devices[d].player)) }
    }

    mutating func logSchedule(_ d: Int, _ tau: Int, _ startNtp: Int) {
        begin(d, tau, "schedule")
        w.raw(",\"start_ntp\":")
        w.int(startNtp)
        w.end()
        devices[d].pendingStart = startNtp
        devices[d].startBase = devices[d].player.basePos
        devices[d].startTau = devices[d].tau(whenClockReads: startNtp) + Int.random(in: 0...devices[d].cfg.startLatencyMs, using: &rng)
    }

    // MARK: messages

    /// Stamps in a payload: Unix ms, or NTP-1900 when the scenario says so (Agora).
    func stamp(_ ntp: Int) -> Int { ntp + (s.ntp1900 ? NTPTime.epoch1900OffsetMs : 0) }

    mutating func makeMessage(_ payload: SimPayload) -> SimMessage {
        var j = LineWriter()
        let proto: SyncProtocol
        switch (s.rules, payload) {
        case let (.zego, .progress(rp)):
            proto = .zego
            j.raw("{\"kTotalKey\":"); j.int(s.songMs)
            j.raw(",\"kState\":"); j.int(rp.state == .playing ? 1 : 2)
            j.raw(",\"kRole\":1,\"kProgressKey\":"); j.int(rp.positionMs)
            j.raw(",\"kPointTimeKey\":"); j.int(rp.ntpMs)
            j.raw(",\"kResourceID\":\"song-1\"}")
        case let (.zego, .start(startNtp, _)):
            proto = .zego
            j.raw("{\"message\":\"Mediaplayer-StartInFuture\",\"kStartTime\":"); j.int(startNtp)
            j.raw(",\"kBehaviorType\":0,\"kResourceID\":\"song-1\"}")
        case let (.agora, .progress(rp)):
            proto = .agora
            j.raw("{\"cmd\":\"setLrcTime\",\"duration\":"); j.int(s.songMs)
            j.raw(",\"time\":"); j.int(rp.timeMs)
            j.raw(",\"realTime\":"); j.int(rp.positionMs)
            j.raw(",\"ntp\":"); j.int(stamp(rp.ntpMs))
            j.raw(",\"playerState\":"); j.int(rp.state == .playing ? 3 : 4)
            j.raw(",\"songIdentifier\":\"song-1\",\"ver\":2}")
        case let (.tencent, .start(startNtp, duration)):
            proto = .tencent
            j.raw("{\"cmd\":\"startChorus\",\"startPlayMusicTS\":"); j.int(startNtp)
            j.raw(",\"music_id\":\"song-1\",\"music_duration\":\""); j.int(duration ?? s.songMs); j.raw("\"}")
        case let (.tencent, .display(pos)):
            proto = .tencent
            j.raw("{\"musicCurrentTS\":"); j.int(pos); j.raw(",\"musicCurrentId\":\"song-1\"}")
        default:
            proto = SyncProtocol(rawValue: s.rules.rawValue)!
            j.raw("{}")
        }
        return SimMessage(proto: proto, payload: payload, json: j.bytes)
    }

    /// The lead broadcasts: one `send` line, then delivery to each receiver in order, after its
    /// network delay, unless a loss fault drops it.
    mutating func broadcast(_ tau: Int, _ payload: SimPayload, to roles: Set<DeviceRole>) {
        let m = makeMessage(payload)
        messages.append(m)
        let index = messages.count - 1
        begin(leadIndex, tau, "send")
        w.raw(",\"protocol\":\"")
        w.raw(Array(m.proto.rawValue.utf8))
        w.raw("\",\"message\":")
        w.raw(m.json)
        w.end()
        for d in devices.indices where d != leadIndex && devices[d].joined && roles.contains(devices[d].cfg.role) {
            let c = devices[d].cfg
            let arrive = max(devices[d].lastArrival, tau + c.netDelayMs + Int.random(in: 0...c.netJitterMs, using: &rng))
            if devices[d].lossSpans.contains(where: { arrive >= $0.atMs && arrive < $0.atMs + $0.durationMs }) { continue }
            devices[d].lastArrival = arrive
            devices[d].inbox.append((arrive, index))
        }
    }

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
        if s.rules == .agora, devices[d].cfg.role != .audience {
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

    mutating func leadStep(_ tau: Int, pauseStarts: [Int: Int], pauseEnds: Set<Int>) {
        let l = leadIndex
        guard devices[l].joined else { return }
        if tau == s.announceMs {
            switch s.rules {
            case .zego:
                let start = nowNtp(l, tau) + s.startDelayMs
                broadcast(tau, .start(startNtpMs: start, durationMs: nil), to: [.chorus])
                logSchedule(l, tau, start)
                leadStart = start
            case .tencent:
                let start = nowNtp(l, tau) + s.startDelayMs
                tencentStart = start
                logSchedule(l, tau, start)
                leadStart = start
            case .agora:
                startPlaying(l, tau)
            }
        }
        // Tencent resends startChorus every second (unreliable), for late joiners too.
        if s.rules == .tencent, let start = tencentStart, tau >= s.announceMs, (tau - s.announceMs) % 1000 == 0 {
            broadcast(tau, .start(startNtpMs: start, durationMs: s.songMs), to: [.chorus])
        }
        if let st = devices[l].startTau, st == tau { startPlaying(l, tau) }
        if pauseStarts[tau] != nil, devices[l].player.playing, s.rules != .tencent {
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
            let exact = devices[l].player.position(at: Double(tau))
            let pos = Int(exact.rounded())
            let ntp = nowNtp(l, tau)
            logProgress(l, tau, pos, .playing)
            switch s.rules {
            case .zego:
                broadcast(tau, .progress(RemoteProgress(positionMs: pos, ntpMs: ntp, state: .playing, durationMs: s.songMs)), to: [.chorus, .audience])
            case .agora:
                // KTVApi sends only once the position is past the sender's playout delay.
                if pos > devices[l].cfg.playoutDelayMs {
                    let rp = RemoteProgress(positionMs: pos, timeMs: pos - devices[l].cfg.playoutDelayMs, ntpMs: ntp, state: .playing, durationMs: s.songMs)
                    broadcast(tau, .progress(rp), to: [.chorus, .audience])
                }
            case .tencent:
                broadcast(tau, .display(positionMs: pos), to: [.audience])
            }
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
        if let scheduled = devices[d].pendingStart {
            startTruths.append((d, scheduled, Double(tau - (scheduled - devices[d].base)) + devices[d].cfg.clockErrorMs))
        }
        devices[d].started = true
        devices[d].pendingStart = nil
        devices[d].startTau = nil
        devices[d].nextCallback = tau + devices[d].cfg.callbackMs + Int.random(in: 0...devices[d].cfg.callbackJitterMs, using: &rng)
    }

    // MARK: chorus and audience

    mutating func receive(_ d: Int, _ tau: Int, _ index: Int) {
        let m = messages[index]
        begin(d, tau, "recv")
        w.raw(",\"protocol\":\"")
        w.raw(Array(m.proto.rawValue.utf8))
        w.raw("\",\"from\":")
        w.raw(devices[leadIndex].name)
        w.raw(",\"message\":")
        w.raw(m.json)
        w.end()
        let n = nowNtp(d, tau)
        if devices[d].cfg.role == .audience {
            audienceTruth(d, n, m.payload)
            return
        }
        switch m.payload {
        case let .progress(rp):
            if rp.state == .paused {
                if devices[d].started, !devices[d].paused { mirrorPause(d, tau) }
                return
            }
            if devices[d].paused {
                logSimple(d, tau, "resume")
                devices[d].player.play(at: Double(tau))
                devices[d].paused = false
                scheduleNextCallback(d, tau)
                return
            }
            let dev = devices[d]
            if !dev.started, dev.pendingStart == nil {
                switch s.rules {
                case .zego:
                    let target = ZegoRules.midJoinTargetMs(remotePositionMs: rp.positionMs, remoteNtpMs: rp.ntpMs, localNtpMs: n)
                    if let to = decide(d, tau, n, "zego.join", target, drift: false) {
                        logSeek(d, tau, to)
                        startPlaying(d, tau)
                    }
                case .agora:
                    let expect = AgoraRules.expectedPositionMs(timeMs: rp.timeMs, remoteNtpMs: rp.ntpMs, localNtpMs: n, localPlayoutDelayMs: dev.cfg.playoutDelayMs)
                    if AgoraRules.joinAllowed(expectedMs: expect, durationMs: rp.durationMs), let to = decide(d, tau, n, "agora.join", expect, drift: false) {
                        logSeek(d, tau, to)
                        startPlaying(d, tau)
                    }
                case .tencent: break
                }
            } else if dev.started, let lp = dev.lastProgress, lp.state == .playing, dev.progressSinceSeek {
                switch s.rules {
                case .zego:
                    let md = ZegoRules.driftMs(localPositionMs: lp.pos, localNtpMs: lp.ntp, remotePositionMs: rp.positionMs, remoteNtpMs: rp.ntpMs)
                    if ZegoRules.shouldSeek(driftMs: md, thresholdMs: threshold, twoSided: s.twoSided),
                       let to = decide(d, tau, n, "zego.drift", ZegoRules.driftTargetMs(localPositionMs: lp.pos, driftMs: md), drift: true) {
                        logSeek(d, tau, to)
                    }
                case .agora:
                    let local = AgoraRules.localPositionMs(lastPositionMs: lp.pos, lastNtpMs: lp.ntp, nowNtpMs: n)
                    let expect = AgoraRules.expectedPositionMs(timeMs: rp.timeMs, remoteNtpMs: rp.ntpMs, localNtpMs: n, localPlayoutDelayMs: dev.cfg.playoutDelayMs)
                    if AgoraRules.shouldSeek(expectedMs: expect, localMs: local, thresholdMs: threshold, durationMs: rp.durationMs),
                       let to = decide(d, tau, n, "agora.drift", expect, drift: true) {
                        logSeek(d, tau, to)
                    }
                case .tencent: break
                }
            }
        case let .start(startNtp, duration):
            let dev = devices[d]
            switch s.rules {
            case .zego:
                if !dev.started, dev.pendingStart == nil, startNtp > n, decide(d, tau, n, "zego.start", startNtp, drift: false) != nil {
                    logSchedule(d, tau, startNtp)
                }
            case .tencent:
                guard startNtp >= dev.lastStopRequest else { return }
                if !dev.started {
                    guard dev.pendingStart == nil else { return }
                    switch TencentRules.plan(startNtpMs: startNtp, nowNtpMs: n, durationMs: duration) {
                    case let .scheduled(st):
                        if decide(d, tau, n, "tencent.start", st, drift: false) != nil { logSchedule(d, tau, st) }
                    case let .lateJoin(seekTo, st):
                        if let to = decide(d, tau, n, "tencent.join", seekTo, drift: false) {
                            logSeek(d, tau, to)
                            logSchedule(d, tau, st)
                        }
                    case .ignored: break
                    }
                } else if let lp = dev.lastProgress, lp.state == .playing, dev.progressSinceSeek {
                    let diff = TencentRules.differenceMs(localPositionMs: lp.pos, localNtpMs: lp.ntp, startNtpMs: startNtp)
                    if TencentRules.shouldSeek(differenceMs: diff, thresholdMs: threshold),
                       let to = decide(d, tau, n, "tencent.drift", TencentRules.expectedPositionMs(ntpMs: n, startNtpMs: startNtp), drift: true) {
                        logSeek(d, tau, to)
                    }
                }
            case .agora: break
            }
        case .display:
            break
        }
    }

    /// Records a decision and its verdict; returns what to execute (nil for a missed one).
    /// Faults apply to drift decisions only, so a room always gets going.
    mutating func decide(_ d: Int, _ tau: Int, _ n: Int, _ rule: String, _ expected: Int, drift: Bool) -> Int? {
        devices[d].lastDecisionTau = tau
        var verdict = "ok"
        var target: Int? = expected
        if drift, let k = devices[d].faults.firstIndex(where: { ($0.kind == .missedSeek || $0.kind == .wrongTarget) && $0.atMs <= tau }) {
            let fault = devices[d].faults.remove(at: k)
            if fault.kind == .missedSeek {
                verdict = "missing"
                target = nil
            } else {
                verdict = "wrong_target"
                target = max(0, expected + fault.offsetMs)
            }
            let f = Self.fields { w in
                w.raw("\"type\":\"fault\",\"fault\":\""); w.raw(Array(fault.kind.rawValue.utf8)); w.raw("\"")
            }
            truth(d, tau, f)
        }
        let f = Self.fields { w in
            w.raw("\"type\":\"decision\",\"rule\":\""); w.raw(Array(rule.utf8))
            w.raw("\",\"expected_ms\":"); w.int(expected)
            w.raw(",\"verdict\":\""); w.raw(Array(verdict.utf8)); w.raw("\"")
        }
        truth(d, tau, f)
        return target
    }

    mutating func mirrorPause(_ d: Int, _ tau: Int) {
        logSimple(d, tau, "pause")
        devices[d].player.pause(at: Double(tau))
        let pos = Int(devices[d].player.position(at: Double(tau)).rounded())
        logProgress(d, tau, pos, .paused)
        devices[d].lastProgress = (pos, nowNtp(d, tau), .paused)
        devices[d].progressSinceSeek = true
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
        devices[d].lastProgress = (pos, n, .playing)
        devices[d].progressSinceSeek = true
        devices[d].samples.append((n, exact, tau))
        // A spurious seek comes at a quiet moment, so no decision can claim it.
        if let k = devices[d].faults.firstIndex(where: { $0.kind == .spuriousSeek && $0.atMs <= tau }),
           !devices[d].paused, tau - devices[d].lastDecisionTau > window + 50 {
            let fault = devices[d].faults.remove(at: k)
            let to = max(0, pos + fault.offsetMs)
            logSeek(d, tau, to)
            truth(d, tau, Self.fields { w in w.raw("\"type\":\"fault\",\"fault\":\"spurious_seek\"") })
            let f = Self.fields { w in
                w.raw("\"type\":\"decision\",\"rule\":\""); w.raw(Array("\(s.rules.rawValue).drift".utf8))
                w.raw("\",\"expected_ms\":null,\"verdict\":\"unexpected\"")
            }
            truth(d, tau, f)
        }
    }

    mutating func audienceTruth(_ d: Int, _ n: Int, _ payload: SimPayload) {
        let carried: Int
        switch payload {
        case let .progress(rp):
            guard rp.state == .playing else { return }
            carried = rp.positionMs
        case let .display(p): carried = p
        case .start: return
        }
        if let lp = leadPosition(ntp: n) { devices[d].lags.append(lp - Double(carried)) }
    }

    /// The lead's exact position when its own clock read `ntp`, nil when it was not playing.
    func leadPosition(ntp: Int) -> Double? {
        let tau = Double(ntp - devices[leadIndex].base) - devices[leadIndex].cfg.clockErrorMs
        var found: SimPlayer?
        for h in leadHistory.reversed() where h.tau <= tau { found = h.player; break }
        guard let p = found, p.playing else { return nil }
        return p.position(at: tau)
    }

    /// The lead's exact position at a true time (audible drift).
    func leadPosition(tau: Double) -> Double? {
        var found: SimPlayer?
        for h in leadHistory.reversed() where h.tau <= tau { found = h.player; break }
        guard let p = found, p.playing else { return nil }
        return p.position(at: tau)
    }

    mutating func writeSummary() {
        let end = s.roomMs
        for d in devices.indices where devices[d].cfg.role == .chorus && !devices[d].samples.isEmpty {
            var values: [Double] = []
            var audible: [Double] = []
            values.reserveCapacity(devices[d].samples.count)
            for sample in devices[d].samples {
                guard let lp = leadPosition(ntp: sample.ntp) else { continue }
                values.append(sample.pos - lp)
                if let la = leadPosition(tau: Double(sample.tau)) { audible.append(sample.pos - la) }
            }
            guard let st = DriftStats(values: values, thresholdMs: Double(threshold)) else { continue }
            let audibleMedian = Stats.median(audible.sorted())
            let f = Self.fields { w in
                w.raw("\"type\":\"drift\",\"lead\":"); w.raw(devices[leadIndex].name)
                w.raw(",\"follower\":"); w.raw(devices[d].name)
                w.raw(",\"samples\":"); w.int(st.samples)
                w.raw(",\"median_ms\":"); w.number(st.medianMs)
                w.raw(",\"p95_abs_ms\":"); w.number(st.p95AbsMs)
                w.raw(",\"max_abs_ms\":"); w.number(st.maxAbsMs)
                w.raw(",\"over_threshold_share\":"); w.number(st.overThresholdShare)
                w.raw(",\"threshold_ms\":"); w.int(threshold)
                if let a = audibleMedian { w.raw(",\"audible_median_ms\":"); w.number(a) }
            }
            truth(d, end, f)
        }
        for d in devices.indices where devices[d].cfg.role == .audience && !devices[d].lags.isEmpty {
            let sorted = devices[d].lags.sorted()
            let f = Self.fields { w in
                w.raw("\"type\":\"audience\",\"samples\":"); w.int(sorted.count)
                w.raw(",\"lag_median_ms\":"); w.number(Stats.median(sorted)!)
                w.raw(",\"lag_p95_ms\":"); w.number(Stats.percentile(sorted, 0.95)!)
            }
            truth(d, end, f)
        }
        for st in startTruths {
            let f = Self.fields { w in
                w.raw("\"type\":\"start\",\"scheduled_ntp\":"); w.int(st.scheduled)
                w.raw(",\"error_ms\":"); w.number(st.errorMs)
            }
            truth(st.device, end, f)
        }
    }
}
