import Foundation
import KTVBatch
import KTVCore
@testable import KTVReport
import KTVScore
import Testing

/// The data block a page carries, read back as a browser's JSON.parse would.
func pageData(_ html: String) throws -> [String: Any] {
    let open = try #require(html.range(of: "<script type=\"application/json\" id=\"ktv-data\">"))
    let close = try #require(html.range(of: "</script>", range: open.upperBound..<html.endIndex))
    return try #require(try JSONSerialization.jsonObject(with: Data(html[open.upperBound..<close.lowerBound].utf8)) as? [String: Any])
}

/// A three-note melody sung well except the last note (a semitone sharp), 100 ms late, with a word
/// that is markup.
func scoredTake(word: String = "</script><script>alert(1)</script>") throws -> (card: ScoreCard, sung: SungTake) {
    let notes = [MelodyNote(startMs: 1000, durationMs: 400, cents: 6000, word: "a", line: 0),
                 MelodyNote(startMs: 1500, durationMs: 400, cents: 6200, word: word, line: 0),
                 MelodyNote(startMs: 2000, durationMs: 400, cents: 6400, word: "c", line: 0)]
    let melody = try ReferenceMelody(notes: notes, lines: [MelodyLine(startMs: 1000, endMs: 2400, text: "a \(word) c")]).validated(path: "test")
    var times: [Double] = [], hz: [Double?] = []
    for k in 0..<300 {
        let songMs = Double(k * 10)
        times.append((songMs + 100) / 1000)
        let note = notes.first { songMs >= Double($0.startMs) && songMs < Double($0.endMs) }
        hz.append(note.map { 440 * pow(2, (($0.cents ?? 6000) + ($0.cents == 6400 ? 100 : 0) - 6900) / 1200) })
    }
    let sung = try LatencyAligner(latencyMs: 100).align(PitchContour(timesS: times, f0Hz: hz))
    return (try KTVRules().judge(sung, against: melody), sung)
}

@Suite struct TakePageTests {
    @Test func theDataCannotCloseItsScriptAndEveryTextIsEscaped() throws {
        let r = try scoredTake()
        let html = try TakePage.render(r.card, sung: r.sung, take: "<img src=x onerror=alert(2)>.wav", reference: "ref&.json",
                                       title: "<img src=x onerror=alert(2)>", audio: .link("take.wav"))
        // The only </script> are the two elements' own ends; the markup word is inside the JSON as \u003c.
        #expect(html.components(separatedBy: "</script>").count - 1 == 2)
        #expect(html.contains("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"))
        #expect(!html.contains("<img"))
        #expect(html.contains("<title>&lt;img src=x onerror=alert(2)&gt; · ktv score</title>"))
        let data = try pageData(html)
        let score = try #require(data["score"] as? [String: Any])
        let lines = try #require(score["lines"] as? [[String: Any]])
        let words = try #require(lines.first?["notes"] as? [[String: Any]]).map { $0["word"] as? String }
        #expect(words == ["a", "</script><script>alert(1)</script>", "c"])
    }

    @Test func theContentSecurityPolicyHashesThePagesOwnScriptAndStyle() throws {
        let r = try scoredTake()
        let html = try TakePage.render(r.card, sung: r.sung, take: "t.wav", reference: "r", title: "t", audio: .none(reason: "none"))
        let script = try #require(html.range(of: "<script>")), end = try #require(html.range(of: "</script>", range: script.upperBound..<html.endIndex))
        let digest = Data(SHA256.digest(Array(html[script.upperBound..<end.lowerBound].utf8))).base64EncodedString()
        #expect(html.contains("script-src 'sha256-\(digest)';"))
        #expect(html.contains("default-src 'none'"))
        #expect(!html.contains("unsafe-inline"))
    }

    @Test func theContourCarriesBothClocks() throws {
        let r = try scoredTake()
        let data = try pageData(try TakePage.render(r.card, sung: r.sung, take: "t.wav", reference: "r", title: "t", audio: .link("t.wav")))
        let contour = try #require(data["contour"] as? [String: Any])
        let song = try #require(contour["song_ms"] as? [Int]), take = try #require(contour["take_ms"] as? [Int])
        // Delta-coded: the first frame is at song 0 ms, take 100 ms (the latency), then 10 ms steps on both clocks.
        #expect(song.first == 0 && take.first == 100)
        #expect(song.dropFirst().allSatisfy { $0 == 10 } && take.dropFirst().allSatisfy { $0 == 10 })
        #expect((contour["cents"] as? [Any])?.count == 300)
        // The notes as drawn: in the key judged (here the reference's), cents.
        #expect((data["drawn_cents"] as? [[Int]]) == [[6000, 6200, 6400]])
    }

    @Test func embeddedAudioIsADataURLAndRefusedAboveTheLimit() throws {
        let r = try scoredTake()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.wav").path
        try Data([1, 2, 3, 4, 5, 6]).write(to: URL(fileURLWithPath: path))
        let data = try pageData(try TakePage.render(r.card, sung: r.sung, take: path, reference: "r", title: "t", audio: .embed(path: path)))
        #expect((data["audio"] as? [String: Any])?["src"] as? String == "data:audio/wav;base64,AQIDBAUG")
        var small = TakePageConfiguration()
        small.maxEmbedMB = 0.1
        let big = dir.appendingPathComponent("big.flac").path
        try Data(count: 200_000).write(to: URL(fileURLWithPath: big))
        #expect(throws: ReportError.audioTooLarge(path: big, bytes: 200_000, limitBytes: 104_857)) {
            try TakePage.render(r.card, sung: r.sung, take: big, reference: "r", title: "t", audio: .embed(path: big), configuration: small)
        }
        small.maxEmbedMB = 0
        #expect(throws: ReportError.self) { try small.validated() }
    }

    @Test func linksAreRelativeToThePageAndEncoded() {
        #expect(TakePage.link(from: "/a/b/page.html", to: "/a/c/take 1#.wav") == "../c/take%201%23.wav")
        #expect(TakePage.link(from: "/a/page.html", to: "/a/t.flac") == "t.flac")
        #expect(TakePage.link(from: "/a/pages/x/page.html", to: "/t.flac") == "../../../t.flac")
        // A name that looks like a scheme stays a path.
        #expect(TakePage.link(from: "/a/page.html", to: "/a/javascript:alert(1)") == "javascript%3Aalert(1)")
    }

    @Test func pageFileNamesAreSafeAndDistinct() {
        #expect(TakePageWriter.fileName(id: "take-0001") == "take-0001.html")
        #expect(TakePageWriter.fileName(id: "歌手_01") == "歌手_01.html")
        let a = TakePageWriter.fileName(id: "a/b"), b = TakePageWriter.fileName(id: "a_b")
        #expect(a != b && a.hasPrefix("a_b-") && b == "a_b.html")
        #expect(TakePageWriter.fileName(id: "..").hasPrefix("_.-"))
        #expect(!TakePageWriter.fileName(id: "<img src=x>").contains("<"))
        #expect(TakePageWriter.fileName(id: String(repeating: "x", count: 300)).count == 60 + 1 + 8 + 5)
    }

    @Test func scriptSafeJSONEscapesMarkupAndLineSeparators() {
        #expect(HTMLPage.scriptSafeJSON(.string("a</script>&\u{2028}b\u{2029}é<!--")) == "\"a\\u003c/script\\u003e\\u0026\\u2028b\\u2029é\\u003c!--\"")
        // Characters whose UTF-8 ends in A8 or A9 pass unchanged (在 is E5 9C A8, 嘩 E5 98 A9; 七里香's line 2).
        #expect(HTMLPage.scriptSafeJSON(.string("在电线杆上多嘴 嘩")) == "\"在电线杆上多嘴 嘩\"")
    }

    /// The templates' scripts put data in as text only; no string is ever parsed as markup or code.
    @Test func theTemplatesNeverParseStringsAsMarkupOrCode() {
        for (name, template) in [("take", EmbeddedTemplates.take_html), ("batch", EmbeddedTemplates.batch_html)] {
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\""] {
                #expect(!template.contains(sink), "\(name): \(sink)")
            }
            // Exactly one plain <script> and one <style>, the two the policy hashes.
            #expect(template.components(separatedBy: "<script>").count == 2 && template.components(separatedBy: "<style>").count == 2, "\(name)")
        }
    }

    @Test func placeholdersAreFilledInOnePass() {
        let page = HTMLPage(template: "<title>{{title}}</title><p>{{unknown}}</p><script type=\"application/json\">{{data}}</script>")
        let html = page.render(title: "{{data}}", data: .string("{{title}}"))
        #expect(html == "<title>{{data}}</title><p>{{unknown}}</p><script type=\"application/json\">\"{{title}}\"</script>")
    }
}

@Suite struct BatchResultsTests {
    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-results-\(UUID().uuidString).jsonl").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let lines = """
    {"id":"a","line":2,"status":"error","reason":"crash","error":"worker died"}
    {"id":"b","line":3,"status":"ok","elapsed_ms":120,"result":{"rules":"ktv","score":81.5,"score_100":81.5,"latency_ms":120,"judged_share":1,"findings":[{"code":"octave","severity":"info","message":"m1"},{"code":"flat","severity":"warning","message":"sung flat"}],"dimensions":{"intonation":{"score":80.54},"vibrato":{"score":null}},"expert_grade":3.4}}
    {"id":"=cmd","line":4,"status":"error","reason":"missing","error":"x.wav: no such file, \\"quoted\\""}
    not json
    {"id":"a","line":2,"status":"ok","elapsed_ms":300,"result":{"rules":"ktv","score":100,"score_100":100,"latency_ms":0,"judged_share":0.5,"findings":[],"page":"/p/a.html"}}
    {"id":"c","line":5,"status":"ok","elapsed_ms":50,"result":{"rules":"agora","score":450,"score_100":90,"latency_ms":0,"judged_share":1,"findings":[]}}
    {"id":"d","line":6,"status":"ok","elapsed_ms":10,"result":{"rules":"ktv","score":0,"score_100":0,"latency_ms":0,"judged_share":1,"findings":[]}}
    {"id":"torn","status":"ok","result":{"sco
    """

    @Test func theLastLineOfEachIdCountsAndTornOrForeignLinesAreNamed() throws {
        let path = try write(Self.lines)
        defer { unlink(path) }
        let r = try BatchResults.read(path: path)
        #expect(r.takes.map(\.id) == ["a", "b", "=cmd", "c", "d"])
        #expect(r.linesRead == 7 && r.superseded == 1)
        #expect(r.takes[0].status == "ok" && r.takes[0].score100 == 100 && r.takes[0].page == "/p/a.html")
        #expect(r.takes[1].topFinding == "flat" && r.takes[1].topFindingMessage == "sung flat")
        #expect(r.warnings == ["\(path): line 4 is not a JSON object; passed over",
                               "\(path): line 8 was cut off (41 bytes without an end, from a run that stopped mid-write); passed over"])
        #expect(r.ok == 4 && r.failed == 1)
        #expect(r.failuresByReason.map(\.reason) == ["missing"])
        #expect(r.slowest(2).map(\.id) == ["a", "b"])
        let hist = r.histogram()
        #expect(hist.map(\.rules) == ["agora", "ktv"])
        #expect(hist[1].counts == [1, 0, 0, 0, 0, 0, 0, 0, 1, 1])   // 0, 81.5 and 100 (the last bin holds 100)
        #expect(hist[0].counts[9] == 1)
    }

    @Test func theSummaryCoversEveryId() throws {
        let path = try write(Self.lines)
        defer { unlink(path) }
        let s = try BatchResults.read(path: path).summary()
        #expect(s["ids"] == .int(5) && s["ok"] == .int(4) && s["failed"] == .int(1) && s["superseded_lines"] == .int(1))
        #expect(s["scores"]?["ktv"]?["count"] == .int(3) && s["scores"]?["agora"]?["count"] == .int(1))
        #expect(s["elapsed_ms"]?["total"] == .int(480) && s["elapsed_ms"]?["max"] == .double(300))
    }

    @Test func theCSVIsFlatQuotedAndDefusesFormulas() throws {
        let path = try write(Self.lines)
        defer { unlink(path) }
        let rows = try BatchResults.read(path: path).csv().components(separatedBy: "\r\n")
        #expect(rows[0] == "id,status,rules,score,score_100,latency_ms,judged_share,top_finding,reason,error,elapsed_ms,"
                + "intonation,rhythm,vibrato,voice_quality,dynamics,pitch_range,expert_grade")
        #expect(rows[1] == "a,ok,ktv,100.00,100.00,0.0,0.500,,,,300,,,,,,,")
        // Each dimension's score (empty when not measured) and the expert grade.
        #expect(rows[2] == "b,ok,ktv,81.50,81.50,120.0,1.000,flat,,,120,80.5,,,,,,3.40")
        #expect(rows[3] == "'=cmd,error,,,,,,,missing,\"x.wav: no such file, \"\"quoted\"\"\",,,,,,,,")
        #expect(rows.count == 7 && rows[6] == "")
    }

    @Test func aMissingFileOrAFolderIsAnIOError() {
        #expect(throws: BatchError.io(.cannotRead(path: "/nonexistent/r.jsonl", reason: FileIO.readReason(ENOENT)))) {
            try BatchResults.read(path: "/nonexistent/r.jsonl")
        }
        #expect(throws: BatchError.self) { try BatchResults.read(path: "/tmp") }
    }

    /// `top_finding` is the first finding that costs points (docs/batch.md): an octave-down take's
    /// `octave` (an info, forgiven) was shown as its top finding in the CSV and on the dashboard.
    @Test func anInfoIsNeverTheTopFinding() throws {
        let path = try write("""
        {"id":"octave","line":2,"status":"ok","result":{"rules":"ktv","score":99.6,"score_100":99.6,"latency_ms":0,"judged_share":1,"findings":[{"code":"octave","severity":"info","message":"sung 1 octave(s) below the written melody; forgiven"},{"code":"outside_recording","severity":"info","message":"1 of 6 line(s) lie outside the recording"}]}}
        {"id":"late","line":3,"status":"ok","result":{"rules":"ktv","score":70,"score_100":70,"latency_ms":0,"judged_share":1,"findings":[{"code":"octave","severity":"info","message":"m"},{"code":"late","severity":"fault","message":"notes start 400 ms late"}]}}

        """)
        defer { unlink(path) }
        let r = try BatchResults.read(path: path)
        try #require(r.takes.count == 2, "\(r.warnings)")
        #expect(r.takes[0].topFinding == nil && r.takes[0].topFindingMessage == nil)
        #expect(r.takes[1].topFinding == "late" && r.takes[1].topFindingMessage == "notes start 400 ms late")
        let rows = r.csv().components(separatedBy: "\r\n")
        #expect(rows[1].hasPrefix("octave,ok,ktv,99.60,99.60,0.0,1.000,,,,"), "\(rows[1])")
        #expect(rows[2].hasPrefix("late,ok,ktv,70.00,70.00,0.0,1.000,late,"), "\(rows[2])")
        let takes = try #require(try pageData(BatchDashboard.render(r, outputPath: "/p/dash.html"))["takes"] as? [[String: Any]])
        #expect(takes[0]["top_finding"] is NSNull && takes[1]["top_finding"] as? String == "late")
    }

    /// One median everywhere (issue 31 D): the dashboard said 55.4 (its script took the upper middle
    /// value of an even count), the run's summary and `batch report` 53.8 (the mean of the middle
    /// two). Now the page shows `ScoreDistribution`'s median, the summaries' p50.
    @Test func theDashboardSummaryAndReportShareOneMedian() throws {
        let scores = [10.0, 40, 60, 90, 20, 75]
        let lines = scores.enumerated().map { k, v in
            "{\"id\":\"t\(k)\",\"line\":\(k + 2),\"status\":\"ok\",\"result\":{\"rules\":\"ktv\",\"score\":\(v),\"score_100\":\(v),\"latency_ms\":0,\"judged_share\":1,\"findings\":[]}}"
        } + ["{\"id\":\"a0\",\"line\":9,\"status\":\"ok\",\"result\":{\"rules\":\"agora\",\"score\":300,\"score_100\":60,\"latency_ms\":0,\"judged_share\":1,\"findings\":[]}}",
             "{\"id\":\"a1\",\"line\":10,\"status\":\"ok\",\"result\":{\"rules\":\"agora\",\"score\":450,\"score_100\":90,\"latency_ms\":0,\"judged_share\":1,\"findings\":[]}}"]
        let path = try write(lines.joined(separator: "\n") + "\n")
        defer { unlink(path) }
        let r = try BatchResults.read(path: path)
        let median = try #require(Stats.median(scores.sorted()))
        #expect(median == 50)   // the upper middle value would be 60
        #expect(r.summary()["scores"]?["ktv"]?["p50"] == .double(50))
        #expect(ScoreDistribution(scores).p50 == 50)
        let data = try pageData(BatchDashboard.render(r, outputPath: "/p/dash.html"))
        let medians = try #require(data["medians"] as? [[String: Any]])
        #expect(medians.map { $0["rules"] as? String } == ["agora", "ktv"])
        #expect(medians[1]["median"] as? Double == 50 && medians[1]["count"] as? Int == 6)
        #expect(medians[0]["median"] as? Double == 75)   // score_100, the page's one scale: (60 + 90) / 2
        // The page draws them, and computes no median of its own.
        #expect(EmbeddedTemplates.batch_html.contains("for (const m of D.medians)") && !EmbeddedTemplates.batch_html.contains("v.length >> 1"))
    }

    @Test func theDashboardCarriesTheCountsItDraws() throws {
        let path = try write(Self.lines)
        defer { unlink(path) }
        let html = BatchDashboard.render(try BatchResults.read(path: path), outputPath: "/p/dash.html")
        let data = try pageData(html)
        #expect((data["takes"] as? [Any])?.count == 5)
        let takes = try #require(data["takes"] as? [[String: Any]])
        #expect(takes[0]["page"] as? String == "a.html")
        let hist = try #require(data["histogram"] as? [[String: Any]])
        #expect(hist.compactMap { $0["counts"] as? [Int] }.flatMap { $0 }.reduce(0, +) == 4)
        #expect((data["failures"] as? [[String: Any]])?.first?["reason"] as? String == "missing")
    }
}
