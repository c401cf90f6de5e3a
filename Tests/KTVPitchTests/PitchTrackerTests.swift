import Foundation
import KTVAudio
import KTVCore
@testable import KTVPitch
import KTVSynth
import Testing

// The pitch tracker on generated signals whose f0 is known exactly: pure tones, a synthetic voice
// with vibrato and glides, a glide built by integrating the phase, octave leaps, noise, silence,
// and a take with accompaniment bleed through a room built here. Every signal comes from a seed.

// MARK: - Signals and helpers

/// A sine (or a few harmonics) at a constant frequency.
private func tone(_ hz: Double, seconds: Double, rate: Double, amplitude: Double = 0.3, harmonics: Int = 1) -> [Float] {
    let n = Int(seconds * rate)
    return (0..<n).map { i in
        let ph = 2 * Double.pi * hz * Double(i) / rate
        var v = 0.0
        for h in 1...harmonics { v += sin(Double(h) * ph) / Double(h) }
        return Float(amplitude * v)
    }
}

/// White noise, uniform in ±amplitude, from a seed.
private func noise(count: Int, amplitude: Double, seed: UInt64) -> [Float] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { _ in Float(Double.random(in: -amplitude...amplitude, using: &rng)) }
}

private func cents(_ a: Double, _ b: Double) -> Double { 1200 * log2(a / b) }

/// Frames at least `margin` seconds from both ends of the input.
private func interior(_ t: PitchTrack, margin: Double) -> [PitchFrame] {
    t.frames.filter { $0.timeS >= margin && $0.timeS <= t.durationS - margin }
}

/// The exact per-sample f0 sampled on the track's grid (0 = silent).
private func truthSeries(_ f0: [Float], rate: Double, frames: Int, hopS: Double = 0.01) -> PitchContour {
    let times = (0..<frames).map { Double($0) * hopS }
    let hz = times.map { t -> Double in
        let i = Int((t * rate).rounded())
        return i < f0.count ? Double(f0[i]) : 0
    }
    return PitchContour(timesS: times, signedHz: hz)
}

private func estimateSeries(_ t: PitchTrack, shiftS: Double = 0) -> PitchContour {
    let frames = t.frames.filter { $0.timeS + shiftS >= 0 }
    return PitchContour(timesS: frames.map { $0.timeS + shiftS }, f0Hz: frames.map(\.f0Hz))
}

private func scores(_ t: PitchTrack, truth f0: [Float], rate: Double, toleranceCents: Double = 50, shiftS: Double = 0) throws -> MelodyScores {
    try MelodyMetrics.evaluate(reference: truthSeries(f0, rate: rate, frames: t.frames.count, hopS: t.hopS),
                               estimate: estimateSeries(t, shiftS: shiftS),
                               configuration: MelodyMetricsConfiguration(toleranceCents: toleranceCents))
}

private func voicedShare(_ frames: [PitchFrame]) -> Double {
    frames.isEmpty ? 0 : Double(frames.filter { $0.f0Hz != nil }.count) / Double(frames.count)
}

private func fmt(_ v: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", v) }

/// A scratch folder removed when the value goes away.
private final class PitchScratch {
    let dir: URL
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-pitch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: dir) }
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
}

/// The default synthetic voice: a seeded melody with vibrato and glides.
private func voice(seconds: Double, seed: UInt64, rate: Double = 44100, vibratoCents: Double = 30,
                   midi: ClosedRange<Double> = 55...72) -> SynthVoice {
    var synth = VoiceSynthesizer()
    synth.sampleRate = rate
    synth.vibratoCents = vibratoCents
    return synth.render(VoiceSynthesizer.melody(seconds: seconds, midiRange: midi, seed: seed), seconds: seconds, seed: seed)
}

// MARK: - Accuracy on known signals

@Suite struct PitchTrackerTests {
    @Test(arguments: [98.0, 220.0, 440.0, 880.0], [44100.0, 16000.0])
    func pureSinesAreWithinTwoCents(hz: Double, rate: Double) throws {
        let x = tone(hz, seconds: 1.5, rate: rate)
        let t = try PitchTracker().track(samples: x, sampleRate: rate)
        #expect(t.frames.count == 151)
        #expect(t.durationS == 1.5)
        let inner = interior(t, margin: 0.05)
        #expect(inner.count == 141)
        #expect(inner.allSatisfy { $0.f0Hz != nil }, "unvoiced interior frames at \(hz) Hz, \(rate) Hz")
        let worst = inner.compactMap(\.f0Hz).map { abs(cents($0, hz)) }.max() ?? .infinity
        print("sine \(hz) Hz at \(rate) Hz: worst interior error \(fmt(worst)) cents")
        #expect(worst < 2)
    }

    @Test func vibratoVoiceMatchesTheExactTruth() throws {
        let v = voice(seconds: 6, seed: 21)
        let t = try PitchTracker().track(samples: v.samples, sampleRate: v.sampleRate)
        let s10 = try scores(t, truth: v.f0, rate: v.sampleRate, toleranceCents: 10)
        let s50 = try scores(t, truth: v.f0, rate: v.sampleRate)
        print("vibrato voice: RPA10 \(fmt(s10.rawPitchAccuracy)), RPA50 \(fmt(s50.rawPitchAccuracy)), median \(fmt(s10.medianAbsoluteCents ?? -1)) cents, VR \(fmt(s50.voicingRecall)), VFA \(fmt(s50.voicingFalseAlarm))")
        #expect(s10.voicedReferenceFrames > 300)
        #expect(s10.rawPitchAccuracy >= 0.97)
        #expect(try #require(s10.medianAbsoluteCents) < 3)
        #expect(s50.voicingFalseAlarm < 0.05)
    }

    /// Frame k is centred at k·hop: moving the estimate by half a hop or a hop either way fits the
    /// truth worse than leaving it where it is.
    @Test func frameKIsCentredAtKHop() throws {
        let v = voice(seconds: 6, seed: 22, vibratoCents: 50)
        let t = try PitchTracker().track(samples: v.samples, sampleRate: v.sampleRate)
        for (k, f) in t.frames.enumerated() { #expect(f.timeS == Double(k) * 0.01) }
        let base = try scores(t, truth: v.f0, rate: v.sampleRate, toleranceCents: 10).rawPitchAccuracy
        var report = "timing: RPA10 unshifted \(fmt(base))"
        for shift in [-0.010, -0.005, 0.005, 0.010] {
            let shifted = try scores(t, truth: v.f0, rate: v.sampleRate, toleranceCents: 10, shiftS: shift).rawPitchAccuracy
            report += ", \(Int(shift * 1000)) ms \(fmt(shifted))"
            #expect(shifted < base, "shifting by \(shift * 1000) ms fits better (\(shifted) ≥ \(base))")
        }
        print(report)
    }

    /// 200 → 400 Hz in 1 s (one octave, linear in cents), between steady notes; the phase is the
    /// integral of the instantaneous frequency, which is the truth at every sample.
    @Test func glideFollowsTheInstantaneousFrequency() throws {
        let rate = 44100.0
        let hold = 0.4, glide = 1.0
        let n = Int((2 * hold + glide) * rate)
        var f0 = [Double](repeating: 0, count: n)
        var x = [Float](repeating: 0, count: n)
        var phase = 0.0
        for i in 0..<n {
            let t = Double(i) / rate
            let u = min(1, max(0, (t - hold) / glide))
            let hz = 200 * pow(2, u)
            f0[i] = hz
            phase += 2 * .pi * hz / rate
            var v = 0.0
            for h in 1...6 { v += sin(Double(h) * phase) / Double(h) }
            x[i] = Float(0.15 * v)
        }
        let t = try PitchTracker().track(samples: x, sampleRate: rate)
        let inner = interior(t, margin: 0.05)
        #expect(inner.allSatisfy { $0.f0Hz != nil })
        var worst = 0.0, worstAt = 0.0
        for f in inner {
            let truth = f0[Int((f.timeS * rate).rounded())]
            let e = abs(cents(try #require(f.f0Hz), truth))
            if e > worst { worst = e; worstAt = f.timeS }
        }
        print("glide: worst error \(fmt(worst)) cents at \(fmt(worstAt)) s")
        #expect(worst < 5)
    }

    /// Legato notes alternating an octave apart (A3/A4, then D3/D4), joined by the synthesizer's 40 ms
    /// glide or jumping at once. Frames whose analysis buffer straddles a note change (within 25 ms
    /// of it, or inside a glide) have no single right answer and are left out of the reference; on
    /// the rest the pitch must be right, never an octave off.
    @Test(arguments: [0.04, 0.0])
    func octaveLeapsAreNotOctaveErrors(glideS: Double) throws {
        var notes: [SungNote] = []
        var t = 0.3
        for i in 0..<12 {
            let low = i < 6 ? 57.0 : 50.0
            notes.append(SungNote(midi: i % 2 == 0 ? low : low + 12, start: t, duration: 0.35))
            t += 0.35
        }
        var synth = VoiceSynthesizer()
        synth.vibratoCents = 20
        synth.glideS = glideS
        let v = synth.render(notes, seconds: t + 0.4, seed: 5)
        #expect(v.f0.allSatisfy { $0.isFinite })
        let track = try PitchTracker().track(samples: v.samples, sampleRate: v.sampleRate)
        let all = truthSeries(v.f0, rate: v.sampleRate, frames: track.frames.count)
        let held = PitchContour(timesS: all.timesS, f0Hz: zip(all.timesS, all.f0Hz).map { time, hz in
            let nearChange = notes.contains { n in
                let end = n.start + n.duration
                return (time > n.start - 0.025 && time < n.start + glideS + 0.025) || abs(time - end) < 0.025
            }
            return nearChange ? nil : hz
        })
        let sHeld = try MelodyMetrics.evaluate(reference: held, estimate: estimateSeries(track))
        let sAll = try MelodyMetrics.evaluate(reference: all, estimate: estimateSeries(track))
        print("octave leaps, glide \(Int(glideS * 1000)) ms: held frames \(sHeld.voicedReferenceFrames): RPA \(fmt(sHeld.rawPitchAccuracy, 4)), RCA \(fmt(sHeld.rawChromaAccuracy, 4)); all \(sAll.voicedReferenceFrames) frames: RPA \(fmt(sAll.rawPitchAccuracy, 4)), RCA \(fmt(sAll.rawChromaAccuracy, 4)), VR \(fmt(sAll.voicingRecall))")
        #expect(sHeld.voicedReferenceFrames >= 300)
        #expect(sHeld.rawChromaAccuracy == sHeld.rawPitchAccuracy)
        #expect(sHeld.rawPitchAccuracy >= 0.98)
    }

    // MARK: Voicing and degenerate input

    /// Loud or moderate white noise has YIN dips too (d′ about 0.6-0.8); none may become a pitch.
    @Test(arguments: [(UInt64(1), 0.3), (2, 0.3), (3, 0.3), (4, 0.05), (5, 0.05)])
    func whiteNoiseIsUnvoiced(seed: UInt64, amplitude: Double) throws {
        let x = noise(count: 4 * 44100, amplitude: amplitude, seed: seed)
        let t = try PitchTracker().track(samples: x, sampleRate: 44100)
        let share = voicedShare(t.frames)
        print("white noise seed \(seed), ±\(amplitude): voiced share \(fmt(share))")
        #expect(t.frames.count == 401)
        #expect(share < 0.05)
    }

    @Test func digitalSilenceIsUnvoiced() throws {
        let t = try PitchTracker().track(samples: [Float](repeating: 0, count: 2 * 44100), sampleRate: 44100)
        #expect(t.frames.count == 201)
        #expect(t.frames.allSatisfy { $0.f0Hz == nil })
        let short = try PitchTracker().track(samples: [0, 0, 0], sampleRate: 16000)
        #expect(short.frames.count == 1)
        #expect(short.frames[0].f0Hz == nil)
    }

    @Test func emptyInputIsAClearError() throws {
        for rate in [16000.0, 44100.0] {
            #expect(throws: PitchError.noAudio("the input has no samples")) {
                try PitchTracker().track(samples: [], sampleRate: rate)
            }
        }
        #expect(throws: PitchError.invalidParameter(name: "sampleRateHz", value: "0.0", allowed: "8000…768000 Hz")) {
            try PitchTracker().track(samples: [0.1, 0.2], sampleRate: 0)
        }
    }

    // MARK: Accompaniment bleed

    /// The accompaniment as the microphone hears it: the direct sound after `delay` samples, two
    /// reflections (ms after the direct sound, gain) and a sparse tail decaying over ~30 ms.
    private func room(_ a: [Float], delay: Int, direct: Float, reflections: [(ms: Double, gain: Float)],
                      rate: Double, seed: UInt64) -> [Float] {
        var taps: [(Int, Float)] = [(delay, direct)] + reflections.map { (delay + Int($0.ms * rate / 1000), $0.gain) }
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<30 {
            let after = Int.random(in: Int(0.02 * rate)..<Int(0.09 * rate), using: &rng)
            let amp = 0.05 * exp(-Double(after) / (0.03 * rate)) * (Bool.random(using: &rng) ? 1 : -1)
            taps.append((delay + after, Float(amp)))
        }
        var out = [Float](repeating: 0, count: a.count)
        out.withUnsafeMutableBufferPointer { o in
            a.withUnsafeBufferPointer { x in
                for (d, g) in taps where d < x.count {
                    for i in d..<x.count { o[i] += g * x[i - d] }
                }
            }
        }
        return out
    }

    /// A 10 s take: voice + accompaniment through the room, 50 ms late (2205 samples at 44.1 kHz),
    /// + low noise. The latency is the first arrival, also when a reflection is louder than it.
    @Test(arguments: [
        (Float(0.3), [(ms: 6.0, gain: Float(0.17)), (ms: 17.0, gain: -0.11)]),
        (Float(0.18), [(ms: 9.0, gain: Float(0.3)), (ms: 23.0, gain: 0.12)]),
    ])
    func accompanimentBleedIsCancelledAndTheLatencyMeasured(direct: Float, reflections: [(ms: Double, gain: Float)]) throws {
        let rate = 44100.0, seconds = 10.0
        let delay = 2205  // 50 ms
        let v = voice(seconds: seconds, seed: 31)
        let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: 32)
        let bleed = room(acc, delay: delay, direct: direct, reflections: reflections, rate: rate, seed: 33)
        let hiss = noise(count: v.samples.count, amplitude: 0.002, seed: 34)
        let take = (0..<v.samples.count).map { v.samples[$0] + bleed[$0] + hiss[$0] }
        let s = try PitchScratch()
        try AudioBuffer(sampleRate: rate, channels: [take]).write(path: s.path("take.wav"), format: .wavFloat)
        try AudioBuffer(sampleRate: rate, channels: [acc]).write(path: s.path("acc.wav"), format: .wavFloat)

        let tracker = try PitchTracker()
        let cancelled = try tracker.track(path: s.path("take.wav"), accompaniment: s.path("acc.wav"))
        let plain = try tracker.track(path: s.path("take.wav"))
        let latency = try #require(cancelled.latencyMs)
        let gain = try #require(cancelled.accompanimentGain)
        #expect(plain.latencyMs == nil && plain.accompanimentGain == nil)
        #expect(cancelled.frames.count == 1001 && plain.frames.count == 1001)
        #expect(cancelled.durationS == seconds)

        // Accompaniment-only stretches: no voice within 50 ms of the frame.
        let onlyAcc: (PitchFrame) -> Bool = { f in
            stride(from: f.timeS - 0.05, through: f.timeS + 0.05, by: 0.005).allSatisfy { t in
                let i = Int((t * rate).rounded())
                return i < 0 || i >= v.f0.count || v.f0[i] == 0
            }
        }
        let accFrames = cancelled.frames.filter(onlyAcc)
        let faWith = voicedShare(accFrames)
        let faWithout = voicedShare(plain.frames.filter(onlyAcc))
        let sc = try scores(cancelled, truth: v.f0, rate: rate)
        let sp = try scores(plain, truth: v.f0, rate: rate)
        print("bleed (direct \(direct)): latency \(fmt(latency)) ms (true 50), gain \(fmt(gain, 4)), RPA \(fmt(sc.rawPitchAccuracy)) (uncancelled \(fmt(sp.rawPitchAccuracy))), accompaniment-only voiced \(fmt(faWith)) vs \(fmt(faWithout)) uncancelled, \(accFrames.count) frames")
        #expect(accFrames.count > 100)
        #expect(abs(latency - 50) <= 2)
        #expect(sc.rawPitchAccuracy >= 0.97)
        #expect(faWith < 0.1)
        #expect(faWithout - faWith > 0.3)
    }

    // MARK: State, threads, files

    @Test func aReusedTrackerLeaksNoState() throws {
        let a = voice(seconds: 3, seed: 41)
        let b = tone(330, seconds: 2, rate: 16000, harmonics: 3)
        let tracker = try PitchTracker()
        let a1 = try tracker.track(samples: a.samples, sampleRate: 44100)
        let b1 = try tracker.track(samples: b, sampleRate: 16000)
        let a2 = try tracker.track(samples: a.samples, sampleRate: 44100)
        let freshA = try PitchTracker().track(samples: a.samples, sampleRate: 44100)
        let freshB = try PitchTracker().track(samples: b, sampleRate: 16000)
        #expect(a1.frames == freshA.frames)
        #expect(a2.frames == freshA.frames)
        #expect(b1.frames == freshB.frames)
        #expect(a1.frames.count == 301 && b1.frames.count == 201)
        #expect(a1.frames.contains { $0.f0Hz != nil })
    }

    @Test func oneAndTwoThreadsGiveIdenticalFrames() throws {
        let a = voice(seconds: 4, seed: 42)
        var one = PitchConfiguration(), two = PitchConfiguration()
        one.threads = 1
        two.threads = 2
        let t1 = try PitchTracker(configuration: one).track(samples: a.samples, sampleRate: 44100)
        let t2 = try PitchTracker(configuration: two).track(samples: a.samples, sampleRate: 44100)
        #expect(t1.frames.count == 401)
        #expect(t1.frames == t2.frames)
    }

    /// Two workers analyse blocks on the session's queue while the caller feeds the next: fed in
    /// small blocks, the frames are still those of one thread; and a session left unfinished (its
    /// input failed) with blocks in flight does not disturb the next input on the same tracker.
    @Test func pipelinedSessionsGiveIdenticalFrames() throws {
        let a = voice(seconds: 8, seed: 44), b = voice(seconds: 4, seed: 45)
        var one = PitchConfiguration(), two = PitchConfiguration()
        one.threads = 1
        two.threads = 2
        let tracker = try PitchTracker(configuration: two)
        func fed(_ tracker: PitchTracker, _ x: [Float], block: Int, finish: Bool = true) throws -> PitchTrack? {
            let session = try tracker.session(sampleRateHz: 44100)
            for at in stride(from: 0, to: x.count, by: block) { try session.feed(Array(x[at..<min(x.count, at + block)])) }
            return finish ? try session.finish() : nil
        }
        let t2 = try fed(tracker, a.samples, block: 4096)
        let t1 = try PitchTracker(configuration: one).track(samples: a.samples, sampleRate: 44100)
        #expect(t2?.frames == t1.frames)
        #expect(t1.frames.count == 801)
        _ = try fed(tracker, a.samples, block: 44100, finish: false)
        let next = try fed(tracker, b.samples, block: 8192)
        let fresh = try PitchTracker(configuration: one).track(samples: b.samples, sampleRate: 44100)
        #expect(next?.frames == fresh.frames)
    }

    @Test func fileTrackingEqualsInMemoryTracking() throws {
        let s = try PitchScratch()
        // 44.1 kHz (resampled in blocks while streaming) and 16 kHz (the analysis rate, no resampler).
        for rate in [44100.0, 16000.0] {
            let a = voice(seconds: 4, seed: 43, rate: rate)
            let path = s.path("v\(Int(rate)).wav")
            try AudioBuffer(sampleRate: rate, channels: [a.samples]).write(path: path, format: .wavFloat)
            let tracker = try PitchTracker()
            let file = try tracker.track(path: path)
            let memory = try tracker.track(samples: a.samples, sampleRate: rate)
            #expect(file.durationS == memory.durationS)
            #expect(file.frames == memory.frames, "file and memory differ at \(rate) Hz")
            // A stereo file whose second channel holds the voice: channel 1 is the same track.
            let stereo = s.path("s\(Int(rate)).wav")
            try AudioBuffer(sampleRate: rate, channels: [noise(count: a.samples.count, amplitude: 0.1, seed: 9), a.samples])
                .write(path: stereo, format: .wavFloat)
            #expect(try tracker.track(path: stereo, channel: .channel(1)).frames == memory.frames)
            #expect(throws: AudioError.wrongChannelCount(path: stereo, found: 2, expected: "channel 3 was asked for", format: "WAV FLOAT")) {
                try tracker.track(path: stereo, channel: .channel(2))
            }
        }
    }

    // MARK: Configuration

    @Test func outOfRangeParametersAreNamed() throws {
        func error(_ change: (inout PitchConfiguration) -> Void) -> PitchError? {
            var c = PitchConfiguration()
            change(&c)
            do { _ = try PitchTracker(configuration: c); return nil } catch { return error }
        }
        #expect(error { $0.hopMs = 0 } == .invalidParameter(name: "hopMs", value: "0.0", allowed: "1…100 ms"))
        #expect(error { $0.hopMs = 100.5 } == .invalidParameter(name: "hopMs", value: "100.5", allowed: "1…100 ms"))
        #expect(error { $0.analysisRateHz = 4000 } == .invalidParameter(name: "analysisRateHz", value: "4000.0", allowed: "8000…48000 Hz"))
        #expect(error { $0.minHz = 10 } == .invalidParameter(name: "minHz", value: "10.0", allowed: "20…2000 Hz"))
        #expect(error { $0.maxHz = 5000 } == .invalidParameter(
            name: "maxHz", value: "5000.0", allowed: "above minHz (60.0) and at most a quarter of the analysis rate (4000.0)"))
        #expect(error { $0.minHz = 500; $0.maxHz = 400 } == .invalidParameter(
            name: "maxHz", value: "400.0", allowed: "above minHz (500.0) and at most a quarter of the analysis rate (4000.0)"))
        #expect(error { $0.energyFloorDb = 3 } == .invalidParameter(name: "energyFloorDb", value: "3.0", allowed: "−120…0 dB"))
        #expect(error { $0.absoluteFloorDbfs = -200 } == .invalidParameter(name: "absoluteFloorDbfs", value: "-200.0", allowed: "−150…0 dBFS"))
        #expect(error { $0.threads = 0 } == .invalidParameter(name: "threads", value: "0", allowed: "1…64 threads"))
        #expect(error { $0.threads = 65 } == .invalidParameter(name: "threads", value: "65", allowed: "1…64 threads"))
        #expect(error { $0.windowMs = 500 } == .invalidParameter(name: "windowMs", value: "500.0", allowed: "1…200 ms"))
        #expect(error { _ in } == nil)
        #expect("\(PitchError.invalidParameter(name: "hopMs", value: "0.0", allowed: "1…100 ms"))" == "hopMs = 0.0 is out of range; allowed: 1…100 ms")

        var canceller = CancellerConfiguration()
        canceller.filterMs = 5
        #expect(throws: PitchError.invalidParameter(name: "filterMs", value: "5.0", allowed: "10…2000 ms")) { try canceller.validated() }
        canceller = CancellerConfiguration()
        canceller.minLatencyMs = 1000
        #expect(throws: PitchError.invalidParameter(name: "minLatencyMs", value: "1000.0", allowed: "below maxLatencyMs (1000.0)")) { try canceller.validated() }
    }

    @Test func hopAndAnalysisRateAreHonoured() throws {
        var c = PitchConfiguration()
        c.hopMs = 5
        c.analysisRateHz = 22050
        let t = try PitchTracker(configuration: c).track(samples: tone(261.63, seconds: 1, rate: 44100), sampleRate: 44100)
        #expect(t.hopS == 0.005)
        #expect(t.frames.count == 201)
        #expect(t.frames[7].timeS == 7 * 0.005)
        let inner = interior(t, margin: 0.05)
        #expect(inner.allSatisfy { f in f.f0Hz.map { abs(cents($0, 261.63)) < 2 } ?? false })
    }
}

// MARK: - Writers

@Suite struct PitchTrackWriterTests {
    private func handTrack() -> PitchTrack {
        // 2 unvoiced, 5 × A4 (MIDI 69), 2 × A#4 (70: too short for a note), 4 × A3 (57), 1 unvoiced.
        var frames: [PitchFrame] = []
        func add(_ f0: Double?, _ conf: Double) { frames.append(PitchFrame(timeS: Double(frames.count) * 0.01, f0Hz: f0, confidence: conf)) }
        add(nil, 0); add(nil, 0.0004)
        for hz in [440, 441.5, 439.25, 440, 440.0004] { add(hz, 0.9876) }
        add(466.16, 0.5); add(466.2, 0.5)
        for _ in 0..<4 { add(220, 1) }
        add(nil, 0.12345)
        return PitchTrack(frames: frames, hopS: 0.01, configuration: PitchConfiguration(), durationS: 0.14)
    }

    @Test func csvHeaderAndLines() {
        let csv = PitchTrackWriter.csv(handTrack())
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 16)
        #expect(lines[0] == "time_s,f0_hz,confidence")
        #expect(lines[1] == "0.000,0.000,0.000")
        #expect(lines[2] == "0.010,0.000,0.000")
        #expect(lines[3] == "0.020,440.000,0.988")
        #expect(lines[4] == "0.030,441.500,0.988")
        #expect(lines[5] == "0.040,439.250,0.988")
        #expect(lines[7] == "0.060,440.000,0.988")
        #expect(lines[8] == "0.070,466.160,0.500")
        #expect(lines[14] == "0.130,0.000,0.123")
        #expect(lines[15] == "")
    }

    @Test func agoraNotesFromFrames() {
        let notes = PitchTrackWriter.agoraNotes(handTrack()).serialized()
        let obj = try? JSONSerialization.jsonObject(with: Data(notes.utf8)) as? [String: Any]
        let list = obj?["pitchDatas"] as? [[String: Int]]
        #expect(list == [["pitch": 69, "startTime": 20, "duration": 50], ["pitch": 57, "startTime": 90, "duration": 40]])
    }

    @Test func agoraBinaryIsTheTrackBitForBit() throws {
        let rate = 16000.0
        let x = [Float](repeating: 0, count: 8000) + tone(440, seconds: 1, rate: rate) + [Float](repeating: 0, count: 8000)
        let t = try PitchTracker().track(samples: x, sampleRate: rate)
        let bytes = PitchTrackWriter.agoraBinary(t)
        #expect(t.frames.count == 201)
        #expect(bytes.count == 12 + 8 * t.frames.count)
        #expect(Array(bytes[0..<12]) == [1, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0])
        var voiced = 0
        for (k, f) in t.frames.enumerated() {
            var bits: UInt64 = 0
            for b in 0..<8 { bits |= UInt64(bytes[12 + 8 * k + b]) << (8 * b) }
            #expect(Double(bitPattern: bits) == (f.f0Hz ?? 0))
            if f.f0Hz != nil { voiced += 1 }
        }
        #expect(voiced >= 95)
    }

    /// A held A4 (0.5-1.5 s) becomes one note segment, MIDI 69, with its start and length to a few frames.
    @Test func agoraNotesForAHeldNote() throws {
        let rate = 44100.0
        let silence = [Float](repeating: 0, count: Int(0.5 * rate))
        let t = try PitchTracker().track(samples: silence + tone(440, seconds: 1, rate: rate, harmonics: 4) + silence, sampleRate: rate)
        let json = PitchTrackWriter.agoraNotes(t).serialized()
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let notes = try #require(obj["pitchDatas"] as? [[String: Int]])
        print("held note: \(notes)")
        #expect(notes.count == 1)
        let n = try #require(notes.first)
        #expect(n["pitch"] == 69)
        #expect(abs(n["startTime"]! - 500) <= 20)
        #expect(abs(n["duration"]! - 1000) <= 30)
    }

    @Test func jsonCarriesSettingsAndRoundedFrames() throws {
        var t = PitchTrack(frames: [PitchFrame(timeS: 0.01, f0Hz: 220.12345, confidence: 0.98765)], hopS: 0.01,
                           configuration: PitchConfiguration(), durationS: 0.02)
        t.latencyMs = 50.04
        t.accompanimentGain = 0.123456
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(PitchTrackWriter.json(t, input: "x.wav").serialized().utf8)) as? [String: Any])
        #expect(obj["input"] as? String == "x.wav")
        #expect(obj["latency_ms"] as? Double == 50.0)
        #expect(obj["accompaniment_gain"] as? Double == 0.1235)
        let settings = try #require(obj["settings"] as? [String: Double])
        #expect(settings == ["hop_ms": 10, "min_hz": 60, "max_hz": 1100, "analysis_rate_hz": 16000, "energy_floor_db": -35])
        let frames = try #require(obj["frames"] as? [[String: Double]])
        #expect(frames == [["time_s": 0.01, "f0_hz": 220.123, "confidence": 0.988]])
    }
}

// MARK: - Streaming sessions: blocks, arrays and files give the same track

extension PitchTrackerTests {
    @Test func aSessionFedInRandomBlocksEqualsTheWholeSignal() throws {
        let rate = 44100.0
        let v = voice(seconds: 4, seed: 71)
        let tracker = try PitchTracker()
        let whole = try tracker.track(samples: v.samples, sampleRate: rate)
        let session = try tracker.session(sampleRateHz: rate)
        var rng = SeededGenerator(seed: 72)
        var i = 0
        while i < v.samples.count {
            let n = min(Int.random(in: 1...9000, using: &rng), v.samples.count - i)
            try v.samples[i..<(i + n)].withContiguousStorageIfAvailable { try session.feed($0) }
            i += n
        }
        let blocks = try session.finish()
        #expect(session.inputFrames == v.samples.count)
        #expect(blocks.frames.count == whole.frames.count)
        #expect(blocks.frames == whole.frames)
        #expect(throws: PitchError.self) { _ = try tracker.session(sampleRateHz: 1) }
    }

    /// The canceller is a worker kept by the tracker: a second take through the same tracker (a
    /// different length, another latency) gives exactly what a fresh tracker gives, on files and on
    /// arrays, and a longer take before does not leak into a shorter one after.
    @Test func aReusedCancellerGivesWhatAFreshOneGives() throws {
        let rate = 44100.0
        let s = try PitchScratch()
        func take(_ name: String, seconds: Double, delay: Int, seed: UInt64) throws -> (take: [Float], acc: [Float]) {
            let v = voice(seconds: seconds, seed: seed)
            let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: seed + 1)
            let bleed = room(acc, delay: delay, direct: 0.3, reflections: [(ms: 6, gain: 0.17)], rate: rate, seed: seed + 2)
            let take = (0..<v.samples.count).map { v.samples[$0] + bleed[$0] }
            try AudioBuffer(sampleRate: rate, channels: [take]).write(path: s.path(name + ".wav"), format: .wavFloat)
            try AudioBuffer(sampleRate: rate, channels: [acc]).write(path: s.path(name + "-acc.wav"), format: .wavFloat)
            return (take, acc)
        }
        let long = try take("long", seconds: 8, delay: 4410, seed: 81)
        let short = try take("short", seconds: 5, delay: 2205, seed: 91)
        let reused = try PitchTracker()
        _ = try reused.track(path: s.path("long.wav"), accompaniment: s.path("long-acc.wav"))
        let again = try reused.track(path: s.path("short.wav"), accompaniment: s.path("short-acc.wav"))
        let fresh = try PitchTracker().track(path: s.path("short.wav"), accompaniment: s.path("short-acc.wav"))
        #expect(again.latencyMs == fresh.latencyMs && again.accompanimentGain == fresh.accompanimentGain)
        #expect(again.frames == fresh.frames)
        #expect(abs(try #require(again.latencyMs) - 50) <= 1)
        _ = try reused.track(samples: long.take, sampleRate: rate, accompaniment: long.acc, accompanimentRate: rate)
        let arrays = try reused.track(samples: short.take, sampleRate: rate, accompaniment: short.acc, accompanimentRate: rate)
        let freshArrays = try PitchTracker().track(samples: short.take, sampleRate: rate, accompaniment: short.acc, accompanimentRate: rate)
        #expect(arrays.latencyMs == freshArrays.latencyMs && arrays.frames == freshArrays.frames)
    }

    /// The in-memory canceller (arrays, no temporary file) agrees with the file path.
    @Test func cancellingOnArraysAgreesWithFiles() throws {
        let rate = 44100.0, seconds = 6.0
        let v = voice(seconds: seconds, seed: 73)
        let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: 74)
        let bleed = room(acc, delay: 2205, direct: 0.3, reflections: [(ms: 6, gain: 0.17)], rate: rate, seed: 75)
        let take = (0..<v.samples.count).map { v.samples[$0] + bleed[$0] }
        let s = try PitchScratch()
        try AudioBuffer(sampleRate: rate, channels: [take]).write(path: s.path("take.wav"), format: .wavFloat)
        try AudioBuffer(sampleRate: rate, channels: [acc]).write(path: s.path("acc.wav"), format: .wavFloat)
        let tracker = try PitchTracker()
        let fromFiles = try tracker.track(path: s.path("take.wav"), accompaniment: s.path("acc.wav"))
        let fromArrays = try tracker.track(samples: take, sampleRate: rate, accompaniment: acc, accompanimentRate: rate)
        let l1 = try #require(fromFiles.latencyMs), l2 = try #require(fromArrays.latencyMs)
        #expect(abs(l1 - 50) <= 1 && abs(l2 - l1) < 0.05)
        #expect(fromArrays.frames.count == fromFiles.frames.count)
        let a = try scores(fromArrays, truth: v.f0, rate: rate), f = try scores(fromFiles, truth: v.f0, rate: rate)
        #expect(a.rawPitchAccuracy >= 0.97 && abs(a.rawPitchAccuracy - f.rawPitchAccuracy) < 0.01)
        #expect(abs(a.voicingFalseAlarm - f.voicingFalseAlarm) < 0.02)
    }
}
