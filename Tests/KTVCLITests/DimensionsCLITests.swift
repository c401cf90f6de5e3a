import Foundation
import Testing
import KTVAudio
import KTVCore
import KTVSynth

/// `ktv score TAKE --reference-audio REF` as PESnQ is scored: a take sung against a solo reference
/// singer's recording, judged dimension by dimension.
@Suite struct DimensionsCLITests {
    let rate = 16000.0
    let notes = VoiceSynthesizer.melody(seconds: 12, midiRange: 60...70, seed: 21)

    /// The reference singer's voice, or a take that differs from it in one way.
    func voice(vibratoCents: Double = 45, rolloff: Double = 1.0, swell: Bool = true, seed: UInt64 = 2) -> [Float] {
        var v = VoiceSynthesizer()
        v.sampleRate = rate
        v.vibratoCents = vibratoCents
        v.vibratoHz = 5.6
        v.rolloff = rolloff
        v.harmonics = 20
        var samples = v.render(notes, seconds: 12.5, seed: seed).samples
        // Phrases that swell and fade (the reference's dynamics), or a flat level.
        if swell { for i in samples.indices { samples[i] *= Float(0.35 + 0.65 * (0.5 + 0.5 * sin(2 * .pi * Double(i) / rate / 1.7))) } }
        return samples
    }

    func dimensions(_ s: Scratch, take: [Float], name: String) throws -> (score: Double, dims: [String: [String: Any]], grade: Double?) {
        try AudioBuffer(sampleRate: rate, channels: [take]).write(path: s.path(name), format: .wav16)
        let r = try ktv(["score", s.path(name), "--reference-audio", s.path("ref.wav"), "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        let dims = try #require(json["dimensions"] as? [String: [String: Any]])
        return (try #require(json["score"] as? Double), dims, json["expert_grade"] as? Double)
    }

    @Test func eachVoiceDimensionHearsWhatDiffersFromTheReferenceSinger() throws {
        let s = try Scratch()
        try AudioBuffer(sampleRate: rate, channels: [voice()]).write(path: s.path("ref.wav"), format: .wav16)
        // The reference singer again (another breath of noise): every dimension in full, or nearly.
        let same = try dimensions(s, take: voice(seed: 9), name: "same.wav")
        func score(_ d: [String: [String: Any]], _ name: String) -> Double? { d[name]?["score"] as? Double }
        for name in ["intonation", "rhythm", "vibrato", "voice_quality", "dynamics"] {
            #expect((score(same.dims, name) ?? 0) >= 90, "\(name): \(same.dims[name] ?? [:])")
        }
        #expect(same.score >= 85, "\(same.score)")
        #expect(same.grade.map { $0 >= 4 } == true)
        // Straight tone where the reference sings vibrato: vibrato falls, intonation stays.
        let straight = try dimensions(s, take: voice(vibratoCents: 0, seed: 9), name: "straight.wav")
        #expect((score(straight.dims, "vibrato") ?? 100) <= 20, "\(straight.dims["vibrato"] ?? [:])")
        #expect((score(straight.dims, "intonation") ?? 0) >= 90)
        // A dull voice (few upper harmonics): voice quality falls, and the vibrato does not.
        let dull = try dimensions(s, take: voice(rolloff: 2.6, seed: 9), name: "dull.wav")
        #expect((score(dull.dims, "voice_quality") ?? 100) <= 50, "\(dull.dims["voice_quality"] ?? [:])")
        #expect((score(dull.dims, "vibrato") ?? 0) >= 90)
        // A flat level where the reference swells: the shape half of dynamics falls (the carrying
        // power, the same voice's, does not).
        let flat = try dimensions(s, take: voice(swell: false, seed: 9), name: "flat.wav")
        #expect((score(flat.dims, "dynamics") ?? 100) <= (score(same.dims, "dynamics") ?? 0) - 20, "\(flat.dims["dynamics"] ?? [:])")
        #expect((flat.dims["dynamics"]?["figures"] as? [String: Any])?["correlation"] as? Double ?? 1 < 0.5)
        for take in [straight, dull, flat] { #expect(take.score < same.score - 10) }
    }

    @Test func aPitchTrackTakeSaysWhyItHasNoVoiceDimensions() throws {
        let s = try Scratch()
        try AudioBuffer(sampleRate: rate, channels: [voice()]).write(path: s.path("ref.wav"), format: .wav16)
        let p = try ktv(["pitch", s.path("ref.wav"), "-o", s.path("take.csv")])
        #expect(p.status == 0, "\(p.stderr)")
        let r = try ktv(["score", s.path("take.csv"), "--reference-audio", s.path("ref.wav"), "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        let dims = try #require(json["dimensions"] as? [String: [String: Any]])
        #expect(dims["voice_quality"]?["score"] is NSNull)
        #expect((dims["voice_quality"]?["reason"] as? String)?.contains("pitch track") == true)
        #expect((dims["dynamics"]?["reason"] as? String)?.contains("pitch track") == true)
        #expect((dims["vibrato"]?["score"] as? Double ?? 0) >= 90)
        // The text report lists every dimension, the unmeasured with their reason.
        let text = try ktv(["score", s.path("take.csv"), "--reference-audio", s.path("ref.wav")])
        #expect(text.out.contains("Voice quality      –  not judged: the take is a pitch track"), "\(text.out)")
        #expect(text.out.contains("to a music teacher: about"))
    }
}
