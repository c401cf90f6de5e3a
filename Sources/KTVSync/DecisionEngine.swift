/// Recomputes, for one chorus device, every decision its sync rules imply and matches each with
/// what the device logged (docs/progress-log.md, "The sync rules replay checks").
struct DecisionEngine {
    let configuration: ReplayConfiguration
    let log: ReplayLog
    let roles: [RoleTimeline]
    /// The rule set for devices whose messages do not name one (`auto` with no vendor messages).
    let fallbackRules: RuleSet

    func rules(for p: SyncProtocol) -> RuleSet? {
        switch configuration.rules {
        case .auto: return RuleSet(protocol: p)
        case .zego: return .zego
        case .agora: return .agora
        case .tencent: return .tencent
        }
    }

    func decisions(device d: Int) -> [Decision] {
        let dev = log.devices[d]
        guard dev.hasNTP else { return [] }
        let window = configuration.windowMs
        let tolerance = configuration.toleranceMs
        var out: [Decision] = []
        var matched: [Bool] = []

        var lastProgress: (pos: Int, ntp: Int, state: PlayerState)?
        var progressSinceSeek = false
        var started = false
        var pendingStart: Int?
        var lastStopRequest = Int.min
        var playoutDelay = 0
        var lastSeekDecision: Int?
        var lastStartDecision: Int?
        var deviceRules: RuleSet = {
            switch configuration.rules {
            case .auto: return fallbackRules
            case .zego: return .zego
            case .agora: return .agora
            case .tencent: return .tencent
            }
        }()

        func decide(_ e: LogEvent, _ rule: String, _ action: Decision.Action, value: Int?, threshold: Int?, expected: Int) {
            out.append(Decision(device: dev.name, ntpMs: e.ntpMs, rule: rule, action: action, valueMs: value, thresholdMs: threshold,
                                expectedMs: expected, verdict: .missing, source: e.source))
            matched.append(false)
            if action == .seek { lastSeekDecision = out.count - 1 } else { lastStartDecision = out.count - 1 }
        }

        for e in dev.events {
            if e.playoutDelayMs >= 0 { playoutDelay = Int(e.playoutDelayMs) }
            switch e.body {
            case let .progress(p, state, _):
                lastProgress = (p, e.ntpMs, state)
                progressSinceSeek = true
                if state == .playing { started = true; pendingStart = nil }
                if state == .stopped { started = false }
            case let .command(c):
                switch c {
                case .play, .resume: started = true; pendingStart = nil
                case .stop: started = false; pendingStart = nil
                case .pause: break
                }
            case let .schedule(s):
                pendingStart = s
                guard roles[d].role(at: e.ntpMs) == .chorus else { break }
                if let k = lastStartDecision, !matched[k], e.ntpMs - out[k].ntpMs <= window {
                    matched[k] = true
                    out[k].loggedMs = s
                    out[k].loggedNtpMs = e.ntpMs
                    out[k].verdict = abs(s - out[k].expectedMs!) <= tolerance ? .ok : .wrongTarget
                }
                // A schedule no rule asked for is reported under `starts`, not judged.
            case let .seek(to):
                progressSinceSeek = false
                guard roles[d].role(at: e.ntpMs) == .chorus else { break }
                if let k = lastSeekDecision, !matched[k], e.ntpMs - out[k].ntpMs <= window {
                    matched[k] = true
                    out[k].loggedMs = to
                    out[k].loggedNtpMs = e.ntpMs
                    out[k].verdict = abs(to - out[k].expectedMs!) <= tolerance ? .ok : .wrongTarget
                } else {
                    out.append(Decision(device: dev.name, ntpMs: e.ntpMs, rule: "\(deviceRules.rawValue).\(started ? "drift" : "join")",
                                        action: .seek, expectedMs: nil, loggedMs: to, loggedNtpMs: e.ntpMs, verdict: .unexpected, source: e.source))
                    matched.append(true)
                }
            case let .recv(proto, from, message):
                guard roles[d].role(at: e.ntpMs) == .chorus else { break }
                // Only the lead's progress drives the rules; other singers' messages are not a reference.
                if let from, from < roles.count, let r = roles[from].role(at: e.ntpMs), r != .lead { break }
                guard let rs = rules(for: proto) else { break }
                deviceRules = rs
                let threshold = configuration.threshold(for: rs)
                let n = e.ntpMs
                switch message {
                case let .progress(rp):
                    guard rs != .tencent else { break }
                    guard rp.state == nil || rp.state == .playing else { break }
                    if !started && pendingStart == nil {
                        switch rs {
                        case .zego:
                            let target = ZegoRules.midJoinTargetMs(remotePositionMs: rp.positionMs, remoteNtpMs: rp.ntpMs, localNtpMs: n)
                            decide(e, "zego.join", .seek, value: nil, threshold: nil, expected: target)
                        case .agora:
                            let expect = AgoraRules.expectedPositionMs(timeMs: rp.timeMs, remoteNtpMs: rp.ntpMs, localNtpMs: n, localPlayoutDelayMs: playoutDelay)
                            if AgoraRules.joinAllowed(expectedMs: expect, durationMs: rp.durationMs) {
                                decide(e, "agora.join", .seek, value: nil, threshold: nil, expected: expect)
                            }
                        case .tencent: break
                        }
                    } else if started, let lp = lastProgress, lp.state == .playing, progressSinceSeek {
                        switch rs {
                        case .zego:
                            let md = ZegoRules.driftMs(localPositionMs: lp.pos, localNtpMs: lp.ntp, remotePositionMs: rp.positionMs, remoteNtpMs: rp.ntpMs)
                            if ZegoRules.shouldSeek(driftMs: md, thresholdMs: threshold, twoSided: configuration.twoSided) {
                                decide(e, "zego.drift", .seek, value: md, threshold: threshold,
                                       expected: ZegoRules.driftTargetMs(localPositionMs: lp.pos, driftMs: md))
                            }
                        case .agora:
                            let local = AgoraRules.localPositionMs(lastPositionMs: lp.pos, lastNtpMs: lp.ntp, nowNtpMs: n)
                            let expect = AgoraRules.expectedPositionMs(timeMs: rp.timeMs, remoteNtpMs: rp.ntpMs, localNtpMs: n, localPlayoutDelayMs: playoutDelay)
                            if AgoraRules.shouldSeek(expectedMs: expect, localMs: local, thresholdMs: threshold, durationMs: rp.durationMs) {
                                decide(e, "agora.drift", .seek, value: expect - local, threshold: threshold, expected: expect)
                            }
                        case .tencent: break
                        }
                    }
                case let .start(startNtp, duration):
                    switch rs {
                    case .zego:
                        if !started, pendingStart == nil, startNtp > n {
                            decide(e, "zego.start", .start, value: nil, threshold: nil, expected: startNtp)
                        }
                    case .tencent:
                        guard startNtp >= lastStopRequest else { break }
                        if !started {
                            guard pendingStart == nil else { break }
                            switch TencentRules.plan(startNtpMs: startNtp, nowNtpMs: n, durationMs: duration) {
                            case let .scheduled(s):
                                decide(e, "tencent.start", .start, value: nil, threshold: nil, expected: s)
                            case let .lateJoin(seekTo, _):
                                decide(e, "tencent.join", .seek, value: nil, threshold: nil, expected: seekTo)
                            case .ignored: break
                            }
                        } else if let lp = lastProgress, lp.state == .playing, progressSinceSeek {
                            let diff = TencentRules.differenceMs(localPositionMs: lp.pos, localNtpMs: lp.ntp, startNtpMs: startNtp)
                            if TencentRules.shouldSeek(differenceMs: diff, thresholdMs: threshold) {
                                decide(e, "tencent.drift", .seek, value: diff, threshold: threshold,
                                       expected: TencentRules.expectedPositionMs(ntpMs: n, startNtpMs: startNtp))
                            }
                        }
                    case .agora: break
                    }
                case let .stop(r):
                    lastStopRequest = max(lastStopRequest, r)
                case .display, .other:
                    break
                }
            case .role, .send, .record, .truth:
                break
            }
        }
        return out
    }
}
