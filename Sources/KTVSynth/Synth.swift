import Foundation
import KTVCore

// Deterministic test signals with known truth: a singing-like voice (harmonics, vibrato, note
// glides, breaths between phrases) whose exact f0 is returned, and a synthetic accompaniment
// (chords, bass, percussion). Used by the tests, the benchmarks and the demo fixture.

/// One sung note: MIDI pitch (fractional allowed), start and length in seconds.
public struct SungNote: Sendable {
    public var midi: Double
    public var start: Double
    public var duration: Double

    public init(midi: Double, start: Double, duration: Double) {
        self.midi = midi
        self.start = start
        self.duration = duration
    }
}

/// A voice signal and its truth.
public struct SynthVoice: Sendable {
    public var samples: [Float]
    public var sampleRate: Double
    /// True f0 per sample in Hz; 0 where the voice is silent.
    public var f0: [Float]
}

public struct VoiceSynthesizer: Sendable {
    public var sampleRate: Double = 44100
    /// Vibrato rate (Hz) and depth (cents, peak).
    public var vibratoHz: Double = 5.5
    public var vibratoCents: Double = 30
    /// Harmonics and their roll-off (amplitude of harmonic k is 1/k^rolloff).
    public var harmonics: Int = 12
    public var rolloff: Double = 1.2
    public var amplitude: Float = 0.1
    /// Glide between adjacent notes of a phrase, in seconds.
    public var glideS: Double = 0.04

    public init() {}

    /// Random phrases of notes within `midiRange`, with gaps; deterministic for a seed.
    public static func melody(seconds: Double, midiRange: ClosedRange<Double>, seed: UInt64) -> [SungNote] {
        var rng = SeededGenerator(seed: seed)
        var notes: [SungNote] = []
        var t = 0.4
        while t < seconds - 0.6 {
            let phrase = Int.random(in: 3...7, using: &rng)
            var midi = Double(Int.random(in: Int(midiRange.lowerBound)...Int(midiRange.upperBound), using: &rng))
            for _ in 0..<phrase where t < seconds - 0.6 {
                let d = Double.random(in: 0.25...0.9, using: &rng)
                notes.append(SungNote(midi: midi, start: t, duration: min(d, seconds - 0.4 - t)))
                t += d
                midi = min(midiRange.upperBound, max(midiRange.lowerBound, midi + Double(Int.random(in: -4...4, using: &rng))))
            }
            t += Double.random(in: 0.4...1.5, using: &rng)  // breath between phrases
        }
        return notes
    }

    public func render(_ notes: [SungNote], seconds: Double, seed: UInt64 = 1) -> SynthVoice {
        let n = Int(seconds * sampleRate)
        var out = [Float](repeating: 0, count: n)
        var f0 = [Float](repeating: 0, count: n)
        var rng = SeededGenerator(seed: seed)
        var phase = 0.0
        let vibPhase0 = Double.random(in: 0...(2 * .pi), using: &rng)
        for (i, note) in notes.enumerated() {
            let s = Int(note.start * sampleRate), e = min(n, Int((note.start + note.duration) * sampleRate))
            guard e > s else { continue }
            let prev = i > 0 && abs(notes[i - 1].start + notes[i - 1].duration - note.start) < 1e-6 ? notes[i - 1].midi : nil
            let attack = Int(0.02 * sampleRate), release = Int(0.03 * sampleRate)
            for k in s..<e {
                let t = Double(k) / sampleRate
                var midi = note.midi
                if let p = prev, glideS > 0, t - note.start < glideS {
                    midi = p + (note.midi - p) * (t - note.start) / glideS
                }
                let cents = vibratoCents * sin(2 * .pi * vibratoHz * t + vibPhase0)
                let hz = 440 * pow(2, (midi - 69) / 12 + cents / 1200)
                phase += 2 * .pi * hz / sampleRate
                if phase > 2 * .pi * 1000 { phase -= 2 * .pi * 1000 }
                var v = 0.0
                for h in 1...harmonics where Double(h) * hz < sampleRate / 2 - 500 {
                    v += sin(Double(h) * phase) / pow(Double(h), rolloff)
                }
                // Envelope: attack and release only at phrase edges.
                var env = 1.0
                let joinedBefore = prev != nil
                let joinedAfter = i + 1 < notes.count && abs(note.start + note.duration - notes[i + 1].start) < 1e-6
                if !joinedBefore, k - s < attack { env = Double(k - s) / Double(attack) }
                if !joinedAfter, e - k < release { env = min(env, Double(e - k) / Double(release)) }
                out[k] = Float(v * env) * amplitude
                f0[k] = Float(hz)
            }
        }
        return SynthVoice(samples: out, sampleRate: sampleRate, f0: f0)
    }
}

/// A synthetic accompaniment: block chords, a bass line and noise percussion on a steady beat.
public struct AccompanimentSynthesizer: Sendable {
    public var sampleRate: Double = 44100
    public var bpm: Double = 96
    /// RMS level of the result (a karaoke backing track is about as loud as the voice over it).
    public var rms: Float = 0.08

    public init() {}

    public func render(seconds: Double, seed: UInt64) -> [Float] {
        let n = Int(seconds * sampleRate)
        var out = [Float](repeating: 0, count: n)
        var rng = SeededGenerator(seed: seed)
        let beat = 60 / bpm
        let roots: [Double] = [48, 53, 55, 50, 45, 52]
        var t = 0.0
        var bar = 0
        while t < seconds {
            let root = roots[Int.random(in: 0..<roots.count, using: &rng)]
            let chord = [root + 12, root + 16, root + 19, root + 24]
            let s = Int(t * sampleRate), e = min(n, Int((t + 4 * beat) * sampleRate))
            for k in s..<e {
                let tt = Double(k - s) / sampleRate
                let decay = exp(-tt * 0.8)
                var v = 0.0
                for m in chord {
                    let hz = 440 * pow(2, (m - 69) / 12)
                    // A soft sawtooth: a few harmonics.
                    for h in 1...5 { v += 0.12 * sin(2 * .pi * hz * Double(h) * tt) / Double(h) }
                }
                let bassHz = 440 * pow(2, (root - 12 - 69) / 12)
                v += 0.5 * sin(2 * .pi * bassHz * tt) * exp(-fmod(tt, beat) * 3)
                out[k] += Float(v * decay)
            }
            // Percussion: a noise burst on every beat.
            for b in 0..<4 {
                let bs = Int((t + Double(b) * beat) * sampleRate)
                let len = Int(0.08 * sampleRate)
                guard bs < n else { break }
                for k in bs..<min(n, bs + len) {
                    let env = exp(-Double(k - bs) / (0.015 * sampleRate))
                    out[k] += Float(Double.random(in: -1...1, using: &rng) * env * 0.4)
                }
            }
            t += 4 * beat
            bar += 1
        }
        let power = out.reduce(0.0) { $0 + Double($1 * $1) } / Double(max(1, n))
        let scale = rms / Float(max(power.squareRoot(), 1e-9))
        for k in 0..<n { out[k] *= scale }
        return out
    }
}

/// Builds a dual-mono KTV track: original = voice + gain·(accompaniment delayed by lag), accompaniment alone.
public enum DualMonoMixer {
    /// `lagSamples` > 0: the accompaniment appears that much later in the original than in its own channel.
    public static func mix(voice: [Float], accompaniment: [Float], lagSamples: Int, gain: Float) -> (original: [Float], accompaniment: [Float]) {
        let n = min(voice.count, accompaniment.count)
        var orig = [Float](repeating: 0, count: n)
        for i in 0..<n {
            let j = i - lagSamples
            orig[i] = voice[i] + (j >= 0 && j < n ? gain * accompaniment[j] : 0)
        }
        return (orig, Array(accompaniment[0..<n]))
    }
}
