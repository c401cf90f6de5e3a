import Foundation
import Testing

/// `ktv score --html`, `ktv batch --html-dir` and `ktv batch report` (issue 21): what they write
/// and refuse. The pages' behaviour in a browser is `make browser-test`'s (Tests/browser).
@Suite struct ReportCLITests {
    func data(_ html: String) throws -> [String: Any] {
        let open = try #require(html.range(of: "id=\"ktv-data\">"))
        let close = try #require(html.range(of: "</script>", range: open.upperBound..<html.endIndex))
        return try #require(try JSONSerialization.jsonObject(with: Data(html[open.upperBound..<close.lowerBound].utf8)) as? [String: Any])
    }

    @Test func aTakesPageLinksItsRecordingOrCarriesIt() throws {
        let s = try Scratch()
        try FileManager.default.createDirectory(atPath: s.path("takes"), withIntermediateDirectories: true)
        let take = try dualMonoTrack(s, "takes/take one.wav", seconds: 3)
        _ = try s.write("ref.json", "[{\"start_ms\": 500, \"duration_ms\": 800, \"midi\": 62}, {\"start_ms\": 1500, \"duration_ms\": 800, \"midi\": 64}]")
        var r = try ktv(["score", take, "--reference", s.path("ref.json"), "--html", s.path("pages/p.html"), "--format", "json", "-o", s.path("score.json")])
        // The folder of --html must exist, as for every output file; nothing is written when it does not.
        #expect(r.status == 74 && r.stderr.contains("pages/p.html"), "\(r.stderr)")
        try FileManager.default.createDirectory(atPath: s.path("pages"), withIntermediateDirectories: true)
        r = try ktv(["score", take, "--reference", s.path("ref.json"), "--html", s.path("pages/p.html"), "--format", "json", "-o", s.path("score.json")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("(open it in a browser: the timeline, the lines, the findings and a player)"), "\(r.stderr)")
        let html = try String(contentsOfFile: s.path("pages/p.html"), encoding: .utf8)
        let page = try data(html)
        #expect((page["audio"] as? [String: Any])?["src"] as? String == "../takes/take%20one.wav")
        // The page's score is the JSON report's.
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("score.json")))) as? [String: Any])
        #expect((page["score"] as? [String: Any])?["score"] as? Double == report["score"] as? Double)
        #expect(html.contains("<audio id=\"player\""))
        r = try ktv(["score", take, "--reference", s.path("ref.json"), "--html", s.path("e.html"), "--embed-audio"])
        #expect(r.status == 0)
        let embedded = try data(try String(contentsOfFile: s.path("e.html"), encoding: .utf8))
        #expect(((embedded["audio"] as? [String: Any])?["src"] as? String)?.hasPrefix("data:audio/wav;base64,UklGR") == true)
        r = try ktv(["score", take, "--reference", s.path("ref.json"), "--embed-audio"])
        #expect(r.status == 64 && r.stderr.contains("--embed-audio goes with --html"))
    }

    @Test func aPitchTrackTakesPageSaysThereIsNothingToPlay() throws {
        let s = try Scratch()
        _ = try pitchBatch(s, rows: 1)
        let r = try ktv(["score", s.path("take.csv"), "--reference", s.path("ref.json"), "--html", s.path("p.html")])
        #expect(r.status == 0, "\(r.stderr)")
        // What ktv says it wrote promises no player.
        #expect(r.stderr.contains("wrote \(s.path("p.html")) (open it in a browser: the timeline, the lines and the findings; no player, as the take is a pitch track)"), "\(r.stderr)")
        let audio = try #require(try data(try String(contentsOfFile: s.path("p.html"), encoding: .utf8))["audio"] as? [String: Any])
        #expect(audio["src"] is NSNull && (audio["reason"] as? String)?.contains("pitch track") == true)
    }

    @Test func aBatchWritesEachTakesPageAndTheReportReadsEveryRun() throws {
        let s = try Scratch()
        let manifest = try pitchBatch(s, rows: 3)
        var r = try ktv(["batch", manifest, "-o", s.path("r.jsonl"), "--html-dir", s.path("pages"), "--progress", "never"])
        #expect(r.status == 0, "\(r.stderr)")
        for id in ["t0", "t1", "t2"] { #expect(FileManager.default.fileExists(atPath: s.path("pages/\(id).html")), "\(id)") }
        let first = try String(contentsOfFile: s.path("r.jsonl"), encoding: .utf8)
        #expect(first.contains("\"page\":\"\(s.path("pages"))/t0.html\"") || first.contains("pages/t0.html"))
        // A second run over a longer manifest continues the file: t3 and a missing take are new.
        try s.write("m.csv", "id,take,reference\n" + (0..<4).map { "t\($0),take.csv,ref.json" }.joined(separator: "\n") + "\nbad,gone.csv,ref.json\n")
        r = try ktv(["batch", manifest, "-o", s.path("r.jsonl"), "--resume", "--progress", "never"])
        #expect(r.status == 1)
        r = try ktv(["batch", "report", s.path("r.jsonl"), "--html", s.path("dash.html"), "--csv", s.path("t.csv"), "--summary", s.path("sum.json")])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("sum.json")))) as? [String: Any])
        #expect(summary["ids"] as? Int == 5 && summary["ok"] as? Int == 4 && summary["failed"] as? Int == 1)
        #expect((summary["failures_by_reason"] as? [String: Int]) == ["missing": 1])
        let csv = try String(contentsOfFile: s.path("t.csv"), encoding: .utf8).components(separatedBy: "\r\n")
        #expect(csv.count == 7 && csv[0].hasPrefix("id,status,rules,score,score_100"))
        let dash = try data(try String(contentsOfFile: s.path("dash.html"), encoding: .utf8))
        let takes = try #require(dash["takes"] as? [[String: Any]])
        // Ids in the order the runs finished them: the first run's three, then the second's two.
        let ids = takes.compactMap { $0["id"] as? String }
        #expect(Set(ids.prefix(3)) == ["t0", "t1", "t2"] && Set(ids.suffix(2)) == ["t3", "bad"])
        let page = { (id: String) in takes.first { $0["id"] as? String == id }?["page"] }
        #expect(page("t0") as? String == "pages/t0.html" && page("t3") is NSNull)
        // Without an output flag the summary goes to standard output.
        r = try ktv(["batch", "report", s.path("r.jsonl")])
        #expect(r.status == 0 && r.out.contains("\"ids\": 5"))
    }

    @Test func theSVGDrawsTheLinesAsked() throws {
        let s = try Scratch()
        _ = try pitchBatch(s, rows: 1)
        var r = try ktv(["score", s.path("take.csv"), "--reference", s.path("ref.json"), "--svg", s.path("p.svg"), "--svg-lines", "all"])
        #expect(r.status == 0, "\(r.stderr)")
        let svg = try String(contentsOfFile: s.path("p.svg"), encoding: .utf8)
        #expect(svg.contains("1 of 1 lines (all)") && svg.contains("data-line=\"1\""))
        r = try ktv(["score", s.path("take.csv"), "--reference", s.path("ref.json"), "--svg", s.path("q.svg"), "--svg-lines", "weakest:0"])
        #expect(r.status == 64 && r.stderr.contains("--svg-lines") && r.stderr.contains("weakest:N"))
        #expect(!FileManager.default.fileExists(atPath: s.path("q.svg")))
    }

    @Test func aReportOfNoResultsFileIsAnIOErrorAndBadLinesAreNamed() throws {
        let s = try Scratch()
        var r = try ktv(["batch", "report", s.path("none.jsonl")])
        #expect(r.status == 74 && r.stderr.contains("none.jsonl"))
        let bad = try s.write("bad.jsonl", "{\"id\":\"a\",\"status\":\"ok\",\"result\":{\"score\":1}}\nnot json\n{\"id\":\"b\"")
        r = try ktv(["batch", "report", bad])
        #expect(r.status == 0)
        #expect(r.stderr.contains("bad.jsonl: line 2 is not a JSON object") && r.stderr.contains("bad.jsonl: line 3 was cut off"))
    }
}
