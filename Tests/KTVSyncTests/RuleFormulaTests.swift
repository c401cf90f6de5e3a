import Testing
@testable import KTVSync

/// Every formula of docs/progress-log.md with numbers worked out by hand.
@Suite struct RuleFormulaTests {
    @Test func zegoMidJoin() {
        // The owner was at 61,000 ms when its clock read …012,000; we receive it at …012,085:
        // p0 = t1 − t0 + p = 85 + 61,000.
        #expect(ZegoRules.midJoinTargetMs(remotePositionMs: 61_000, remoteNtpMs: 1_700_000_012_000, localNtpMs: 1_700_000_012_085) == 61_085)
    }

    @Test func zegoDriftAndTarget() {
        // Remote p = 10,000 at t = 5,000; local p′ = 10,020 at t′ = 5,070.
        // md = t′ − t − (p′ − p) = 70 − 20 = 50 > 30: seek to p′ + md = 10,070.
        let md = ZegoRules.driftMs(localPositionMs: 10_020, localNtpMs: 5_070, remotePositionMs: 10_000, remoteNtpMs: 5_000)
        #expect(md == 50)
        #expect(ZegoRules.driftTargetMs(localPositionMs: 10_020, driftMs: md) == 10_070)
        #expect(ZegoRules.shouldSeek(driftMs: 50, thresholdMs: 30, twoSided: false))
        #expect(!ZegoRules.shouldSeek(driftMs: 30, thresholdMs: 30, twoSided: false))
        // Local ahead: p′ = 10,100 at t′ = 5,060 → md = 60 − 100 = −40; one-sided ignores it.
        let ahead = ZegoRules.driftMs(localPositionMs: 10_100, localNtpMs: 5_060, remotePositionMs: 10_000, remoteNtpMs: 5_000)
        #expect(ahead == -40)
        #expect(!ZegoRules.shouldSeek(driftMs: ahead, thresholdMs: 30, twoSided: false))
        #expect(ZegoRules.shouldSeek(driftMs: ahead, thresholdMs: 30, twoSided: true))
        #expect(!ZegoRules.shouldSeek(driftMs: -30, thresholdMs: 30, twoSided: true))
    }

    @Test func agoraExpectedAndLocalPosition() {
        // time = realTime − sender delay = 20,000 − 40 = 19,960; stamped ntp 3,908,988,812,000 (NTP-1900);
        // received at local NTP (Unix) 1,700,000,012,090, local playout delay 60.
        let remote = NTPTime.unixMs(3_908_988_812_000)
        #expect(remote == 1_700_000_012_000)
        let expect = AgoraRules.expectedPositionMs(timeMs: 19_960, remoteNtpMs: remote, localNtpMs: 1_700_000_012_090, localPlayoutDelayMs: 60)
        #expect(expect == 19_960 + 90 + 60)  // 20,110
        // Last local callback: 19,990 at …012,030 → local now = 19,990 + 60 = 20,050; diff 60 > 50.
        let local = AgoraRules.localPositionMs(lastPositionMs: 19_990, lastNtpMs: 1_700_000_012_030, nowNtpMs: 1_700_000_012_090)
        #expect(local == 20_050)
        #expect(AgoraRules.shouldSeek(expectedMs: expect, localMs: local, thresholdMs: 50, durationMs: 240_000))
        #expect(!AgoraRules.shouldSeek(expectedMs: 20_100, localMs: 20_050, thresholdMs: 50, durationMs: 240_000))
        #expect(AgoraRules.shouldSeek(expectedMs: 19_990, localMs: 20_050, thresholdMs: 50, durationMs: nil))
        // Never past the end of the song.
        #expect(!AgoraRules.shouldSeek(expectedMs: 240_000, localMs: 239_000, thresholdMs: 50, durationMs: 240_000))
        #expect(AgoraRules.joinAllowed(expectedMs: 1, durationMs: 240_000))
        #expect(!AgoraRules.joinAllowed(expectedMs: 0, durationMs: 240_000))
        #expect(!AgoraRules.joinAllowed(expectedMs: 240_000, durationMs: 240_000))
    }

    @Test func ntp1900EpochConstant() {
        #expect(NTPTime.epoch1900OffsetMs == 2_208_988_800_000)
        // 2023-11-14T22:13:20Z = 1,700,000,000,000 Unix ms = 3,908,988,800,000 NTP-1900 ms.
        #expect(NTPTime.unixMs(3_908_988_800_000) == 1_700_000_000_000)
        #expect(NTPTime.unixMs(1_700_000_000_000) == 1_700_000_000_000)
        // Small (relative) stamps are left alone.
        #expect(NTPTime.unixMs(12_345) == 12_345)
        #expect(NTPTime.is1900(NTPTime.epoch1900ThresholdMs))
        #expect(!NTPTime.is1900(NTPTime.epoch1900ThresholdMs - 1))
    }

    @Test func tencentStartPlans() {
        // Start 3,000 ms ahead: wait for it.
        #expect(TencentRules.plan(startNtpMs: 10_000, nowNtpMs: 7_000, durationMs: 240_000) == .scheduled(startNtpMs: 10_000))
        // 2,500 ms late: preload at 2,500 + 400 = 2,900 and start 400 ms from now.
        #expect(TencentRules.plan(startNtpMs: 10_000, nowNtpMs: 12_500, durationMs: 240_000) == .lateJoin(seekToMs: 2_900, startNtpMs: 12_900))
        // Exactly at the start counts as late by 0.
        #expect(TencentRules.plan(startNtpMs: 10_000, nowNtpMs: 10_000, durationMs: nil) == .lateJoin(seekToMs: 400, startNtpMs: 10_400))
        // The song is over.
        #expect(TencentRules.plan(startNtpMs: 10_000, nowNtpMs: 250_000, durationMs: 240_000) == .ignored)
    }

    @Test func tencentExpectedProgress() {
        // Started at …010,000; local callback 61,940 at …072,000 → expected 62,000, difference +60.
        #expect(TencentRules.expectedPositionMs(ntpMs: 72_000, startNtpMs: 10_000) == 62_000)
        let diff = TencentRules.differenceMs(localPositionMs: 61_940, localNtpMs: 72_000, startNtpMs: 10_000)
        #expect(diff == 60)
        #expect(TencentRules.shouldSeek(differenceMs: diff, thresholdMs: 50))
        #expect(!TencentRules.shouldSeek(differenceMs: diff, thresholdMs: 60))
        // Before the start nothing is checked.
        #expect(TencentRules.differenceMs(localPositionMs: 0, localNtpMs: 9_000, startNtpMs: 10_000) == nil)
        #expect(!TencentRules.shouldSeek(differenceMs: nil, thresholdMs: 50))
    }

    @Test func defaultThresholds() {
        #expect(RuleSet.zego.defaultThresholdMs == 30)
        #expect(RuleSet.agora.defaultThresholdMs == 50)
        #expect(RuleSet.tencent.defaultThresholdMs == 50)
        #expect(RuleSet(protocol: .volcano) == nil)
    }

    @Test func driftStatistics() {
        // Median and nearest-rank p95 as KTVCore's Stats defines them (Tests/KTVCoreTests/StatsTests).
        let d = DriftStats(values: [-40, 10, 20, -5, 35], thresholdMs: 30)!
        #expect(d.medianMs == 10)
        #expect(d.p95AbsMs == 40)  // |d| sorted 5 10 20 35 40, rank ceil(4.75) = 5
        #expect(d.maxAbsMs == 40)
        #expect(d.overThresholdShare == 0.4)
        #expect(DriftStats(values: [], thresholdMs: 30) == nil)
    }
}
