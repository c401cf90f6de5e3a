import Foundation
import KTVAudio
import KTVCore
import KTVSynth

// `ktv-bench make-takes DIR`: a manifest of generated audio takes with their accompaniment, the
// input of the Spark examples (examples/spark, `make spark-cluster-demo`, `make spark-bench`), sized
// like `ktv-bench batch`'s: 30-second 44.1 kHz mono takes whose microphone also caught the backing
// track, so each take costs ktv what a real one does (decoding, cancelling the bleed, tracking,
// scoring). Every take is its own recording: a few songs, each take singing one with seeded faults
// (detuned, late or early, forgotten notes, octave slips, a whole take in another key), so the
// scores spread from about 0 to 100. Every 5th row is judged with Agora's rules, every 7th with
// UltraStar's. Four rows are bad on purpose (a take that does not exist, random bytes, an empty
// file, an unknown rule set). `manifest.jsonl` is JSON Lines with absolute paths; `faults.tsv` says
// what each take sings.

func makeTakes(_ args: [String]) {
    guard args.count > 1, !args[1].hasPrefix("-") else {
        fail("make-takes needs a folder: ktv-bench make-takes DIR [--takes 200] [--seconds 30] [--songs 3]")
    }
    let count = Int(option("--takes", in: args) ?? "200") ?? 200
    let seconds = Double(option("--seconds", in: args) ?? "30") ?? 30
    let songCount = max(1, Int(option("--songs", in: args) ?? "3") ?? 3)
    let dir = URL(fileURLWithPath: args[1]).standardizedFileURL.path
    let rate = 44100.0
    do {
        try FileManager.default.createDirectory(atPath: dir + "/takes", withIntermediateDirectories: true)
    } catch { fail("\(dir): \(error)") }

    struct Song { let melody: [SungNote]; let accompaniment: [Float]; let reference: String; let accompanimentPath: String }
    var songs: [Song] = []
    for s in 0..<songCount {
        let melody = VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...72, seed: UInt64(100 + s))
        var acc = AccompanimentSynthesizer()
        acc.sampleRate = rate
        let samples = acc.render(seconds: seconds, seed: UInt64(200 + s))
        let json = notesJSON(melody) + "\n"
        let reference = dir + "/song-\(s).notes.json", accPath = dir + "/song-\(s).accompaniment.wav"
        do {
            try FileIO.writeAtomically(Array(json.utf8), to: reference)
            try AudioBuffer(sampleRate: rate, channels: [samples]).write(path: accPath, format: .wav16)
        } catch { fail("\(error)") }
        songs.append(Song(melody: melody, accompaniment: samples, reference: reference, accompanimentPath: accPath))
    }

    /// Take k's id, song and the faults it sings with (none for the first `songCount`: `perfect-N`).
    func sung(_ k: Int) -> (id: String, song: Song, notes: [SungNote], fault: String) {
        let song = songs[k % songs.count]
        if k < songs.count { return ("perfect-\(k)", song, song.melody, "sung exactly") }
        var rng = SeededGenerator(seed: UInt64(1000 + k))
        let detuneCents = Double.random(in: -60...60, using: &rng)
        let shift = Double.random(in: -0.25...0.35, using: &rng) * (Bool.random(using: &rng) ? 1 : 0)
        let forget = Double.random(in: 0...0.3, using: &rng)
        let slips = Double.random(in: 0...0.15, using: &rng)
        let key = k % 11 == 0 ? 2.0 : 0
        var notes: [SungNote] = []
        for note in song.melody {
            if Double.random(in: 0..<1, using: &rng) < forget { continue }
            let octave = Double.random(in: 0..<1, using: &rng) < slips ? 12.0 : 0
            let jitter = Double.random(in: -25...25, using: &rng)
            notes.append(SungNote(midi: note.midi + key + octave + (detuneCents + jitter) / 100,
                                  start: max(0, note.start + shift), duration: note.duration))
        }
        let fault = String(format: "detuned %+.0f cents, %+.0f ms, %.0f %% of notes forgotten, %.0f %% octave slips%@",
                           detuneCents, shift == 0 ? 0 : shift * 1000, forget * 100, slips * 100, key != 0 ? ", 2 semitones high" : "")
        return (String(format: "take-%04d", k), song, notes, fault)
    }

    let takes = (0..<count).map(sung)
    let lagSamples = Int(0.12 * rate)
    DispatchQueue.concurrentPerform(iterations: count) { k in
        let take = takes[k]
        var synth = VoiceSynthesizer()
        synth.sampleRate = rate
        let voice = synth.render(take.notes, seconds: seconds, seed: UInt64(20 + k)).samples
        // The microphone: the voice and the backing track's bleed, both 120 ms late.
        let mic = microphone(voice: voice, accompaniment: take.song.accompaniment, lagSamples: lagSamples)
        do { try AudioBuffer(sampleRate: rate, channels: [mic]).write(path: dir + "/takes/\(take.id).wav", format: .wav16) } catch {
            fail("\(take.id): \(error)")
        }
    }

    func row(_ fields: [(String, String)]) -> String {
        JSONValue.object(fields.map { ($0.0, .string($0.1)) }).serialized(pretty: false)
    }
    var lines: [String] = [], faults = ["id\tsung"]
    for (k, take) in takes.enumerated() {
        var fields = [("id", take.id), ("take", dir + "/takes/\(take.id).wav"), ("reference", take.song.reference),
                      ("accompaniment", take.song.accompanimentPath)]
        if k >= songs.count, k % 5 == 0 { fields.append(("rules", "agora")) } else if k >= songs.count, k % 7 == 0 { fields.append(("rules", "ultrastar")) }
        lines.append(row(fields))
        faults.append("\(take.id)\t\(take.fault)")
    }
    // The bad rows, spread through the manifest so they land in different partitions.
    var random = SeededGenerator(seed: 99)
    let corrupt = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }
    do {
        try FileIO.writeAtomically(corrupt, to: dir + "/takes/bad-corrupt.wav")
        try FileIO.writeAtomically([], to: dir + "/takes/bad-empty.wav")
        try FileIO.writeAtomically(Array((faults.joined(separator: "\n") + "\n").utf8), to: dir + "/faults.tsv")
    } catch { fail("\(error)") }
    let bad = [
        row([("id", "bad-missing"), ("take", dir + "/takes/no-such-take.wav"), ("reference", songs[0].reference)]),
        row([("id", "bad-corrupt"), ("take", dir + "/takes/bad-corrupt.wav"), ("reference", songs[0].reference)]),
        row([("id", "bad-empty"), ("take", dir + "/takes/bad-empty.wav"), ("reference", songs[0].reference)]),
        row([("id", "bad-rules"), ("take", dir + "/takes/\(takes.first?.id ?? "perfect-0").wav"), ("reference", songs[0].reference), ("rules", "karaoke")]),
    ]
    for (k, line) in bad.enumerated() { lines.insert(line, at: min(lines.count, (k + 1) * lines.count / (bad.count + 1) + k)) }
    do { try FileIO.writeAtomically(Array((lines.joined(separator: "\n") + "\n").utf8), to: dir + "/manifest.jsonl") } catch { fail("\(error)") }
    print("make-takes: \(songCount) songs, \(count) audio takes of \(Int(seconds)) s with their accompaniment's bleed + 4 bad rows (bad-missing, bad-corrupt, bad-empty, bad-rules) -> \(dir)/manifest.jsonl")
}
