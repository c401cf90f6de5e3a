import Foundation
import KTVAudio
import KTVCore
import KTVLyrics
import KTVPitch

/// Reads reference melodies into the one note model. Formats:
/// - Migu/Agora XML: tones are notes (Hz; pitch 0 = unpitched), sentences are lines;
/// - ktv notes JSON: `[{"start_ms", "duration_ms", "midi", "word", "line", "kind"}]`, or
///   `{"notes": [...], "lines": [...]}` (`midi` null or absent = unpitched; `line` optional), as
///   `NotesJSON` writes it;
/// - UltraStar `.txt` (`UltraStarFile`, found by its `#TITLE`/`#BPM` headers), Standard MIDI
///   Files (`MIDIFile`, found by `MThd`) and MusicXML (`MusicXMLFile`, found by its root element,
///   or a zip archive for `.mxl`);
/// - Agora `pitchDatas` JSON with a KRC/LRC for the words and lines (the 0-100 scale is relative);
/// - a lyric file with a pitch file (`ReferenceReader.melody(lyrics:pitch:)`).
/// Overlapping notes are repaired as Agora does: in Migu XML exactly so (`AgoraRules.overlapRepaired`:
/// a sentence's leading tones that start before the previous sentence ends start at that end, tones
/// keep their file order); elsewhere notes are sorted and a note starting before the previous one
/// ends starts at that end.
public enum ReferenceReader {
    /// Phrases are split at silences this long when a reference names no lines.
    public static let phraseGapMs = 800
    /// No reference note lies later than this (24 hours): a bound on times computed from beats or ticks.
    public static let maxTimeMs = 86_400_000

    /// Reads `path` (and the lyric file `lyricsPath`, for words and lines, when given). The melody
    /// is checked against `SongBounds` (`ReferenceMelody.validated(path:)`) before it is returned.
    public static func read(path: String, lyricsPath: String? = nil, options: ReferenceOptions = ReferenceOptions()) throws -> ReferenceMelody {
        let options = try options.validated()
        let lyrics = try lyricsPath.map { try readLyrics($0) }
        return try parse(try FileIO.read(path, maxBytes: LyricsParseOptions.defaultMaxTextBytes), path: path, lyrics: lyrics, options: options)
    }

    /// The melody in `bytes` (any format `read` detects); `path` names it in errors, `lyrics` gives
    /// words and lines. Checked as `read` checks it. The bytes are consumed: a large notes JSON is
    /// let go before its notes are placed.
    public static func parse(_ bytes: consuming [UInt8], path: String, lyrics: Lyrics? = nil,
                             options: ReferenceOptions = ReferenceOptions()) throws -> ReferenceMelody {
        try parseUnchecked(bytes, path: path, lyrics: lyrics, options: try options.validated()).validated(path: path)
    }

    private static func parseUnchecked(_ text: consuming [UInt8], path: String, lyrics: Lyrics?, options: ReferenceOptions) throws -> ReferenceMelody {
        var bytes = consume text
        // Lyrics without pitch, a recording, a manifest: say what the file is and where it goes.
        if let m = MisplacedInput.check(path: path, bytes: bytes, slot: .reference) { throw ScoreError.misplaced(m) }
        let own: ReferenceMelody?
        if MIDIFile.looksLike(bytes) {
            own = try MIDIFile.read(bytes, path: path, track: options.track)
        } else if UltraStarFile.looksLike(bytes) {
            own = try UltraStarFile.read(bytes, path: path, player: options.player)
        } else if MusicXMLFile.looksLike(bytes) {
            own = try MusicXMLFile.read(bytes, path: path, part: options.part)
        } else {
            own = nil
        }
        if let own {
            // A lyric file given beside them names the lines; the notes keep their own words.
            guard let lyrics, !lyrics.lines.isEmpty else { return own }
            var placedMelody = placed(own.notes, lyrics: lyrics, scale: own.scale)
            placedMelody.beatMs = own.beatMs
            return placedMelody
        }
        if isNotesJSON(bytes) {
            var contents = try NotesJSON.read(bytes, path: path)
            bytes = []   // the text goes before the notes are placed: a large file is not held twice
            return try notesJSON(&contents, path: path, lyrics: lyrics)
        }
        if isPitchTrack(bytes) {
            // A reference singer's pitch track (ktv pitch CSV/JSON, `time f0` text): segmented into notes.
            let contour: PitchContour
            do { contour = try PitchTrackFile.parse(bytes, path: path) } catch {
                if case let .badTrackFile(_, line, detail) = error { throw ScoreError.badReference(path: path, line: line, detail: detail) }
                throw ScoreError.badReference(path: path, line: nil, detail: "\(error)")
            }
            let notes = try segmented(contour, segmenter: options.segmenter, words: lyrics?.lines.flatMap(\.words) ?? [], path: path)
            guard !notes.isEmpty else {
                throw ScoreError.badReference(path: path, line: nil, detail: "the pitch track has no voiced stretch long enough to be a note")
            }
            return placed(notes, lyrics: lyrics, scale: .absolute)
        }
        let parsed: ParsedLyrics
        do { parsed = try LyricsReader.read(bytes, fileName: path) } catch {
            throw ScoreError.badReference(path: path, line: nil, detail: "not a reference melody: \(error)")
        }
        try refuseErrors(parsed.diagnostics, path: path)
        return try melody(ofLyricFile: parsed.lyrics, lyrics: lyrics, path: path, segmenter: options.segmenter)
    }

    /// The melody of a reference read as a lyric file (with `lyrics`' words and lines when given); a
    /// file with no pitch (an LRC, ktv JSON written from one) is lyrics, named by its own format.
    static func melody(ofLyricFile file: Lyrics, lyrics: Lyrics?, path: String, segmenter: ContourSegmenter) throws(ScoreError) -> ReferenceMelody {
        do {
            return try melody(lyrics: lyrics ?? file, pitch: file.referencePitch, wordsHavePitch: lyrics == nil, path: path, segmenter: segmenter)
        } catch {
            if case let .misplaced(m) = error { throw .misplaced(MisplacedInput(path: m.path, kind: .lyrics(file.format), slot: m.slot)) }
            throw error
        }
    }

    /// A pitch track: ktv's pitch JSON (`"frames"` with `"f0_hz"`), or text whose first row that is
    /// not a comment is a `time,f0` header or two or three numbers.
    static func isPitchTrack(_ bytes: [UInt8]) -> Bool {
        let head = bytes.prefix(4096)
        if ByteText.contains(head, "\"frames\""), ByteText.contains(head, "\"f0_hz\"") { return true }
        guard let row = ByteText.firstLines(head, limit: 200).first(where: { !$0.hasPrefix("#") }) else { return false }
        let fields = row.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        if fields.count == 2 || fields.count == 3, fields.allSatisfy({ Double($0) != nil }) { return true }
        return row.lowercased().hasPrefix("time") && row.lowercased().contains("f0")
    }

    /// ktv's notes JSON: a list, or an object with `notes` whose entries carry `midi`.
    static func isNotesJSON(_ bytes: [UInt8]) -> Bool {
        let head = bytes.prefix(4096)
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0B || b == 0x0C }
        var i = head.startIndex
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { i += 3 }
        while i < head.endIndex, isSpace(head[i]) { i += 1 }
        guard i < head.endIndex else { return false }
        // A list of note objects (or none); `[ti:…]`, `[00:01.50]` open LRC rows, not JSON.
        if head[i] == UInt8(ascii: "[") {
            guard let next = head[(i + 1)...].first(where: { !isSpace($0) }) else { return true }
            return next == UInt8(ascii: "{") || next == UInt8(ascii: "]")
        }
        return head[i] == UInt8(ascii: "{") && ByteText.contains(head, "\"notes\"") && ByteText.contains(head, "\"midi\"")
    }

    /// A reference sung in a recording: a dual-mono KTV track is split (as `ktv split --vocals`
    /// does) and its vocal estimate tracked; a mono file is tracked as a vocal stem. The contour is
    /// segmented into notes, cut at the words' starts and carrying them when lyrics are given.
    /// `truncations`: where the recording stopped short of what its header claimed (the melody is
    /// of the decoded part; a front end warns about each).
    public static func read(audioPath: String, lyricsPath: String? = nil, tracker: PitchTracker,
                            segmenter: ContourSegmenter = ContourSegmenter()) throws -> (melody: ReferenceMelody, truncations: [AudioTruncation]) {
        let segmenter = try segmenter.validated()
        if let m = MisplacedInput.check(path: audioPath, slot: .referenceAudio) { throw ScoreError.misplaced(m) }
        let lyrics = try lyricsPath.map { try readLyrics($0) }
        let vocal = try tracker.trackVocals(path: audioPath)
        let notes = try segmented(vocal.track.contour, segmenter: segmenter, words: lyrics?.lines.flatMap(\.words) ?? [], path: audioPath)
        guard !notes.isEmpty else {
            throw ScoreError.badReference(path: audioPath, line: nil, detail: "no sung note found in the audio (\(vocal.note))")
        }
        var melody = try placed(notes, lyrics: lyrics, scale: .absolute).validated(path: audioPath)
        melody.recording = ReferenceRecording(contour: vocal.track.contour, voice: vocal.track.voice, accompanied: vocal.split)
        return (melody, vocal.track.truncations)
    }

    static func readLyrics(_ path: String) throws -> Lyrics {
        let bytes = try FileIO.read(path, maxBytes: LyricsParseOptions.defaultMaxTextBytes)
        let parsed: ParsedLyrics
        do { parsed = try LyricsReader.read(bytes, fileName: path) } catch {
            if let m = MisplacedInput.check(path: path, bytes: bytes, slot: .lyrics) { throw ScoreError.misplaced(m) }
            throw ScoreError.badReference(path: path, line: nil, detail: "cannot read the lyrics: \(error)")
        }
        try refuseErrors(parsed.diagnostics, path: path)
        return parsed.lyrics
    }

    /// A lyric or XML file with an error finding is refused as `ktv lyrics parse` refuses it: a
    /// tone skipped for a bad `end` would otherwise leave a melody silently short of a note.
    static func refuseErrors(_ diagnostics: [Diagnostic], path: String) throws(ScoreError) {
        guard let first = diagnostics.first(where: { $0.severity == .error }) else { return }
        let more = diagnostics.filter { $0.severity == .error }.count - 1
        throw .badReference(path: path, line: first.line,
                            detail: first.message + (more > 0 ? " (and \(more) more error(s); `ktv lyrics validate` lists them)" : ""))
    }

    /// The notes of a contour, after checking it holds what a song can (`SongBounds`).
    static func segmented(_ contour: PitchContour, segmenter: ContourSegmenter, words: [LyricWord], path: String) throws(ScoreError) -> [MelodyNote] {
        if let (i, detail) = contour.songBoundsViolation() {
            throw .badReference(path: path, line: nil, detail: "pitch sample \(i + 1): \(detail)")
        }
        return segmenter.notes(contour, words: words)
    }

    /// The melody of a lyric model: its words' own pitch (Migu XML), or `pitch` from a pitch file
    /// (notes placed on the lyric lines by time).
    static func melody(lyrics: Lyrics, pitch: ReferencePitch?, wordsHavePitch: Bool = true, path: String,
                              segmenter: ContourSegmenter = ContourSegmenter()) throws(ScoreError) -> ReferenceMelody {
        let lines = lyrics.lines.map { MelodyLine(startMs: $0.startMs, endMs: $0.endMs, text: $0.text.trimmingCharacters(in: .whitespaces)) }
        if wordsHavePitch, lyrics.format == .miguXML {
            var notes: [MelodyNote] = []
            for (i, line) in lyrics.lines.enumerated() {
                for w in line.words {
                    notes.append(MelodyNote(startMs: w.startMs, durationMs: w.durationMs, cents: w.pitchHz.map { ReferenceMelody.cents(hz: $0) },
                                            word: w.text, line: i))
                }
            }
            guard !notes.isEmpty else {
                throw .badReference(path: path, line: nil, detail: "no `<tone>` in any `<sentence>`; a reference melody needs timed notes")
            }
            guard notes.contains(where: { $0.cents != nil }) else {
                throw .badReference(path: path, line: nil, detail: "no tone has a pitch (every `pitch` is 0); a reference melody needs pitched notes")
            }
            return ReferenceMelody(notes: AgoraRules.overlapRepaired(notes), lines: lines)
        }
        switch pitch {
        case let .notes(scale, raw)?:
            let notes = raw.map { n in
                MelodyNote(startMs: n.startMs, durationMs: n.durationMs,
                           cents: n.value > 0 ? (scale == .hz ? ReferenceMelody.cents(hz: n.value) : n.value * 100) : nil)
            }
            guard notes.contains(where: { $0.cents != nil }) else {
                throw .badReference(path: path, line: nil, detail: "the pitch file has no pitched note")
            }
            return placed(repaired(notes), lyrics: lyrics.lines.isEmpty ? nil : lyrics, scale: scale == .hz ? .absolute : .relative)
        case let .contour(contour)?:
            let notes = try segmented(contour, segmenter: try segmenter.validated(), words: lyrics.lines.flatMap(\.words), path: path)
            guard !notes.isEmpty else {
                throw .badReference(path: path, line: nil, detail: "the pitch contour has no voiced stretch long enough to be a note")
            }
            return placed(notes, lyrics: lyrics.lines.isEmpty ? nil : lyrics, scale: .absolute)
        case nil:
            throw .misplaced(MisplacedInput(path: path, kind: .lyrics(lyrics.format), slot: .reference))
        }
    }

    /// ktv's notes JSON: the file's lines when its notes name them, else lines placed as for any notes.
    static func notesJSON(_ c: inout NotesJSON.Contents, path: String, lyrics: Lyrics?) throws(ScoreError) -> ReferenceMelody {
        // Rap notes carry no pitch and are judged on timing (UltraStar writes them so).
        guard c.notes.contains(where: { $0.cents != nil || $0.kind == .rap || $0.kind == .goldenRap }) else {
            throw .badReference(path: path, line: nil, detail: "no note has a pitch (`midi`); a reference melody needs pitched notes")
        }
        var notes: [MelodyNote] = []
        swap(&notes, &c.notes)      // moved, not copied
        notes = repaired(consume notes)
        var melody = c.lines != nil && c.anyLine
            ? ReferenceMelody(notes: consume notes, lines: c.lines ?? [], scale: c.scale)
            : placed(consume notes, lyrics: lyrics, scale: c.scale)
        melody.beatMs = c.beatMs
        return melody
    }

    /// Agora's overlap rule note by note, for notes from any source: sorted, a note starting before
    /// the previous one ends starts at that end (Migu XML gets Agora's own, `AgoraRules.overlapRepaired`).
    static func repaired(_ notes: consuming [MelodyNote]) -> [MelodyNote] {
        var out = consume notes
        if !zip(out, out.dropFirst()).allSatisfy({ $0.startMs <= $1.startMs }) { out.sort { $0.startMs < $1.startMs } }
        for k in out.indices.dropFirst() where out[k].startMs < out[k - 1].endMs {
            let end = out[k].endMs
            out[k].startMs = out[k - 1].endMs
            out[k].durationMs = max(0, end - out[k].startMs)
        }
        return out
    }

    /// Lines for notes: the lyric lines (a note goes to the line holding its midpoint, else the
    /// nearest; it takes the word under it), or phrases split at silences.
    static func placed(_ notes: consuming [MelodyNote], lyrics: Lyrics?, scale: ReferenceMelody.PitchScale) -> ReferenceMelody {
        var out = consume notes
        if let lyrics, !lyrics.lines.isEmpty {
            let lines = lyrics.lines
            for k in out.indices {
                let mid = out[k].startMs + out[k].durationMs / 2
                var best = 0, bestDistance = Int.max
                for (i, l) in lines.enumerated() {
                    let d = mid < l.startMs ? l.startMs - mid : mid > l.endMs ? mid - l.endMs : 0
                    if d < bestDistance { best = i; bestDistance = d }
                }
                out[k].line = best
                if out[k].word.isEmpty, let w = lines[best].words.first(where: { $0.startMs <= mid && mid < $0.endMs }) { out[k].word = w.text }
            }
            let melodyLines = lines.map { MelodyLine(startMs: $0.startMs, endMs: $0.endMs, text: $0.text.trimmingCharacters(in: .whitespaces)) }
            return ReferenceMelody(notes: out, lines: melodyLines, scale: scale)
        }
        var line = 0
        for k in out.indices {
            if k > 0, out[k].startMs - out[k - 1].endMs >= phraseGapMs { line += 1 }
            out[k].line = line
        }
        return grouped(consume out, scale: scale)
    }

    /// The melody of notes whose `line` is set (line marks in the file, or phrases): lines numbered
    /// from 0 in order of first use, each spanning its notes, its text their words joined (a
    /// syllable carries its own spaces, as UltraStar and karaoke MIDI write them).
    static func grouped(_ notes: consuming [MelodyNote], scale: ReferenceMelody.PitchScale, beatMs: Double? = nil) -> ReferenceMelody {
        var out = consume notes
        var index: [Int: Int] = [:]
        var lines: [MelodyLine] = []
        for k in out.indices {
            let i: Int
            if let known = index[out[k].line] {
                i = known
            } else {
                i = lines.count
                index[out[k].line] = i
                lines.append(MelodyLine(startMs: out[k].startMs, endMs: out[k].endMs, text: ""))
            }
            out[k].line = i
            lines[i].startMs = min(lines[i].startMs, out[k].startMs)
            lines[i].endMs = max(lines[i].endMs, out[k].endMs)
            lines[i].text += out[k].word
        }
        for i in lines.indices { lines[i].text = lines[i].text.trimmingCharacters(in: .whitespaces) }
        return ReferenceMelody(notes: out, lines: lines, scale: scale, beatMs: beatMs)
    }
}

/// Which part of a multi-part reference to read.
public struct ReferenceOptions: Sendable, Equatable {
    public enum Spec {
        public static let player = Parameter<Int>("player", range: 1...9, default: 1,
            "The voice of an UltraStar duet read (P1, P2); a song without voices has only voice 1.")
        public static let track = Parameter<Int>("track", range: 1...65_535, default: 1, defaultText: "the first track with notes",
            "The MIDI track read as the melody, counted from 1 in file order (MTrk chunks).")
        public static let part = Parameter<Int>("part", range: 1...65_535, default: 1, defaultText: "the first part with lyrics, else the first",
            "The MusicXML part read as the melody, counted from 1 in file order (the parts in the score's part list).")
        public static let all: [ParameterInfo] = [player.info, track.info, part.info]
    }

    public var player: Int
    /// nil: the first track with notes.
    public var track: Int?
    /// nil: the first part with lyrics, else the first.
    public var part: Int?
    /// How a reference given as a pitch track becomes notes.
    public var segmenter: ContourSegmenter

    public init(player: Int = Spec.player.defaultValue, track: Int? = nil, part: Int? = nil, segmenter: ContourSegmenter = ContourSegmenter()) {
        self.player = player
        self.track = track
        self.part = part
        self.segmenter = segmenter
    }

    public func validated() throws(ScoreError) -> ReferenceOptions {
        do {
            try Spec.player.check(player)
            if let track { try Spec.track.check(track) }
            if let part { try Spec.part.check(part) }
        } catch { throw ScoreError(error) }
        _ = try segmenter.validated()
        return self
    }
}
