import KTVCore

/// The simulator's `truth` events (docs/progress-log.md, "The simulator and truth events"): every
/// decision with its verdict, every fault as it takes effect, and at the end the exact drift, lag and
/// start statistics, measured on the devices' NTP clocks as replay measures them.
extension Simulation {
    /// Records a decision and its verdict; returns what to execute (nil for a missed one).
    /// Faults apply to drift decisions only, so a room always gets going.
    mutating func record(_ d: Int, _ tau: Int, _ rule: String, _ expected: Int, drift: Bool) -> Int? {
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

    /// A seek no rule asked for (the spurious-seek fault).
    mutating func recordUnprompted(_ d: Int, _ tau: Int) {
        truth(d, tau, Self.fields { w in w.raw("\"type\":\"fault\",\"fault\":\"spurious_seek\"") })
        let f = Self.fields { w in
            w.raw("\"type\":\"decision\",\"rule\":\""); w.raw(Array("\(s.rules.rawValue).drift".utf8))
            w.raw("\",\"expected_ms\":null,\"verdict\":\"unexpected\"")
        }
        truth(d, tau, f)
    }

    /// How far the position a listener received lags the lead's exact position.
    mutating func audienceTruth(_ d: Int, _ n: Int, _ message: SyncMessage) {
        let carried: Int
        switch message {
        case let .progress(rp):
            guard rp.state == .playing else { return }
            carried = rp.positionMs
        case let .display(p): carried = p
        case .start, .stop, .other: return
        }
        if let lp = leadPosition(ntp: n) { devices[d].lags.append(lp - Double(carried)) }
    }

    /// The lead's exact position when its own clock read `ntp`, nil when it was not playing.
    func leadPosition(ntp: Int) -> Double? {
        leadPosition(tau: Double(ntp - devices[leadIndex].base) - devices[leadIndex].cfg.clockErrorMs)
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
