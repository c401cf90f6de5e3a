import Foundation
import KTVCore
import KTVAudio
import KTVSynth
import Testing

/// Takes recorded as apps record them (issue 22): AAC in M4A, Opus in WebM, AAC in an MP4 video,
/// scored through FFmpeg as the same take in WAV is, with the same latency.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "needs the ffmpeg tool to make its inputs (make setup installs it)"))
struct FFmpegCLITests {
    func ffmpeg(_ args: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-loglevel", "error", "-y"] + args
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    func score(_ args: [String]) throws -> [String: Any] {
        let r = try ktv(["score"] + args + ["--format", "json"])
        try #require(r.status == 0, "\(args.first ?? ""): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
    }

    /// The notes as a notes JSON reference.
    func notesJSON(_ notes: [SungNote]) -> String {
        "[" + notes.map { "{\"start_ms\": \(Int(($0.start * 1000).rounded())), \"duration_ms\": \(Int(($0.duration * 1000).rounded())), \"midi\": \($0.midi)}" }.joined(separator: ",") + "]"
    }

    /// A scratch folder holding the reference (`ref.json`) of a generated melody, and a voice to sing
    /// it, at 44.1 kHz.
    func melody(seconds: Double, seed: UInt64) throws -> (s: Scratch, notes: [SungNote], reference: String, voice: VoiceSynthesizer, rate: Double) {
        let s = try Scratch()
        let notes = VoiceSynthesizer.melody(seconds: seconds, midiRange: 57...69, seed: seed)
        var voice = VoiceSynthesizer()
        voice.sampleRate = 44100
        return (s, notes, try s.write("ref.json", notesJSON(notes)), voice, voice.sampleRate)
    }

    @Test func aTakeInM4AWebMAndAVideoScoresAsTheWAV() throws {
        let (s, notes, reference, voice, rate) = try melody(seconds: 10, seed: 14)
        let sung = voice.render(notes.map { SungNote(midi: $0.midi, start: $0.start + 0.15, duration: $0.duration) }, seconds: 11, seed: 3)
        var accSynth = AccompanimentSynthesizer()
        accSynth.sampleRate = rate
        let acc = accSynth.render(seconds: 11, seed: 4)
        // The take: the voice 150 ms late, and the accompaniment's bleed 150 ms late too.
        let lag = Int(0.15 * rate)
        let take = sung.samples.indices.map { i in sung.samples[i] + 0.3 * (i >= lag ? acc[i - lag] : 0) }
        try AudioBuffer(sampleRate: rate, channels: [acc]).write(path: s.path("acc.wav"), format: .wav16)
        try AudioBuffer(sampleRate: rate, channels: [take]).write(path: s.path("take.wav"), format: .wav16)
        #expect(try ffmpeg(["-i", s.path("take.wav"), "-c:a", "aac", "-b:a", "128k", s.path("take.m4a")]) == 0)
        #expect(try ffmpeg(["-i", s.path("take.wav"), "-c:a", "libopus", "-b:a", "96k", s.path("take.webm")]) == 0)
        #expect(try ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=64x48:r=10", "-i", s.path("take.wav"), "-shortest", "-c:v", "mpeg4", "-c:a", "aac", s.path("take.mp4")]) == 0)
        let wav = try score([s.path("take.wav"), "--reference", reference, "--accompaniment", s.path("acc.wav")])
        let wavScore = try #require(wav["score"] as? Double), wavLatency = try #require(wav["latency_ms"] as? Double)
        #expect(abs(wavLatency - 150) < 3)
        for name in ["take.m4a", "take.webm", "take.mp4"] {
            let other = try score([s.path(name), "--reference", reference, "--accompaniment", s.path("acc.wav")])
            let score = try #require(other["score"] as? Double), latency = try #require(other["latency_ms"] as? Double)
            print("\(name): score \(score) (WAV \(wavScore)), latency \(latency) ms (WAV \(wavLatency))")
            #expect(abs(score - wavScore) <= 1, "\(name): \(score) against \(wavScore)")
            #expect(abs(latency - wavLatency) <= 1, "\(name): \(latency) ms against \(wavLatency)")
        }
        // And a batch row takes one, as every command that reads audio does.
        let m = try s.write("m.csv", "id,take,reference,accompaniment\nm4a,take.m4a,ref.json,acc.wav\n")
        let r = try ktv(["batch", m, "--progress", "never"])
        #expect(r.status == 0 && r.out.contains("\"status\":\"ok\""), "\(r.stderr)")
        let p = try ktv(["pitch", s.path("take.webm"), "-o", s.path("webm.csv")])
        #expect(p.status == 0, "\(p.stderr)")
    }

    /// `--stream N` on every command that reads audio: a video whose first audio stream is a
    /// commentary (noise) and whose second is the sung take.
    @Test func streamPicksTheAudioStreamOfAVideo() throws {
        let (s, notes, reference, voice, rate) = try melody(seconds: 6, seed: 21)
        let sung = voice.render(notes, seconds: 7, seed: 5)
        var rng = SeededGenerator(seed: 9)
        let noise = (0..<sung.samples.count).map { _ in Float(Int(rng.next() % 2001) - 1000) / 10_000 }
        try AudioBuffer(sampleRate: rate, channels: [sung.samples]).write(path: s.path("sung.wav"), format: .wav16)
        try AudioBuffer(sampleRate: rate, channels: [noise]).write(path: s.path("noise.wav"), format: .wav16)
        #expect(try ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=64x48:r=10", "-i", s.path("noise.wav"), "-i", s.path("sung.wav"),
                            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-shortest", "-c:v", "mpeg4", "-c:a", "aac", s.path("two.mkv")]) == 0)
        let first = try score([s.path("two.mkv"), "--reference", reference])
        let second = try score([s.path("two.mkv"), "--reference", reference, "--stream", "2"])
        let firstScore = try #require(first["score"] as? Double), secondScore = try #require(second["score"] as? Double)
        print("two.mkv: stream 1 (noise) \(firstScore), stream 2 (the take) \(secondScore)")
        #expect(secondScore >= 90 && firstScore < 30)
        let missing = try ktv(["score", s.path("two.mkv"), "--reference", reference, "--stream", "3"])
        #expect(missing.status == 65 && missing.stderr.contains("audio stream 3 was asked for, and it holds 2 audio stream(s)"), "\(missing.stderr)")
        let wav = try ktv(["pitch", s.path("sung.wav"), "--stream", "2"])
        #expect(wav.status == 65 && wav.stderr.contains("a file libsndfile reads holds one"), "\(wav.stderr)")
        #expect(try ktv(["pitch", s.path("sung.wav"), "--stream", "0"]).status == 64)
        #expect(try ktv(["pitch", s.path("two.mkv"), "--stream", "2", "-o", s.path("p.csv")]).status == 0)
        // A mono stream is not a dual-mono track: split says so about stream 2 (exit 65), and reads it.
        let split = try ktv(["split", s.path("two.mkv"), "--stream", "2", "--out-dir", s.path("split")])
        #expect(split.status == 65 && split.stderr.contains("two.mkv"), "\(split.stderr)")
        // A batch row's `stream` column.
        let m = try s.write("m.csv", "id,take,reference,stream\nvideo,two.mkv,ref.json,2\nbad,two.mkv,ref.json,x\n")
        let r = try ktv(["batch", m, "--progress", "never"])
        #expect(r.out.contains("\"id\":\"video\",\"line\":2,\"status\":\"ok\""), "\(r.out)")
        #expect(r.out.contains("stream: `x` is not a whole number"), "\(r.out)")
    }
}
