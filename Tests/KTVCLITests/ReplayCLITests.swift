import Foundation
import Testing

/// `ktv replay` and `ktv replay simulate` end to end: exit codes, files, streams.
@Suite struct ReplayCLITests {
    func json(_ r: Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
    }

    func simulate(_ s: Scratch, _ scenario: String) throws -> String {
        let path = s.path("\(scenario).jsonl")
        let r = try ktv(["replay", "simulate", "--scenario", scenario, "-o", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("events written to \(path)"))
        return path
    }

    @Test func cleanRoomExitsZeroAndReproducesTheTruth() throws {
        let s = try Scratch()
        let log = try simulate(s, "agora")
        let r = try ktv(["replay", log, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try json(r)
        let summary = try #require(obj["summary"] as? [String: Any])
        #expect(summary["missing"] as? Int == 0)
        #expect(summary["wrong_target"] as? Int == 0)
        #expect(summary["unexpected"] as? Int == 0)
        let truth = try #require(obj["truth_check"] as? [String: Any])
        let decisions = try #require(truth["decisions"] as? [String: Any])
        #expect(decisions["reproduced"] as? Int == decisions["in_truth"] as? Int)
        #expect((summary["decisions"] as? Int ?? 0) == decisions["in_truth"] as? Int)
        for p in try #require(truth["pairs"] as? [[String: Any]]) {
            #expect((p["max_difference_ms"] as? Double ?? 99) <= 2)
        }
        // The same room in text.
        let text = try ktv(["replay", log])
        #expect(text.status == 0)
        #expect(text.out.contains("verdict: every decision ok"))
    }

    @Test func fixtureLogFindsEachFault() throws {
        let fixture = KTVBinary.packageRoot.appendingPathComponent("fixtures/replay/demo.jsonl").path
        let r = try ktv(["replay", fixture, "--format", "json"])
        #expect(r.status == 1)
        let obj = try json(r)
        let summary = try #require(obj["summary"] as? [String: Any])
        #expect(summary["decisions"] as? Int == 15)
        #expect(summary["ok"] as? Int == 12)
        #expect(summary["missing"] as? Int == 1)
        #expect(summary["wrong_target"] as? Int == 1)
        #expect(summary["unexpected"] as? Int == 1)
        let bad = try #require(obj["decisions"] as? [[String: Any]]).filter { $0["verdict"] as? String != "ok" }
        #expect(bad.map { $0["device"] as? String } == ["B", "C", "B"])
        #expect(bad.map { $0["verdict"] as? String } == ["missing", "wrong_target", "unexpected"])
        let truth = try #require(obj["truth_check"] as? [String: Any])
        let faults = try #require(truth["faults"] as? [[String: Any]])
        #expect(faults.count == 4)
        #expect(faults.allSatisfy { $0["found_as"] is String })
        let text = try ktv(["replay", fixture])
        #expect(text.status == 1)
        #expect(text.out.contains("verdict: 3 of 15 decision(s) not ok"))
        #expect(text.out.contains("B zego.drift: missing"))
    }

    @Test func svgAndCsvAreWrittenAtomically() throws {
        let s = try Scratch()
        let log = try simulate(s, "tencent-faults")
        let out = s.path("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let r = try ktv(["replay", log, "--svg", out + "/drift.svg", "--csv", out + "/drift.csv", "-o", out + "/report.json", "--format", "json"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["drift.csv", "drift.svg", "report.json"])
        let svg = try String(contentsOfFile: out + "/drift.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: "stroke=\"#1565c0\"").count - 1 == 2)  // one drift line per singer
        #expect(svg.contains(">missing</text>") && svg.contains(">wrong_target</text>") && svg.contains(">unexpected</text>"))
        let csv = try String(contentsOfFile: out + "/drift.csv", encoding: .utf8).split(separator: "\n")
        #expect(csv[0] == "lead,follower,ntp_ms,time_s,follower_position_ms,lead_position_ms,drift_ms")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/report.json"))) as? [String: Any])
        let pairs = try #require(report["pairs"] as? [[String: Any]])
        #expect(csv.count - 1 == pairs.reduce(0) { $0 + ($1["samples"] as? Int ?? 0) })
    }

    @Test func perDeviceFilesInAnyOrderGiveTheSameVerdicts() throws {
        let s = try Scratch()
        let log = try simulate(s, "zego-faults")
        // Split the room log into one file per device, the way devices upload them.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        var byDevice: [String: [Substring]] = [:]
        for l in lines {
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any])
            byDevice[obj["device"] as! String, default: []].append(l)
        }
        var files: [String] = []
        for (name, ls) in byDevice.sorted(by: { $0.key > $1.key }) {
            files.append(try s.write("\(name).jsonl", ls.joined(separator: "\n") + "\n"))
        }
        let whole = try json(try ktv(["replay", log, "--format", "json"]))
        let split = try json(try ktv(["replay"] + files + ["--format", "json"]))
        func verdicts(_ o: [String: Any]) -> [String] {
            (o["decisions"] as? [[String: Any]] ?? []).map { "\($0["device"]!) \($0["ntp"]!) \($0["rule"]!) \($0["verdict"]!)" }
        }
        #expect(verdicts(whole).count > 10)
        #expect(verdicts(split) == verdicts(whole))
        #expect((split["files"] as? [String])?.count == 4)
    }

    @Test func standardInput() throws {
        let s = try Scratch()
        let log = try simulate(s, "zego")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        let r = try ktv(["replay", "-", "--format", "json"], stdin: bytes)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try json(r)["files"] as? [String] == ["<stdin>"])
    }

    @Test func lyricsGiveTheAudienceWrongLineShare() throws {
        let s = try Scratch()
        let log = try simulate(s, "zego")
        var lrc = ""
        for k in 0..<60 { lrc += "[\(k * 2 / 60):\(String(format: "%02d", (k * 2) % 60)).00]line \(k)\n" }
        let lyrics = try s.write("song.lrc", lrc)
        let r = try ktv(["replay", log, "--lyrics", lyrics, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let audience = try #require((try json(r))["audience"] as? [[String: Any]])
        let share = try #require(audience.first?["wrong_line_share"] as? Double)
        // About 690 ms of lag against 2 s lines: roughly a third of the time.
        #expect(share > 0.25 && share < 0.45)
        let empty = try s.write("empty.lrc", "[ti:nothing]\n")
        #expect(try ktv(["replay", log, "--lyrics", empty]).status == 65)
    }

    @Test func malformedAndMissingInputs() throws {
        let s = try Scratch()
        let bad = try s.write("bad.jsonl", """
        {"device":"B","at":1,"ntp":5,"kind":"role","role":"chorus"}
        {"device":"B","at":2,"ntp":6,"kind":"play"}
        {"device":"B","at":3,"ntp":7,"kind":"progress","state":"playing"}
        """)
        let r = try ktv(["replay", bad])
        #expect(r.status == 65)
        #expect(r.stderr == "ktv: \(bad):3: field `position`: missing; a progress event carries the player position in ms\n")
        #expect(r.stdout.isEmpty)
        let missing = try ktv(["replay", s.path("none.jsonl")])
        #expect(missing.status == 74)
        #expect(missing.stderr.contains("none.jsonl: cannot read: no such file"))
        #expect(try ktv(["replay", s.dir.path]).status == 74)
        #expect(try ktv(["replay", bad, "--window-ms", "0"]).status == 64)
        #expect(try ktv(["replay", bad, "--rules", "sony"]).status == 64)
        #expect(try ktv(["replay", bad, "--threshold-ms", "-3"]).status == 64)
        // Out of order lines: a warning, not an error.
        let shuffled = try s.write("shuffled.jsonl", """
        {"device":"B","at":3,"ntp":7,"kind":"progress","position":20,"state":"playing"}
        {"device":"B","at":1,"ntp":5,"kind":"role","role":"chorus"}
        """)
        let w = try ktv(["replay", shuffled])
        #expect(w.status == 0)
        #expect(w.stderr.contains("shuffled.jsonl:2: warning: 1 event(s) of `B` come before an earlier `at` in the file; replay puts them in `at` order [out-of-order]"))
    }

    @Test func rangeErrorsNameTheFlag() throws {
        let s = try Scratch()
        let log = try simulate(s, "zego")
        let window = try ktv(["replay", log, "--window-ms", "0"])
        #expect(window.status == 64)
        #expect(window.stderr.contains("--window-ms = 0 is out of range; allowed: 1…60000 ms"))
        let threshold = try ktv(["replay", log, "--threshold-ms=-3"])
        #expect(threshold.status == 64)
        #expect(threshold.stderr.contains("--threshold-ms = -3 is out of range; allowed: 1…10000 ms"))
        #expect(!threshold.stderr.contains("thresholdMs"))
    }

    @Test func simulateScenarioFilesAndErrors() throws {
        let s = try Scratch()
        let scenario = try s.write("room.json", #"{"base": "agora", "name": "short", "room_ms": 15000, "faults": []}"#)
        let out = s.path("room.jsonl")
        let r = try ktv(["replay", "simulate", "--scenario", scenario, "--seed", "3", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("simulated `short` (agora, 4 devices, 15 s, seed 3)"))
        #expect(try ktv(["replay", out]).status == 0)
        let unknown = try ktv(["replay", "simulate", "--scenario", "nope", "-o", out])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no scenario `nope`: use one of zego, zego-faults"))
        let bad = try s.write("bad.json", #"{"base": "zego", "room_ms": "long"}"#)
        let b = try ktv(["replay", "simulate", "--scenario", bad, "-o", out])
        #expect(b.status == 65)
        #expect(b.stderr.contains("`room_ms` must be a whole number"))
        // To standard output.
        let piped = try ktv(["replay", "simulate", "--scenario", "tencent", "-o", "-"])
        #expect(piped.status == 0)
        #expect(piped.out.hasPrefix("{\"device\":\"lead\""))
    }
}
