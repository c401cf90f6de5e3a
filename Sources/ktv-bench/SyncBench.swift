import Foundation
import KTVAudio
import KTVCore
import KTVLyrics
import KTVSynth

// `ktv lyrics sync` on a generated 4-minute song (and an 8-minute one, for memory): a seeded melody,
// lyrics a line per phrase and a word per note at the true times, the audio sung 5 % slower with
// 15 s of the song cut out (44.1 kHz dual-mono WAV). Whole process (decode, split, track, align,
// write), one analysis thread; the line-start errors against the edit, and the peak memory.
// Target (issue 32): a 4-minute song in under 2 s, memory flat in the song's length.

func benchSync(_ args: [String]) {
    let ktv = option("--ktv", in: args) ?? ".build/release/ktv"
    let minutes = Double(option("--minutes", in: args) ?? "4") ?? 4
    let dir = BenchDirectory("sync")
    defer { dir.remove() }
    print("| song | lines | wall (whole process) | peak RSS | line-start error median / p95 / max | dropped (true) |")
    print("|---|---|---|---|---|---|")
    for m in [minutes, 2 * minutes] {
        let input = writeSyncInput(minutes: m, dir: dir.path)
        let (lyrics, phrases, edit, wav, krc) = (input.lyrics, input.phrases, input.edit, input.wav, input.krc)
        let out = dir.path + "/synced\(Int(m)).krc", report = dir.path + "/report\(Int(m)).json"
        let run = spawnMeasured("/bin/sh", ["-c", "exec '\(ktv)' lyrics sync '\(krc)' --audio '\(wav)' -o '\(out)' --format json > '\(report)'"], quiet: true)
        guard run.status == 0 || run.status == 1, let data = FileManager.default.contents(atPath: report),
              let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let lines = obj["lines"] as? [[String: Any]] else {
            fail("ktv lyrics sync exited \(run.status)")
        }
        var errors: [Double] = [], trueDropped = 0
        for (i, l) in lyrics.lines.enumerated() {
            let p = phrases[i]
            guard let truth = edit(Double(l.startMs) / 1000), edit(p.last!.start + p.last!.duration - 1e-4) != nil else { trueDropped += 1; continue }
            if let got = lines[i]["new_start_ms"] as? Int { errors.append(abs(Double(got) - truth * 1000)) }
        }
        errors.sort()
        let dropped = (obj["dropped"] as? [Int])?.count ?? 0
        print(String(format: "| %.0f min, 5 %% slower, 15 s cut | %d | %.2f s | %.0f MB | %.0f / %.0f / %.0f ms | %d (%d) |", m, lyrics.lines.count, run.seconds, run.peakMB,
                     Stats.median(errors) ?? .nan, Stats.percentile(errors, 0.95) ?? .nan, errors.last ?? .nan, dropped, trueDropped))
        if m == minutes { print(String(format: "target: a %.0f-minute song under 2 s -> %@", m, run.seconds < 2 ? "PASS" : "FAIL")) }
    }
}

/// The sync bench's song: a seeded melody of `minutes`, lyrics a line per phrase and a word per
/// note at the true times (`songM.krc`), and the audio sung 5 % slower with 15 s of the song cut
/// out (`songM.wav`, 44.1 kHz dual-mono); `edit` maps a lyric time (s) to the audio's, nil when cut.
struct SyncInput {
    var lyrics: Lyrics
    var phrases: [[SungNote]]
    var edit: (Double) -> Double?
    var wav: String
    var krc: String
}

func writeSyncInput(minutes: Double, dir: String) -> SyncInput {
    let m = minutes
    let seconds = m * 60
    let notes = VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...72, seed: 33)
    var phrases: [[SungNote]] = []
    for n in notes {
        if let last = phrases.last?.last, abs(last.start + last.duration - n.start) < 1e-6 { phrases[phrases.count - 1].append(n) } else { phrases.append([n]) }
    }
    func ms(_ s: Double) -> Int { Int((s * 1000).rounded()) }
    let lyrics = Lyrics(format: .krcText, tags: [LyricTag(key: "ti", value: "sync bench")], lines: phrases.map { p in
        LyricLine(startMs: ms(p[0].start), durationMs: ms(p.last!.start + p.last!.duration) - ms(p[0].start), text: "",
                  words: p.map { LyricWord(startMs: ms($0.start), durationMs: ms($0.start + $0.duration) - ms($0.start), text: "la ") })
    })
    // The edit: 15 s cut from the middle (between phrases), then 5 % slower.
    let k = phrases.count / 2
    let cutA = (phrases[k].last!.start + phrases[k].last!.duration + phrases[k + 1][0].start) / 2
    var j = k + 1
    while j + 1 < phrases.count && phrases[j + 1][0].start < cutA + 15 { j += 1 }
    let cutB = (phrases[j].last!.start + phrases[j].last!.duration + phrases[j + 1][0].start) / 2
    func edit(_ t: Double) -> Double? { (t < cutA ? t : t >= cutB ? t - (cutB - cutA) : nil).map { $0 * 1.05 } }
    var moved: [SungNote] = notes.compactMap { n in
        guard let s = edit(n.start), let e = edit(n.start + n.duration - 1e-4) else { return nil }
        return SungNote(midi: n.midi, start: s, duration: e + 1e-4 - s)
    }
    for i in 1..<moved.count where abs(moved[i - 1].start + moved[i - 1].duration - moved[i].start) < 2e-3 {
        moved[i - 1].duration = moved[i].start - moved[i - 1].start
    }
    let audioS = (moved.last.map { $0.start + $0.duration } ?? 1) + 2
    let voice = VoiceSynthesizer().render(moved, seconds: audioS, seed: 7)
    let mix = DualMonoMixer.mix(voice: voice.samples, accompaniment: AccompanimentSynthesizer().render(seconds: audioS, seed: 8), lagSamples: 300, gain: 0.85)
    let wav = dir + "/song\(Int(m)).wav", krc = dir + "/song\(Int(m)).krc"
    do {
        try AudioBuffer(sampleRate: 44100, channels: [mix.original, mix.accompaniment]).write(path: wav, format: .wav16)
        try FileIO.writeAtomically(LyricsWriter.write(lyrics, as: .krcText).bytes, to: krc)
    } catch { fail("\(error)") }
    return SyncInput(lyrics: lyrics, phrases: phrases, edit: edit, wav: wav, krc: krc)
}
