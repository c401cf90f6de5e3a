import KTVCore

/// Compares a report with the simulator's `truth` events (docs/progress-log.md, "Truth events"):
/// the decisions it made, the faults it injected, and its exact drift and lag statistics.
enum TruthChecker {
    /// A truth number as milliseconds; nil when it is not one (truth objects are free-form input).
    static func ms(_ v: JSONValue?) -> Int? {
        guard let d = v?.number, d.isFinite, abs(d) < 9e15 else { return nil }
        return Int(d.rounded())
    }

    static func check(_ truths: [TruthRecord], report: ReplayReport) -> TruthCheck {
        var scenario: String?
        var truthDecisions: [(device: String, ntp: Int, rule: String, expected: Int?, verdict: String)] = []
        var pairs: [TruthCheck.PairCheck] = []
        var faults: [TruthCheck.FaultCheck] = []
        var audience: [TruthCheck.AudienceCheck] = []
        var starts: [TruthCheck.StartCheck] = []

        for t in truths {
            let v = t.value
            switch v["type"]?.string {
            case "scenario"?:
                scenario = v["name"]?.string
            case "decision"?:
                guard let ntp = t.ntpMs, let rule = v["rule"]?.string, let verdict = v["verdict"]?.string else { continue }
                truthDecisions.append((t.device, ntp, rule, ms(v["expected_ms"]), verdict))
            case "fault"?:
                guard let ntp = t.ntpMs, let kind = v["fault"]?.string else { continue }
                let end = ms(v["end_ntp"]).map(NTPTime.unixMs) ?? ntp
                var found: String?
                var timeError: Int?
                switch kind {
                case "lost_messages":
                    if let g = report.gaps.first(where: { $0.device == t.device && $0.endNtpMs >= ntp && $0.startNtpMs <= end }) {
                        found = "message_gap"
                        timeError = g.startNtpMs - ntp
                    }
                default:
                    let wanted: Verdict = kind == "missed_seek" ? .missing : kind == "wrong_target" ? .wrongTarget : .unexpected
                    if let d = report.decisions.filter({ $0.device == t.device && $0.verdict == wanted })
                        .min(by: { abs($0.ntpMs - ntp) < abs($1.ntpMs - ntp) }), abs(d.ntpMs - ntp) <= 1000 {
                        found = wanted.rawValue
                        timeError = d.ntpMs - ntp
                    }
                }
                faults.append(.init(device: t.device, fault: kind, ntpMs: ntp, foundAs: found, timeErrorMs: timeError))
            case "drift"?:
                guard let lead = v["lead"]?.string, let follower = v["follower"]?.string,
                      let n = ms(v["samples"]), let med = v["median_ms"]?.number, let p95 = v["p95_abs_ms"]?.number,
                      let mx = v["max_abs_ms"]?.number else { continue }
                let share = v["over_threshold_share"]?.number ?? 0
                let truth = DriftStats(samples: Int(n), medianMs: med, p95AbsMs: p95, maxAbsMs: mx, overThresholdShare: share)
                let replay = report.pairs.first { $0.lead == lead && $0.follower == follower }?.drift
                let diff = replay.map { r in max(abs(r.medianMs - med), abs(r.p95AbsMs - p95), abs(r.maxAbsMs - mx)) }
                pairs.append(.init(lead: lead, follower: follower, truth: truth, replay: replay, maxDifferenceMs: diff))
            case "audience"?:
                guard let med = v["lag_median_ms"]?.number else { continue }
                audience.append(.init(device: t.device, truthLagMedianMs: med,
                                      replayLagMedianMs: report.audience.first { $0.device == t.device }?.lagMedianMs))
            case "start"?:
                guard let err = v["error_ms"]?.number, err.isFinite, let sched = ms(v["scheduled_ntp"]) else { continue }
                let s = NTPTime.unixMs(sched)
                let r = report.starts.first { $0.device == t.device && $0.scheduledNtpMs == s }
                starts.append(.init(device: t.device, truthErrorMs: err, replayErrorMs: r?.errorMs))
            default:
                continue
            }
        }

        func describe(_ device: String, _ ntp: Int, _ rule: String, _ verdict: String) -> String {
            "\(device) \(rule) at ntp \(ntp): \(verdict)"
        }
        var replayKeys: [String: Decision] = [:]
        for d in report.decisions { replayKeys["\(d.device)|\(d.ntpMs)|\(d.rule)"] = d }
        var reproduced = 0
        var missing: [String] = []
        var seen = Set<String>()
        for t in truthDecisions {
            let key = "\(t.device)|\(t.ntp)|\(t.rule)"
            seen.insert(key)
            if let d = replayKeys[key], d.verdict.rawValue == t.verdict,
               (t.expected == nil && d.expectedMs == nil) || (t.expected != nil && d.expectedMs != nil && abs(t.expected! - d.expectedMs!) <= 1) {
                reproduced += 1
            } else {
                let got = replayKeys[key].map { " (replay: \($0.verdict.rawValue), expected \($0.expectedMs.map(String.init) ?? "-"))" } ?? " (not in replay)"
                missing.append(describe(t.device, t.ntp, t.rule, t.verdict) + got)
            }
        }
        let extra = report.decisions.filter { !seen.contains("\($0.device)|\($0.ntpMs)|\($0.rule)") }
            .map { describe($0.device, $0.ntpMs, $0.rule, $0.verdict.rawValue) }
        return TruthCheck(scenario: scenario,
                          decisions: .init(truth: truthDecisions.count, reproduced: reproduced, missingInReplay: missing, extraInReplay: extra),
                          pairs: pairs, faults: faults, audience: audience, starts: starts)
    }
}
