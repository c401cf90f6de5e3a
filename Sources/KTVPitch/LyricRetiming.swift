import Foundation
import KTVAudio
import KTVCore
import KTVLyrics

// `ktv lyrics sync`: a lyric model against a recording. The voice is tracked (a dual-mono track
// split first, a recording with its accompaniment's bleed cancelled, a stem as it is), the map found
// by `LyricSync`, and every line and word moved by it: a line's start goes where the map (refined to
// the voice's onset) puts it, its words keep their places inside it scaled by the section's ratio.
// Dropped lines are left out; translations, voices, romanization and tags stay as they were.

/// The outcome of syncing one lyric file.
public struct LyricSyncOutcome: Sendable {
    public var map: SyncMap
    /// The lyrics moved by the map (dropped lines left out).
    public var lyrics: Lyrics
    /// How the voice was found ("dual-mono track split first", …), for reports.
    public var note: String
    public var truncations: [AudioTruncation]
}

public enum LyricRetiming {
    /// What each line asks of the voice: its words' spans (blank words left out), or the whole line.
    public static func inputs(_ lyrics: Lyrics) -> [SyncLineInput] {
        lyrics.lines.map { line in
            let words = line.words.filter { !$0.background && !isBlank($0.text) && $0.durationMs > 0 }
            var sung = words.map { $0.startMs...$0.endMs }
            if line.words.isEmpty && !isBlank(line.text) && line.durationMs > 0 { sung = [line.startMs...line.endMs] }
            return SyncLineInput(startMs: line.startMs, endMs: line.endMs, sung: sung)
        }
    }

    /// The lyrics moved by `map`: dropped lines left out, everything else kept.
    public static func retimed(_ lyrics: Lyrics, map: SyncMap) -> Lyrics {
        var out = lyrics
        out.lines = []
        for (i, line) in lyrics.lines.enumerated() {
            let s = map.lines[i]
            guard let start = s.newStartMs, s.status != .dropped else { continue }
            let ratio = s.section.map { map.sections[$0].ratio } ?? 1
            var l = line
            let words = line.words
            l.startMs = start
            l.durationMs = scaled(line.durationMs, ratio)
            if !words.isEmpty {
                l.words = words.map { w in
                    var w = w
                    w.startMs = start + scaled(w.startMs - line.startMs, ratio)
                    w.durationMs = scaled(w.durationMs, ratio)
                    return w
                }
            }
            out.lines.append(l)
        }
        if case let .notes(scale: scale, notes)? = lyrics.referencePitch {
            out.referencePitch = .notes(scale: scale, notes.compactMap { n in
                guard let sec = section(of: n.startMs, in: map) else { return nil }
                return ReferencePitch.Note(startMs: max(0, sec.map(n.startMs)), durationMs: scaled(n.durationMs, sec.ratio), value: n.value)
            })
        } else if lyrics.referencePitch != nil {
            out.referencePitch = nil
        }
        return out
    }

    /// Tracks the voice in `audio` and syncs `lyrics` to it.
    /// - Parameters:
    ///   - accompaniment: the backing track played during a recording: its bleed is cancelled.
    ///   - layout: the dual-mono layout (`auto` decides) when there is no accompaniment.
    ///   - words: when given, lines without word times get them from the voice (`LyricWordTiming`).
    public static func sync(_ lyrics: Lyrics, audio: String, stream: Int? = nil, accompaniment: String? = nil, layout: SplitLayout = .auto,
                            configuration: LyricSyncConfiguration = LyricSyncConfiguration(),
                            words: WordTimingConfiguration? = nil) throws -> LyricSyncOutcome {
        let configuration = try configuration.validated()
        let tracker = try PitchTracker(configuration: PitchConfiguration())
        let track: PitchTrack, note: String
        if let accompaniment {
            track = try tracker.track(path: audio, stream: stream, channel: .mix, accompaniment: accompaniment)
            note = "the accompaniment's bleed cancelled"
        } else {
            let v = try tracker.trackVocals(path: audio, stream: stream, layout: layout)
            (track, note) = (v.track, v.note)
        }
        let map = try LyricSync.align(lines: inputs(lyrics), voiced: track.contour.f0Hz.map { $0 != nil }, hopMs: track.hopS * 1000,
                                      configuration: configuration)
        var out = retimed(lyrics, map: map)
        if let words {
            // Lines timed by line only get words from the voice inside them.
            for i in out.lines.indices where out.lines[i].words.isEmpty && !isBlank(out.lines[i].text) {
                let l = out.lines[i]
                out.lines[i].words = try LyricWordTiming.words(text: l.text, startMs: l.startMs, endMs: l.endMs, f0Hz: track.contour.f0Hz,
                                                               hopMs: track.hopS * 1000, configuration: words)
            }
        }
        return LyricSyncOutcome(map: map, lyrics: out, note: note, truncations: track.truncations)
    }

    /// The section whose lyric range holds `ms`, else the nearest before it, else the first.
    static func section(of ms: Int, in map: SyncMap) -> SyncSection? {
        map.sections.last { $0.lyricStartMs <= ms } ?? map.sections.first
    }

    static func scaled(_ ms: Int, _ ratio: Double) -> Int { Int((Double(ms) * ratio).rounded()) }

    static func isBlank(_ s: String) -> Bool { s.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\u{3000}" } }
}

/// The report of a sync: the map, each line's old and new start, dropped and low-confidence lines.
public enum LyricSyncReport {
    public static func json(_ o: LyricSyncOutcome, lyrics: Lyrics, audio: String) -> JSONValue {
        let m = o.map
        return .object([
            ("audio", .string(audio)),
            ("voice", .string(o.note)),
            ("voiced_share", .double((m.voicedShare * 1000).rounded() / 1000)),
            ("ratio", .double((m.ratio * 10000).rounded() / 10000)),
            ("sections", .array(m.sections.map { s in .object([
                ("lyric_start_ms", .int(s.lyricStartMs)), ("lyric_end_ms", .int(s.lyricEndMs)),
                ("audio_start_ms", .int(s.audioStartMs)), ("audio_end_ms", .int(s.audioEndMs)),
                ("offset_ms", .int(s.offsetMs)), ("ratio", .double((s.ratio * 10000).rounded() / 10000)),
                ("confidence", .double(s.confidence)),
                ("first_line", .int(s.lines.lowerBound + 1)), ("last_line", .int(s.lines.upperBound + 1)),
            ]) })),
            ("lines", .array(m.lines.map { l in .object([
                ("line", .int(l.index + 1)),
                ("text", .string(lyrics.lines[l.index].text)),
                ("old_start_ms", .int(l.oldStartMs)),
                ("new_start_ms", l.newStartMs.map { .int($0) } ?? .null),
                ("status", .string(l.status.rawValue)),
                ("agreement", l.agreement.map { .double($0) } ?? .null),
            ]) })),
            ("dropped", .array(m.dropped.map { .int($0 + 1) })),
            ("low_confidence", .array(m.lowConfidence.map { .int($0 + 1) })),
        ])
    }

    public static func text(_ o: LyricSyncOutcome, lyrics: Lyrics, audio: String) -> String {
        let m = o.map
        var out = "\(audio) (\(o.note)): speed ratio \(String(format: "%.3f", m.ratio)), \(m.sections.count) section(s)\n"
        for (k, s) in m.sections.enumerated() {
            out += "  section \(k + 1): lines \(s.lines.lowerBound + 1)-\(s.lines.upperBound + 1), lyrics \(clock(s.lyricStartMs))-\(clock(s.lyricEndMs)) → audio \(clock(s.audioStartMs))-\(clock(s.audioEndMs)), offset \(s.offsetMs > 0 ? "+" : "")\(s.offsetMs) ms, ratio \(String(format: "%.3f", s.ratio)), confidence \(String(format: "%.2f", s.confidence))\n"
        }
        for l in m.lines {
            let text = lyrics.lines[l.index].text.trimmingCharacters(in: .whitespaces)
            let new = l.newStartMs.map(clock) ?? "—"
            let mark = l.status == .placed || l.status == .unsung ? "" : "  [\(l.status.rawValue)]"
            out += "  line \(l.index + 1): \(clock(l.oldStartMs)) → \(new)  \(text)\(mark)\n"
        }
        if !m.dropped.isEmpty { out += "dropped (their audio was cut): lines \(m.dropped.map { String($0 + 1) }.joined(separator: ", "))\n" }
        if !m.lowConfidence.isEmpty {
            out += "low confidence (moved by their section's map only; check them): lines \(m.lowConfidence.map { String($0 + 1) }.joined(separator: ", "))\n"
        }
        return out
    }

    static func clock(_ ms: Int) -> String {
        let a = abs(ms)
        return (ms < 0 ? "-" : "") + String(format: "%02d:%02d.%03d", a / 60000, a / 1000 % 60, a % 1000)
    }
}
