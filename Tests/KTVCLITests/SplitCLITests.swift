import Foundation
import Testing
import KTVAudio
import KTVSynth

/// `ktv split` end to end on generated tracks.
@Suite struct SplitCLITests {
    func track(_ s: Scratch, _ name: String, originalLeft: Bool, channels: Int = 2) throws -> String {
        let voice = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: 8, midiRange: 55...70, seed: 12), seconds: 8, seed: 12)
        let acc = AccompanimentSynthesizer().render(seconds: 8, seed: 13)
        let mix = DualMonoMixer.mix(voice: voice.samples, accompaniment: acc, lagSamples: 250, gain: 0.8)
        let chans: [[Float]] = channels == 1 ? [mix.original] : originalLeft ? [mix.original, mix.accompaniment] : [mix.accompaniment, mix.original]
        let path = s.path(name)
        try AudioBuffer(sampleRate: 44100, channels: chans).write(path: path, format: .wav16)
        return path
    }

    @Test func splitWritesFilesAndReport() throws {
        let s = try Scratch()
        let input = try track(s, "song.wav", originalLeft: false)
        let out = s.path("out")
        let r = try ktv(["split", input, "--out-dir", out, "--vocals", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(obj["dual_mono"] as? Bool == true)
        #expect(obj["original_channel"] as? String == "right")
        #expect(obj["lag_samples"] as? Int == 250)
        #expect(abs((obj["gain"] as? Double ?? 0) - 0.8) < 0.01)
        #expect((obj["confidence"] as? Double ?? 0) > 0.8)
        #expect((obj["vocal_energy_share"] as? Double ?? 0) > 0.1)
        #expect((obj["vocal_activity_share"] as? Double ?? 0) > 0.3)
        #expect(obj["vocals"] as? String == out + "/vocals.wav")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["accompaniment.wav", "original.wav", "split.json", "vocals.wav"])
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/split.json"))) as? [String: Any])
        #expect(written["original_channel"] as? String == "right")
        let (orig, info) = try AudioBuffer.read(path: out + "/original.wav")
        let (src, _) = try AudioBuffer.read(path: input)
        #expect(info.encoding == "PCM_16")
        #expect(orig.channels[0] == src.channels[1])
    }

    @Test func unrelatedChannelsExitOneWithoutAudio() throws {
        let s = try Scratch()
        // Accompaniment left, a voice alone right (the iKala layout): no common signal.
        let a = AccompanimentSynthesizer().render(seconds: 6, seed: 1)
        let b = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: 6, midiRange: 55...70, seed: 2), seconds: 6, seed: 2).samples
        let input = s.path("stereo.wav")
        try AudioBuffer(sampleRate: 44100, channels: [a, b]).write(path: input, format: .wav16)
        let r = try ktv(["split", input, "--out-dir", s.path("o")])
        #expect(r.status == 1)
        #expect(r.out.hasPrefix("not split: the channels do not share a signal"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("o")) == ["split.json"])
        // Naming the layout splits anyway.
        let forced = try ktv(["split", input, "--out-dir", s.path("f"), "--layout", "left"])
        #expect(forced.status == 0)
        #expect(forced.out.hasPrefix("dual-mono KTV track: original = left, confidence 1.00"))
        // Channels are left and right in every message, as on the command line.
        let report = try String(contentsOfFile: s.path("f") + "/split.json", encoding: .utf8)
        #expect(report.contains("layout given: left original, right accompaniment"), "\(report)")
        // The old spelling still works, with a note.
        let old = try ktv(["split", input, "--out-dir", s.path("g"), "--layout", "left-original"])
        #expect(old.status == 0 && old.stderr == "ktv: warning: --layout left-original is now --layout left; the old spelling still works for now\n", "\(old.stderr)")
    }

    @Test func monoAndBadArgumentsAreClearErrors() throws {
        let s = try Scratch()
        let mono = try track(s, "mono.wav", originalLeft: true, channels: 1)
        let r = try ktv(["split", mono, "--out-dir", s.path("o")])
        #expect(r.status == 65)
        #expect(r.stderr == "ktv: \(mono): WAV PCM_16 with 1 channel(s); a dual-mono KTV track has two channels (original and accompaniment); a mono file cannot be split\n")
        let bad = try ktv(["split", mono, "--layout", "3,3"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--layout = `3,3` is out of range; allowed: auto, left, right (the original's side), or O,A"))
        let missing = try ktv(["split", s.path("nope.wav"), "--out-dir", s.path("o")])
        #expect(missing.status == 74)
        #expect(missing.stderr == "ktv: \(s.path("nope.wav")): cannot read audio: no such file\n")
        let text = try s.write("lyrics.wav", "[00:01.00]not audio\n")
        let t = try ktv(["split", text, "--out-dir", s.path("o")])
        #expect(t.status == 65)
        #expect(t.stderr.contains("looks like a text file"))
    }
}
