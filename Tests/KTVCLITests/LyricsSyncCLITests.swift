import Foundation
import KTVAudio
import KTVCore
import KTVSynth
import Testing

/// `ktv lyrics sync` end to end on the demo track: lyrics 900 ms late are put back; a section cut
/// from the audio drops its line (exit 1, the file still written); audio with no voice is exit 65.
@Suite struct LyricsSyncCLITests {
    static let flac = KTVBinary.packageRoot.appendingPathComponent("fixtures/audio/demo-dualmono.flac").path
    static let late = KTVBinary.packageRoot.appendingPathComponent("fixtures/audio/demo-dualmono-late.lrc").path
    static let krc = KTVBinary.packageRoot.appendingPathComponent("fixtures/audio/demo-dualmono.krc").path

    @Test func lateLyricsArePutBack() throws {
        let s = try Scratch()
        let out = s.dir.appendingPathComponent("synced.lrc").path
        let r = try ktv(["lyrics", "sync", Self.late, "--audio", Self.flac, "-o", out, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        let sections = try #require(json["sections"] as? [[String: Any]])
        #expect(sections.count == 1)
        let offset = try #require(sections.first?["offset_ms"] as? Int)
        #expect(abs(offset + 900) <= 20)
        let lines = try #require(json["lines"] as? [[String: Any]])
        // The demo KRC's true starts: 400, 4067, 6993 ms.
        let got = lines.compactMap { $0["new_start_ms"] as? Int }
        #expect(zip(got, [400, 4067, 6993]).allSatisfy { abs($0 - $1) <= 20 }, "\(got)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.hasPrefix("[ti:Demo 42]\n[ar:KTVSynth]\n[00:00.4"))
    }

    /// The KRC as KRC again (words kept) and as enhanced LRC with --to.
    @Test func wordsMoveWithTheirLinesAndToPicksTheFormat() throws {
        let s = try Scratch()
        let out = s.dir.appendingPathComponent("synced.elrc").path
        let r = try ktv(["lyrics", "sync", Self.krc, "--audio", Self.flac, "-o", out, "--to", "elrc"])
        #expect(r.status == 0, "\(r.stderr)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains("<00:00.4") && text.contains("ri"))
        #expect(r.out.contains("1 section(s)"))
    }

    /// The demo track with its last 3.4 s (the third line's phrase) cut: line 3 is dropped and listed.
    /// (A cut inside these 10 s is ambiguous: its three phrases differ in length only, and the
    /// library's tests cut inside longer scenes.)
    @Test func aCutLineIsDroppedAndListed() throws {
        let s = try Scratch()
        let (buffer, info) = try AudioBuffer.read(path: Self.flac)
        let a = Int(6.6 * info.sampleRate)
        let cut = AudioBuffer(sampleRate: info.sampleRate, channels: buffer.channels.map { Array($0[..<a]) })
        let wav = s.dir.appendingPathComponent("cut.wav").path
        try cut.write(path: wav, format: .wav16)
        let out = s.dir.appendingPathComponent("synced.krc").path
        let r = try ktv(["lyrics", "sync", Self.krc, "--audio", wav, "-o", out, "--format", "json"])
        #expect(r.status == 1, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(json["dropped"] as? [Int] == [3])
        let lines = try #require(json["lines"] as? [[String: Any]])
        #expect(abs((lines[1]["new_start_ms"] as? Int ?? 0) - 4067) <= 20)
        #expect(r.out.contains("\"low_confidence\": []"))
        #expect(FileManager.default.fileExists(atPath: out))
    }

    @Test func audioWithoutVoiceIsBadData() throws {
        let s = try Scratch()
        let wav = s.dir.appendingPathComponent("silence.wav").path
        try AudioBuffer(sampleRate: 16000, channels: [[Float](repeating: 0, count: 16000 * 5)]).write(path: wav, format: .wav16)
        let r = try ktv(["lyrics", "sync", Self.krc, "--audio", wav, "-o", s.dir.appendingPathComponent("x.krc").path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("no voice"))
    }
}

/// The story on the shared scene dev-11: 4 s cut out of the middle of its dual-mono track.
/// `validate --audio` no longer says "move every time by −4000 ms": it names two sections and the
/// sync command; `sync` puts lines 1-2 where they were, lines 4-5 4 s earlier, and drops line 3.
private let syncSharedRoot = KTVBinary.packageRoot.deletingLastPathComponent().appendingPathComponent("shared").path

@Suite(.enabled(if: FileManager.default.fileExists(atPath: syncSharedRoot + "/scenes/dev-11/lyrics.krc"), "../shared is not there"))
struct SharedLyricsSyncCLITests {
    @Test func aCutInTheMiddleIsTwoSections() throws {
        let s = try Scratch()
        let scene = syncSharedRoot + "/scenes/dev-11"
        let (buffer, info) = try AudioBuffer.read(path: scene + "/original_dualmono.flac")
        let a = Int(13 * info.sampleRate), b = Int(17 * info.sampleRate)
        let wav = s.dir.appendingPathComponent("cut.wav").path
        try AudioBuffer(sampleRate: info.sampleRate, channels: buffer.channels.map { Array($0[..<a] + $0[b...]) }).write(path: wav, format: .wav16)
        let v = try ktv(["lyrics", "validate", scene + "/lyrics.krc", "--audio", wav])
        #expect(v.status == 0)
        #expect(v.out.contains("the lyrics follow a different edit of the song"))
        #expect(v.out.contains("ktv lyrics sync \(scene)/lyrics.krc --audio \(wav) -o synced.krc"))
        #expect(!v.out.contains("lyrics-offset"))
        let out = s.dir.appendingPathComponent("synced.krc").path
        let r = try ktv(["lyrics", "sync", scene + "/lyrics.krc", "--audio", wav, "-o", out, "--format", "json"])
        #expect(r.status == 1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(json["dropped"] as? [Int] == [3])
        let got = (json["lines"] as? [[String: Any]] ?? []).map { $0["new_start_ms"] as? Int }
        let truth: [Int?] = [1500, 5486, nil, 16558, 21325]
        for (g, t) in zip(got, truth) {
            if let t, let g { #expect(abs(g - t) <= 30, "\(got)") } else { #expect(g == nil && t == nil, "\(got)") }
        }
        let back = try ktv(["lyrics", "parse", out, "--format", "json"])
        #expect(back.status == 0)
    }
}

/// `--words` on the shared scenes' line-level LRC (their KRC converted to plain LRC): word starts
/// from the voice's onsets and note changes, against the KRC's word times.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: syncSharedRoot + "/scenes/dev-12/lyrics.krc"), "../shared is not there"))
struct SharedWordTimingCLITests {
    @Test(arguments: ["dev-11", "dev-12"]) func wordStartsFollowTheVoice(_ scene: String) throws {
        let s = try Scratch()
        let dir = syncSharedRoot + "/scenes/" + scene
        let lrc = s.dir.appendingPathComponent("lines.lrc").path, out = s.dir.appendingPathComponent("words.elrc").path
        #expect(try ktv(["lyrics", "convert", dir + "/lyrics.krc", "--to", "lrc", "-o", lrc]).status == 0)
        let r = try ktv(["lyrics", "sync", lrc, "--audio", dir + "/original_dualmono.flac", "--words", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        func words(_ path: String) throws -> [[Int]] {
            let p = try ktv(["lyrics", "parse", path, "--format", "json"])
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(p.stdout)) as? [String: Any])
            return (obj["lines"] as? [[String: Any]] ?? []).map { ($0["words"] as? [[String: Any]] ?? []).compactMap { $0["start_ms"] as? Int } }
        }
        let got = try words(out), truth = try words(dir + "/lyrics.krc")
        #expect(got.map(\.count) == truth.map(\.count))
        let errors = zip(got, truth).flatMap { zip($0, $1).map { Double(abs($0 - $1)) } }.sorted()
        let median = Stats.median(errors) ?? .nan
        print("words \(scene): \(errors.count) words, median \(Int(median)) ms, p95 \(Int(Stats.percentile(errors, 0.95) ?? .nan)) ms")
        #expect(median <= 80)
    }
}

/// `--accompaniment`: the shared scene dev-12's takes (a singer over the backing track, recorded
/// with the app's latency), the bleed cancelled: the take sung 400 ms late maps 400 ms later than
/// the good one.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: syncSharedRoot + "/scenes/dev-12/take_late_400ms.flac"), "../shared is not there"))
struct SharedAccompanimentSyncCLITests {
    @Test func aLateTakeMapsLater() throws {
        let s = try Scratch()
        let dir = syncSharedRoot + "/scenes/dev-12"
        func offset(_ take: String) throws -> Int {
            let r = try ktv(["lyrics", "sync", dir + "/lyrics.krc", "--audio", dir + "/" + take, "--accompaniment", dir + "/accompaniment.flac",
                             "-o", s.dir.appendingPathComponent(take + ".krc").path, "--format", "json"])
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
            let sections = try #require(json["sections"] as? [[String: Any]])
            #expect(sections.count == 1)
            return try #require(sections.first?["offset_ms"] as? Int)
        }
        let good = try offset("take_good.flac"), late = try offset("take_late_400ms.flac")
        #expect(abs(late - good - 400) <= 20, "good \(good) ms, late \(late) ms")
    }
}

/// `ktv batch sync`: a manifest of lyric/audio pairs, one result line per row, the retimed files
/// in the folder, a failed row as an error line (exit 1), a manifest without the sync columns 65.
@Suite struct BatchSyncCLITests {
    @Test func aManifestOfPairs() throws {
        let s = try Scratch()
        let fx = KTVBinary.packageRoot.appendingPathComponent("fixtures/audio").path
        let manifest = try s.write("m.csv", "id,lyrics,take\nlate,\(fx)/demo-dualmono-late.lrc,\(fx)/demo-dualmono.flac\nsong/2,\(fx)/demo-dualmono.krc,\(fx)/demo-dualmono.flac\nmissing,nope.lrc,\(fx)/demo-dualmono.flac\n")
        let out = s.dir.appendingPathComponent("out").path, results = s.dir.appendingPathComponent("r.jsonl").path
        let r = try ktv(["batch", "sync", manifest, "--out-dir", out, "-o", results, "--jobs", "2"])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("3 row(s): 2 synced, 0 with lines dropped or low-confidence, 1 failed"))
        let lines = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let byId = Dictionary(uniqueKeysWithValues: lines.map { ($0["id"] as? String ?? "", $0) })
        #expect(Set(byId.keys) == ["late", "song/2", "missing"])
        #expect(byId["missing"]?["reason"] as? String == "unreadable")
        let late = try #require(byId["late"]?["sections"] as? [[String: Any]])
        #expect(abs((late.first?["offset_ms"] as? Int ?? 0) + 900) <= 20)
        #expect(FileManager.default.fileExists(atPath: out + "/late.lrc") && FileManager.default.fileExists(atPath: out + "/song_2.krc"))
        let bad = try s.write("bad.csv", "id,take,reference\na,b,c\n")
        let b = try ktv(["batch", "sync", bad, "--out-dir", out])
        #expect(b.status == 65)
        #expect(b.stderr.contains("no `lyrics` column; every manifest names id, lyrics and take"))
    }
}
