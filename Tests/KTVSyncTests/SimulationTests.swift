import Testing
import KTVCore
@testable import KTVSync

/// Simulated rooms with known truth: replay must reproduce every verdict, the drift statistics
/// within 2 ms, and find each injected fault at the time it happened.
@Suite struct SimulationTests {
    func replay(_ scenario: Scenario, _ configure: (inout ReplayConfiguration) -> Void = { _ in }) throws -> (ReplayLog, ReplayReport) {
        let room = try RoomSimulator.run(scenario)
        let log = try LogReader.read(bytes: room.log, name: "\(scenario.name).jsonl")
        #expect(log.eventCount == room.events)
        var c = ReplayConfiguration()
        configure(&c)
        return (log, Replay.analyze(log, configuration: c))
    }

    func checkAgainstTruth(_ r: ReplayReport, rules: RuleSet) throws {
        let t = try #require(r.truth)
        #expect(t.decisions.truth == r.decisions.count)
        #expect(t.decisions.reproduced == t.decisions.truth, "\(t.decisions.missingInReplay.prefix(5))")
        #expect(t.decisions.extraInReplay.isEmpty, "\(t.decisions.extraInReplay.prefix(5))")
        #expect(t.pairs.count == 2)
        for p in t.pairs {
            let diff = try #require(p.maxDifferenceMs)
            #expect(diff <= 2, "\(p.lead) → \(p.follower): replay \(String(describing: p.replay)) vs truth \(p.truth)")
            #expect(p.replay?.samples == p.truth.samples)
            // Samples within a millisecond of the threshold may land on either side of it.
            #expect(abs((p.replay?.overThresholdShare ?? -1) - p.truth.overThresholdShare) <= 0.02)
        }
        #expect(t.audience.count == 1)
        for a in t.audience { #expect(abs((a.replayLagMedianMs ?? .infinity) - a.truthLagMedianMs) <= 2) }
        for s in t.starts { #expect(abs(Double(s.replayErrorMs ?? 1000) - s.truthErrorMs) <= 2) }
        // Each rule set's own decisions occur.
        let rulesSeen = Set(r.decisions.map(\.rule))
        switch rules {
        case .zego: #expect(rulesSeen.isSuperset(of: ["zego.start", "zego.join", "zego.drift"]))
        case .agora: #expect(rulesSeen.isSuperset(of: ["agora.join", "agora.drift"]))
        case .tencent: #expect(rulesSeen.isSuperset(of: ["tencent.start", "tencent.join", "tencent.drift"]))
        }
    }

    @Test(arguments: ["zego", "agora", "tencent"])
    func cleanRoomsHaveOnlyOKVerdicts(_ name: String) throws {
        let s = Scenario.builtIn(name)!
        let (_, r) = try replay(s)
        #expect(r.decisions.count >= 4)
        #expect(r.allOK, "\(r.decisions.filter { $0.verdict != .ok }.prefix(3))")
        #expect(r.gaps.isEmpty)
        #expect(r.notes.isEmpty, "\(r.notes.map(\.text))")
        try checkAgainstTruth(r, rules: s.rules)
        // Agora has no future start: every singer joins from the lead's messages. ZEGO and Tencent
        // start the singers present together; only the late one joins.
        #expect(r.decisions.filter { $0.rule.hasSuffix(".join") }.map(\.device) == (name == "agora" ? ["B", "C"] : ["C"]))
        for d in r.decisions where d.action == .seek {
            #expect(abs(d.loggedMs! - d.expectedMs!) <= 0)
        }
    }

    @Test(arguments: ["zego-faults", "agora-faults", "tencent-faults"])
    func injectedFaultsAreFoundAtTheRightTime(_ name: String) throws {
        let s = Scenario.builtIn(name)!
        let (log, r) = try replay(s)
        #expect(r.count(.missing) == 1)
        #expect(r.count(.wrongTarget) == 1)
        #expect(r.count(.unexpected) == 1)
        #expect(r.count(.ok) == r.decisions.count - 3)
        try checkAgainstTruth(r, rules: s.rules)
        let t = try #require(r.truth)
        #expect(t.faults.map(\.fault).sorted() == ["lost_messages", "missed_seek", "spurious_seek", "wrong_target"])
        for f in t.faults {
            switch f.fault {
            case "lost_messages":
                // Found as a gap that starts at the last message before the loss: at most one
                // message interval early (ZEGO 60 ms, Agora 100 ms, Tencent's 1 s resend).
                #expect(f.foundAs == "message_gap")
                let interval = s.rules == .tencent ? 1000 : s.rules == .agora ? 100 : 60
                #expect((-interval - 20 ... 0).contains(f.timeErrorMs ?? 99_999), "\(f)")
            default:
                #expect(f.foundAs != nil, "\(f)")
                #expect(f.timeErrorMs == 0)
            }
            // Each fault time is the one the scenario asked for (or the first decision after it).
            let spec = s.faults.first { $0.kind.rawValue == f.fault }!
            let device = log.devices.first { $0.name == f.device }!
            let faultTau = f.ntpMs - s.startNtpMs
            #expect(faultTau >= spec.atMs - 20 && faultTau <= spec.atMs + 1500, "\(f.fault) at \(faultTau) for \(spec.atMs)")
            _ = device
        }
        // The faulty verdicts are the faults' own decisions.
        let bad = r.decisions.filter { $0.verdict != .ok }
        #expect(Set(bad.map(\.ntpMs)) == Set(t.faults.filter { $0.fault != "lost_messages" }.map(\.ntpMs)))
    }

    /// Other seeds (network jitter, callback timing) change every number but not the outcome.
    @Test(arguments: ["zego-faults", "agora-faults", "tencent-faults"], [2, 3, 4] as [UInt64])
    func otherSeeds(_ name: String, _ seed: UInt64) throws {
        var s = Scenario.builtIn(name)!
        s.seed = seed
        let (_, r) = try replay(s)
        try checkAgainstTruth(r, rules: s.rules)
        #expect([r.count(.missing), r.count(.wrongTarget), r.count(.unexpected)] == [1, 1, 1])
        #expect(r.truth?.faults.allSatisfy { $0.foundAs != nil } == true)
    }

    @Test func clockErrorsShiftTheAudibleDriftByTheirDifference() throws {
        // Replay sees the devices' NTP clocks; what is heard differs by the clock errors' difference.
        let s = Scenario.builtIn("zego")!
        let room = try RoomSimulator.run(s)
        let log = try LogReader.read(bytes: room.log)
        let truth = try #require(log.truths.first { $0.value["type"]?.string == "drift" && $0.value["follower"]?.string == "B" })
        let ntpMedian = try #require(truth.value["median_ms"]?.number)
        let audible = try #require(truth.value["audible_median_ms"]?.number)
        // B's clock reads 6.3 ms ahead, the lead's 0.4 ms: heard 5.9 ms later than replay measures.
        #expect(abs((audible - ntpMedian) - 5.9) < 0.6)
    }

    @Test func sameSeedSameLogOtherSeedOtherLog() throws {
        var s = Scenario.builtIn("agora")!
        s.roomMs = 20_000
        let a = try RoomSimulator.run(s).log
        let b = try RoomSimulator.run(s).log
        #expect(a == b)
        s.seed = 777
        #expect(try RoomSimulator.run(s).log != a)
    }

    @Test func twoSidedReplayOfAOneSidedRoomShowsTheUncorrectedLead() throws {
        // A singer whose player runs fast: ZEGO's one-sided rule never pulls it back.
        var s = Scenario.builtIn("zego")!
        s.devices[1].rate = 1.001
        s.devices[1].headphoneLags = []
        s.faults = []
        let (_, oneSided) = try replay(s)
        #expect(oneSided.allOK)
        let b = try #require(oneSided.pairs.first { $0.follower == "B" }?.drift)
        #expect(b.maxAbsMs > 40)  // 1 ms/s for a minute and more
        let (_, twoSided) = try replay(s) { $0.twoSided = true }
        let missing = twoSided.decisions.filter { $0.verdict == .missing && $0.device == "B" }
        #expect(!missing.isEmpty)
        #expect(missing.allSatisfy { ($0.valueMs ?? 0) < -30 })
    }

    @Test func aThresholdTriedOnAGivenRoom() throws {
        // Devices seek at 30 ms; replaying at 60 ms calls their seeks below 60 unexpected.
        let (_, r) = try replay(Scenario.builtIn("zego")!) { $0.thresholdMs = 60 }
        #expect(r.count(.unexpected) > 0)
        #expect(r.pairs.allSatisfy { $0.thresholdMs == 60 })
    }

    @Test func scenarioFiles() throws {
        let text = """
        {"base": "tencent", "name": "mine", "seed": 5, "room_ms": 20000, "threshold_ms": 60,
         "devices": [
           {"name": "L", "role": "lead", "clock_error_ms": 2.5},
           {"name": "S", "role": "chorus", "rate": 0.999, "net_delay_ms": 80, "headphone_lags": [{"at_ms": 9000, "lag_ms": 120}]},
           {"name": "S2", "role": "chorus", "join_ms": 8000}
         ],
         "faults": [{"kind": "missed_seek", "device": "S", "at_ms": 9000}]}
        """
        let s = try Scenario.parse(Array(text.utf8), fileName: "mine.json")
        #expect(s.name == "mine")
        #expect(s.rules == .tencent)
        #expect(s.seed == 5)
        #expect(s.roomMs == 20_000)
        #expect(s.thresholdUsedMs == 60)
        #expect(s.devices.map(\.name) == ["L", "S", "S2"])
        #expect(s.devices[0].clockErrorMs == 2.5)
        #expect(s.devices[1].callbackMs == 100)
        #expect(s.devices[1].netDelayMs == 80)
        #expect(s.devices[1].headphoneLags == [Scenario.Lag(atMs: 9000, lagMs: 120)])
        #expect(s.faults.map(\.kind) == [.missedSeek])
        let (_, r) = try replay(s) { $0.thresholdMs = 60 }
        #expect(r.truth?.decisions.reproduced == r.truth?.decisions.truth)
        #expect(r.count(.missing) == 1)

        func error(_ t: String) -> String {
            do { _ = try Scenario.parse(Array(t.utf8), fileName: "x.json"); return "no error" } catch { return "\(error)" }
        }
        #expect(error("{") == "scenario: x.json: not JSON: at byte 1: expected a member name in double quotes, found the end of the text")
        #expect(error(#"{"rules": "sony"}"#) == "scenario: x.json: `rules` must be zego, agora or tencent")
        #expect(error(#"{"base": "zego", "room_ms": -4}"#) == "scenario: x.json: `room_ms` must be a whole number in 1000…86400000")
        #expect(error(#"{"base": "zego", "colour": 1}"#) == "scenario: x.json: `colour` is not a scenario field (see docs/progress-log.md)")
        #expect(error(#"{"base": "zego", "devices": [{"name": "a", "role": "chorus"}]}"#) == "scenario: x.json: a room needs exactly one device with role `lead` (found 0)")
        #expect(error(#"{"base": "zego", "faults": [{"kind": "missed_seek", "device": "lead", "at_ms": 5}]}"#) == "scenario: x.json: faults apply to chorus devices; `lead` is not one")
        #expect(error(#"{"base": "zego", "devices": [{"name": "a", "role": "lead", "rate": 7}]}"#) == "scenario: x.json: `devices.rate` must be a number in 0.5…2.0")
    }
}
