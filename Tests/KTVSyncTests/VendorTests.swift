import Testing
import KTVCore
@testable import KTVSync

/// The vendor types: one codec serves the simulator (encode) and the reader (decode), the choice of
/// vendor is made in one place, and the configuration's ranges are declared once.
@Suite struct VendorTests {
    /// A recv line carrying `json` as its payload, read back.
    func read(_ p: SyncProtocol, _ json: [UInt8]) throws -> SyncMessage? {
        let line = #"{"device":"B","at":1,"ntp":1,"kind":"recv","protocol":""# + p.rawValue + #"","message":"# + String(decoding: json, as: UTF8.self) + "}"
        guard case let .recv(_, _, m) = try LogReader.read(bytes: Array(line.utf8)).devices[0].events[0].body else { return nil }
        return m
    }

    @Test func everyPayloadReadsBackAsWritten() throws {
        let t = 1_700_000_012_000
        let messages: [(SyncProtocol, SyncMessage)] = [
            (.zego, .progress(RemoteProgress(positionMs: 61_000, ntpMs: t, state: .playing, durationMs: 240_000))),
            (.zego, .progress(RemoteProgress(positionMs: 61_000, ntpMs: t, state: .paused, durationMs: nil))),
            (.zego, .progress(RemoteProgress(positionMs: 61_000, ntpMs: t, state: nil, durationMs: nil))),
            (.zego, .start(startNtpMs: t + 2_000, durationMs: nil)),
            (.agora, .progress(RemoteProgress(positionMs: 20_000, timeMs: 19_960, ntpMs: t, state: .playing, durationMs: 240_000))),
            (.agora, .progress(RemoteProgress(positionMs: 20_000, timeMs: 19_960, ntpMs: t, state: .stopped, durationMs: nil))),
            (.tencent, .start(startNtpMs: t + 3_000, durationMs: 240_000)),
            (.tencent, .stop(requestNtpMs: t + 9_000)),
            (.tencent, .display(positionMs: 20_500)),
            (.volcano, .display(positionMs: 20_600)),
        ]
        for (p, m) in messages {
            for ntp1900 in [false, true] {
                var w = LineWriter()
                p.codec.encode(m, ntp1900: ntp1900, into: &w)
                #expect(try read(p, w.bytes) == m, "\(p) \(m) ntp1900 \(ntp1900)")
            }
        }
    }

    @Test func payloadsAreTheVendorsBytes() {
        func text(_ codec: any PayloadCodec, _ m: SyncMessage, ntp1900: Bool = false) -> String {
            var w = LineWriter()
            codec.encode(m, ntp1900: ntp1900, into: &w)
            return String(decoding: w.bytes, as: UTF8.self)
        }
        let rp = RemoteProgress(positionMs: 20_000, timeMs: 19_960, ntpMs: 1_700_000_012_000, state: .playing, durationMs: 240_000)
        #expect(text(ZegoRules(), .progress(rp)) == #"{"kTotalKey":240000,"kState":1,"kRole":1,"kProgressKey":20000,"kPointTimeKey":1700000012000,"kResourceID":"song-1"}"#)
        #expect(text(ZegoRules(), .start(startNtpMs: 5_000, durationMs: nil)) == #"{"message":"Mediaplayer-StartInFuture","kStartTime":5000,"kBehaviorType":0,"kResourceID":"song-1"}"#)
        // getNtpTimeInMs() counts from 1900: 1,700,000,012,000 + 2,208,988,800,000.
        #expect(text(AgoraRules(), .progress(rp), ntp1900: true) == #"{"cmd":"setLrcTime","duration":240000,"time":19960,"realTime":20000,"ntp":3908988812000,"playerState":3,"songIdentifier":"song-1","ver":2}"#)
        #expect(text(TencentRules(), .start(startNtpMs: 5_000, durationMs: 240_000)) == #"{"cmd":"startChorus","startPlayMusicTS":5000,"music_id":"song-1","music_duration":"240000"}"#)
        #expect(text(TencentRules(), .display(positionMs: 7)) == #"{"musicCurrentTS":7,"musicCurrentId":"song-1"}"#)
        // A message the vendor never sends.
        #expect(text(TencentRules(), .progress(rp)) == "{}")
    }

    @Test func theChoiceOfVendor() {
        #expect(SyncProtocol.allCases.map { $0.codec.wireProtocol } == SyncProtocol.allCases)
        #expect(SyncProtocol.allCases.map { RuleSet(protocol: $0) } == [.zego, .agora, .tencent, nil])
        #expect(RuleSet.allCases.map { $0.rules.name } == RuleSet.allCases)
        #expect(ReplayConfiguration.Rules.allCases.map(\.forced) == [nil, .zego, .agora, .tencent])
        // Only ZEGO's sample corrects one direction.
        #expect(RuleSet.allCases.map { $0.rules.twoSided(requested: false) } == [false, true, true])
    }

    @Test func rulesDecideFromTheStateTheyAreGiven() {
        // ZEGO: a device waiting to start joins at p0 = t1 − t0 + p = 85 + 61,000.
        let rp = SyncMessage.progress(RemoteProgress(positionMs: 61_000, ntpMs: 12_000))
        var state = ChorusState()
        #expect(ZegoRules().decide(rp, state: state, nowNtpMs: 12_085, thresholdMs: 30, twoSided: false)
            == RuleDecision(rule: "zego.join", action: .join(seekToMs: 61_085)))
        // Playing, last callback 61,020 at 12,070: md = 70 − 20 = 50 > 30 → seek to 61,070 …
        state.command(.play)
        state.progress(positionMs: 61_020, ntpMs: 12_070, state: .playing)
        #expect(ZegoRules().decide(rp, state: state, nowNtpMs: 12_085, thresholdMs: 30, twoSided: false)
            == RuleDecision(rule: "zego.drift", action: .drift(seekToMs: 61_070), valueMs: 50, thresholdMs: 30))
        // … but not from a callback older than the last seek.
        state.seeked()
        #expect(ZegoRules().decide(rp, state: state, nowNtpMs: 12_085, thresholdMs: 30, twoSided: false) == nil)
        // Tencent ignores progress messages; a start signal before the latest stop request is void.
        #expect(TencentRules().decide(rp, state: ChorusState(), nowNtpMs: 12_085, thresholdMs: 50, twoSided: false) == nil)
        var stopped = ChorusState()
        stopped.stopRequested(ntpMs: 20_000)
        #expect(TencentRules().decide(.start(startNtpMs: 15_000, durationMs: nil), state: stopped, nowNtpMs: 20_500, thresholdMs: 50, twoSided: false) == nil)
        #expect(TencentRules().decide(.start(startNtpMs: 25_000, durationMs: nil), state: stopped, nowNtpMs: 20_500, thresholdMs: 50, twoSided: false)
            == RuleDecision(rule: "tencent.start", action: .start(startNtpMs: 25_000)))
    }

    @Test func configurationRangesNameTheParameterNotAFlag() throws {
        #expect(throws: Never.self) { try ReplayConfiguration().validated() }
        var c = ReplayConfiguration()
        c.windowMs = 0
        #expect(throws: SyncError.invalidParameter(ParameterError(name: "windowMs", value: "0", allowed: "1…60000 ms"))) { try c.validated() }
        c = ReplayConfiguration()
        c.thresholdMs = 10_001
        #expect(throws: SyncError.invalidParameter(ParameterError(name: "thresholdMs", value: "10001", allowed: "1…10000 ms"))) { try c.validated() }
        c = ReplayConfiguration()
        c.stormMinSeeks = 1
        do { _ = try c.validated(); Issue.record("no error") } catch {
            #expect("\(error)" == "stormMinSeeks = 1 is out of range; allowed: 2…1000000 seeks")
        }
        #expect(ReplayConfiguration.Spec.all.map(\.name) == ["thresholdMs", "windowMs", "toleranceMs", "maxExtrapolationMs", "stallFactor",
                                                            "stormGapMs", "stormMinSeeks", "displayStalenessMs", "displayGridMs"])
        #expect(ReplayConfiguration.Spec.thresholdMs.info.defaultValue == "the rule set's (zego 30, agora 50, tencent 50)")
    }
}
