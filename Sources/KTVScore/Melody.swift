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

    public init(notes: [MelodyNote], lines: [MelodyLine], scale: PitchScale = .absolute, beatMs: Double? = nil) {
        self.notes = notes
        self.lines = lines
        self.scale = scale
        self.beatMs = beatMs
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
