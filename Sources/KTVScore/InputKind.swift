import Foundation
import KTVAudio
import KTVCore
import KTVLyrics

// What a file holds, told from its bytes: the one sniff behind every input slot's "this is X, not
// Y; give it as Z" (the take, the reference, the reference recording, the lyrics, a batch manifest).
// A file in the wrong slot used to get the slot's own parser error ("invalid JSON … `ti:scene11]`"
// for an LRC given as the reference, "expected 2 columns (time and f0)" for a reference XML given as
// the take); the readers now sniff first, or when they fail, and say what the file is instead.

/// What a file holds, as far as ktv's inputs go.
public enum InputKind: Sendable, Equatable, CustomStringConvertible {
    /// A recording: a container ktv's audio reader opens.
    case audio
    /// Lyrics (`LyricFormat`); Migu XML is a `referenceMelody`, having pitch.
    case lyrics(LyricFormat)
    /// Notes with pitch: the format's name ("a notes JSON", "Migu XML", "MusicXML").
    case referenceMelody(String)
    /// A pitch track: ktv's pitch CSV or JSON, `time f0` text, or one Hz value per line.
    case pitchTrack
    /// A `ktv batch` manifest: CSV whose header names a `take` column, or JSON Lines with `"take"`.
    case manifest
    /// Bytes no reader of ktv's knows.
    case binary
    /// Text no reader of ktv's recognises.
    case unknown

    public var description: String {
        switch self {
        case .audio: return "a recording (audio)"
        case let .lyrics(f):
            switch f {
            case .agoraPitchJSON, .agoraPitchBinary: return "an Agora pitch file (\(f.title): pitch without words)"
            default: return "\(f.title) lyrics (words and times, no pitch)"
            }
        case let .referenceMelody(name): return "a reference melody (\(name))"
        case .pitchTrack: return "a pitch track"
        case .manifest: return "a batch manifest"
        case .binary: return "binary data"
        case .unknown: return "text in no format ktv reads"
        }
    }

    /// What `bytes` hold; `path`'s extension only breaks the ties lyric detection breaks with it.
    public static func sniff(_ bytes: [UInt8], path: String? = nil) -> InputKind {
        guard !bytes.isEmpty else { return .unknown }
        if MIDIFile.looksLike(bytes) { return .referenceMelody("a MIDI file") }
        if MXLContainer.looksLike(bytes) { return .referenceMelody("compressed MusicXML") }
        if KRCContainer.isEncrypted(bytes) { return .lyrics(.krc) }
        let head = Array(bytes.prefix(64))
        // UTF-16 text opens with a byte order mark an MPEG frame sync would match.
        let utf16 = head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF])
        if !utf16, FormatSniffer.isAudio(prefix: head) { return .audio }
        if let f = LyricsReader.format(of: Array(bytes.prefix(16)), fileName: nil), f == .agoraPitchBinary { return .lyrics(f) }
        if !utf16, head.contains(where: { $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) || $0 == 0x7F }) { return .binary }
        if MusicXMLFile.looksLike(bytes) { return .referenceMelody("MusicXML") }
        if UltraStarFile.looksLike(bytes) { return .referenceMelody("an UltraStar song") }
        if isManifest(bytes) { return .manifest }
        if ReferenceReader.isNotesJSON(bytes) { return .referenceMelody("a notes JSON") }
        if ReferenceReader.isPitchTrack(bytes) || isOneValuePerLine(bytes) { return .pitchTrack }
        if let f = LyricsReader.format(of: bytes, fileName: path) { return f == .miguXML ? .referenceMelody("Migu XML") : .lyrics(f) }
        return .unknown
    }

    /// The kind of the file at `path`, or nil when it cannot be read: told from its first 64 KiB,
    /// or from its first MiB when those say nothing (a recording is told by its header, and every
    /// take and reference is sniffed).
    public static func sniff(path: String) -> InputKind? {
        guard let head = try? FileIO.readPrefix(path, count: 1 << 16) else { return nil }
        let kind = sniff(head, path: path)
        guard kind == .unknown, head.count == 1 << 16, let more = try? FileIO.readPrefix(path, count: 1 << 20) else { return kind }
        return sniff(more, path: path)
    }

    /// A manifest: the first row, as CSV, names a `take` column; or, as JSON, has a `"take"` key.
    static func isManifest(_ bytes: [UInt8]) -> Bool {
        guard let row = ByteText.firstLines(bytes.prefix(4096), limit: 1).first else { return false }
        if row.hasPrefix("{") { return row.contains("\"take\"") }
        let columns = row.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t\"\u{FEFF}")).lowercased() }
        return columns.contains("take")
    }

    /// One number per line (a take logged as one Hz value per interval).
    static func isOneValuePerLine(_ bytes: [UInt8]) -> Bool {
        let rows = ByteText.firstLines(bytes.prefix(4096), limit: 20)
        return !rows.isEmpty && rows.allSatisfy { Double($0) != nil }
    }
}

/// Where a file is given: the slots of `ktv score` and a batch row, and a batch's manifest.
public enum InputSlot: String, Sendable, Equatable, CaseIterable {
    case take, reference, referenceAudio, lyrics, manifest

    /// What the slot takes, after "not".
    public var wants: String {
        switch self {
        case .take: return "a take (a recording or a pitch track)"
        case .reference: return "a reference melody"
        case .referenceAudio: return "a recording of the reference"
        case .lyrics: return "lyrics"
        case .manifest: return "a batch manifest (CSV or JSON Lines with a take column)"
        }
    }

    /// The slot in words, after "give it": the library's wording; a front end names its flag or column.
    public var words: String {
        switch self {
        case .take: return "as the take"
        case .reference: return "as the reference melody"
        case .referenceAudio: return "as the reference recording"
        case .lyrics: return "as the lyrics"
        case .manifest: return "as a batch manifest"
        }
    }

    /// Whether a file of `kind` can fill the slot (told from its bytes; its reader still checks it).
    public func accepts(_ kind: InputKind) -> Bool {
        switch (self, kind) {
        case (_, .unknown), (_, .binary): return true   // the slot's own reader says what is wrong
        case (.take, .audio), (.take, .pitchTrack): return true
        case (.reference, .referenceMelody), (.reference, .pitchTrack): return true
        case let (.reference, .lyrics(f)): return f.carriesPitch || f == .json
        case (.referenceAudio, .audio): return true
        case (.lyrics, .lyrics), (.lyrics, .referenceMelody("Migu XML")): return true
        case (.manifest, .manifest): return true
        default: return false
        }
    }

    /// Where a file of `kind` given here belongs instead.
    func home(of kind: InputKind) -> InputSlot? {
        switch kind {
        case .audio: return self == .reference ? .referenceAudio : .take
        case let .lyrics(f): return f.carriesPitch ? .reference : .lyrics
        case .referenceMelody: return .reference
        case .pitchTrack: return .take
        case .manifest: return .manifest
        case .binary, .unknown: return nil
        }
    }
}

/// A file given in a slot it does not fit, told from what it holds.
public struct MisplacedInput: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var kind: InputKind
    public var slot: InputSlot

    public init(path: String, kind: InputKind, slot: InputSlot) {
        self.path = path
        self.kind = kind
        self.slot = slot
    }

    /// The slot the file belongs in.
    public var home: InputSlot? { slot.home(of: kind) }

    /// `path: this is <kind>, not <what the slot takes>; give it <where>`, each slot named by
    /// `naming` (a front end's flag or column: "with --lyrics"; the library's words by default).
    public func message(naming name: (InputSlot) -> String = \.words) -> String {
        var out = "\(path): this is \(kind), not \(slot.wants)"
        guard let home else { return out }
        out += "; give it \(name(home))"
        switch (slot, home) {
        case (.reference, .lyrics):
            out += ", and the melody \(name(.reference)) (Migu XML, a notes JSON, UltraStar, MIDI, MusicXML or a pitch track) or \(name(.referenceAudio))"
        case (.reference, .referenceAudio):
            out += " (its voice is tracked and cut into notes)"
        case (.lyrics, .take):
            out += kind == .audio ? " or \(name(.referenceAudio))" : " or \(name(.reference)) (a reference singer's)"
        case (.lyrics, .reference):
            out += " (it carries its own words)"
        default: break
        }
        return out
    }

    public var description: String { message() }

    /// The misplacement of the file at `path` (or of `bytes`, when given) in `slot`, or nil when
    /// what it holds can fill the slot or cannot be told.
    public static func check(path: String, bytes: [UInt8]? = nil, slot: InputSlot) -> MisplacedInput? {
        guard let kind = bytes.map({ InputKind.sniff($0, path: path) }) ?? InputKind.sniff(path: path), !slot.accepts(kind) else { return nil }
        return MisplacedInput(path: path, kind: kind, slot: slot)
    }
}
