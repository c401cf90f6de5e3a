import Foundation
import Testing
import KTVCore
@testable import KTVSync

/// Reading progress logs: every kind, vendor payloads, epochs, ordering, and clear errors.
@Suite struct LogReaderTests {
    @Test func decodesEveryKind() throws {
        let text = """
        # a comment, then a blank line

        {"device":"lead","at":10,"ntp":1000,"kind":"role","role":"lead","playout_delay":40}
        {"device":"lead","at":20,"ntp":1010,"kind":"progress","position":500,"state":"playing","duration":240000}
        {"device":"lead","at":21,"ntp":1011,"kind":"send","protocol":"zego","message":{"kProgressKey":500,"kPointTimeKey":1010}}
        {"device":"B","at":5,"ntp":1020,"kind":"recv","protocol":"zego","from":"lead","message":{"kProgressKey":500,"kPointTimeKey":1010,"kState":2,"kTotalKey":240000}}
        {"device":"B","at":6,"ntp":1021,"kind":"schedule","start_ntp":3000}
        {"device":"B","at":7,"ntp":1022,"kind":"seek","to":512}
        {"device":"B","at":8,"ntp":1023,"kind":"play"}
        {"device":"B","at":9,"ntp":1024,"kind":"pause"}
        {"device":"B","at":10,"ntp":1025,"kind":"resume"}
        {"device":"B","at":11,"ntp":1026,"kind":"stop"}
        {"device":"B","at":12,"ntp":1027,"kind":"record","action":"start","file":"take.wav"}
        {"device":"B","at":13,"ntp":1028,"kind":"truth","truth":{"type":"clock","error_ms":1.5}}
        """
        let log = try LogReader.read(bytes: Array(text.utf8), name: "all.jsonl")
        #expect(log.eventCount == 12)
        #expect(log.devices.map(\.name) == ["lead", "B"])
        let lead = log.devices[0], b = log.devices[1]
        #expect(lead.sendCount == 1)
        #expect(lead.events.map(\.body) == [.role(.lead), .progress(positionMs: 500, state: .playing, durationMs: 240_000)])
        #expect(lead.events[0].playoutDelayMs == 40)
        #expect(lead.events[1].source == SourceRef(file: 0, line: 4))
        #expect(b.events.map(\.body) == [
            .recv(.zego, from: 0, .progress(RemoteProgress(positionMs: 500, ntpMs: 1010, state: .paused, durationMs: 240_000))),
            .schedule(startNtpMs: 3000), .seek(toMs: 512), .command(.play), .command(.pause), .command(.resume), .command(.stop),
            .record(start: true),
        ])
        #expect(log.truths.count == 1)
        #expect(log.truths[0].device == "B")
        #expect(log.truths[0].ntpMs == 1028)
        #expect(log.truths[0].value["error_ms"]?.number == 1.5)
    }

    @Test func vendorPayloads() throws {
        var b = LogBuilderForTests()
        // Agora stamps in the NTP-1900 epoch; Tencent's duration as a string (as the vendor sends it).
        b.agoraLrc("B", 1_700_000_012_090, time: 19_960, real: 20_000, stamp: 3_908_988_812_000, state: 4)
        b.tencentStart("B", 1_700_000_012_100, start: 1_700_000_015_000)
        b.add("B", 1_700_000_012_110, "recv", #""protocol":"tencent","message":{"cmd":"stopChorus","requestStopTS":1700000020000,"music_id":"s"}"#)
        b.add("aud", 1_700_000_012_120, "recv", #""protocol":"tencent","message":{"musicCurrentTS":20500,"musicCurrentId":"s"}"#)
        b.add("aud", 1_700_000_012_130, "recv", #""protocol":"volcano","message":{"progress":20600}"#)
        // The payload logged verbatim as a string holding JSON.
        b.add("aud", 1_700_000_012_140, "recv", #""protocol":"zego","message":"{\"kProgressKey\":\"20700\",\"kPointTimeKey\":1700000012100}""#)
        b.add("aud", 1_700_000_012_150, "recv", #""protocol":"agora","message":{"cmd":"PlayerState","state":3}"#)
        let log = try b.log()
        let bodies = log.devices.flatMap { $0.events.map(\.body) }
        #expect(bodies == [
            .recv(.agora, from: 1, .progress(RemoteProgress(positionMs: 20_000, timeMs: 19_960, ntpMs: 1_700_000_012_000, state: .paused, durationMs: 240_000))),
            .recv(.tencent, from: 1, .start(startNtpMs: 1_700_000_015_000, durationMs: 240_000)),
            .recv(.tencent, from: nil, .stop(requestNtpMs: 1_700_000_020_000)),
            .recv(.tencent, from: nil, .display(positionMs: 20_500)),
            .recv(.volcano, from: nil, .display(positionMs: 20_600)),
            .recv(.zego, from: nil, .progress(RemoteProgress(positionMs: 20_700, ntpMs: 1_700_000_012_100, state: nil))),
            .recv(.agora, from: nil, .other),
        ])
        #expect(log.notes.map(\.rule) == ["payload-ignored"])
    }

    @Test func eventNtpInThe1900EpochIsConverted() throws {
        let text = #"{"device":"B","at":1,"ntp":3908988812090,"kind":"progress","position":10,"state":"playing"}"#
        let log = try LogReader.read(bytes: Array(text.utf8))
        #expect(log.devices[0].events[0].ntpMs == 1_700_000_012_090)
    }

    @Test func crlfBomAndFinalLineWithoutNewline() throws {
        let text = "\u{FEFF}{\"device\":\"B\",\"at\":1,\"ntp\":5,\"kind\":\"play\"}\r\n{\"device\":\"B\",\"at\":2,\"ntp\":6,\"kind\":\"stop\"}"
        let log = try LogReader.read(bytes: Array(text.utf8))
        #expect(log.devices[0].events.map(\.body) == [.command(.play), .command(.stop)])
    }

    @Test func missingNtpIsInferredFromTheDeviceClock() throws {
        var b = LogBuilderForTests()
        b.add("B", 5_000, "play", at: 100, ntpField: false)      // before any stamp: uses the first one's offset
        b.add("B", 6_000, "progress", "\"position\":1,\"state\":\"playing\"", at: 200)
        b.add("B", 0, "seek", "\"to\":7", at: 260, ntpField: false)
        b.add("B", 7_000, "pause", at: 300)
        b.add("B", 0, "resume", at: 350, ntpField: false)
        let ev = try b.log().devices[0].events
        #expect(ev.map(\.ntpMs) == [5_900, 6_000, 6_060, 7_000, 7_050])
        #expect(ev.map(\.ntpGiven) == [false, true, false, true, false])
        // The offset moved from 5,800 to 6,700 between stamps: reported as an NTP step.
        #expect(try b.log().notes.contains { $0.rule == "ntp-step" })
    }

    @Test func outOfOrderLinesAreSortedAndReported() throws {
        var b = LogBuilderForTests()
        b.progress("B", 300, 30)
        b.progress("B", 100, 10)
        b.progress("B", 200, 20)
        let log = try b.log()
        #expect(log.devices[0].events.map(\.atMs) == [100, 200, 300])
        let note = try #require(log.notes.first { $0.rule == "out-of-order" })
        #expect(note.line == 2)
        #expect(note.message.contains("1 event(s) of `B`"))
    }

    @Test func malformedLinesNameFileLineAndField() {
        let good = #"{"device":"B","at":1,"ntp":5,"kind":"play"}"#
        func err(_ bad: String) -> String { readError(good + "\n" + bad + "\n").map(String.init(describing:)) ?? "no error" }
        #expect(err(#"{"device":"B","at":1,"kind":"play""#) == "bad.jsonl:2: not a JSON object: at column 35: expected `,` or `}` after an object member, found the end of the text")
        #expect(err(#"[1,2]"#) == "bad.jsonl:2: not a JSON object: at column 1: expected `{` (each line must be one JSON object), found `[1,2]`")
        #expect(err(#"{"device":"B","ntp":5,"kind":"play"}"#) == "bad.jsonl:2: field `at`: missing; every event needs the device's monotonic time `at` in ms")
        #expect(err(#"{"at":1,"kind":"play"}"#) == "bad.jsonl:2: field `device`: missing; every event needs `device`, `at` and `kind`")
        #expect(err(#"{"device":"B","at":"1","kind":"play"}"#) == "bad.jsonl:2: field `at`: must be a number of milliseconds, not a string")
        #expect(err(#"{"device":"B","at":1,"kind":"progres"}"#).hasPrefix("bad.jsonl:2: field `kind`: unknown kind `progres`; use one of role, progress"))
        #expect(err(#"{"device":"B","at":1,"kind":"progress","state":"playing"}"#) == "bad.jsonl:2: field `position`: missing; a progress event carries the player position in ms")
        #expect(err(#"{"device":"B","at":1,"kind":"progress","position":3,"state":"run"}"#) == "bad.jsonl:2: field `state`: unknown state `run`; use playing, paused or stopped")
        #expect(err(#"{"device":"B","at":1,"kind":"seek","to":-5}"#) == "bad.jsonl:2: field `to`: -5 is negative; a seek target is 0 or more")
        #expect(err(#"{"device":"B","at":1e300,"kind":"play"}"#) == "bad.jsonl:2: field `at`: 1e+300 is out of range for milliseconds")
        #expect(err(#"{"device":"B","at":1,"kind":"recv","protocol":"zego","message":{"kProgressKey":5}}"#) == "bad.jsonl:2: field `message.kPointTimeKey`: missing (the NTP ms of that progress)")
        #expect(err(#"{"device":"B","at":1,"kind":"recv","protocol":"agora","message":{"cmd":"setLrcTime","time":"abc","ntp":5}}"#) == "bad.jsonl:2: field `message.time`: must be a number (position minus the sender's playout delay, in ms)")
        #expect(err(#"{"device":"B","at":1,"kind":"recv","protocol":"qq","message":{}}"#) == "bad.jsonl:2: field `protocol`: unknown protocol `qq`; use zego, agora, tencent or volcano")
        #expect(err(#"{"device":"B","at":1,"kind":"recv","protocol":"zego","message":"{oops}"}"#).hasPrefix("bad.jsonl:2: field `message`: the payload string is not a JSON object"))
        #expect(err(#"{"device":"B","at":1,"kind":"play"} trailing"#).hasPrefix("bad.jsonl:2: not a JSON object: at column 37: expected the end of the line"))
    }

    @Test func legacySetLrcTimeWithoutNtpIsAWarningNotAnError() throws {
        let text = #"{"device":"B","at":1,"ntp":5,"kind":"recv","protocol":"agora","message":{"cmd":"setLrcTime","lrcId":"x","duration":1000,"time":300}}"#
        let log = try LogReader.read(bytes: Array(text.utf8))
        #expect(log.devices[0].events[0].body == .recv(.agora, from: nil, .other))
        #expect(log.notes.map(\.rule) == ["legacy-setlrctime"])
    }

    @Test func deepNestingAndHugeLinesFailCleanly() {
        let deep = #"{"device":"B","at":1,"kind":"truth","truth":"# + String(repeating: "[", count: 10_000) + "}"
        #expect(readError(deep).map { "\($0)" }?.contains("nested too deeply") == true)
        let huge = #"{"device":"B","at":1,"kind":"play","pad":""# + String(repeating: "x", count: LogReader.maxLineBytes + 10) + "\"}"
        let e = readError(huge).map { "\($0)" } ?? ""
        #expect(e.contains("a line longer than 4 MiB"))
    }

    @Test func readsFilesInBlocksAcrossLineBoundaries() throws {
        // About 2.8 MB: lines straddle the 1 MiB read blocks.
        var b = LogBuilderForTests()
        for k in 0..<30_000 { b.progress(k % 2 == 0 ? "lead" : "B", 1_000 + k * 10, k * 10) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("big.jsonl").path
        try Data(b.bytes).write(to: URL(fileURLWithPath: path))
        #expect(b.bytes.count > 2 << 20)
        let fromFile = try LogReader.read(paths: [path])
        let fromMemory = try b.log()
        #expect(fromFile.eventCount == 30_000)
        #expect(fromFile.devices.map { $0.events.map(\.body) } == fromMemory.devices.map { $0.events.map(\.body) })
        #expect(fromFile.devices[1].events.last?.source.line == 30_000)
        #expect(throws: SyncError.cannotRead(path: dir.path + "/none.jsonl", reason: "no such file")) {
            try LogReader.read(paths: [dir.path + "/none.jsonl"])
        }
    }

    /// Mutated copies of a simulated log (seeded) either read or fail with a SyncError; never a crash.
    @Test func corruptedLogsNeverCrash() throws {
        var s = Scenario.builtIn("zego")!
        s.roomMs = 8_000
        let log = try RoomSimulator.run(s).log
        var rng = SeededGenerator(seed: 99)
        var failures = 0, reads = 0
        for _ in 0..<300 {
            var bytes = log
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let k = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[k] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: k)
                case 2: bytes.insert(UInt8(ascii: ["{", "}", "\"", ",", ":", "\n", "-", "9"].randomElement(using: &rng)!), at: k)
                default: bytes[k] = 0x0A
                }
            }
            do {
                let l = try LogReader.read(bytes: bytes, name: "fuzz.jsonl")
                _ = Replay.analyze(l, configuration: ReplayConfiguration())
                reads += 1
            } catch {
                if case .malformedLog(let file, let line, _, _) = error { #expect(file == "fuzz.jsonl" && line >= 1) }
                failures += 1
            }
        }
        #expect(failures + reads == 300)
        #expect(failures > 100)
    }
}
