import KTVCore

/// The report as data: ordered JSON, human text, and the drift timeline as CSV. Strings are
/// returned, never printed; the CLI decides where they go.
public enum ReplayOutput {
    static func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
    static func round4(_ v: Double) -> Double { (v * 10_000).rounded() / 10_000 }

    // MARK: JSON

    public static func json(_ r: ReplayReport) -> JSONValue {
        func opt(_ v: Int?) -> JSONValue { v.map(JSONValue.int) ?? .null }
        func optD(_ v: Double?, _ digits4: Bool = false) -> JSONValue { v.map { .double(digits4 ? round4($0) : round1($0)) } ?? .null }
        var top: [(String, JSONValue)] = [
            ("files", .array(r.files.map(JSONValue.string))),
            ("events", .int(r.events)),
            ("rules", .string(r.rules.rawValue)),
            ("summary", .object([
                ("decisions", .int(r.decisions.count)),
                ("ok", .int(r.count(.ok))),
                ("missing", .int(r.count(.missing))),
                ("unexpected", .int(r.count(.unexpected))),
                ("wrong_target", .int(r.count(.wrongTarget))),
                ("seek_storms", .int(r.storms.count)),
                ("message_gaps", .int(r.gaps.count)),
            ])),
            ("devices", .array(r.devices.map { d in
                .object([
                    ("device", .string(d.name)),
                    ("role", d.role.map { .string($0.rawValue) } ?? .null),
                    ("role_inferred", .bool(d.roleInferred)),
                    ("events", .int(d.events)),
                    ("progress_events", .int(d.progressEvents)),
                    ("callback_interval_ms", d.callbackInterval.map { s in
                        .object([("median", .double(round1(s.medianMs))), ("p95", .double(round1(s.p95Ms))), ("max", .double(round1(s.maxMs)))])
                    } ?? .null),
                    ("backward_jumps", .int(d.backwardJumps.count)),
                    ("stalls", .int(d.stalls.count)),
                    ("seeks", .int(d.seeks)),
                    ("backward_jump_list", .array(d.backwardJumps.map { .object([("ntp", .int($0.ntpMs)), ("from_ms", .int($0.fromMs)), ("to_ms", .int($0.toMs))]) })),
                    ("stall_list", .array(d.stalls.map { .object([("ntp", .int($0.ntpMs)), ("gap_ms", .int($0.gapMs))]) })),
                    ("state_changes", .array(d.stateChanges.map {
                        .object([("ntp", .int($0.ntpMs)), ("from", .string($0.from.rawValue)), ("to", .string($0.to.rawValue))])
                    })),
                ])
            })),
            ("pairs", .array(r.pairs.map { p in
                .object([
                    ("lead", .string(p.lead)),
                    ("follower", .string(p.follower)),
                    ("rules", .string(p.rules.rawValue)),
                    ("threshold_ms", .int(p.thresholdMs)),
                    ("two_sided", .bool(p.twoSided)),
                    ("samples", .int(p.samples.count)),
                    ("drift_ms", p.drift.map { s in
                        .object([("median", .double(round1(s.medianMs))), ("p95", .double(round1(s.p95AbsMs))), ("max_abs", .double(round1(s.maxAbsMs)))])
                    } ?? .null),
                    ("over_threshold_share", optD(p.drift?.overThresholdShare, true)),
                ])
            })),
            ("decisions", .array(r.decisions.map { d in
                var o: [(String, JSONValue)] = [
                    ("device", .string(d.device)), ("ntp", .int(d.ntpMs)), ("rule", .string(d.rule)),
                ]
                if d.action == .start {
                    o += [("expected_start_ntp", opt(d.expectedMs)), ("logged_start_ntp", opt(d.loggedMs))]
                } else {
                    o += [("expected_to_ms", opt(d.expectedMs)), ("logged_to_ms", opt(d.loggedMs))]
                }
                o += [
                    ("verdict", .string(d.verdict.rawValue)),
                    ("value_ms", opt(d.valueMs)),
                    ("threshold_ms", opt(d.thresholdMs)),
                    ("logged_ntp", opt(d.loggedNtpMs)),
                    ("residual_ms", optD(d.residualMs)),
                    ("source", .string(sourceText(r, d.source))),
                ]
                return .object(o)
            })),
            ("seek_storms", .array(r.storms.map {
                .object([("device", .string($0.device)), ("start_ntp", .int($0.startNtpMs)), ("end_ntp", .int($0.endNtpMs)), ("seeks", .int($0.seeks))])
            })),
            ("starts", .array(r.starts.map {
                .object([("device", .string($0.device)), ("scheduled_ntp", .int($0.scheduledNtpMs)),
                         ("started_ntp", opt($0.startedNtpMs)), ("error_ms", opt($0.errorMs))])
            })),
            ("audience", .array(r.audience.map { a in
                .object([
                    ("device", .string(a.device)),
                    ("samples", .int(a.samples)),
                    ("lag_ms", .object([("median", optD(a.lagMedianMs)), ("p95", optD(a.lagP95Ms))])),
                    ("wrong_line_share", optD(a.wrongLineShare, true)),
                    ("wrong_word_share", optD(a.wrongWordShare, true)),
                ])
            })),
            ("message_gaps", .array(r.gaps.map {
                .object([("device", .string($0.device)), ("from", $0.from.map(JSONValue.string) ?? .null),
                         ("start_ntp", .int($0.startNtpMs)), ("end_ntp", .int($0.endNtpMs)), ("gap_ms", .int($0.gapMs))])
            })),
            ("warnings", .array(r.notes.map { n in
                .object([("rule", .string(n.rule)), ("file", n.file.map(JSONValue.string) ?? .null),
                         ("line", n.line.map(JSONValue.int) ?? .null), ("message", .string(n.message))])
            })),
        ]
        if let t = r.truth { top.append(("truth_check", truthJSON(t))) }
        return .object(top)
    }

    static func truthJSON(_ t: TruthCheck) -> JSONValue {
        .object([
            ("scenario", t.scenario.map(JSONValue.string) ?? .null),
            ("decisions", .object([
                ("in_truth", .int(t.decisions.truth)),
                ("reproduced", .int(t.decisions.reproduced)),
                ("not_reproduced", .array(t.decisions.missingInReplay.map(JSONValue.string))),
                ("not_in_truth", .array(t.decisions.extraInReplay.map(JSONValue.string))),
            ])),
            ("pairs", .array(t.pairs.map { p in
                .object([
                    ("lead", .string(p.lead)), ("follower", .string(p.follower)),
                    ("truth_drift_ms", .object([("median", .double(round1(p.truth.medianMs))), ("p95", .double(round1(p.truth.p95AbsMs))), ("max_abs", .double(round1(p.truth.maxAbsMs)))])),
                    ("replay_drift_ms", p.replay.map { s in
                        .object([("median", .double(round1(s.medianMs))), ("p95", .double(round1(s.p95AbsMs))), ("max_abs", .double(round1(s.maxAbsMs)))])
                    } ?? .null),
                    ("max_difference_ms", p.maxDifferenceMs.map { .double((($0) * 1000).rounded() / 1000) } ?? .null),
                ])
            })),
            ("faults", .array(t.faults.map { f in
                .object([("device", .string(f.device)), ("fault", .string(f.fault)), ("ntp", .int(f.ntpMs)),
                         ("found_as", f.foundAs.map(JSONValue.string) ?? .null), ("time_error_ms", f.timeErrorMs.map(JSONValue.int) ?? .null)])
            })),
            ("audience", .array(t.audience.map { a in
                .object([("device", .string(a.device)), ("truth_lag_median_ms", .double(round1(a.truthLagMedianMs))),
                         ("replay_lag_median_ms", a.replayLagMedianMs.map { .double(round1($0)) } ?? .null)])
            })),
            ("starts", .array(t.starts.map { s in
                .object([("device", .string(s.device)), ("truth_error_ms", .double(round1(s.truthErrorMs))),
                         ("replay_error_ms", s.replayErrorMs.map(JSONValue.int) ?? .null)])
            })),
        ])
    }

    static func sourceText(_ r: ReplayReport, _ s: SourceRef) -> String {
        let f = Int(s.file)
        return (f >= 0 && f < r.files.count ? r.files[f] : "?") + ":\(s.line)"
    }

    // MARK: text

    /// Room time of an NTP stamp: `m:ss.mmm` from the first event.
    public static func clock(_ ntp: Int, origin: Int) -> String {
        let t = ntp - origin
        let v = abs(t)
        let ms = v % 1000, s = (v / 1000) % 60, m = v / 60_000
        let text = "\(m):\(s < 10 ? "0" : "")\(s).\(ms < 10 ? "00" : ms < 100 ? "0" : "")\(ms)"
        return t < 0 ? "-" + text : text
    }

    static func f1(_ v: Double) -> String {
        let r = round1(v)
        let neg = r < 0
        let a = abs(r)
        let whole = Int(a)
        let frac = Int(((a - Double(whole)) * 10).rounded())
        return (neg ? "-" : "") + "\(whole + (frac == 10 ? 1 : 0)).\(frac == 10 ? 0 : frac)"
    }

    static func pct(_ v: Double) -> String { f1(v * 100) + "%" }

    public static func text(_ r: ReplayReport) -> String {
        let o = r.originNtpMs
        var s = "replay: \(r.files.joined(separator: ", ")): \(r.events) events, \(r.devices.count) devices, rules \(r.rules.rawValue)\n"
        s += "\ndevices\n"
        for d in r.devices {
            s += "  \(d.name) (\(d.role?.rawValue ?? "unknown role")\(d.roleInferred ? ", inferred" : "")): \(d.events) events, \(d.progressEvents) progress"
            if let c = d.callbackInterval { s += ", callback interval median \(f1(c.medianMs)) / p95 \(f1(c.p95Ms)) / max \(f1(c.maxMs)) ms" }
            s += ", \(d.backwardJumps.count) backward jump(s), \(d.stalls.count) stall(s), \(d.stateChanges.count) state change(s), \(d.seeks) seek(s)\n"
            for j in d.backwardJumps.prefix(5) { s += "    backward jump at \(clock(j.ntpMs, origin: o)): \(j.fromMs) → \(j.toMs) ms\n" }
            for st in d.stalls.prefix(5) { s += "    stall at \(clock(st.ntpMs, origin: o)): no callback for \(st.gapMs) ms\n" }
            for c in d.stateChanges.prefix(10) { s += "    \(clock(c.ntpMs, origin: o)): \(c.from.rawValue) → \(c.to.rawValue)\n" }
            if !d.hasNTP { s += "    no ntp stamps: left out of the sync math\n" }
        }
        if !r.pairs.isEmpty {
            s += "\ndrift (follower − lead, at the follower's callbacks)\n"
            for p in r.pairs {
                s += "  \(p.lead) → \(p.follower) [\(p.rules.rawValue), threshold \(p.thresholdMs) ms\(p.twoSided ? "" : " one-sided")]: \(p.samples.count) samples"
                if let d = p.drift {
                    s += ", median \(f1(d.medianMs)) ms, p95 |drift| \(f1(d.p95AbsMs)) ms, max |drift| \(f1(d.maxAbsMs)) ms, over threshold \(pct(d.overThresholdShare))"
                }
                s += "\n"
            }
        }
        s += "\ndecisions: \(r.decisions.count) (ok \(r.count(.ok)), missing \(r.count(.missing)), unexpected \(r.count(.unexpected)), wrong_target \(r.count(.wrongTarget)))\n"
        var byRule: [(String, Int)] = []
        for d in r.decisions {
            if let k = byRule.firstIndex(where: { $0.0 == d.rule }) { byRule[k].1 += 1 } else { byRule.append((d.rule, 1)) }
        }
        if !byRule.isEmpty { s += "  by rule: " + byRule.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "\n" }
        for d in r.decisions where d.verdict != .ok {
            s += "  \(clock(d.ntpMs, origin: o)) \(d.device) \(d.rule): \(d.verdict.rawValue)"
            switch d.verdict {
            case .missing:
                s += d.action == .start ? " — rule says schedule a start at ntp \(d.expectedMs ?? 0), none logged" : " — rule says seek to \(d.expectedMs ?? 0) ms (value \(d.valueMs.map(String.init) ?? "-") ms), none logged within the window"
            case .wrongTarget:
                s += " — expected \(d.expectedMs ?? 0), logged \(d.loggedMs ?? 0) (off by \((d.loggedMs ?? 0) - (d.expectedMs ?? 0)) ms)"
            case .unexpected:
                s += " — seek to \(d.loggedMs ?? 0) ms that no rule asked for"
            case .ok: break
            }
            if let res = d.residualMs { s += "; drift after it \(f1(res)) ms" }
            s += " [\(sourceText(r, d.source))]\n"
        }
        let residuals = r.decisions.compactMap { $0.action == .seek && $0.verdict == .ok ? $0.residualMs.map(abs) : nil }.sorted()
        if let med = Stats.median(residuals), let mx = residuals.last {
            s += "  residual |drift| after ok seeks: median \(f1(med)) ms, max \(f1(mx)) ms\n"
        }
        if !r.storms.isEmpty {
            s += "\nseek storms: \(r.storms.count) (≥ 3 seeks each within 1 s: the seeks land short and repeat)\n"
            for st in r.storms.prefix(20) {
                s += "  \(clock(st.startNtpMs, origin: o))–\(clock(st.endNtpMs, origin: o)) \(st.device): \(st.seeks) seeks\n"
            }
            if r.storms.count > 20 { s += "  … \(r.storms.count - 20) more (see --format json)\n" }
        }
        if !r.starts.isEmpty {
            s += "\nscheduled starts\n"
            for st in r.starts {
                s += "  \(st.device): scheduled \(clock(st.scheduledNtpMs, origin: o)) (ntp \(st.scheduledNtpMs))"
                if let e = st.errorMs { s += ", started \(e >= 0 ? "+" : "")\(e) ms" } else { s += ", never started" }
                s += "\n"
            }
        }
        if !r.audience.isEmpty {
            s += "\naudience\n"
            for a in r.audience {
                s += "  \(a.device): \(a.samples) samples"
                if let m = a.lagMedianMs, let p = a.lagP95Ms { s += ", lag behind the lead median \(f1(m)) ms, p95 \(f1(p)) ms" }
                if let w = a.wrongLineShare { s += ", wrong line \(pct(w))" }
                if let w = a.wrongWordShare { s += ", wrong word \(pct(w))" }
                s += "\n"
            }
        }
        if !r.gaps.isEmpty {
            s += "\nmessage gaps (the sender kept playing)\n"
            for g in r.gaps.prefix(20) {
                s += "  \(clock(g.startNtpMs, origin: o)) \(g.device) heard nothing from \(g.from ?? "the lead") for \(g.gapMs) ms\n"
            }
        }
        if let t = r.truth {
            s += "\ntruth check (simulator\(t.scenario.map { " scenario \($0)" } ?? ""))\n"
            s += "  decisions reproduced: \(t.decisions.reproduced) of \(t.decisions.truth)"
            s += t.decisions.extraInReplay.isEmpty ? "\n" : ", \(t.decisions.extraInReplay.count) not in the truth\n"
            for m in t.decisions.missingInReplay.prefix(10) { s += "    not reproduced: \(m)\n" }
            for m in t.decisions.extraInReplay.prefix(10) { s += "    not in truth: \(m)\n" }
            for p in t.pairs {
                s += "  drift \(p.lead) → \(p.follower): truth median \(f1(p.truth.medianMs)) / p95 \(f1(p.truth.p95AbsMs)) / max \(f1(p.truth.maxAbsMs)) ms"
                if let d = p.maxDifferenceMs { s += ", replay within \(f1(d)) ms" } else { s += ", not in replay" }
                s += "\n"
            }
            for f in t.faults {
                s += "  fault \(f.fault) on \(f.device) at \(clock(f.ntpMs, origin: o)): "
                s += f.foundAs.map { "found as \($0) (\(f.timeErrorMs.map { "\($0 >= 0 ? "+" : "")\($0)" } ?? "?") ms)" } ?? "NOT FOUND"
                s += "\n"
            }
            for a in t.audience {
                s += "  audience \(a.device): truth lag median \(f1(a.truthLagMedianMs)) ms, replay \(a.replayLagMedianMs.map(f1) ?? "-") ms\n"
            }
        }
        if !r.notes.isEmpty { s += "\n\(r.notes.count) warning(s) about the log (on standard error)\n" }
        let bad = r.decisions.count - r.count(.ok)
        s += "\n" + (bad == 0 ? "verdict: every decision ok\n" : "verdict: \(bad) of \(r.decisions.count) decision(s) not ok\n")
        return s
    }

    // MARK: CSV

    /// One row per drift sample: `lead,follower,ntp_ms,time_s,follower_position_ms,lead_position_ms,drift_ms`.
    public static func csv(_ r: ReplayReport) -> String {
        var s = "lead,follower,ntp_ms,time_s,follower_position_ms,lead_position_ms,drift_ms\n"
        func field(_ v: String) -> String {
            v.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : v
        }
        for p in r.pairs {
            let lead = field(p.lead), follower = field(p.follower)
            for x in p.samples {
                let t = Double(x.ntpMs - r.originNtpMs) / 1000
                s += "\(lead),\(follower),\(x.ntpMs),\(fixed(t, 3)),\(x.followerPositionMs),\(fixed(x.leadPositionMs, 1)),\(fixed(x.driftMs, 1))\n"
            }
        }
        return s
    }

    /// A decimal with exactly `digits` places, without Foundation's formatter.
    static func fixed(_ v: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let n = Int((abs(v) * scale).rounded())
        let p = Int(scale)
        let whole = n / p, frac = n % p
        var f = String(frac)
        while f.count < digits { f = "0" + f }
        return (v < 0 && n != 0 ? "-" : "") + "\(whole)" + (digits > 0 ? "." + f : "")
    }
}

private extension String {
    func replacingOccurrences(of a: String, with b: String) -> String {
        split(separator: Character(a), omittingEmptySubsequences: false).joined(separator: b)
    }
}
