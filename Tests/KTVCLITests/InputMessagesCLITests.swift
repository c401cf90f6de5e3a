import Foundation
import Testing
import KTVLyrics
@testable import ktv

/// Messages that say what a file is, name a misspelt word, and use no internal names (issue 31 C).
@Suite struct InputMessagesCLITests {
    static func fixture(_ path: String) -> String { KTVBinary.packageRoot.appendingPathComponent("fixtures/" + path).path }
    static let lrc = fixture("lyrics/lrc-stamps.lrc"), krc = fixture("lyrics/krc-encrypted.krc"), migu = fixture("lyrics/migu.xml")
    static let audio = fixture("audio/demo-dualmono.flac"), track = fixture("audio/demo-dualmono.f0.csv")
    static let musicxml = fixture("musicxml/repeat-verses.musicxml")

    /// A file in the wrong slot is told what it is and which flag takes it, exit 65 (before: the
    /// slot's parser error: "invalid JSON: expected a value … found `ti:scene11]`", "binary data (a
    /// NUL byte), not text", "expected 2 columns (time and f0), found 3").
    @Test func aFileInTheWrongSlotIsToldWhatItIsAndWhereItGoes() throws {
        let s = try Scratch()
        let notes = try s.write("ref.json", "[{\"start_ms\": 1000, \"duration_ms\": 500, \"midi\": 60}, {\"start_ms\": 1500, \"duration_ms\": 500, \"midi\": 62}]\n")
        let cases: [(args: [String], says: [String])] = [
            (["score", Self.track, "--reference", Self.lrc],
             ["lrc-stamps.lrc: this is LRC lyrics (words and times, no pitch), not a reference melody; give it with --lyrics, and the melody with --reference"]),
            (["score", Self.track, "--reference", Self.krc], ["krc-encrypted.krc: this is KRC lyrics", "give it with --lyrics"]),
            (["score", Self.track, "--reference", Self.audio],
             ["demo-dualmono.flac: this is a recording (audio), not a reference melody; give it with --reference-audio"]),
            (["score", Self.migu, "--reference", notes],
             ["migu.xml: this is a reference melody (Migu XML), not a take (a recording or a pitch track); give it with --reference"]),
            (["score", Self.musicxml, "--reference", notes], ["repeat-verses.musicxml: this is a reference melody (MusicXML), not a take"]),
            (["score", Self.lrc, "--reference", notes], ["lrc-stamps.lrc: this is LRC lyrics (words and times, no pitch), not a take", "give it with --lyrics"]),
            (["score", Self.track, "--reference", notes, "--lyrics", Self.audio],
             ["demo-dualmono.flac: this is a recording (audio), not lyrics; give it as the take (the first argument) or with --reference-audio"]),
            (["score", Self.track, "--reference", notes, "--lyrics", notes], ["ref.json: this is a reference melody (a notes JSON), not lyrics; give it with --reference"]),
            (["score", Self.track, "--reference-audio", Self.migu], ["migu.xml: this is a reference melody (Migu XML), not a recording of the reference; give it with --reference"]),
            (["lyrics", "parse", Self.audio], ["demo-dualmono.flac: this is a recording (audio), not lyrics; give it to ktv score as the take"]),
            (["lyrics", "convert", notes, "--to", "lrc"], ["ref.json: this is a reference melody (a notes JSON), not lyrics; give it to ktv score with --reference"]),
            (["batch", Self.lrc, "-o", s.path("r.jsonl"), "--progress", "never"],
             ["lrc-stamps.lrc: this is LRC lyrics (words and times, no pitch), not a batch manifest (CSV or JSON Lines with a take column); give it to ktv score with --lyrics"]),
            (["batch", Self.audio, "-o", s.path("r.jsonl"), "--progress", "never"], ["demo-dualmono.flac: this is a recording (audio), not a batch manifest", "give it to ktv score as the take"]),
        ]
        for (args, says) in cases {
            let r = try ktv(args)
            #expect(r.status == 65, "\(args): \(r.status) \(r.stderr)")
            for text in says { #expect(r.stderr.contains(text), "\(args): \(r.stderr)") }
            #expect(!r.stderr.contains("invalid JSON") && !r.stderr.contains("NUL byte") && !r.stderr.contains("columns (time and f0)"), "\(args): \(r.stderr)")
        }
        // A batch row says it by its columns.
        let manifest = try s.write("m.csv", "id,take,reference\nt1,\(Self.lrc),\(Self.migu)\nt2,\(Self.track),\(Self.audio)\n")
        _ = try ktv(["batch", manifest, "-o", s.path("rows.jsonl"), "--progress", "never"])
        let rows = try String(contentsOfFile: s.path("rows.jsonl"), encoding: .utf8)
        #expect(rows.contains("this is LRC lyrics (words and times, no pitch), not a take (a recording or a pitch track); give it in the lyrics column"), "\(rows)")
        #expect(rows.contains("this is a recording (audio), not a reference melody; give it as a reference recording (a batch row takes reference files"), "\(rows)")
    }

    /// The files in their own slots still score.
    @Test func theRightSlotsStillWork() throws {
        let r = try ktv(["score", Self.track, "--reference-audio", Self.audio, "--lyrics", Self.fixture("audio/demo-dualmono.krc"), "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let m = try ktv(["score", Self.track, "--reference", Self.migu, "--format", "json"])
        #expect(m.status == 0, "\(m.stderr)")
    }

    /// A misspelt option or command is named, with the nearest spelling, before anything else is
    /// said (before: "give one of --reference and --reference-audio"; "Unexpected argument 'scor'").
    @Test func aMisspeltWordIsNamedFirst() throws {
        let cases: [(args: [String], says: String)] = [
            (["score", "take", "--referance", "x"], "Error: Unknown option '--referance'. Did you mean '--reference'?"),
            (["score", "take.csv", "--referance", "x"], "Error: Unknown option '--referance'. Did you mean '--reference'?"),
            (["score", "--rules", "agora", "take.csv", "--refrence", "x"], "Error: Unknown option '--refrence'. Did you mean '--reference'?"),
            (["scor"], "Error: Unknown command 'scor'. Did you mean 'score'?"),
            (["lyrics", "pars", "x.lrc"], "Error: Unknown command 'pars'. Did you mean 'parse'?"),
            (["score", "note", "x.xml"], "Error: Unknown command 'note'. Did you mean 'notes'?"),
            (["batch", "m.csv", "--jbos", "2"], "Error: Unknown option '--jbos'. Did you mean '--jobs'?"),
            (["lyrics", "convert", "x.lrc", "--to", "ttml", "--ttml-timin", "absolute"], "Error: Unknown option '--ttml-timin'. Did you mean '--ttml-timing'?"),
        ]
        for (args, says) in cases {
            let r = try ktv(args)
            #expect(r.status == 64 && r.stderr.hasPrefix(says), "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("for more information"), "\(args): \(r.stderr)")
        }
        // Hidden and old spellings still parse; internal options are not suggested.
        let old = try ktv(["score", Self.track, "--reference", Self.migu, "--offset", "5", "--format", "json"])
        #expect(old.status == 0 && old.stderr.contains("--offset is now --agora-offset"), "\(old.stderr)")
        let worker = try ktv(["batch", "m.csv", "--workr"])
        #expect(worker.status == 64 && !worker.stderr.contains("--worker"), "\(worker.stderr)")
    }

    static func helpPages() throws -> [(String, String)] {
        try HelpTests.paths().map { path, _ in
            (path, try ktv(Array(path.split(separator: " ").dropFirst().map(String.init)) + ["--help"]).out)
        }
    }

    /// Help speaks in flags: no library parameter name (`minHz`), each default said once, a flag
    /// described as a flag, every lyric format listed, the right document named.
    @Test func helpNamesFlagsNotInternals() throws {
        let names = Set(parameterFlags.keys)
        for (path, page) in try Self.helpPages() {
            let words = page.split { !($0.isLetter || $0.isNumber) }.map(String.init)
            let internals = words.filter { names.contains($0) }
            #expect(internals.isEmpty, "\(path) --help names \(internals)")
            #expect(!page.contains("README"), "\(path) --help points at the README")
        }
        let pitch = try ktv(["pitch", "--help"]).out.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        #expect(pitch.contains("above --min-hz") && pitch.contains("one period of --min-hz"), "\(pitch)")
        let score = try ktv(["score", "--help"]).out.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        // An option's help: from its name to the next option.
        func option(_ name: String) throws -> String {
            let start = try #require(score.range(of: name + " "))
            let end = score.range(of: " --", range: start.upperBound..<score.endIndex)?.lowerBound ?? score.endIndex
            return String(score[start.lowerBound..<end])
        }
        let stream = try option("--stream <stream>")
        #expect(stream.lowercased().components(separatedBy: "default").count == 2, "\(stream)")
        #expect(score.contains("--embed-audio With --html: carry the recording inside the page (base64: the page a third larger than the file) instead of linking to it; a recording over 25 MB is refused."), "\(score)")
        #expect(!score.contains("0.1…200 MB"), "\(score)")
        let root = try ktv(["--help"]).out.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        for f in LyricFormat.allCases { #expect(root.contains(f.title), "ktv --help: the lyrics line misses \(f.title)") }
        let batch = try ktv(["batch", "--help"]).out.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        #expect(batch.contains("is K-1 (docs/batch.md)"), "\(batch)")
    }

    /// Every parameter `flagText` writes as a flag has that flag on some command.
    @Test func everyRespeltParameterIsARealFlag() throws {
        let pages = try Self.helpPages().map(\.1).joined(separator: "\n")
        for (name, flag) in parameterFlags { #expect(pages.contains(flag + " "), "\(name) → \(flag) is no option of any command") }
    }

    /// Messages name flags (or a batch's columns), not library parameters.
    @Test func messagesNameFlagsAndColumns() throws {
        let s = try Scratch()
        let take = try s.write("take.txt", "0\n220\n221\n0\n")
        let r = try ktv(["score", take, "--reference", Self.migu])
        #expect(r.status == 65 && r.stderr.contains("a file of one Hz value per line needs --pitch-interval-ms, the interval between its values"), "\(r.stderr)")
        #expect(!r.stderr.contains("pitchIntervalMs"))
        let manifest = try s.write("m.csv", "id,take,reference\nt1,take.txt,\(Self.migu)\n")
        _ = try ktv(["batch", manifest, "-o", s.path("r.jsonl"), "--progress", "never"])
        let rows = try String(contentsOfFile: s.path("r.jsonl"), encoding: .utf8)
        #expect(rows.contains("needs the pitch_interval_ms column, the interval between its values"), "\(rows)")
        let range = try ktv(["pitch", Self.audio, "--min-hz", "500", "--max-hz", "400"])
        #expect(range.status == 64 && range.stderr.contains("--max-hz = 400.0 is out of range; allowed: above --min-hz (500.0)"), "\(range.stderr)")
    }
}
