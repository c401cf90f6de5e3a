import Foundation
import Testing
import KTVCore
import KTVSynth
@testable import KTVAudio

/// A generated dual-mono track with its truth.
struct Track {
    var path: String
    var voice: [Float]
}

func makeTrack(_ dir: TempDir, name: String, seconds: Double = 12, lag: Int, gain: Float, originalLeft: Bool, seed: UInt64,
               format: AudioFileFormat = .wav24) throws -> Track {
    let voice = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...72, seed: seed), seconds: seconds, seed: seed)
    let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: seed &+ 100)
    let mix = DualMonoMixer.mix(voice: voice.samples, accompaniment: acc, lagSamples: lag, gain: gain)
    let path = dir.path(name)
    try AudioBuffer(sampleRate: 44100, channels: originalLeft ? [mix.original, mix.accompaniment] : [mix.accompaniment, mix.original])
        .write(path: path, format: format)
    return Track(path: path, voice: voice.samples)
}

/// SNR of an estimate against the truth, in dB, after `offset` samples of shift (decoder delay).
func snr(_ estimate: [Float], _ truth: [Float], offset: Int = 0) -> Double {
    var s = 0.0, e = 0.0
    for i in 0..<truth.count {
        let j = i + offset
        guard j >= 0, j < estimate.count else { continue }
        s += Double(truth[i] * truth[i])
        let d = Double(estimate[j] - truth[i])
        e += d * d
    }
    return 10 * log10(s / max(e, 1e-20))
}

@Suite struct SplitTests {
    @Test(arguments: [
        (0, Float(1.0), true, UInt64(1)),
        (2000, 0.7, true, 2),
        (-2000, 0.85, false, 3),
        (731, 0.93, false, 4),
        (-57, 0.7, true, 5),
    ])
    func layoutLagGainAndVocalAreRecovered(lag: Int, gain: Float, originalLeft: Bool, seed: UInt64) throws {
        let dir = try TempDir()
        let t = try makeTrack(dir, name: "t.wav", lag: lag, gain: gain, originalLeft: originalLeft, seed: seed)
        var config = SplitConfiguration()
        config.layout = .auto
        let result = try DualMonoSplitter.split(path: t.path, configuration: config,
                                                outputs: SplitOutputs(original: dir.path("o.wav"), accompaniment: dir.path("a.wav"), vocals: dir.path("v.wav")))
        let a = result.analysis
        #expect(a.dualMono)
        #expect(a.originalChannel == (originalLeft ? 0 : 1))
        #expect(a.confidence > 0.8)
        #expect(a.lagSamples == lag)
        #expect(abs(result.gainMedian - Double(gain)) < 0.01)
        let (v, _) = try AudioBuffer.read(path: dir.path("v.wav"))
        let quality = snr(v.channels[0], t.voice)
        print("lossless: lag \(lag), gain \(gain), vocal SNR \(String(format: "%.1f", quality)) dB, confidence \(String(format: "%.2f", a.confidence))")
        #expect(quality >= 30, "vocal SNR \(quality) dB")
        // The channel files are the input channels, untouched (24-bit in, 24-bit out).
        let (orig, _) = try AudioBuffer.read(path: dir.path("o.wav"))
        let (src, _) = try AudioBuffer.read(path: t.path)
        #expect(orig.channels[0] == src.channels[originalLeft ? 0 : 1])
    }

    @Test func gainChangesAreFollowed() throws {
        // The accompaniment's level in the original drifts from 0.7 to 1.0 over 20 s.
        let dir = try TempDir()
        let seconds = 20.0
        let voice = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: seconds, midiRange: 57...70, seed: 8), seconds: seconds, seed: 8)
        let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: 9)
        let n = voice.samples.count
        let orig = (0..<n).map { voice.samples[$0] + Float(0.7 + 0.3 * Double($0) / Double(n)) * acc[$0] }
        let path = dir.path("drift.wav")
        try AudioBuffer(sampleRate: 44100, channels: [orig, acc]).write(path: path, format: .wavFloat)
        let r = try DualMonoSplitter.split(path: path, configuration: SplitConfiguration(), outputs: SplitOutputs(vocals: dir.path("v.wav")))
        #expect(r.analysis.originalChannel == 0)
        let (v, _) = try AudioBuffer.read(path: dir.path("v.wav"))
        #expect(snr(v.channels[0], voice.samples) >= 30)
    }

    @Test func unrelatedChannelsAreNotDualMono() throws {
        let dir = try TempDir()
        let voice = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: 10, midiRange: 55...70, seed: 3), seconds: 10, seed: 3)
        let acc = AccompanimentSynthesizer().render(seconds: 10, seed: 4)
        let path = dir.path("u.wav")
        try AudioBuffer(sampleRate: 44100, channels: [acc, voice.samples]).write(path: path, format: .wav16)
        let a = try DualMonoSplitter.analyze(path: path, configuration: SplitConfiguration())
        #expect(!a.dualMono)
        #expect(a.originalChannel == nil)
        #expect(a.confidence <= 0.2)
        #expect(a.reason.contains("do not share a signal"))
    }

    @Test func identicalChannelsAreNotDualMono() throws {
        let dir = try TempDir()
        let x = AccompanimentSynthesizer().render(seconds: 8, seed: 11)
        let path = dir.path("same.wav")
        try AudioBuffer(sampleRate: 44100, channels: [x, x]).write(path: path, format: .wav16)
        let a = try DualMonoSplitter.analyze(path: path, configuration: SplitConfiguration())
        #expect(!a.dualMono)
        #expect(a.reason.contains("carry the same signal"))
    }

    @Test func monoInputIsAClearError() throws {
        let dir = try TempDir()
        let path = dir.path("mono.wav")
        try AudioBuffer(sampleRate: 44100, channels: [sine(220, seconds: 1, rate: 44100)]).write(path: path, format: .wav16)
        #expect(throws: AudioError.wrongChannelCount(path: path, found: 1, expected: "a dual-mono KTV track has two channels (original and accompaniment); a mono file cannot be split", format: "WAV PCM_16")) {
            try DualMonoSplitter.analyze(path: path, configuration: SplitConfiguration())
        }
    }

    @Test func multichannelNeedsNamedChannels() throws {
        let dir = try TempDir()
        let t = try makeTrack(dir, name: "t.wav", seconds: 8, lag: 0, gain: 0.8, originalLeft: true, seed: 21)
        let (buf, _) = try AudioBuffer.read(path: t.path)
        let path = dir.path("quad.wav")
        let silence = [Float](repeating: 0, count: buf.frames)
        try AudioBuffer(sampleRate: 44100, channels: [silence, buf.channels[1], silence, buf.channels[0]]).write(path: path, format: .wavFloat)
        #expect(throws: AudioError.self) { try DualMonoSplitter.analyze(path: path, configuration: SplitConfiguration()) }
        var config = SplitConfiguration()
        config.layout = .channels(original: 3, accompaniment: 1)
        let r = try DualMonoSplitter.split(path: path, configuration: config, outputs: SplitOutputs(vocals: dir.path("v.wav")))
        #expect(r.analysis.dualMono)
        let (v, _) = try AudioBuffer.read(path: dir.path("v.wav"))
        #expect(snr(v.channels[0], t.voice) >= 30)
    }

    /// Lossy input: an MP3 made with lame. Detection must hold; the SNR is printed for the record.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/lame"), "needs lame (make setup installs it)"))
    func mp3InputIsDetected() throws {
        let dir = try TempDir()
        for (lag, originalLeft, seed, kbps) in [(900, true, UInt64(31), 192), (-1300, false, 32, 192), (1700, true, 33, 128), (-400, false, 34, 128)] {
            let t = try makeTrack(dir, name: "t\(seed).wav", lag: lag, gain: 0.8, originalLeft: originalLeft, seed: seed, format: .wav16)
            let mp3 = dir.path("t\(seed).mp3")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/lame")
            p.arguments = ["--quiet", "-b", String(kbps), "-m", "s", t.path, mp3]
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
            let r = try DualMonoSplitter.split(path: mp3, configuration: SplitConfiguration(), outputs: SplitOutputs(vocals: dir.path("v\(seed).wav")))
            #expect(r.analysis.dualMono)
            #expect(r.analysis.originalChannel == (originalLeft ? 0 : 1))
            #expect(r.analysis.lagSamples == lag)
            let (v, _) = try AudioBuffer.read(path: dir.path("v\(seed).wav"))
            // The decoder delays both channels equally: find that offset, then measure.
            let c = CrossCorrelation.compute(v.channels[0], t.voice, maxLag: 3000)
            let best = c.indices.max { c[$0] < c[$1] }! - 3000
            let quality = snr(v.channels[0], t.voice, offset: best)
            print("mp3 \(kbps) kbit/s: lag \(lag), decoder offset \(best) samples, vocal SNR \(String(format: "%.1f", quality)) dB")
            #expect(quality > 10)
        }
    }
}

/// The shared scenes (left = original) and iKala (left accompaniment, right voice only).
@Suite(.enabled(if: FileManager.default.fileExists(atPath: SharedAudio.root + "/scenes/dev-11/original_dualmono.flac"), "../shared is absent"))
struct SharedSplitTests {
    @Test(arguments: ["dev-11", "dev-12"])
    func sceneAndSwappedCopy(scene: String) throws {
        let dir = try TempDir()
        let path = SharedAudio.root + "/scenes/\(scene)/original_dualmono.flac"
        let r = try DualMonoSplitter.split(path: path, configuration: SplitConfiguration(), outputs: SplitOutputs(vocals: dir.path("v.wav")))
        #expect(r.analysis.originalChannel == 0)
        #expect(r.analysis.confidence > 0.7)
        let (v, _) = try AudioBuffer.read(path: dir.path("v.wav"))
        let (truth, _) = try AudioBuffer.read(path: SharedAudio.root + "/scenes/\(scene)/vocal.flac")
        #expect(snr(v.channels[0], truth.channels[0]) >= 30)

        let (buf, _) = try AudioBuffer.read(path: path)
        let swapped = dir.path("swapped.flac")
        try AudioBuffer(sampleRate: buf.sampleRate, channels: [buf.channels[1], buf.channels[0]]).write(path: swapped, format: .flac16)
        let s = try DualMonoSplitter.analyze(path: swapped, configuration: SplitConfiguration())
        #expect(s.originalChannel == 1)
        #expect(s.confidence > 0.7)
    }

    @Test func ikalaIsNotAConfidentWrongAnswer() throws {
        let a = try DualMonoSplitter.analyze(path: SharedAudio.root + "/pitch/ikala_stereo/10161_chorus.wav", configuration: SplitConfiguration())
        // Left is accompaniment, right is voice only: "not dual-mono", or the voice on the right.
        #expect(!a.dualMono || a.originalChannel == 1)
        #expect(!a.dualMono)
    }
}

enum SharedAudio {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared").path
}
