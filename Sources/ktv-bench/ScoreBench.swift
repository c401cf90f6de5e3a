import Foundation
import KTVAudio
import KTVCore
import KTVPitch
import KTVScore
import KTVSynth

// `ktv-bench score`: (1) 1,000 pitch-track takes of a 3-minute song scored against one reference in
// one process with one `Scorer` (what a scoring service does; the takes are read from CSV files, so
// parsing counts), reported as takes per second and × realtime; (2) 20 audio takes of 30 s with
// the accompaniment's bleed in them, through the `ktv score --accompaniment` command (whole process
// each: decode, cancel, track, judge).

func benchScore(_ args: [String]) {
    let takes = Int(option("--takes", in: args) ?? "1000") ?? 1000
    let audioTakes = Int(option("--audio-takes", in: args) ?? "20") ?? 20
    let ktvPath = option("--ktv", in: args) ?? ".build/release/ktv"
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-bench-score-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }

    // A 3-minute melody as a notes JSON, and takes sung from it with per-take detune, timing jitter and dropouts.
    let songS = 180.0
    let notes = VoiceSynthesizer.melody(seconds: songS, midiRange: 55...74, seed: 7)
    let json = "[" + notes.map { "{\"start_ms\": \(Int($0.start * 1000)), \"duration_ms\": \(Int($0.duration * 1000)), \"midi\": \(Int($0.midi.rounded()))}" }
        .joined(separator: ",") + "]"
    let referencePath = dir + "/reference.json"
    do { try FileIO.writeAtomically(Array(json.utf8), to: referencePath) } catch { fail("\(error)") }
    var rng = SeededGenerator(seed: 11)
    var paths: [String] = []
    for k in 0..<min(takes, 50) {
        let detune = Double.random(in: -80...80, using: &rng)
        var csv = "time_s,f0_hz\n"
        var t = 0.0
        var n = 0
        while t < songS {
            while n < notes.count, notes[n].start + notes[n].duration <= t { n += 1 }
            var hz = 0.0
            if n < notes.count, notes[n].start <= t, Double.random(in: 0...1, using: &rng) > 0.05 {
                hz = 440 * pow(2, (notes[n].midi - 69 + (detune + Double.random(in: -30...30, using: &rng)) / 100) / 12)
            }
            csv += String(format: "%.2f,%.3f\n", t, hz)
            t += 0.01
        }
        let p = dir + "/take\(k).csv"
        do { try FileIO.writeAtomically(Array(csv.utf8), to: p) } catch { fail("\(error)") }
        paths.append(p)
    }
    // 1,000 takes, cycling over the 50 files written.
    do {
        let reference = try ReferenceReader.read(path: referencePath)
        let scorer = try Scorer(configuration: ScoreConfiguration())
        let start = now()
        var total = 0.0, reading = 0.0
        for k in 0..<takes {
            let t0 = now()
            let take = try scorer.take(path: paths[k % paths.count])
            reading += now() - t0
            total += try scorer.score(take, reference: reference).score
        }
        let wall = now() - start
        print("| takes | song | wall s | takes/s | × realtime | mean score |")
        print("|---|---|---|---|---|---|")
        print("reading the takes: \(f3(reading)) s of \(f3(wall)) s")
        print("| \(takes) pitch tracks (CSV, 10 ms) | 3 min | \(f3(wall)) | \(String(format: "%.0f", Double(takes) / wall)) | \(String(format: "%.0f", Double(takes) * songS / wall)) | \(String(format: "%.1f", total / Double(takes))) |")
    } catch { fail("\(error)") }

    // 20 audio takes of 30 s: a voice, and the accompaniment under it at −10 dB, 120 ms late.
    let rate = 44100.0
    let seconds = 30.0
    var accSynth = AccompanimentSynthesizer()
    accSynth.sampleRate = rate
    let accompaniment = accSynth.render(seconds: seconds, seed: 5)
    let accPath = dir + "/accompaniment.wav"
    do { try AudioBuffer(sampleRate: rate, channels: [accompaniment]).write(path: accPath, format: .wav16) } catch { fail("\(error)") }
    var synth = VoiceSynthesizer()
    synth.sampleRate = rate
    let melody30 = VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...74, seed: 8)
    let json30 = "[" + melody30.map { "{\"start_ms\": \(Int($0.start * 1000)), \"duration_ms\": \(Int($0.duration * 1000)), \"midi\": \(Int($0.midi.rounded()))}" }
        .joined(separator: ",") + "]"
    let reference30 = dir + "/reference30.json"
    do { try FileIO.writeAtomically(Array(json30.utf8), to: reference30) } catch { fail("\(error)") }
    let lag = Int(0.12 * rate)
    var audioPaths: [String] = []
    for k in 0..<min(audioTakes, 4) {
        let voice = synth.render(melody30, seconds: seconds, seed: UInt64(20 + k)).samples
        var mic = [Float](repeating: 0, count: voice.count)
        for i in 0..<mic.count {
            mic[i] = (i >= lag ? voice[i - lag] : 0) + (i >= lag && i - lag < accompaniment.count ? 0.3 * accompaniment[i - lag] : 0)
        }
        let p = dir + "/take\(k).wav"
        do { try AudioBuffer(sampleRate: rate, channels: [mic]).write(path: p, format: .wav16) } catch { fail("\(error)") }
        audioPaths.append(p)
    }
    var latencies: [Double] = []
    var scores: [Double] = []
    let start = now()
    for k in 0..<audioTakes {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ktvPath)
        p.arguments = ["score", audioPaths[k % audioPaths.count], "--reference", reference30, "--accompaniment", accPath, "--format", "json"]
        let out = Pipe()
        p.standardOutput = out
        do { try p.run() } catch { fail("cannot run \(ktvPath): \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { fail("ktv score exited \(p.terminationStatus)") }
        if let l = obj["latency_ms"] as? Double { latencies.append(l) }
        if let s = obj["score"] as? Double { scores.append(s) }
    }
    let wall = now() - start
    print("| \(audioTakes) audio takes with --accompaniment (whole process each) | 30 s | \(f3(wall)) | \(String(format: "%.1f", Double(audioTakes) / wall)) | \(String(format: "%.0f", Double(audioTakes) * seconds / wall)) | \(String(format: "%.1f", (Stats.mean(scores) ?? 0))) |")
    latencies.sort()
    print("latency found: median \(String(format: "%.1f", Stats.median(latencies) ?? .nan)) ms (true 120)")
}
