import Foundation
import KTVAudio
import KTVCore
import KTVLyrics
@testable import KTVPitch
import KTVSynth
import Testing

// `LyricSync` on generated dual-mono scenes: a seeded melody sung by the synthetic voice over a
// synthetic accompaniment, the lyrics a line per phrase and a word per note at their true times, and
// the audio edited by known amounts. An edit is a map of the song's clock: each note is re-rendered
// where the edit puts it (a tempo change keeps the pitch, as a time-stretch does), notes in a cut
// section are not sung. Line starts are compared with the edit applied to the true starts.

/// A song edit: where lyric time `t` (s) is in the edited audio, nil when it was cut.
private struct Edit: Sendable, CustomStringConvertible {
    var name: String
    var map: @Sendable (Double) -> Double?
    var description: String { name }

    static func offset(_ s: Double) -> Edit { Edit(name: "offset \(s) s") { $0 + s } }
    static func speed(_ r: Double) -> Edit { Edit(name: "speed \(r)") { $0 * r } }
    static func cut(_ a: Double, _ b: Double) -> Edit { Edit(name: "cut \(a)-\(b) s") { $0 < a ? $0 : $0 >= b ? $0 - (b - a) : nil } }
    static func insert(at g: Double, _ s: Double) -> Edit { Edit(name: "insert \(s) s at \(g) s") { $0 < g ? $0 : $0 + s } }
    func then(_ e: Edit) -> Edit { Edit(name: name + ", then " + e.name) { self.map($0).flatMap(e.map) } }
}

private enum Scene {
    static let rate = 16000.0
    /// The song: phrases of notes from 6.4 s to about 50 s (room for a −5 s offset).
    static let notes: [SungNote] = VoiceSynthesizer.melody(seconds: 44, midiRange: 55...72, seed: 32).map {
        SungNote(midi: $0.midi, start: $0.start + 6, duration: $0.duration)
    }
    /// Phrases: runs of joined notes.
    static let phrases: [[SungNote]] = {
        var out: [[SungNote]] = []
        for n in notes {
            if let last = out.last?.last, abs(last.start + last.duration - n.start) < 1e-6 { out[out.count - 1].append(n) } else { out.append([n]) }
        }
        return out
    }()
    static func ms(_ s: Double) -> Int { Int((s * 1000).rounded()) }
    /// A line per phrase, a word per note.
    static let lyrics: Lyrics = Lyrics(format: .krc, lines: phrases.enumerated().map { k, p in
        let start = ms(p[0].start), end = ms(p.last!.start + p.last!.duration)
        return LyricLine(startMs: start, durationMs: end - start, text: "", words: p.map {
            LyricWord(startMs: ms($0.start), durationMs: ms($0.start + $0.duration) - ms($0.start), text: "la\(k) ")
        })
    })
    /// The midpoint of the gap after phrase k (s).
    static func gapAfter(_ k: Int) -> Double {
        let a = phrases[k].last!.start + phrases[k].last!.duration
        return (a + phrases[k + 1][0].start) / 2
    }

    /// Writes the edited dual-mono track (original left, accompaniment right) and returns its path.
    static func audio(_ edit: Edit, dir: String) throws -> String {
        let moved: [SungNote] = notes.compactMap { n in
            guard let s = edit.map(n.start), let e = edit.map(n.start + n.duration - 1e-4) else { return nil }
            return SungNote(midi: n.midi, start: s, duration: e + 1e-4 - s)
        }
        // Joined notes stay joined after the edit (the renderer glides between them).
        var joined = moved
        for k in 1..<max(1, joined.count) where abs(joined[k - 1].start + joined[k - 1].duration - joined[k].start) < 2e-3 {
            joined[k - 1].duration = joined[k].start - joined[k - 1].start
        }
        let seconds = (joined.map { $0.start + $0.duration }.max() ?? 10) + 2
        var voice = VoiceSynthesizer()
        voice.sampleRate = rate
        var acc = AccompanimentSynthesizer()
        acc.sampleRate = rate
        let v = voice.render(joined, seconds: seconds, seed: 3).samples
        let mix = DualMonoMixer.mix(voice: v, accompaniment: acc.render(seconds: seconds, seed: 4), lagSamples: Int(0.03 * rate), gain: 0.8)
        let path = dir + "/scene.wav"
        try AudioBuffer(sampleRate: rate, channels: [mix.original, mix.accompaniment]).write(path: path, format: .wav16)
        return path
    }
}

@Suite struct LyricSyncTests {
    fileprivate static let edits: [Edit] = [
        .offset(4.3), .offset(-5), .offset(0.7), .speed(0.9), .speed(1.1),
        .cut(Scene.gapAfter(2), Scene.gapAfter(5)),
        .insert(at: Scene.gapAfter(4), 10),
        Edit.offset(-2.5).then(.cut(Scene.gapAfter(4) - 2.5, Scene.gapAfter(7) - 2.5)),
        Edit.speed(1.1).then(.insert(at: Scene.gapAfter(3) * 1.1, 10)),
    ]

    /// Every line lands within 50 ms median / 150 ms p95 / 1 s max of where the edit put it; lines
    /// whose audio was cut are dropped, and only those.
    @Test(arguments: edits) fileprivate func linesFollowTheEdit(_ edit: Edit) throws {
        let dir = NSTemporaryDirectory() + "ktv-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try Scene.audio(edit, dir: dir)
        let out = try LyricRetiming.sync(Scene.lyrics, audio: path)
        var errors: [Double] = []
        var expectedDropped: [Int] = []
        for (i, line) in Scene.lyrics.lines.enumerated() {
            let p = Scene.phrases[i]
            guard let truth = edit.map(Double(line.startMs) / 1000), edit.map(p.last!.start + p.last!.duration - 1e-4) != nil else {
                expectedDropped.append(i)
                continue
            }
            guard let got = out.map.lines[i].newStartMs else { continue }
            errors.append(abs(Double(got) - truth * 1000))
        }
        errors.sort()
        let median = Stats.median(errors) ?? .nan, p95 = Stats.percentile(errors, 0.95) ?? .nan, worst = errors.last ?? .nan
        print("sync \(edit): \(Scene.lyrics.lines.count) lines, median \(Int(median)) ms, p95 \(Int(p95)) ms, max \(Int(worst)) ms; ratio \(out.map.ratio); sections \(out.map.sections.map { "\($0.offsetMs)" }); dropped \(out.map.dropped), low \(out.map.lowConfidence)")
        #expect(out.map.dropped == expectedDropped)
        #expect(out.map.lowConfidence.isEmpty)
        #expect(errors.count == Scene.lyrics.lines.count - expectedDropped.count)
        #expect(median <= 50)
        #expect(p95 <= 150)
        #expect(worst <= 1000)
        #expect(out.lyrics.lines.count == errors.count)
    }
}

@Suite struct WordTimingTests {
    @Test func syllablesOfCJKAndOtherScripts() {
        #expect(LyricWordTiming.syllables("我们一起唱") == ["我", "们", "一", "起", "唱"])
        #expect(LyricWordTiming.syllables("Hello my love") == ["Hello ", "my ", "love"])
        #expect(LyricWordTiming.syllables("爱你 baby, 好") == ["爱", "你 ", "baby, ", "好"])
    }

    /// Three notes at 200, 900 (a pitch jump) and 1600 ms (after a 100 ms breath) in a line from 200
    /// to 2400 ms: the words start at the jump and the onset, not at the proportional places.
    @Test func wordsStartAtNoteChangesAndOnsets() throws {
        var f0 = [Double?](repeating: nil, count: 300)
        for k in 20..<90 { f0[k] = 220 }
        for k in 90..<150 { f0[k] = 330 }
        for k in 160..<240 { f0[k] = 262 }
        let w = try LyricWordTiming.words(text: "la li lu", startMs: 200, endMs: 2400, f0Hz: f0, hopMs: 10)
        #expect(w.map(\.startMs) == [200, 900, 1600])
        #expect(w.map(\.durationMs) == [700, 700, 800])
        #expect(w.map(\.text) == ["la ", "li ", "lu"])
    }
}

/// Real KRC and LRC files from `../shared/lyrics` moved by a map of three sections (+1.5 s; the
/// middle third cut; the rest 5 % slower and 4 s later), written in their own format and read back:
/// every kept line and word lands where the map puts it, to the millisecond, translations intact.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: sharedLyrics), "../shared is not there"))
struct SharedRetimingTests {
    static let files: [String] = ["krc", "lrc"].flatMap { sub in
        ((try? FileManager.default.contentsOfDirectory(atPath: sharedLyrics + "/" + sub)) ?? []).sorted()
            .filter { ($0.hasSuffix(".krc") || $0.hasSuffix(".lrc")) && !$0.hasPrefix("malformed") }.map { sharedLyrics + "/" + sub + "/" + $0 }
    }

    @Test(arguments: files) func retimedAndReadBack(_ path: String) throws {
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let lyrics = try LyricsReader.read([UInt8](bytes), fileName: path).lyrics
        let n = lyrics.lines.count
        try #require(n >= 3)
        let a = n / 3, b = 2 * n / 3
        let sections = [
            SyncSection(lyricStartMs: 0, lyricEndMs: 0, audioStartMs: 0, audioEndMs: 0, offsetMs: 1500, ratio: 1, confidence: 1, lines: 0...(a - 1)),
            SyncSection(lyricStartMs: 0, lyricEndMs: 0, audioStartMs: 0, audioEndMs: 0, offsetMs: 4000, ratio: 1.05, confidence: 1, lines: b...(n - 1)),
        ]
        let lines = lyrics.lines.enumerated().map { i, l -> SyncedLine in
            let sec = i < a ? 0 : i >= b ? 1 : nil
            return SyncedLine(index: i, oldStartMs: l.startMs, newStartMs: sec.map { sections[$0].map(l.startMs) }, status: sec == nil ? .dropped : .placed,
                              agreement: 1, section: sec)
        }
        let map = SyncMap(sections: sections, lines: lines, ratio: 1, voicedShare: 1)
        let moved = LyricRetiming.retimed(lyrics, map: map)
        let format = try #require(LyricsOutputFormat(writing: lyrics.format))
        let back = try LyricsReader.read(LyricsWriter.write(moved, as: format).bytes, fileName: "x." + (path as NSString).pathExtension).lyrics
        let kept = lyrics.lines.enumerated().filter { $0.offset < a || $0.offset >= b }
        #expect(back.lines.count == kept.count)
        for ((i, old), new) in zip(kept, back.lines) {
            let sec = sections[i < a ? 0 : 1]
            #expect(new.startMs == sec.map(old.startMs), "\(path) line \(i + 1)")
            #expect(new.text == old.text)
            #expect(new.translation == old.translation)
            #expect(new.words.map(\.text) == old.words.map(\.text))
            for (w, ow) in zip(new.words, old.words) {
                #expect(w.startMs == new.startMs + Int((Double(ow.startMs - old.startMs) * sec.ratio).rounded()), "\(path) line \(i + 1)")
            }
        }
        #expect(back.tags.filter { $0.key != "offset" } == lyrics.tags.filter { $0.key != "offset" })
    }
}

private let sharedLyrics = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/lyrics").path
