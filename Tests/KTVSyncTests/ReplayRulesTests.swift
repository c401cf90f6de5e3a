import Testing
import KTVCore
import KTVLyrics
@testable import KTVSync

/// Hand-built logs with every decision, verdict and number worked out by hand.
@Suite struct ReplayRulesTests {
    /// B's log: one decision of each verdict under the ZEGO drift rule.
    func zegoLog() -> LogBuilderForTests {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.command("B", 100, "play")
        b.progress("B", 1000, 1000)
        // md = 1000 − 950 − (1000 − 1000) = 50 > 30 → seek to 1000 + 50 = 1050.
        b.zegoSEI("B", 1010, p: 1000, t: 950)
        b.seek("B", 1010, to: 1049)                       // 1 ms off: ok
        b.zegoSEI("B", 1070, p: 1060, t: 1010)           // no callback since the seek: no decision
        b.progress("B", 1080, 1100)
        b.zegoSEI("B", 1100, p: 1100, t: 1070)           // md = 10 − 0 = 10: nothing
        b.progress("B", 1140, 1150)
        // md = 1140 − 1130 − (1150 − 1200) = 60 → seek to 1210.
        b.zegoSEI("B", 1150, p: 1200, t: 1130)
        b.seek("B", 1155, to: 1260)                       // 50 ms off: wrong_target
        b.progress("B", 1200, 1270)
        // md = 1200 − 1190 − (1270 − 1300) = 40 → seek to 1310; none follows in time.
        b.zegoSEI("B", 1210, p: 1300, t: 1190)
        b.progress("B", 1260, 1330)
        b.seek("B", 1600, to: 5000)                       // 390 ms after the decision: unexpected
        return b
    }

    @Test func zegoDriftVerdicts() throws {
        let r = try zegoLog().replay()
        #expect(r.decisions.map(\.rule) == ["zego.drift", "zego.drift", "zego.drift", "zego.drift"])
        #expect(r.decisions.map(\.ntpMs) == [1010, 1150, 1210, 1600])
        #expect(r.decisions.map(\.verdict) == [.ok, .wrongTarget, .missing, .unexpected])
        #expect(r.decisions.map(\.valueMs) == [50, 60, 40, nil])
        #expect(r.decisions.map(\.expectedMs) == [1050, 1210, 1310, nil])
        #expect(r.decisions.map(\.loggedMs) == [1049, 1260, nil, 5000])
        #expect(r.decisions[0].source.line == 5)
        #expect(!r.allOK)
    }

    @Test func windowAndToleranceChangeTheVerdicts() throws {
        // A 500 ms window gives the late seek to the missing decision: now wrong_target (5000 vs 1310).
        let wide = try zegoLog().replay { $0.windowMs = 500 }
        #expect(wide.decisions.map(\.verdict) == [.ok, .wrongTarget, .wrongTarget])
        #expect(wide.decisions[2].loggedMs == 5000)
        // A 50 ms tolerance accepts the seek that was 50 ms off.
        let loose = try zegoLog().replay { $0.toleranceMs = 50 }
        #expect(loose.decisions.map(\.verdict) == [.ok, .ok, .missing, .unexpected])
        // A 55 ms threshold drops the decisions at md 50 and 40: both seeks become unexpected.
        let high = try zegoLog().replay { $0.thresholdMs = 55 }
        #expect(high.decisions.map(\.rule) == ["zego.drift", "zego.drift", "zego.drift"])
        #expect(high.decisions.map(\.verdict) == [.unexpected, .wrongTarget, .unexpected])
        #expect(high.decisions.map(\.ntpMs) == [1010, 1150, 1600])
    }

    @Test func zegoOneSidedUnlessTwoSided() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.command("B", 100, "play")
        b.progress("B", 2000, 2100)
        // md = 2000 − 1990 − (2100 − 2050) = −40: B runs ahead.
        b.zegoSEI("B", 2010, p: 2050, t: 1990)
        #expect(try b.replay().decisions.isEmpty)
        let two = try b.replay { $0.twoSided = true }
        #expect(two.decisions.count == 1)
        #expect(two.decisions[0].valueMs == -40)
        #expect(two.decisions[0].expectedMs == 2060)
        #expect(two.decisions[0].verdict == .missing)
    }

    @Test func zegoStartAndMidJoin() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("C", "chorus")
        b.role("D", "chorus")
        b.role("E", "chorus")
        b.zegoStart("C", 1000, start: 3000)
        b.schedule("C", 1000, start: 3010)                // 10 ms off the start: ok
        b.zegoSEI("C", 2500, p: 0, t: 2400)               // waiting for its start: no mid-join
        b.command("C", 3010, "play")
        // D joins mid-song: p0 = t1 − t0 + p = 8070 − 8000 + 5000 = 5070.
        b.zegoSEI("D", 8070, p: 5000, t: 8000)
        b.seek("D", 8070, to: 5070)
        b.command("D", 8070, "play")
        b.zegoSEI("D", 8130, p: 5060, t: 8060)           // no callback since the seek: no decision
        // E hears a paused owner: nothing to join.
        b.zegoSEI("E", 9000, p: 6000, t: 8950, state: 2)
        // A start already in the past is not scheduled (mid-join handles it).
        b.zegoStart("E", 9100, start: 9000)
        let r = try b.replay()
        #expect(r.decisions.map(\.rule) == ["zego.start", "zego.join"])
        #expect(r.decisions.map(\.device) == ["C", "D"])
        #expect(r.decisions.map(\.expectedMs) == [3000, 5070])
        #expect(r.decisions.map(\.loggedMs) == [3010, 5070])
        #expect(r.decisions.map(\.verdict) == [.ok, .ok])
        #expect(r.decisions[0].action == .start)
    }

    @Test func agoraWithPlayoutDelayAndNTP1900Stamps() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead", at: 1_700_000_000_000)
        b.role("B", "chorus", at: 1_700_000_000_000, "\"playout_delay\":60")
        // time = 20,000 − 40 = 19,960, stamped …012,000 as NTP-1900; received at …012,090:
        // expect = 19,960 + 90 + 60 = 20,110; 1 ≤ 20,110 < 240,000 → join.
        b.agoraLrc("B", 1_700_000_012_090, time: 19_960, real: 20_000, stamp: 3_908_988_812_000)
        b.seek("B", 1_700_000_012_090, to: 20_110)
        b.command("B", 1_700_000_012_090, "play")
        b.progress("B", 1_700_000_012_150, 20_170)
        // local = 20,170 + (…180 − …150) = 20,200; expect = 20,000 + 80 + 60 = 20,140; diff −60.
        b.agoraLrc("B", 1_700_000_012_180, time: 20_000, real: 20_040, stamp: 3_908_988_812_100)
        b.seek("B", 1_700_000_012_181, to: 20_141)
        b.progress("B", 1_700_000_012_250, 20_210)
        // local = 20,210 + 30 = 20,240; expect = 20,110 + 80 + 60 = 20,250; diff 10: nothing.
        b.agoraLrc("B", 1_700_000_012_280, time: 20_110, real: 20_150, stamp: 3_908_988_812_200)
        let r = try b.replay()
        #expect(r.decisions.map(\.rule) == ["agora.join", "agora.drift"])
        #expect(r.decisions.map(\.expectedMs) == [20_110, 20_140])
        #expect(r.decisions.map(\.valueMs) == [nil, -60])
        #expect(r.decisions.map(\.verdict) == [.ok, .ok])
        #expect(r.decisions.map(\.ntpMs) == [1_700_000_012_090, 1_700_000_012_180])
    }

    @Test func tencentStartLateJoinDriftAndStop() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.role("C", "chorus")
        b.tencentStart("B", 7000, start: 10_000)          // 3 s ahead: schedule
        b.schedule("B", 7000, start: 10_000)
        b.tencentStart("B", 8000, start: 10_000)          // resent while waiting: nothing
        b.command("B", 10_000, "play")
        b.progress("B", 11_000, 1000)
        b.tencentStart("B", 11_005, start: 10_000)        // expected 1000 − 1000 = 0: nothing
        b.progress("B", 11_990, 1930)
        // expected at the callback 11,990 − 10,000 = 1,990; difference 60 > 50 → seek to 12,000 − 10,000.
        b.tencentStart("B", 12_000, start: 10_000)
        b.seek("B", 12_000, to: 2000)
        // C is 2,500 ms late: preload at 2,500 + 400 and start 400 ms later.
        b.tencentStart("C", 12_500, start: 10_000)
        b.seek("C", 12_500, to: 2900)
        b.schedule("C", 12_500, start: 12_900)
        b.command("C", 12_900, "play")
        b.progress("C", 13_000, 3000)
        // A stop at 20,000 voids any start signal from before it.
        b.add("B", 20_000, "recv", #""protocol":"tencent","from":"lead","message":{"cmd":"stopChorus","requestStopTS":20000,"music_id":"s"}"#)
        b.command("B", 20_000, "stop")
        b.tencentStart("B", 20_500, start: 15_000)
        let r = try b.replay()
        #expect(r.decisions.map(\.rule) == ["tencent.start", "tencent.drift", "tencent.join"])
        #expect(r.decisions.map(\.expectedMs) == [10_000, 2000, 2900])
        #expect(r.decisions.map(\.valueMs) == [nil, 60, nil])
        #expect(r.decisions.map(\.verdict) == [.ok, .ok, .ok])
        // Starts: B from 0 at 11,000 − 1,000; C from its preload point at 13,000 − (3,000 − 2,900).
        #expect(r.starts == [StartReport(device: "B", scheduledNtpMs: 10_000, startedNtpMs: 10_000),
                             StartReport(device: "C", scheduledNtpMs: 12_900, startedNtpMs: 12_900)])
    }

    /// The lead plays from ntp 900 at 1 ms per ms (position = ntp − 900) with a seek at 1,200.
    func driftLog() -> LogBuilderForTests {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.command("lead", 900, "play")
        b.progress("lead", 1000, 100)
        b.progress("lead", 1060, 160)
        b.progress("lead", 1120, 220)
        b.seek("lead", 1200, to: 5000)
        b.progress("lead", 1260, 5060)
        b.progress("lead", 2000, 1000)                    // after a backward jump (no seek): new segment
        b.progress("lead", 2100, 1090)                    // the lead runs slow here: 0.9 ms per ms
        b.progress("B", 1030, 118)                        // lead 130 (interpolated): −12
        b.progress("B", 1150, 262)                        // lead 220 + 30 (extrapolated): +12
        b.progress("B", 1190, 280)                        // lead 290 (extrapolated, before the seek): −10
        b.progress("B", 1230, 5036)                       // lead 5,060 − 30 (back from after the seek): +6
        b.progress("B", 1900, 900)                        // 640 ms past the last callback: no sample
        b.progress("B", 2050, 1040)                       // lead 1,045: −5
        b.progress("B", 2700, 1640)                       // 600 ms past: no sample
        return b
    }

    @Test func driftIsInterpolatedNeverAcrossASeekAndExtrapolatedAtMost500ms() throws {
        let r = try driftLog().replay()
        #expect(r.pairs.count == 1)
        let p = r.pairs[0]
        #expect(p.lead == "lead" && p.follower == "B")
        #expect(p.samples.map(\.ntpMs) == [1030, 1150, 1190, 1230, 2050])
        #expect(p.samples.map(\.driftMs) == [-12, 12, -10, 6, -5])
        // Sorted −12 −10 −5 6 12: median −5; |d| 5 6 10 12 12: p95 rank 5 → 12; 0 of 5 above 30.
        #expect(p.drift == DriftStats(samples: 5, medianMs: -5, p95AbsMs: 12, maxAbsMs: 12, overThresholdShare: 0))
        let tight = try driftLog().replay { $0.thresholdMs = 10 }
        #expect(tight.pairs[0].drift?.overThresholdShare == 0.4)  // |−12| and |12|
        let csv = ReplayOutput.csv(r).split(separator: "\n")
        #expect(csv.count == 6)
        #expect(csv[1] == "lead,B,1030,1.030,118,130.0,-12.0")
        // The lead's backward jump is reported.
        let lead = try #require(r.devices.first { $0.name == "lead" })
        #expect(lead.backwardJumps == [.init(ntpMs: 2000, fromMs: 5060, toMs: 1000)])
    }

    @Test func residualAfterSeeksAndSeekStorms() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.command("lead", 0, "play")
        for t in stride(from: 60, through: 3000, by: 60) { b.progress("lead", t, t) }
        b.command("B", 0, "play")
        // B is 45 ms late at its first callback. Each seek goes where the lead was at B's last
        // callback, but runs 50 ms after it, so it lands 50 ms short: the ZEGO seek storm.
        var pos = 955
        for t in stride(from: 1000, through: 1600, by: 200) {
            b.progress("B", t, pos)
            // md = t − (t − 10) − (pos − (t − 10)); target pos + md = t.
            b.zegoSEI("B", t + 50, p: t - 10, t: t - 10)
            b.seek("B", t + 50, to: t)
            pos = t + 150
        }
        let r = try b.replay()
        #expect(r.decisions.count == 4)
        #expect(r.decisions.allSatisfy { $0.verdict == .ok && $0.rule == "zego.drift" })
        #expect(r.decisions.map(\.valueMs) == [45, 50, 50, 50])
        #expect(r.decisions.map(\.expectedMs) == [1000, 1200, 1400, 1600])
        // The drift at B's next callback: (t + 150) − (t + 200) = −50; the last seek has none after it.
        #expect(r.decisions.map(\.residualMs) == [-50, -50, -50, nil])
        #expect(r.storms == [SeekStorm(device: "B", startNtpMs: 1050, endNtpMs: 1650, seeks: 4)])
        let fewer = try b.replay { $0.stormGapMs = 150 }
        #expect(fewer.storms.isEmpty)
    }

    @Test func deviceCallbackStatisticsStallsAndStates() throws {
        var b = LogBuilderForTests()
        b.role("B", "chorus")
        for (t, p) in [(0, 0), (60, 60), (120, 120), (190, 190), (250, 250), (600, 600)] { b.progress("B", t, p) }
        b.command("B", 650, "pause")
        b.progress("B", 650, 650, "paused")
        b.command("B", 2000, "resume")
        b.progress("B", 2060, 710)
        let r = try b.replay()
        let d = try #require(r.devices.first)
        // Intervals 60 60 70 60 350 (the pause is not one): median 60, p95 rank 5 → 350, max 350.
        #expect(d.callbackInterval == IntervalStats(medianMs: 60, p95Ms: 350, maxMs: 350))
        #expect(d.stalls == [.init(ntpMs: 250, gapMs: 350)])
        #expect(d.stateChanges == [.init(ntpMs: 650, from: .playing, to: .paused), .init(ntpMs: 2060, from: .paused, to: .playing)])
        #expect(d.backwardJumps.isEmpty)
        #expect(d.progressEvents == 8)
    }

    @Test func audienceLagAndWrongLineShare() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("aud", "audience")
        b.command("lead", 0, "play")
        for t in stride(from: 100, through: 12_000, by: 100) { b.progress("lead", t, t) }
        // Each message arrives 100 ms after the callback it carries.
        for t in stride(from: 100, through: 10_000, by: 100) { b.zegoSEI("aud", t + 100, p: t, t: t) }
        var lines: [LyricLine] = []
        for k in 0..<12 {
            let s = k * 1000
            lines.append(LyricLine(startMs: s, durationMs: 900, text: "a b",
                                   words: [LyricWord(startMs: s, durationMs: 400, text: "a"), LyricWord(startMs: s + 500, durationMs: 400, text: "b")]))
        }
        let r = try b.replay { $0.lyrics = Lyrics(format: .lrc, lines: lines) }
        let a = try #require(r.audience.first)
        #expect(a.samples == 100)
        #expect(a.lagMedianMs == 100)
        #expect(a.lagP95Ms == 100)
        // Grid 200…11,100 every 10 ms (1,091 points); the shown position is 100 ms behind, so the
        // line is wrong in the first 100 ms of lines 1…11 (110 points) and the word in the first
        // 100 ms of every half second from 500 (22 × 10 points).
        #expect(a.wrongLineShare == 110.0 / 1091.0)
        #expect(a.wrongWordShare == 220.0 / 1091.0)
    }

    @Test func messageGapsOnlyWhileTheSenderPlays() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.command("lead", 0, "play")
        for t in stride(from: 100, through: 6000, by: 100) { b.progress("lead", t, t) }
        b.command("lead", 6000, "pause")
        b.progress("lead", 6000, 6000, "paused")
        b.command("lead", 9000, "resume")
        for t in stride(from: 9100, through: 10_000, by: 100) { b.progress("lead", t, t - 3000) }
        b.command("B", 0, "play")
        // Messages stamped 100…2000, then none until 3,100 (lost), then to the pause, then after it.
        for t in stride(from: 100, through: 6000, by: 100) where t <= 2000 || t >= 3100 { b.zegoSEI("B", t + 40, p: t, t: t) }
        for t in stride(from: 9100, through: 10_000, by: 100) { b.zegoSEI("B", t + 40, p: t - 3000, t: t) }
        let r = try b.replay()
        #expect(r.gaps == [MessageGap(device: "B", from: "lead", startNtpMs: 2040, endNtpMs: 3140)])
    }

    @Test func rolesAreInferredWhenNotLogged() throws {
        var b = LogBuilderForTests()
        b.add("L", 100, "send", #""protocol":"zego","message":{}"#)
        b.progress("L", 100, 100)
        b.zegoSEI("S", 150, p: 100, t: 100)
        b.seek("S", 150, to: 150)
        b.zegoSEI("A", 700, p: 100, t: 100)
        let r = try b.replay()
        #expect(r.devices.map(\.role) == [.lead, .chorus, .audience])
        #expect(r.devices.allSatisfy { $0.roleInferred })
        #expect(r.notes.filter { $0.rule == "role-inferred" }.count == 3)
        // S was not playing: the message is a mid-join, p0 = 150 − 100 + 100 = 150.
        #expect(r.decisions.map(\.rule) == ["zego.join"])
        #expect(r.decisions.map(\.verdict) == [.ok])
    }

    @Test func forcedRulesApplyToOtherVendorsMessages() throws {
        // An Agora message judged by the ZEGO rule: p = realTime, t = its ntp.
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("B", "chorus")
        b.command("B", 0, "play")
        b.progress("B", 5000, 4950)
        // ZEGO: md = 5000 − 4990 − (4950 − 4990) = 50 → 5000. Agora: local 4950 + 10 = 4960,
        // expect = 4950 + 20 + 0 = 4970, diff 10 → nothing.
        b.agoraLrc("B", 5010, time: 4950, real: 4990, stamp: 4990)
        #expect(try b.replay().decisions.isEmpty)
        let z = try b.replay { $0.rules = .zego }
        #expect(z.decisions.map(\.rule) == ["zego.drift"])
        #expect(z.decisions.map(\.expectedMs) == [5000])
    }
}

/// Inputs built to be slow or to overflow: replay must answer quickly and never trap.
@Suite struct HostileInputTests {
    @Test func extremeNumbersAreErrorsNotTraps() {
        let e = readError(#"{"device":"B","at":9223372036854775807,"kind":"play"}"#).map { "\($0)" }
        #expect(e == "bad.jsonl:1: field `at`: 9223372036854775807 is out of range for milliseconds")
        let n = readError(#"{"device":"B","at":-9223372036854775808,"kind":"play"}"#).map { "\($0)" }
        #expect(n == "bad.jsonl:1: field `at`: -9223372036854775808 is out of range for milliseconds")
        // Overflowing the integer parse falls back to a double: still out of range.
        let big = readError(#"{"device":"B","at":99999999999999999999999,"kind":"play"}"#).map { "\($0)" }
        #expect(big == "bad.jsonl:1: field `at`: 1e+23 is out of range for milliseconds")
    }

    @Test func freeFormTruthWithWildNumbersIsIgnored() throws {
        var b = LogBuilderForTests()
        b.add("B", 10, "truth", #""truth":{"type":"decision","rule":"zego.drift","expected_ms":1e300,"verdict":"ok"}"#)
        b.add("B", 11, "truth", #""truth":{"type":"start","scheduled_ntp":-1e308,"error_ms":5}"#)
        b.add("B", 12, "truth", #""truth":{"type":"fault","fault":"lost_messages","end_ntp":"soon"}"#)
        let r = try b.replay()
        let t = try #require(r.truth)
        #expect(t.decisions.truth == 1)
        #expect(t.decisions.reproduced == 0)
        #expect(t.starts.isEmpty)
        #expect(t.faults.map(\.foundAs) == [nil])
    }

    @Test func farApartStampsWithLyricsDoNotHang() throws {
        var b = LogBuilderForTests()
        b.role("lead", "lead")
        b.role("aud", "audience")
        b.command("lead", 0, "play")
        b.progress("lead", 100, 100)
        // Two messages 10^15 ms apart: the grid must not walk the time between them.
        b.zegoSEI("aud", 150, p: 100, t: 100)
        b.zegoSEI("aud", 1_000_000_000_000_150, p: 100, t: 100)
        let start = ContinuousClock.now
        let r = try b.replay { $0.lyrics = Lyrics(format: .lrc, lines: [LyricLine(startMs: 0, durationMs: 10, text: "x")]) }
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(r.audience.first?.samples == 1)
        _ = DriftSVG.render(r)
    }

    @Test func manyDevicesAndManyLeads() throws {
        // 20,000 devices, every one a lead: the lead lookup and the device table stay fast.
        var b = LogBuilderForTests()
        for k in 0..<20_000 {
            b.role("d\(k)", "lead", at: k)
            b.progress("d\(k)", k + 1, k)
        }
        b.role("s", "chorus", at: 0)
        b.progress("s", 30_000, 500)
        let start = ContinuousClock.now
        let r = try b.replay()
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(r.devices.count == 20_001)
        // At 30,000 the first device (d0) is the lead; its single callback is too far to extrapolate.
        #expect(r.pairs.isEmpty)
    }

    @Test func manySchedulesStayLinear() throws {
        var b = LogBuilderForTests()
        b.role("B", "chorus")
        for k in 0..<50_000 { b.schedule("B", k, start: k + 10) }
        b.progress("B", 60_000, 100)
        let start = ContinuousClock.now
        let r = try b.replay()
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(r.starts.count == 50_000)
        // Only the last schedule is followed by a callback: started at 60,000 − 100.
        #expect(r.starts.last == StartReport(device: "B", scheduledNtpMs: 50_009, startedNtpMs: 59_900))
        #expect(r.starts.compactMap(\.startedNtpMs).count == 1)
    }
}
