import Foundation
import KTVCore

/// One note of a reference melody: what the singer should sing, when, and on which word.
public struct MelodyNote: Sendable, Equatable {
    /// How a note counts. UltraStar marks golden notes (worth double) and freestyle notes (not
    /// judged); rap notes are judged on timing, not pitch (they carry no pitch), golden rap notes
    /// count double. Everything else is `normal`.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case normal, golden, freestyle, rap
        case goldenRap = "golden_rap"
    }

    public var startMs: Int
    public var durationMs: Int
    /// Pitch in cents above MIDI note 0 (MIDI × 100: A4 = 6900); nil when the note is unpitched
    /// (spoken, a Migu tone with pitch 0).
    public var cents: Double?
    public var word: String
    /// 0-based index into the melody's lines.
    public var line: Int
    public var kind: Kind

    public init(startMs: Int, durationMs: Int, cents: Double?, word: String = "", line: Int = 0, kind: Kind = .normal) {
        self.startMs = startMs
        self.durationMs = durationMs
        self.cents = cents
        self.word = word
        self.line = line
        self.kind = kind
    }

    public var endMs: Int { startMs + durationMs }

    /// MIDI note number (69 = A4), fractional; nil when unpitched.
    public var midi: Double? { cents.map { $0 / 100 } }
}

/// One line (sentence) of a reference melody.
public struct MelodyLine: Sendable, Equatable {
    public var startMs: Int
    public var endMs: Int
    public var text: String

    public init(startMs: Int, endMs: Int, text: String) {
        self.startMs = startMs
        self.endMs = endMs
        self.text = text
    }
}

/// A reference melody: notes in time order, grouped into lines.
/// A reference singer's recording, as tracked: the contour on the song's clock (the recording is the
/// song), what the tracker heard of the voice, and whether the singer sang to an accompaniment (a
/// dual-mono KTV track) or alone (then the key was the singer's choice, and a take is not held to it).
public struct ReferenceRecording: Sendable, Equatable {
    public let contour: PitchContour
    public let voice: VoiceFrames?
    public let accompanied: Bool
    /// The reference singer's own vibrato and voice quality, measured once when the recording is
    /// read (a batch scores many takes against one reference).
    public let vibrato: VibratoFigures?
    public let quality: VoiceQualityFigures?

    public init(contour: PitchContour, voice: VoiceFrames?, accompanied: Bool) {
        self.contour = contour
        self.voice = voice
        self.accompanied = accompanied
        vibrato = VibratoMeasure.figures(timesS: contour.timesS, cents: contour.f0Hz.map { $0.map { ReferenceMelody.cents(hz: $0) } })
        quality = voice.flatMap { v in VoiceQualityMeasure.figures(voice: v, frames: contour.f0Hz.indices.filter { contour.f0Hz[$0] != nil && $0 < v.count }) }
    }
}

public struct ReferenceMelody: Sendable, Equatable {
    /// What the pitches of the notes are tied to.
    public enum PitchScale: String, Sendable, Equatable {
        /// Real pitches (Hz in the file, MIDI numbers): a take can be judged in absolute cents.
        case absolute
        /// A scale whose offset is unknown (Agora's 0-100 `pitchDatas`): only intervals mean something,
        /// so a take is judged after the key-shift estimate.
        case relative
    }

    public var notes: [MelodyNote]
    public var lines: [MelodyLine]
    public var scale: PitchScale
    /// UltraStar's beat length in ms; nil for references without beats (judged on 50 ms beats).
    public var beatMs: Double?
    /// When the melody was sung in a recording (`--reference-audio`): the singer's own contour and
    /// voice, which the ktv rules' vibrato, voice-quality and dynamics measures compare a take with.
    public var recording: ReferenceRecording?

    public init(notes: [MelodyNote], lines: [MelodyLine], scale: PitchScale = .absolute, beatMs: Double? = nil) {
        self.notes = notes
        self.lines = lines
        self.scale = scale
        self.beatMs = beatMs
    }

    /// The melody, checked against what a song can hold (`SongBounds`): every note starts in 0…24 h,
    /// lasts 0…24 h and ends by 24 h, its pitch (if any) in the MIDI range; every line ends no
    /// earlier than it starts, inside 0…24 h; every note names a line that exists; a beat length is
    /// 0 < beat ≤ 60 s. Every reader hands its melody through here, and so does `Scorer` for a
    /// melody built by hand, so the rule sets never meet an absurd value. `path` names the file.
    public func validated(path: String) throws(ScoreError) -> ReferenceMelody {
        func bad(_ detail: String) -> ScoreError { .badReference(path: path, line: nil, detail: detail) }
        if let b = beatMs, !(b.isFinite && b > 0 && b <= 60_000) {
            throw bad("the beat length \(b) ms must be above 0 and at most 60000 ms")
        }
        for (k, n) in notes.enumerated() {
            let name = "note \(k + 1)\(n.word.isEmpty ? "" : " (\(quoted(n.word)))")"
            if let p = SongBounds.timeProblem(ms: n.startMs) { throw bad("\(name): start \(p)") }
            if n.durationMs < 0 {
                throw bad("\(name): it ends \(-n.durationMs) ms before it starts (start \(n.startMs) ms, duration \(n.durationMs) ms)")
            }
            if let p = SongBounds.durationProblem(ms: n.durationMs) { throw bad("\(name): duration \(p)") }
            if let p = SongBounds.timeProblem(ms: n.startMs + n.durationMs) { throw bad("\(name): end \(p)") }
            if let c = n.cents, let p = SongBounds.pitchProblem(cents: c) { throw bad("\(name): pitch \(p)") }
            guard lines.indices.contains(n.line) else {
                throw bad("\(name) belongs to line \(n.line + 1), but the melody has \(lines.count) line(s)")
            }
        }
        // Something to judge: a note of some length, on a pitch or (rap) on its timing.
        let judgeable = notes.contains { n in
            n.durationMs > 0 && n.kind != .freestyle && (n.cents != nil || n.kind == .rap || n.kind == .goldenRap)
        }
        if !notes.isEmpty, !judgeable {
            throw bad("no note to sing lasts longer than 0 ms (every note is unpitched, freestyle or of no length)")
        }
        for (i, l) in lines.enumerated() {
            if let p = SongBounds.timeProblem(ms: l.startMs) { throw bad("line \(i + 1): start \(p)") }
            if let p = SongBounds.timeProblem(ms: l.endMs) { throw bad("line \(i + 1): end \(p)") }
            if l.endMs < l.startMs { throw bad("line \(i + 1): it ends at \(l.endMs) ms, before it starts at \(l.startMs) ms") }
        }
        return self
    }

    /// The notes `include` keeps, as one voice for files that hold one (MIDI, MusicXML): by start,
    /// each ended where the next begins (a melody whose notes overlap, as a Migu sentence's tones
    /// may, would otherwise read back as its highest voice only); of notes starting together the
    /// last is kept. The word of a note left out (no length once ended) joins the note before it
    /// in its line, else the next, so the line's text is kept.
    public func oneVoice(_ include: (MelodyNote) -> Bool) -> [MelodyNote] {
        let kept = notes.enumerated().filter { include($0.element) }
            .sorted { ($0.element.startMs, $0.offset) < ($1.element.startMs, $1.offset) }.map(\.element)
        var out: [MelodyNote] = []
        var pending = ""
        for (k, n) in kept.enumerated() {
            var note = n
            if k + 1 < kept.count { note.durationMs = min(note.durationMs, kept[k + 1].startMs - note.startMs) }
            if note.durationMs > 0 {
                note.word = pending + note.word
                pending = ""
                out.append(note)
            } else if let last = out.last, last.line == n.line, pending.isEmpty {
                out[out.count - 1].word += n.word
            } else {
                pending += n.word
            }
        }
        if !pending.isEmpty, !out.isEmpty { out[out.count - 1].word += pending }
        return out
    }

    /// Notes that carry a pitch and are judged on it.
    public var pitchedNotes: [MelodyNote] { notes.filter { $0.cents != nil && $0.kind != .freestyle } }

    /// 1200·log2(hz/440) + 6900: cents above MIDI note 0.
    @inline(__always)
    public static func cents(hz: Double) -> Double { 1200 * log2(hz / 440) + 6900 }

    /// The frequency of `cents` above MIDI note 0.
    @inline(__always)
    public static func hz(cents: Double) -> Double { 440 * pow(2, (cents - 6900) / 1200) }
}
