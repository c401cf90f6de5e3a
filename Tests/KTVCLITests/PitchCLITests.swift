import Foundation
import KTVAudio
import KTVCore
import KTVSynth
import Testing

// `ktv pitch` and `ktv lyrics validate --audio` end to end on generated audio with known truth,
// and (when ../shared is there) on the shared scenes.

private func cents(_ a: Double, _ b: Double) -> Double { 1200 * log2(a / b) }

/// A seeded melody and its rendered voice.
private struct GeneratedVoice {
    var notes: [SungNote]
    var voice: SynthVoice

    init(seconds: Double, seed: UInt64) {
        notes = VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...70, seed: seed)
        voice = VoiceSynthesizer().render(notes, seconds: seconds, seed: seed)
    }

    /// The true f0 at time t (0 = silent).
    func f0(at t: Double) -> Double {
        let i = Int((t * voice.sampleRate).rounded())
        return i >= 0 && i < voice.f0.count ? Double(voice.f0[i]) : 0
    }
}

/// Parses ktv's pitch CSV into (time, f0) rows, checking the line format on the way.
private func parseCSV(_ text: String) throws -> [(t: Double, f0: Double, conf: Double)] {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.first == "time_s,f0_hz,confidence")
    #expect(lines.last == "")
    lines = Array(lines.dropFirst().dropLast())
    let shape = #/^\d+\.\d{3},\d+\.\d{3},[01]\.\d{3}$/#
    return try lines.map { line in
        #expect(line.wholeMatch(of: shape) != nil, "bad CSV line `\(line)`")
        let f = line.split(separator: ",").map { Double($0) ?? .nan }
        try #require(f.count == 3)
        return (f[0], f[1], f[2])
    }
}

@Suite struct PitchCLITests {
    /// A 4 s voice as a mono float WAV.
    private func voiceFile(_ s: Scratch, seed: UInt64 = 51) throws -> (String, GeneratedVoice) {
        let g = GeneratedVoice(seconds: 4, seed: seed)
        let path = s.path("voice.wav")
        try AudioBuffer(sampleRate: 44100, channels: [g.voice.samples]).write(path: path, format: .wavFloat)
        return (path, g)
    }

    @Test func csvFollowsTheVoice() throws {
        let s = try Scratch()
        let (path, g) = try voiceFile(s)
        let r = try ktv(["pitch", path])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        let rows = try parseCSV(r.out)
        #expect(rows.count == 401)
        for (k, row) in rows.enumerated() { #expect(abs(row.t - Double(k) * 0.01) < 1e-9) }
        let voicedTruth = rows.filter { g.f0(at: $0.t) > 0 }
        let right = voicedTruth.filter { $0.f0 > 0 && abs(cents($0.f0, g.f0(at: $0.t))) < 50 }
        let share = Double(right.count) / Double(voicedTruth.count)
        print("ktv pitch csv: \(right.count)/\(voicedTruth.count) truth-voiced frames within 50 cents")
        #expect(voicedTruth.count > 150)
        #expect(share >= 0.95)
        // `-o` writes the same bytes to a file and nothing to standard output.
        let o = try ktv(["pitch", path, "-o", s.path("out.csv")])
        #expect(o.status == 0 && o.stdout.isEmpty)
        #expect(try FileIO.read(s.path("out.csv")) == r.stdout)
    }

    @Test func jsonAgoraBinaryAndAgoraJSONAgreeWithTheCSV() throws {
        let s = try Scratch()
        let (path, g) = try voiceFile(s)
        let rows = try parseCSV(try ktv(["pitch", path]).out)

        // The old spelling of --to still works, with a one-line note.
        let j = try ktv(["pitch", path, "--format", "json"])
        #expect(j.status == 0)
        #expect(j.stderr == "ktv: warning: --format is now --to; the old spelling still works for now\n")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout)) as? [String: Any])
        #expect(obj["input"] as? String == path)
        #expect(obj["duration_s"] as? Double == 4)
        #expect(obj["latency_ms"] is NSNull)
        #expect(obj["accompaniment_gain"] is NSNull)
        let settings = try #require(obj["settings"] as? [String: Double])
        #expect(settings == ["hop_ms": 10, "min_hz": 60, "max_hz": 1100, "analysis_rate_hz": 16000, "energy_floor_db": -35])
        let frames = try #require(obj["frames"] as? [[String: Any]])
        #expect(frames.count == rows.count)
        for (f, row) in zip(frames, rows) {
            #expect(abs((f["time_s"] as? Double ?? -1) - row.t) < 1e-9)
            let f0 = f["f0_hz"] is NSNull ? 0 : (f["f0_hz"] as? Double ?? -1)
            #expect(abs(f0 - row.f0) <= 0.0005 + 1e-9)
            #expect(abs((f["confidence"] as? Double ?? -1) - row.conf) <= 0.0005 + 1e-9)
        }

        let b = try ktv(["pitch", path, "--to", "agora-bin"])
        #expect(b.status == 0)
        #expect(b.stdout.count == 12 + 8 * rows.count)
        #expect(Array(b.stdout.prefix(12)) == [1, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0])
        for (k, row) in rows.enumerated() {
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(b.stdout[12 + 8 * k + i]) << (8 * i) }
            #expect(abs(Double(bitPattern: bits) - row.f0) <= 0.0005 + 1e-9)
        }

        let a = try ktv(["pitch", path, "--to", "agora-json"])
        #expect(a.status == 0)
        let aobj = try #require(try JSONSerialization.jsonObject(with: Data(a.stdout)) as? [String: Any])
        let notes = try #require(aobj["pitchDatas"] as? [[String: Int]])
        #expect(notes.count >= g.notes.count / 2)
        for n in notes {
            let start = try #require(n["startTime"]), dur = try #require(n["duration"]), pitch = try #require(n["pitch"])
            #expect(start % 10 == 0 && dur % 10 == 0 && dur >= 30)
            // The segment's middle lies in a sung note within a semitone (vibrato and glides round either way).
            let mid = Double(start + dur / 2) / 1000
            let sung = g.notes.first { mid >= $0.start && mid < $0.start + $0.duration }
            #expect(sung.map { abs(Double(pitch) - $0.midi) <= 1 } ?? false, "segment \(n) is not on a sung note")
        }
    }

    @Test func rightChannelOfAStereoFile() throws {
        let s = try Scratch()
        let (mono, g) = try voiceFile(s)
        let acc = AccompanimentSynthesizer().render(seconds: 4, seed: 52)
        let stereo = s.path("stereo.wav")
        try AudioBuffer(sampleRate: 44100, channels: [acc, g.voice.samples]).write(path: stereo, format: .wavFloat)
        let alone = try ktv(["pitch", mono])
        let right = try ktv(["pitch", stereo, "--channel", "right"])
        let second = try ktv(["pitch", stereo, "--channel", "2"])
        let left = try ktv(["pitch", stereo, "--channel", "left"])
        #expect(right.status == 0 && second.status == 0 && left.status == 0)
        #expect(right.out == alone.out)
        #expect(second.out == alone.out)
        #expect(left.out != alone.out)
        let third = try ktv(["pitch", stereo, "--channel", "3"])
        #expect(third.status == 65)
        #expect(third.stderr == "ktv: \(stereo): WAV FLOAT with 2 channel(s); channel 3 was asked for\n")
    }

    /// A take = voice + the accompaniment 50 ms late at 0.3: the latency and the level are reported.
    @Test func accompanimentLatencyIsReported() throws {
        let s = try Scratch()
        let g = GeneratedVoice(seconds: 8, seed: 53)
        let acc = AccompanimentSynthesizer().render(seconds: 8, seed: 54)
        let mix = DualMonoMixer.mix(voice: g.voice.samples, accompaniment: acc, lagSamples: 2205, gain: 0.3)
        try AudioBuffer(sampleRate: 44100, channels: [mix.original]).write(path: s.path("take.wav"), format: .wav24)
        try AudioBuffer(sampleRate: 44100, channels: [mix.accompaniment]).write(path: s.path("acc.wav"), format: .wav24)
        let r = try ktv(["pitch", s.path("take.wav"), "--accompaniment", s.path("acc.wav"), "--to", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        let latency = try #require(obj["latency_ms"] as? Double)
        let gain = try #require(obj["accompaniment_gain"] as? Double)
        print("ktv pitch --accompaniment: latency \(latency) ms (true 50), gain \(gain) (true 0.3)")
        #expect(abs(latency - 50) <= 2)
        #expect(abs(gain - 0.3) < 0.05)
        let missing = try ktv(["pitch", s.path("take.wav"), "--accompaniment", s.path("nope.wav")])
        #expect(missing.status == 74)
        #expect(missing.stderr == "ktv: \(s.path("nope.wav")): cannot read audio: no such file\n")
    }

    @Test func errorsAndExitCodes() throws {
        let s = try Scratch()
        let (path, _) = try voiceFile(s)
        let missing = try ktv(["pitch", s.path("nope.wav")])
        #expect(missing.status == 74)
        #expect(missing.stderr == "ktv: \(s.path("nope.wav")): cannot read audio: no such file\n")
        #expect(missing.stdout.isEmpty)

        let hop = try ktv(["pitch", path, "--to", "agora-bin", "--hop-ms", "20"])
        #expect(hop.status == 64)
        #expect(hop.stderr.contains("--hop-ms = 20 is out of range; allowed: 10 for agora-bin (a 10 ms contour)"))
        for bad in ["center", "0", "-1"] {
            let ch = try ktv(["pitch", path, "--channel=\(bad)"])
            #expect(ch.status == 64)
            #expect(ch.stderr.contains("--channel = `\(bad)` is out of range; allowed: left, right, mix or a 1-based channel number"))
        }
        let range = try ktv(["pitch", path, "--min-hz", "10"])
        #expect(range.status == 64)
        #expect(range.stderr.contains("--min-hz = 10.0 is out of range; allowed: 20…2000 Hz"))

        let text = try s.write("lyrics.wav", "[00:01.00]not audio at all\n[00:02.00]still text\n")
        let t = try ktv(["pitch", text])
        #expect(t.status == 65)
        #expect(t.stderr.hasPrefix("ktv: \(text): cannot read audio: the file looks like a text file"))
    }
}

// MARK: - lyrics validate --audio

/// A KRC (text form) whose lines are the melody's phrases and whose words are exactly its notes,
/// every time moved by `shiftMs`.
private func krc(for notes: [SungNote], shiftMs: Int) -> String {
    var phrases: [[SungNote]] = []
    for n in notes {
        if let last = phrases.last?.last, abs(last.start + last.duration - n.start) < 1e-6 {
            phrases[phrases.count - 1].append(n)
        } else {
            phrases.append([n])
        }
    }
    var out = "[ti:Generated]\n[ar:VoiceSynthesizer]\n[offset:0]\n"
    for p in phrases {
        let words = p.map { (start: Int(($0.start * 1000).rounded()) + shiftMs, end: Int((($0.start + $0.duration) * 1000).rounded()) + shiftMs) }
        let lineStart = words[0].start
        out += "[\(lineStart),\(words.last!.end - lineStart)]"
        for w in words { out += "<\(w.start - lineStart),\(w.end - w.start),0>la" }
        out += "\n"
    }
    return out
}

private func audioReport(_ r: Run) throws -> (audio: [String: Any], findings: [[String: Any]]) {
    let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
    let file = try #require((obj["files"] as? [[String: Any]])?.first)
    return (try #require(file["audio"] as? [String: Any]), try #require(file["findings"] as? [[String: Any]]))
}

@Suite struct LyricsAudioCLITests {
    @Test func wordTimesAreCheckedAgainstADualMonoTrack() throws {
        let s = try Scratch()
        let g = GeneratedVoice(seconds: 10, seed: 61)
        let acc = AccompanimentSynthesizer().render(seconds: 10, seed: 62)
        let mix = DualMonoMixer.mix(voice: g.voice.samples, accompaniment: acc, lagSamples: 250, gain: 0.8)
        let track = s.path("song.wav")
        try AudioBuffer(sampleRate: 44100, channels: [mix.original, mix.accompaniment]).write(path: track, format: .wav16)
        #expect(g.notes.count >= 8)

        let asWritten = try s.write("song.krc", krc(for: g.notes, shiftMs: 0))
        let r = try ktv(["lyrics", "validate", asWritten, "--audio", track, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let (audio, findings) = try audioReport(r)
        let shift = try #require(audio["best_shift_ms"] as? Int)
        print("lyrics validate --audio, generated track: best shift \(shift) ms as written")
        #expect(abs(shift) <= 20)
        #expect(audio["equivalent_offset_tag"] is NSNull)
        #expect(audio["mostly_unvoiced_lines"] as? [Int] == [])
        #expect((audio["voiced_share"] as? Double ?? 0) > 0.9)
        #expect(!findings.contains { $0["rule"] as? String == "lyrics-offset" })
        #expect(findings.contains { ($0["rule"] as? String) == "audio-alignment" && ($0["message"] as? String ?? "").contains("dual-mono track split first") })

        let late = try s.write("late.krc", krc(for: g.notes, shiftMs: 700))
        let l = try ktv(["lyrics", "validate", late, "--audio", track, "--format", "json"])
        #expect(l.status == 0, "\(l.stderr)")
        let (lateAudio, lateFindings) = try audioReport(l)
        let lateShift = try #require(lateAudio["best_shift_ms"] as? Int)
        print("lyrics validate --audio, generated track: best shift \(lateShift) ms with every time +700 ms")
        #expect(abs(lateShift + 700) <= 20)
        // Under the default reading (`effective = stamp − offset`) the tag that undoes +700 ms is +7xx.
        let tag = "[offset:+\(-lateShift)]"
        #expect((680...720).contains(-lateShift))
        #expect(lateAudio["equivalent_offset_tag"] as? String == tag)
        let warning = try #require(lateFindings.first { $0["rule"] as? String == "lyrics-offset" })
        #expect(warning["severity"] as? String == "warning")
        #expect(warning["message"] as? String ==
            "the lyrics are \(-lateShift) ms late against the audio; move every time by \(lateShift) ms, or add `\(tag)` (read with the offset sign `subtract`)")
        // --strict turns the warning into a failure.
        #expect(try ktv(["lyrics", "validate", late, "--audio", track, "--strict"]).status == 1)
    }

    @Test func audioErrors() throws {
        let s = try Scratch()
        let lyric = try s.write("a.krc", "[ti:x]\n[1000,500]<0,500,0>la\n")
        let missing = try ktv(["lyrics", "validate", lyric, "--audio", s.path("nope.wav")])
        #expect(missing.status == 74)
        #expect(missing.stderr == "ktv: \(s.path("nope.wav")): cannot read audio: no such file\n")
        let two = try ktv(["lyrics", "validate", lyric, lyric, "--audio", s.path("nope.wav")])
        #expect(two.status == 64)
        #expect(two.stderr.contains("--audio checks one lyric file against one track; give exactly one lyric file"))
    }
}

// MARK: - Shared scenes

/// The shared data folder beside the package (Tests/KTVCLITests → package root → ../shared).
private let sharedRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared").path

@Suite(.enabled(if: FileManager.default.fileExists(atPath: sharedRoot + "/scenes/dev-11/lyrics.krc"), "../shared is not there"))
struct SharedPitchCLITests {
    let scene11 = sharedRoot + "/scenes/dev-11"
    let scene12 = sharedRoot + "/scenes/dev-12"

    private func bestShift(_ lyric: String, _ audio: String) throws -> (Int, [[String: Any]]) {
        let r = try ktv(["lyrics", "validate", lyric, "--audio", audio, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let (a, findings) = try audioReport(r)
        return (try #require(a["best_shift_ms"] as? Int), findings)
    }

    @Test func dev11LyricsAreOnTimeAndShiftedCopiesAreFound() throws {
        let audio = scene11 + "/original_dualmono.flac"
        let (asWritten, _) = try bestShift(scene11 + "/lyrics.krc", audio)
        #expect(abs(asWritten) <= 20)

        let parsed = try ktv(["lyrics", "parse", scene11 + "/lyrics.krc"])
        #expect(parsed.status == 0)
        let s = try Scratch()
        var report = "shared dev-11: best shift \(asWritten) ms as written"
        for move in [700, -1300] {
            var obj = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout)) as? [String: Any])
            var lines = try #require(obj["lines"] as? [[String: Any]])
            #expect(!lines.isEmpty)
            for i in lines.indices {
                lines[i]["start_ms"] = try #require(lines[i]["start_ms"] as? Int) + move
                var words = lines[i]["words"] as? [[String: Any]] ?? []
                for w in words.indices { words[w]["start_ms"] = try #require(words[w]["start_ms"] as? Int) + move }
                lines[i]["words"] = words
            }
            obj["lines"] = lines
            let moved = try s.write("moved\(move).json", [UInt8](try JSONSerialization.data(withJSONObject: obj)))
            let (shift, findings) = try bestShift(moved, audio)
            report += ", \(shift) ms when moved by \(move) ms"
            #expect(abs(shift + move) <= 20)
            #expect(findings.contains { $0["rule"] as? String == "lyrics-offset" })
        }
        print(report)
    }

    @Test func dev12LatencyOfTheGoodTake() throws {
        let r = try ktv(["pitch", scene12 + "/take_good.flac", "--accompaniment", scene12 + "/accompaniment.flac", "--to", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        let latency = try #require(obj["latency_ms"] as? Double)
        print("shared dev-12 take_good: latency \(latency) ms (scene: 120)")
        #expect(abs(latency - 120) <= 10)
    }
}
