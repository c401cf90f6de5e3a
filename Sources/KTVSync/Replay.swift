import KTVCore
import KTVLyrics

/// `ktv replay`: reads progress logs, recomputes what every device should have done, and reports
/// where the sync math or its execution went wrong. Pure: returns a report, prints nothing.
public enum Replay {
    /// `ktv replay`: checks the configuration, reads the lyric file (when given, for the audience
    /// measures; it replaces `configuration.lyrics`) and the logs (`-` is standard input), and analyzes.
    public static func run(paths: [String], lyricsPath: String? = nil, configuration: ReplayConfiguration) throws(SyncError) -> ReplayReport {
        var c = try configuration.validated()
        if let lyricsPath { c.lyrics = try audienceLyrics(path: lyricsPath) }
        let log = try LogReader.read(paths: paths)
        return analyze(log, configuration: c)
    }

    /// A lyric file with at least one timed line to compare the audience's display with.
    public static func audienceLyrics(path: String) throws(SyncError) -> Lyrics {
        let name = path == "-" ? "<stdin>" : path
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch {
            if case .tooLarge = error { throw .badLyrics(path: path, detail: error.reason) }
            throw .cannotRead(path: path, reason: error.reason)
        }
        let parsed: ParsedLyrics
        do { parsed = try LyricsReader.read(bytes, fileName: path == "-" ? nil : path, options: LyricsParseOptions()) } catch {
            throw .badLyrics(path: name, detail: "\(error)")
        }
        guard !parsed.lyrics.lines.isEmpty else { throw .badLyrics(path: name, detail: "the lyric file has no timed lines to compare the audience with") }
        return parsed.lyrics
    }

    public static func analyze(_ log: ReplayLog, configuration c: ReplayConfiguration) -> ReplayReport {
        var notes = log.notes
        let devices = log.devices
        let roles = roleTimelines(log, notes: &notes)

        // The rule set for devices whose messages do not say: the vendor most messages use.
        var protocolCounts: [SyncProtocol: Int] = [:]
        var perDeviceProtocols = [[SyncProtocol: Int]](repeating: [:], count: devices.count)
        for (d, dev) in devices.enumerated() {
            for e in dev.events {
                if case let .recv(p, _, m) = e.body, m != .other, RuleSet(protocol: p) != nil {
                    protocolCounts[p, default: 0] += 1
                    perDeviceProtocols[d][p, default: 0] += 1
                }
            }
        }
        func majority(_ counts: [SyncProtocol: Int]) -> RuleSet? {
            let best = SyncProtocol.allCases.compactMap { p in counts[p].map { (p, $0) } }.max { $0.1 < $1.1 }
            return best.flatMap { RuleSet(protocol: $0.0) }
        }
        let fallback = c.rules.forced ?? majority(protocolCounts) ?? .zego
        func rulesFor(device d: Int) -> RuleSet {
            c.rules.forced ?? majority(perDeviceProtocols[d]) ?? fallback
        }

        let timelines = devices.map { PositionTimeline($0.hasNTP ? $0.events : [], maxExtrapolationMs: c.maxExtrapolationMs) }
        let leads = LeadTimeline(roles: roles, usable: devices.map(\.hasNTP))
        func leadAt(_ t: Int) -> Int? { leads.lead(at: t) }

        // Drift of every chorus device against the lead, at the chorus device's playing callbacks.
        var pairIndex: [Int: Int] = [:]  // lead * count + follower → pairs index
        var pairs: [PairReport] = []
        var followerSamples = [[DriftSample]](repeating: [], count: devices.count)
        for (d, dev) in devices.enumerated() where dev.hasNTP {
            let rs = rulesFor(device: d)
            for e in dev.events {
                guard case let .progress(p, .playing, _) = e.body, roles[d].role(at: e.ntpMs) == .chorus,
                      let lead = leadAt(e.ntpMs), lead != d, let lp = timelines[lead].position(at: e.ntpMs) else { continue }
                let key = lead * devices.count + d
                let idx: Int
                if let k = pairIndex[key] { idx = k } else {
                    idx = pairs.count
                    pairIndex[key] = idx
                    pairs.append(PairReport(lead: devices[lead].name, follower: dev.name, rules: rs, thresholdMs: c.threshold(for: rs),
                                            twoSided: rs.rules.twoSided(requested: c.twoSided), drift: nil, samples: []))
                }
                let s = DriftSample(ntpMs: e.ntpMs, followerPositionMs: p, leadPositionMs: lp)
                pairs[idx].samples.append(s)
                followerSamples[d].append(s)
            }
        }
        for k in pairs.indices {
            pairs[k].drift = DriftStats(values: pairs[k].samples.map(\.driftMs), thresholdMs: Double(pairs[k].thresholdMs))
        }

        // Decisions, with the drift right after each logged seek.
        let engine = DecisionEngine(configuration: c, log: log, roles: roles, fallbackRules: fallback)
        var decisions: [Decision] = []
        for d in devices.indices where roles[d].changes.contains(where: { $0.role == .chorus }) || roles[d].inferred == .chorus {
            var ds = engine.decisions(device: d)
            let samples = followerSamples[d]
            for k in ds.indices where ds[k].action == .seek {
                guard let seekNtp = ds[k].loggedNtpMs else { continue }
                let lo = samples.partitionPoint { $0.ntpMs <= seekNtp }
                if lo < samples.count, samples[lo].ntpMs - seekNtp <= 1000 { ds[k].residualMs = samples[lo].driftMs }
            }
            decisions += ds
        }
        decisions = decisions.enumerated().sorted { a, b in
            a.element.ntpMs != b.element.ntpMs ? a.element.ntpMs < b.element.ntpMs : a.offset < b.offset
        }.map(\.element)

        let deviceReports = devices.indices.filter { devices[$0].eventCount > 0 }.map {
            deviceReport($0, devices[$0], roles[$0], configuration: c)
        }
        let storms = seekStorms(devices, roles, configuration: c)
        let starts = scheduledStarts(devices)
        let gaps = messageGaps(devices, roles, timelines, leadAt: leadAt)
        let audience = AudienceAnalysis.analyze(devices, roles: roles, timelines: timelines, leadAt: leadAt, configuration: c)

        let origin = devices.filter { $0.hasNTP && !$0.events.isEmpty }.map { $0.events[0].ntpMs }.min() ?? 0
        var report = ReplayReport(files: log.files, events: log.eventCount, rules: c.rules, devices: deviceReports, pairs: pairs,
                                  decisions: decisions, storms: storms, starts: starts, audience: audience, gaps: gaps,
                                  notes: notes, truth: nil, originNtpMs: origin)
        if !log.truths.isEmpty { report.truth = TruthChecker.check(log.truths, report: report) }
        return report
    }

    /// Each device's roles over time; a device with no `role` event gets one from what it did.
    static func roleTimelines(_ log: ReplayLog, notes: inout [LogNote]) -> [RoleTimeline] {
        var roles = [RoleTimeline](repeating: RoleTimeline(), count: log.devices.count)
        for (d, dev) in log.devices.enumerated() {
            for e in dev.events { if case let .role(r) = e.body { roles[d].changes.append((e.ntpMs, r)) } }
            roles[d].changes = roles[d].changes.enumerated().sorted { a, b in
                a.element.ntp != b.element.ntp ? a.element.ntp < b.element.ntp : a.offset < b.offset
            }.map(\.element)
            guard roles[d].changes.isEmpty, dev.eventCount > 0 else { continue }
            var receives = false, plays = false
            for e in dev.events {
                switch e.body {
                case .recv: receives = true
                case .progress, .seek, .command, .schedule: plays = true
                default: break
                }
            }
            let sends = dev.sendCount > 0
            let guess: DeviceRole? = sends && !receives ? .lead : receives && plays ? .chorus : receives ? .audience : plays ? .lead : nil
            roles[d].inferred = guess
            if let guess {
                notes.append(LogNote(rule: "role-inferred", message: "\(quoted(dev.name)) has no role event; taken as \(guess.rawValue) from what it logged"))
            }
        }
        return roles
    }

    static func deviceReport(_ d: Int, _ dev: DeviceLog, _ roles: RoleTimeline, configuration c: ReplayConfiguration) -> DeviceReport {
        var intervals: [(ntp: Int, gap: Int)] = []
        var jumps: [DeviceReport.Jump] = []
        var changes: [DeviceReport.StateChange] = []
        var progressCount = 0, seeks = 0
        var prev: (at: Int, ntp: Int, pos: Int, state: PlayerState)?
        var commandBetween = false, seekBetween = false
        for e in dev.events {
            switch e.body {
            case let .progress(p, state, _):
                progressCount += 1
                if let q = prev {
                    if q.state != state { changes.append(.init(ntpMs: e.ntpMs, from: q.state, to: state)) }
                    if q.state == .playing, state == .playing, !commandBetween {
                        intervals.append((q.ntp, e.atMs - q.at))
                        if !seekBetween, p < q.pos { jumps.append(.init(ntpMs: e.ntpMs, fromMs: q.pos, toMs: p)) }
                    }
                }
                prev = (e.atMs, e.ntpMs, p, state)
                commandBetween = false
                seekBetween = false
            case .command: commandBetween = true
            case .seek:
                seekBetween = true
                seeks += 1
            default: break
            }
        }
        var stats: IntervalStats?
        var stalls: [DeviceReport.Stall] = []
        if !intervals.isEmpty {
            let sorted = intervals.map { Double($0.gap) }.sorted()
            let median = Stats.median(sorted)!
            stats = IntervalStats(medianMs: median, p95Ms: Stats.percentile(sorted, 0.95)!, maxMs: sorted.last!)
            let limit = Double(c.stallFactor) * median
            stalls = intervals.filter { Double($0.gap) > limit }.map { .init(ntpMs: $0.ntp, gapMs: $0.gap) }
        }
        return DeviceReport(name: dev.name, role: roles.mainRole, roleInferred: roles.changes.isEmpty && roles.inferred != nil,
                            events: dev.eventCount, progressEvents: progressCount, callbackInterval: stats,
                            backwardJumps: jumps, stalls: stalls, stateChanges: changes, seeks: seeks, hasNTP: dev.hasNTP)
    }

    /// Runs of seeks of one chorus device each within `stormGapMs` of the previous one.
    static func seekStorms(_ devices: [DeviceLog], _ roles: [RoleTimeline], configuration c: ReplayConfiguration) -> [SeekStorm] {
        var storms: [SeekStorm] = []
        for (d, dev) in devices.enumerated() where dev.hasNTP {
            var run: [Int] = []
            func flush() {
                if run.count >= c.stormMinSeeks { storms.append(SeekStorm(device: dev.name, startNtpMs: run.first!, endNtpMs: run.last!, seeks: run.count)) }
                run = []
            }
            for e in dev.events {
                guard case .seek = e.body, roles[d].role(at: e.ntpMs) == .chorus else { continue }
                if let last = run.last, e.ntpMs - last > c.stormGapMs { flush() }
                run.append(e.ntpMs)
            }
            flush()
        }
        return storms.sorted { $0.startNtpMs < $1.startNtpMs }
    }

    /// For every `schedule`: when the player really started, taken back from its first playing
    /// callback after it (`ntp − (position − where it was seeked to since its last playing callback)`).
    /// One pass per device, so a log full of schedules stays linear.
    static func scheduledStarts(_ devices: [DeviceLog]) -> [StartReport] {
        var out: [StartReport] = []
        for dev in devices where dev.hasNTP {
            var open: Int?
            var seekSincePlaying: Int?
            for e in dev.events {
                switch e.body {
                case let .schedule(s):
                    out.append(StartReport(device: dev.name, scheduledNtpMs: s, startedNtpMs: nil))
                    open = out.count - 1
                case let .seek(to):
                    seekSincePlaying = to
                case let .progress(p, .playing, _):
                    if let k = open { out[k].startedNtpMs = e.ntpMs - (p - (seekSincePlaying ?? 0)) }
                    open = nil
                    seekSincePlaying = nil
                default:
                    break
                }
            }
        }
        return out.enumerated().sorted { a, b in
            a.element.scheduledNtpMs != b.element.scheduledNtpMs ? a.element.scheduledNtpMs < b.element.scheduledNtpMs
                : a.element.device != b.element.device ? a.element.device < b.element.device : a.offset < b.offset
        }.map(\.element)
    }

    /// Stretches with no message from a sender that kept playing. Gaps are measured on the
    /// sender's side where the payload says when it was sent (its NTP stamp, or the position it
    /// carries), so network jitter and the receiver's buffering do not look like losses: longer than
    /// 3 median intervals (and 250 ms), with at least two of the sender's callbacks in between.
    static func messageGaps(_ devices: [DeviceLog], _ roles: [RoleTimeline], _ timelines: [PositionTimeline], leadAt: (Int) -> Int?) -> [MessageGap] {
        var gaps: [MessageGap] = []
        // Series key: sender * 4 + kind (0 stamped progress, 1 display position, 2 start signals).
        for dev in devices where dev.hasNTP {
            var series: [Int: [(key: Int, recv: Int)]] = [:]
            for e in dev.events {
                guard case let .recv(_, from, m) = e.body else { continue }
                let sender = (from ?? -1) + 1
                switch m {
                case let .progress(rp): series[sender * 4, default: []].append((rp.ntpMs, e.ntpMs))
                case let .display(p): series[sender * 4 + 1, default: []].append((p, e.ntpMs))
                case .start: series[sender * 4 + 2, default: []].append((e.ntpMs, e.ntpMs))
                default: continue
                }
            }
            for (k, items) in series.sorted(by: { $0.key < $1.key }) where items.count >= 3 {
                let sender = k / 4 - 1
                let kind = k % 4
                let deltas = zip(items.dropFirst(), items).map { Double($0.key - $1.key) }.filter { $0 > 0 }.sorted()
                guard let median = Stats.median(deltas) else { continue }
                let limit = max(3 * median, 250)
                for (a, b) in zip(items, items.dropFirst()) where Double(b.key - a.key) > limit {
                    guard let src = sender >= 0 ? sender : leadAt(a.recv), src < timelines.count else { continue }
                    // Stamps are the sender's clock: check its callbacks there; otherwise around the receipts.
                    let inside = kind == 0 ? timelines[src].callbacks(between: a.key, and: b.key) : timelines[src].callbacks(between: a.recv, and: b.recv)
                    if inside >= 2 {
                        gaps.append(MessageGap(device: dev.name, from: sender >= 0 ? devices[sender].name : nil, startNtpMs: a.recv, endNtpMs: b.recv))
                    }
                }
            }
        }
        return gaps.sorted { $0.startNtpMs < $1.startNtpMs }
    }
}
