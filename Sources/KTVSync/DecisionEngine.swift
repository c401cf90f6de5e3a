/// Recomputes, for one chorus device, every decision its sync rules imply and matches each with
/// what the device logged (docs/progress-log.md, "The decisions and their verdicts"). The rules
/// themselves are the rule set's (`SyncRuleSet.decide`), fed with the state the log shows.
struct DecisionEngine {
    let configuration: ReplayConfiguration
    let log: ReplayLog
    let roles: [RoleTimeline]
    /// The rule set for devices whose messages do not name one (`auto` with no vendor messages).
    let fallbackRules: RuleSet

    func decisions(device d: Int) -> [Decision] {
        let dev = log.devices[d]
        guard dev.hasNTP else { return [] }
        let forced = configuration.rules.forced
        let window = configuration.windowMs
        let tolerance = configuration.toleranceMs
        var out: [Decision] = []
        var matched: [Bool] = []
        var state = ChorusState()
        var lastSeekDecision: Int?
        var lastStartDecision: Int?
        var deviceRules = forced ?? fallbackRules

        func decide(_ e: LogEvent, _ r: RuleDecision) {
            let action: Decision.Action = r.isStart ? .start : .seek
            out.append(Decision(device: dev.name, ntpMs: e.ntpMs, rule: r.rule, action: action, valueMs: r.valueMs, thresholdMs: r.thresholdMs,
                                expectedMs: r.expectedMs, verdict: .missing, source: e.source))
            matched.append(false)
            if action == .seek { lastSeekDecision = out.count - 1 } else { lastStartDecision = out.count - 1 }
        }

        /// Gives a logged seek or schedule to the latest decision `k` when it is within the window and free.
        func match(_ k: Int?, _ e: LogEvent, logged: Int) -> Bool {
            guard let k, !matched[k], e.ntpMs - out[k].ntpMs <= window else { return false }
            matched[k] = true
            out[k].loggedMs = logged
            out[k].loggedNtpMs = e.ntpMs
            out[k].verdict = abs(logged - out[k].expectedMs!) <= tolerance ? .ok : .wrongTarget
            return true
        }

        for e in dev.events {
            if e.playoutDelayMs >= 0 { state.playoutDelayMs = Int(e.playoutDelayMs) }
            switch e.body {
            case let .progress(p, st, _):
                state.progress(positionMs: p, ntpMs: e.ntpMs, state: st)
            case let .command(c):
                state.command(c)
            case let .schedule(s):
                state.scheduled(startNtpMs: s)
                // A schedule no rule asked for is reported under `starts`, not judged.
                guard roles[d].role(at: e.ntpMs) == .chorus else { break }
                _ = match(lastStartDecision, e, logged: s)
            case let .seek(to):
                state.seeked()
                guard roles[d].role(at: e.ntpMs) == .chorus, !match(lastSeekDecision, e, logged: to) else { break }
                out.append(Decision(device: dev.name, ntpMs: e.ntpMs, rule: "\(deviceRules.rawValue).\(state.started ? "drift" : "join")",
                                    action: .seek, expectedMs: nil, loggedMs: to, loggedNtpMs: e.ntpMs, verdict: .unexpected, source: e.source))
                matched.append(true)
            case let .recv(proto, from, message):
                guard roles[d].role(at: e.ntpMs) == .chorus else { break }
                // Only the lead's progress drives the rules; other singers' messages are not a reference.
                if let from, from < roles.count, let r = roles[from].role(at: e.ntpMs), r != .lead { break }
                // The forced set, else the message's vendor's (none for Volcano).
                guard let rs = forced ?? RuleSet(protocol: proto) else { break }
                deviceRules = rs
                if case let .stop(r) = message { state.stopRequested(ntpMs: r) }
                if let r = rs.rules.decide(message, state: state, nowNtpMs: e.ntpMs, thresholdMs: configuration.threshold(for: rs),
                                           twoSided: configuration.twoSided) {
                    decide(e, r)
                }
            case .role, .send, .record, .truth:
                break
            }
        }
        return out
    }
}
