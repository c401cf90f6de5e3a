import Foundation
import Testing

/// Hostile references, takes and logs on the scoring path (issue 19): each was a trap (exit 132),
/// a stack overflow (139), a hang, a silent loss or a wrong message at commit 79d4523. Now each is
/// exit 65 (or a clean result) with a message naming the file, the line or note, and the value.
@Suite struct ScoreRobustnessCLITests {
    /// A short reference (ten notes, C4…E4) and a take that sings it.
    static func song(_ s: Scratch) throws -> (reference: String, take: String) {
        let notes = (0..<10).map { "{\"start_ms\": \(1000 + $0 * 500), \"duration_ms\": 400, \"midi\": \(60 + $0 % 5), \"word\": \"w\($0)\"}" }
        let reference = try s.write("ref.json", "[" + notes.joined(separator: ",\n") + "]\n")
        var csv = "time_s,f0_hz\n"
        for k in 0..<700 {
            let ms = k * 10 - 1000
            let i = ms / 500
            let hz = ms >= 0 && i < 10 && ms % 500 < 400 ? 440 * pow(2, Double(60 + i % 5 - 69) / 12) : 0
            csv += String(format: "%.3f,%.3f\n", Double(k) / 100, hz)
        }
        return (reference, try s.write("take.csv", csv))
    }

    /// Runs `ktv` and checks it ended by exit (not a signal) with `status`, its message naming `names`.
    @discardableResult
    func expectRefused(_ args: [String], status: Int32 = 65, naming names: [String]) throws -> Run {
        let r = try ktv(args)
        #expect(r.status == status, "\(args): exit \(r.status), stderr \(r.stderr)")
        for n in names { #expect(r.stderr.contains(n), "\(args): `\(n)` not in \(r.stderr)") }
        #expect(!r.stderr.contains("Fatal error"), "\(args): \(r.stderr)")
        return r
    }

    @Test(arguments: ["ktv", "agora", "ultrastar"])
    func notesJSONWithTimesNearIntMaxAreRefused(rules: String) throws {
        let s = try Scratch()
        let (_, take) = try Self.song(s)
        let duration = try s.write("dur.json", "[{\"start_ms\": 1000, \"duration_ms\": 9223372036854775807, \"midi\": 60}]")
        let start = try s.write("start.json", "[{\"start_ms\": 9223372036854775807, \"duration_ms\": 100, \"midi\": 60}]")
        let nearly = try s.write("nearly.json", "[{\"start_ms\": 9223372036854775000, \"duration_ms\": 100, \"midi\": 60}]")
        try expectRefused(["score", take, "--reference", duration, "--rules", rules], naming: ["dur.json:1", "notes[0].duration_ms", "9223372036854775807"])
        try expectRefused(["score", take, "--reference", start, "--rules", rules], naming: ["start.json:1", "notes[0].start_ms", "past 24 hours"])
        try expectRefused(["score", take, "--reference", nearly, "--rules", rules], naming: ["nearly.json:1", "9223372036854775000"])
        try expectRefused(["score", "notes", duration], naming: ["dur.json:1", "duration_ms"])
    }

    @Test func pitchTrackReferencesPastADayAreRefusedWithTheirLine() throws {
        let s = try Scratch()
        let (_, take) = try Self.song(s)
        let huge = try s.write("huge.csv", "time_s,f0_hz\n0.0,440\n0.01,440\n1e308,440\n")
        var rows = "time_s,f0_hz\n"
        for k in 0..<8 { rows += "0.0\(k),440\n" }
        let pastIntMs = try s.write("past.csv", rows + "9300000000000000,440\n9400000000000000,440\n")
        try expectRefused(["score", take, "--reference", huge], naming: ["huge.csv:4", "1e+308 s is past 24 hours"])
        try expectRefused(["score", take, "--reference", pastIntMs], naming: ["past.csv:10", "past 24 hours"])
        let loud = try s.write("loud.csv", "time_s,f0_hz\n0.0,440\n0.01,1e308\n0.02,440\n")
        try expectRefused(["score", take, "--reference", loud], naming: ["loud.csv", "pitch sample 2", "outside the MIDI range"])
    }

    /// Migu XML tones whose `end` is before their `begin`, whose `end` is no time, or whose pitch is
    /// no frequency: the ktv rules trapped on the first, `score` dropped the second silently, and
    /// `score notes` wrote UltraStar pitches of ±12,000 for the third.
    @Test func brokenMiguTonesAreRefusedAsLyricsParseRefusesThem() throws {
        let s = try Scratch()
        let (_, take) = try Self.song(s)
        func migu(_ tones: String) -> String {
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><song><midi_lrc><paragraph><sentence>\n\(tones)\n</sentence></paragraph></midi_lrc></song>\n"
        }
        let good = "<tone begin=\"1.0\" end=\"1.5\" pitch=\"220\"><word>a</word></tone>\n"
        let backwards = try s.write("backwards.xml", migu(good + "<tone begin=\"2.0\" end=\"1.8\" pitch=\"220\"><word>b</word></tone>"))
        let bei = try s.write("bei.xml", migu(good + "<tone begin=\"2.0\" end=\"bei\" pitch=\"220\"><word>b</word></tone>"))
        let loud = try s.write("loud.xml", migu("<tone begin=\"1.0\" end=\"1.5\" pitch=\"1e308\"><word>a</word></tone>\n" + good.replacingOccurrences(of: "1.0", with: "2.0").replacingOccurrences(of: "1.5", with: "2.5")))
        let early = try s.write("early.xml", migu("<tone begin=\"-1.0\" end=\"0.5\" pitch=\"220\"><word>a</word></tone>\n"))
        for rules in ["ktv", "agora", "ultrastar"] {
            try expectRefused(["score", take, "--reference", backwards, "--rules", rules], naming: ["backwards.xml", "note 2 (`b`)", "ends 200 ms before it starts"])
        }
        try expectRefused(["score", take, "--reference", bei], naming: ["bei.xml:3", "end=\"bei\""])
        try expectRefused(["lyrics", "parse", bei], naming: ["bei.xml:3"])
        try expectRefused(["score", "notes", loud, "--to", "ultrastar"], naming: ["loud.xml", "note 1 (`a`)", "outside the MIDI range"])
        try expectRefused(["score", "notes", early, "--to", "ultrastar"], naming: ["early.xml", "note 1 (`a`)", "before 0"])
    }

    /// 30,000 nested elements (210 KB) overflowed the stack in every XML reader's caller.
    @Test func xmlNestedThirtyThousandDeepIsRefusedNotAStackOverflow() throws {
        let s = try Scratch()
        let (_, take) = try Self.song(s)
        let deep = "<?xml version=\"1.0\"?>" + String(repeating: "<a>", count: 30_000) + String(repeating: "</a>", count: 30_000)
        let path = try s.write("lyrics/deep.xml", deep)
        try s.write("lyrics/good.krc", goodKRC)
        let tooDeep = "nested more than 64 deep"
        try expectRefused(["lyrics", "parse", path], naming: ["deep.xml", tooDeep])
        try expectRefused(["score", take, "--reference", path], naming: ["deep.xml", tooDeep])
        try expectRefused(["score", "notes", path], naming: ["deep.xml", tooDeep])
        // The folder is checked whole: the deep file is one fatal finding, the good file is still read.
        let r = try ktv(["lyrics", "validate", s.path("lyrics"), "--format", "json"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.out.contains("good.krc") && r.out.contains(tooDeep))
    }

    @Test(arguments: ["locked", "free"])
    func takesWithTimesPastADayAreRefusedWithTheirLine(timing: String) throws {
        let s = try Scratch()
        let (reference, take) = try Self.song(s)
        let body = try String(contentsOfFile: take, encoding: .utf8)
        for (name, row) in [("t1e300.csv", "1e300,440\n"), ("t1e9.csv", "1000000000,440\n")] {
            let bad = try s.write(name, body + row)
            try expectRefused(["score", bad, "--reference", reference, "--timing", timing], naming: ["\(name):702", "past 24 hours"])
        }
        // A pitch no voice has (`pitch eval` compares any f0, so the scorer bounds it, by sample).
        let shrill = try s.write("shrill.csv", body + "7.5,20000\n")
        try expectRefused(["score", shrill, "--reference", reference, "--timing", timing],
                          naming: ["shrill.csv", "pitch sample 701", "20000.0 Hz is outside the MIDI range"])
    }

    /// A progress position that steps back by 10 ms a thousand times (callback jitter, not a seek)
    /// broke the song clock (a trap); those moments are now skipped, and the take is judged.
    @Test func aProgressLogThatStepsBackALittleIsJudged() throws {
        let s = try Scratch()
        let (reference, take) = try Self.song(s)
        var log = "{\"device\":\"B\",\"at\":0,\"ntp\":1,\"kind\":\"record\",\"action\":\"start\"}\n"
        for k in 1...1000 {
            log += "{\"device\":\"B\",\"at\":\(k * 40),\"ntp\":\(k * 40 + 1),\"kind\":\"progress\",\"position\":\(max(0, 5000 - k * 10)),\"state\":\"playing\"}\n"
        }
        let path = try s.write("steps.jsonl", log)
        let r = try ktv(["score", take, "--reference", reference, "--progress-log", path, "--device", "B", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.contains("\"score\""))
        // A position past 24 hours is refused where it is read.
        let far = try s.write("far.jsonl", "{\"device\":\"B\",\"at\":0,\"ntp\":1,\"kind\":\"record\",\"action\":\"start\"}\n"
                              + "{\"device\":\"B\",\"at\":10,\"ntp\":11,\"kind\":\"progress\",\"position\":90000000000,\"state\":\"playing\"}\n")
        try expectRefused(["score", take, "--reference", reference, "--progress-log", far, "--device", "B"], naming: ["far.jsonl:2", "position", "past 24 hours"])
    }

    /// Messages that named no file: `ktv: : no voiced frame`, `ktv: : no moment of the take falls…`.
    @Test func messagesFromTheAlignersNameTheirFile() throws {
        let s = try Scratch()
        let (reference, take) = try Self.song(s)
        let silent = try s.write("silent.wav", wavBytes(rate: 16000, channels: 1, frames: 32000))
        try expectRefused(["score", silent, "--reference", reference, "--timing", "free"], naming: ["ktv: \(silent): no voiced frame"])
        let paused = try s.write("paused.jsonl", "{\"device\":\"B\",\"at\":0,\"ntp\":1,\"kind\":\"record\",\"action\":\"start\"}\n"
                                 + "{\"device\":\"B\",\"at\":10,\"ntp\":11,\"kind\":\"progress\",\"position\":0,\"state\":\"paused\"}\n")
        try expectRefused(["score", take, "--reference", reference, "--progress-log", paused, "--device", "B"],
                          naming: ["ktv: \(paused): no moment of the take falls while `B`'s player was playing"])
    }

    @Test func aNotesJSONWithAByteOrderMarkIsRead() throws {
        let s = try Scratch()
        let (reference, take) = try Self.song(s)
        let bom = try s.write("bom.json", [0xEF, 0xBB, 0xBF] + Array(try String(contentsOfFile: reference, encoding: .utf8).utf8))
        let plain = try ktv(["score", take, "--reference", reference, "--format", "json"])
        let marked = try ktv(["score", take, "--reference", bom, "--format", "json"])
        #expect(marked.status == 0, "\(marked.stderr)")
        #expect(marked.out.replacingOccurrences(of: bom, with: reference) == plain.out)
    }

    @Test func aNotesJSONLineThatEndsBeforeItStartsIsRefused() throws {
        let s = try Scratch()
        let (_, take) = try Self.song(s)
        let path = try s.write("lines.json", "{\"notes\": [{\"start_ms\": 1000, \"duration_ms\": 400, \"midi\": 60, \"line\": 0}],\n"
                               + "\"lines\": [{\"start_ms\": 5000, \"end_ms\": 1000, \"text\": \"x\"}]}\n")
        try expectRefused(["score", take, "--reference", path], naming: ["lines.json:2", "lines[0] ends at 1000 ms, before it starts at 5000 ms"])
    }

    /// What `score notes` writes, `score` reads: every format, from every kind of reference the
    /// project writes itself; and a melody of zero-length notes is refused instead of written as an
    /// empty MIDI file.
    @Test func scoreNotesWritesWhatItReadsBack() throws {
        let s = try Scratch()
        let (reference, take) = try Self.song(s)
        let fractional = try s.write("fractional.json", "[{\"start_ms\": 0, \"duration_ms\": 1, \"midi\": 0},"
                                     + "{\"start_ms\": 86399000, \"duration_ms\": 1000, \"midi\": 127, \"word\": \"end\"}]")
        let sources = [reference, fractional, KTVBinary.packageRoot.appendingPathComponent("fixtures/lyrics/migu.xml").path]
        for source in sources {
            for (format, ext) in [("json", "json"), ("ultrastar", "txt"), ("midi", "mid")] {
                let out = s.path("back.\(ext)")
                let w = try ktv(["score", "notes", source, "--to", format, "-o", out])
                #expect(w.status == 0, "\(source) → \(format): \(w.stderr)")
                let back = try ktv(["score", "notes", out])
                #expect(back.status == 0, "\(source) → \(format) does not read back: \(back.stderr)")
            }
        }
        let zero = try s.write("zero.json", "[{\"start_ms\": 1000, \"duration_ms\": 0, \"midi\": 60}]")
        try expectRefused(["score", "notes", zero, "--to", "midi"], naming: ["zero.json", "no note to sing lasts longer than 0 ms"])
        // A rap-only song (UltraStar judges rap on timing) is a reference, but MIDI cannot hold it.
        let rap = try s.write("rap.txt", "#TITLE:r\n#BPM:300\n#GAP:0\nR 0 4 0 yo\nR 4 4 0 yo\nE\n")
        #expect(try ktv(["score", "notes", rap, "--to", "ultrastar"]).status == 0)
        try expectRefused(["score", "notes", rap, "--to", "midi"], naming: ["rap.txt", "a MIDI file of it would hold no note"])
        _ = take
    }

    @Test func aPitchIntervalOfZeroIsAUsageError() throws {
        let s = try Scratch()
        let (reference, take) = try Self.song(s)
        try expectRefused(["score", take, "--reference", reference, "--pitch-interval-ms", "0"], status: 64, naming: ["--pitch-interval-ms", "1…1000"])
    }

    /// A FIFO in a folder blocked `lyrics validate DIR` forever; a walk now skips it and says so.
    @Test func aFIFOInAFolderIsSkippedWithAWarning() throws {
        let s = try Scratch()
        try s.write("lyrics/good.krc", goodKRC)
        #expect(mkfifo(s.path("lyrics/pipe.lrc"), 0o644) == 0)
        let r = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"), ["30", KTVBinary.url.path, "lyrics", "validate", s.path("lyrics")])
        #expect(r.status == 0, "exit \(r.status) (124 is the timeout): \(r.stderr)")
        #expect(r.out.contains("pipe.lrc") && r.out.contains("a FIFO (named pipe), not a regular file; skipped") && r.out.contains("[not-a-file]"))
    }

    /// Truncated audio warned for FLAC only: a WAV whose data chunk claims more than the file holds,
    /// and a reference recording given with --reference-audio, said nothing.
    @Test func truncatedWAVWarnsAndSoDoesATruncatedReferenceRecording() throws {
        let s = try Scratch()
        let (reference, _) = try Self.song(s)
        let full = wavBytes(rate: 16000, channels: 2, frames: 16000 * 6) { frame, _ in Int16(8000 * sin(Double(frame) * 2 * .pi * 220 / 16000)) }
        let cut = try s.write("cut.wav", Array(full.prefix(44 + 16000 * 2 * 4)))   // the header and 2 s of frames
        let r = try ktv(["pitch", cut, "-o", s.path("cut.f0.csv")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("cut.wav: the audio ends at 2.000 s of the 6.000 s its header claims (the data chunk claims"))
        let take = try s.write("ref-take.csv", "time_s,f0_hz\n1.0,220\n1.5,220\n")
        let scored = try ktv(["score", take, "--reference-audio", cut])
        #expect(scored.stderr.contains("ktv: warning: \(cut): the audio ends at 2.000 s"), "\(scored.stderr)")
        _ = reference
    }

    /// A cut Ogg Vorbis file (made with sox, when it is installed) warns like a cut FLAC.
    @Test func truncatedOggWarns() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { return }
        let s = try Scratch()
        let ogg = s.path("tone.ogg")
        // Noise: its pages spread over the file, so half of it holds audio.
        let made = try runProcess(URL(fileURLWithPath: "/usr/bin/sox"), ["-n", "-r", "44100", "-c", "1", ogg, "synth", "6", "whitenoise"])
        try #require(made.status == 0, "\(made.stderr)")
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ogg)))
        let intact = try ktv(["pitch", ogg, "-o", s.path("a.csv")])
        #expect(intact.status == 0 && !intact.stderr.contains("warning"), "\(intact.stderr)")
        let cut = try s.write("cut.ogg", Array(whole.prefix(whole.count / 2)))
        let r = try ktv(["pitch", cut, "-o", s.path("b.csv")])
        #expect(r.status == 0)
        #expect(r.stderr.contains("cut.ogg: the audio ends at") && r.stderr.contains("without its end-of-stream page"), "\(r.stderr)")
    }

    @Test func splitNamesTheBlockedReportAsAFileNotAudio() throws {
        let s = try Scratch()
        let input = try dualMonoTrack(s, "in.wav", seconds: 2)
        try FileManager.default.createDirectory(atPath: s.path("out/split.json"), withIntermediateDirectories: true)
        try expectRefused(["split", input, "--out-dir", s.path("out")], status: 74, naming: ["split.json: cannot write the file: is a folder"])
    }

    /// One hostile row killed the whole batch (and `--resume` met it again): each is now a line with
    /// its reason, and the rows around it are scored.
    @Test func aBatchOfHostileRowsScoresTheRest() throws {
        let s = try Scratch()
        let (_, take) = try Self.song(s)
        try s.write("dur.json", "[{\"start_ms\": 1000, \"duration_ms\": 9223372036854775807, \"midi\": 60}]")
        try s.write("far.csv", "time_s,f0_hz\n0.0,440\n0.01,440\n1e308,440\n")
        try s.write("back.xml", "<?xml version=\"1.0\"?><song><midi_lrc><paragraph><sentence><tone begin=\"2.0\" end=\"1.8\" pitch=\"220\"><word>b</word></tone></sentence></paragraph></midi_lrc></song>")
        try s.write("deep.xml", String(repeating: "<a>", count: 30_000) + String(repeating: "</a>", count: 30_000))
        try s.write("t1e300.csv", try String(contentsOfFile: take, encoding: .utf8) + "1e300,440\n")
        var log = "{\"device\":\"B\",\"at\":0,\"ntp\":1,\"kind\":\"record\",\"action\":\"start\"}\n"
        for k in 1...1000 {
            log += "{\"device\":\"B\",\"at\":\(k * 40),\"ntp\":\(k * 40 + 1),\"kind\":\"progress\",\"position\":\(max(0, 5000 - k * 10)),\"state\":\"playing\"}\n"
        }
        try s.write("steps.jsonl", log)
        let manifest = try s.write("m.csv", """
            id,take,reference,timing,progress_log,device
            good1,take.csv,ref.json,,,
            dur,take.csv,dur.json,,,
            far,take.csv,far.csv,,,
            back,take.csv,back.xml,,,
            deep,take.csv,deep.xml,,,
            t1e300,t1e300.csv,ref.json,free,,
            steps,take.csv,ref.json,,steps.jsonl,B
            good2,take.csv,ref.json,free,,

            """)
        let r = try ktv(["batch", manifest, "-o", s.path("r.jsonl"), "--progress", "never", "--jobs", "2"])
        #expect(r.status == 1, "\(r.stderr)")
        let lines = try String(contentsOfFile: s.path("r.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
        func line(_ id: String) -> String { lines.first { $0.contains("\"id\":\"\(id)\"") } ?? "" }
        #expect(lines.count == 8)
        for id in ["good1", "good2", "steps"] { #expect(line(id).contains("\"status\":\"ok\""), "\(id): \(line(id))") }
        for id in ["dur", "far", "back", "deep"] { #expect(line(id).contains("\"reason\":\"reference\""), "\(id): \(line(id))") }
        #expect(line("t1e300").contains("\"reason\":\"take\"") && line("t1e300").contains("past 24 hours"), "\(line("t1e300"))")
    }

    /// A notes JSON's memory is near its text's size: 1.7 GB for 63 MB before (a tree of every value;
    /// 198 MB for this 21 MB file). Measured as `score notes --to ultrastar`, whose output is small,
    /// above the same command's peak on a ten-note reference.
    @Test func aLargeNotesJSONIsReadInMemoryNearItsSize() throws {
        let s = try Scratch()
        let (small, _) = try Self.song(s)
        var text = "[\n"
        let n = 200_000
        for i in 0..<n {
            text += "{\"start_ms\": \(i * 100), \"duration_ms\": 90, \"midi\": \(60 + i % 12), \"word\": \"word\(i % 1000)\", \"line\": \(i / 8), \"kind\": \"normal\"}"
            text += i < n - 1 ? ",\n" : "\n]\n"
        }
        let path = try s.write("big.json", text)
        let base = try ktvLimited(["score", "notes", small, "--to", "ultrastar", "-o", s.path("small.txt")], addressSpaceMB: 3072)
        let r = try ktvLimited(["score", "notes", path, "--to", "ultrastar", "-o", s.path("big.txt")], addressSpaceMB: 3072)
        let above = r.peakRSSBytes - base.peakRSSBytes
        print("peak RSS, ktv score notes on a \(text.utf8.count >> 20) MB notes JSON (\(n) notes): \(r.peakRSSBytes >> 20) MB, \(above >> 20) MB above a ten-note file")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(above < 5 * text.utf8.count / 2)
    }
}
