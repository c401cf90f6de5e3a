import KTVCore

// Standard MIDI Files, read into the note model and written from it.
// Source: "Standard MIDI Files 1.0" (MIDI Manufacturers Association, RP-001, 1996): chunks `MThd`
// and `MTrk`, variable-length quantities (at most 4 bytes), running status (cancelled by meta and
// sysex events), meta events `FF 51` set tempo (µs per quarter note, 500000 until the first),
// `FF 05` lyric, `FF 01` text, `FF 2F` end of track. Karaoke `.kar` conventions (Tune 1000's
// "KMIDI KARAOKE FILE"): lyrics as `FF 01` text, `@` lines are headers, a syllable starting with
// `/` starts a line and `\` a paragraph.
//
// Read: format 0 or 1, a ticks-per-quarter-note division; the tempo map from every track's
// `FF 51` (format 1 keeps it in the first track, but any track is heeded). The melody is one
// track (`track`, counted from 1 in file order; by default the first track with notes): its
// note-ons and note-offs (a note-on of velocity 0 is an off; a repeated note-on closes the note it
// repeats; a note still on at the end of its track ends there), made monophonic by keeping the
// highest note sounding at each moment (a lower note under a higher one resumes after it). Words
// are `FF 05` lyrics (the melody track's, else every track's), or when there are none, `FF 01`
// text events other than `@` headers; each goes to the note starting nearest it. Lines follow the
// `/` and `\` marks (or a lyric ending in CR/LF, which ends its line) when there are any, else they
// split at silences of `ReferenceReader.phraseGapMs`. Text is UTF-8 when valid, else CP1252.
// Refused: format 2, SMPTE divisions, truncated chunks, malformed events, a file without notes.
// Chunk and event lengths are checked against the bytes present before anything is read, so a
// header claiming a huge track allocates nothing.

/// Reads and writes Standard MIDI Files.
public enum MIDIFile {
    /// True when the bytes start with `MThd`.
    public static func looksLike(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("MThd".utf8)) }

    /// The melody of `track` (1-based; nil = the first track with notes).
    public static func read(_ bytes: [UInt8], path: String, track: Int? = nil) throws(ScoreError) -> ReferenceMelody {
        if let track { do { try ReferenceOptions.Spec.track.check(track) } catch { throw ScoreError(error) } }
        var parser = Parser(bytes: bytes, path: path)
        let file = try parser.parse()
        let withNotes = file.tracks.indices.filter { !file.tracks[$0].notes.isEmpty }
        let chosen: Int
        if let track {
            guard track <= file.tracks.count else {
                throw parser.bad(nil, "track \(track) does not exist; the file has \(file.tracks.count) track\(file.tracks.count == 1 ? "" : "s")")
            }
            guard withNotes.contains(track - 1) else {
                let list = withNotes.map { String($0 + 1) }.joined(separator: ", ")
                throw parser.bad(nil, "no notes in track \(track)" + (list.isEmpty ? "; no track of the file has notes" : "; tracks with notes: \(list)"))
            }
            chosen = track - 1
        } else {
            guard let first = withNotes.first else { throw parser.bad(nil, "no notes in the file (no note-on in any of its \(file.tracks.count) tracks)") }
            chosen = first
        }
        let clock = TempoMap(file.tracks.flatMap(\.tempos), division: file.division)
        var notes: [MelodyNote] = []
        for n in monophonic(file.tracks[chosen].notes) {
            let start = clock.ms(n.startTick), end = clock.ms(n.endTick)
            guard end <= Double(ReferenceReader.maxTimeMs) else {
                throw parser.bad(nil, "a note at tick \(n.startTick) of track \(chosen + 1) lies past 24 hours; check the tempo and division")
            }
            let startMs = Int(start.rounded())
            notes.append(MelodyNote(startMs: startMs, durationMs: Int(end.rounded()) - startMs, cents: Double(n.key) * 100))
        }
        // Lyrics: the melody track's own, else any track's; text events only when no lyric exists.
        let own = file.tracks[chosen].lyrics
        var lyrics = own.isEmpty ? file.tracks.flatMap(\.lyrics) : own
        if lyrics.isEmpty { lyrics = file.tracks.flatMap(\.texts).filter { $0.text.first != UInt8(ascii: "@") } }
        // In time order; syllables at one tick keep their order in the file.
        lyrics = lyrics.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
        var startsLine = [Bool](repeating: false, count: notes.count)
        var marked = false
        var endedLine = false
        for l in lyrics {
            var text = Substring(decoded(l.text))
            let lineMark = text.first == "/" || text.first == "\\"
            while text.first == "/" || text.first == "\\" { text = text.dropFirst() }
            let ends = text.last == "\n" || text.last == "\r" || text.last == "\r\n"
            while text.last == "\n" || text.last == "\r" || text.last == "\r\n" { text = text.dropLast() }
            guard let k = nearest(clock.ms(l.tick), in: notes) else { break }
            if lineMark || endedLine { startsLine[k] = true }
            marked = marked || lineMark || ends
            endedLine = ends
            notes[k].word += text
        }
        guard marked else { return ReferenceReader.placed(notes, lyrics: nil, scale: .absolute) }
        var line = 0
        for k in notes.indices {
            if k > 0, startsLine[k] { line += 1 }
            notes[k].line = line
        }
        return ReferenceReader.grouped(notes, scale: .absolute)
    }

    /// A type-0 file of the melody's pitched notes: division 480 and tempo 480000 µs a quarter
    /// note, so a tick is exactly 1 ms and times read back unchanged. Each word is an `FF 05`
    /// lyric at its note's start, the first of each line marked `/`; the title is the track name.
    /// Lost: unpitched notes (a MIDI note needs a key; their words too), zero-length notes, note
    /// kinds (golden, rap, freestyle), fractions of a semitone. The notes go out as one voice
    /// (`writtenNotes`), since the reader keeps one voice.
    public static func write(_ melody: ReferenceMelody, title: String? = nil) -> [UInt8] {
        // (tick, order at the same tick: offs, then lyrics, then ons, bytes)
        var events: [(tick: Int, order: Int, bytes: [UInt8])] = []
        if let title { events.append((0, 0, meta(0x03, Array(title.utf8)))) }
        events.append((0, 0, meta(0x51, [0x07, 0x53, 0x00])))  // 480000 µs
        var lastLine: Int?
        for n in writtenNotes(melody) {
            guard let cents = n.cents else { continue }
            let key = UInt8(max(0, min(127, Int((cents / 100).rounded()))))
            let word = (lastLine != n.line ? "/" : "") + n.word
            lastLine = n.line
            if !word.isEmpty { events.append((n.startMs, 1, meta(0x05, Array(word.utf8)))) }
            events.append((n.startMs, 2, [0x90, key, 100]))
            events.append((n.endMs, 0, [0x80, key, 64]))
        }
        events.sort { ($0.tick, $0.order) < ($1.tick, $1.order) }
        var track: [UInt8] = []
        var tick = 0
        for e in events {
            track += vlq(e.tick - tick) + e.bytes
            tick = e.tick
        }
        track += [0x00, 0xFF, 0x2F, 0x00]
        var out = Array("MThd".utf8) + be32(6) + [0, 0, 0, 1] + [0x01, 0xE0]  // format 0, one track, 480 ticks a quarter
        out += Array("MTrk".utf8) + be32(track.count) + track
        return out
    }

    /// The notes `write` puts in the file: the pitched notes of some length, by start, each ended
    /// where the next begins (a melody whose notes overlap, as a Migu sentence's tones may, would
    /// otherwise read back as its highest voice only; of notes starting together the last is kept).
    public static func writtenNotes(_ melody: ReferenceMelody) -> [MelodyNote] {
        melody.oneVoice { $0.cents != nil }
    }

    static func meta(_ type: UInt8, _ data: [UInt8]) -> [UInt8] { [0xFF, type] + vlq(data.count) + data }

    static func vlq(_ value: Int) -> [UInt8] {
        var v = value
        var out: [UInt8] = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// Lyric bytes as text: UTF-8 when valid, else CP1252.
    static func decoded(_ bytes: [UInt8]) -> String {
        String(decoding: TextDecoder.firstInvalidUTF8(bytes) == nil ? bytes : TextDecoder.decode(bytes, codePage: "CP1252"), as: UTF8.self)
    }

    /// The index of the note whose start is nearest `ms` (the earlier on a tie); nil when there are none.
    static func nearest(_ ms: Double, in notes: [MelodyNote]) -> Int? {
        guard !notes.isEmpty else { return nil }
        let lo = notes.partitionPoint { Double($0.startMs) < ms }
        if lo == notes.count { return lo - 1 }
        if lo > 0, ms - Double(notes[lo - 1].startMs) <= Double(notes[lo].startMs) - ms { return lo - 1 }
        return lo
    }

    /// The highest note sounding at each moment, as notes: a sweep over starts and ends. Notes
    /// sound in one bucket per key (at most one per channel, as a repeated note-on closes the one
    /// it repeats), so each step costs at most the 128 keys, however dense the track.
    static func monophonic(_ notes: [RawNote]) -> [RawNote] {
        var ticks = Set<Int>()
        for n in notes { ticks.insert(n.startTick); ticks.insert(n.endTick) }
        let times = ticks.sorted()
        let byStart = notes.indices.sorted { notes[$0].startTick < notes[$1].startTick }
        let byEnd = notes.indices.sorted { notes[$0].endTick < notes[$1].endTick }
        var nextStart = 0, nextEnd = 0
        var sounding = [[Int]](repeating: [], count: 128)  // per key, indices into notes
        var out: [RawNote] = []
        for (t, time) in times.enumerated() where t + 1 < times.count {
            while nextEnd < byEnd.count, notes[byEnd[nextEnd]].endTick <= time {
                let i = byEnd[nextEnd]
                sounding[notes[i].key].removeAll { $0 == i }
                nextEnd += 1
            }
            while nextStart < byStart.count, notes[byStart[nextStart]].startTick <= time {
                let i = byStart[nextStart]
                if notes[i].endTick > time { sounding[notes[i].key].append(i) }
                nextStart += 1
            }
            // The highest key; among its notes the one that started first.
            guard let key = sounding.lastIndex(where: { !$0.isEmpty }),
                  let top = sounding[key].min(by: { notes[$0].startTick < notes[$1].startTick }) else { continue }
            let until = times[t + 1]
            if let last = out.last, last.source == top, last.endTick == time {
                out[out.count - 1].endTick = until
            } else {
                out.append(RawNote(startTick: time, endTick: until, key: notes[top].key, source: top))
            }
        }
        return out
    }

    struct RawNote {
        var startTick: Int
        var endTick: Int
        var key: Int
        /// Which note of the track it comes from (for merging in `monophonic`).
        var source = 0
    }

    struct Track {
        var notes: [RawNote] = []
        var lyrics: [(tick: Int, text: [UInt8])] = []
        var texts: [(tick: Int, text: [UInt8])] = []
        var tempos: [(tick: Int, microsPerQuarter: Int)] = []
    }

    struct File {
        var division: Int
        var tracks: [Track]
    }

    /// Ticks to ms through the tempo changes.
    struct TempoMap {
        /// (tick, ms at that tick, µs per quarter note from there)
        var segments: [(tick: Int, ms: Double, micros: Int)] = []
        let division: Int

        init(_ tempos: [(tick: Int, microsPerQuarter: Int)], division: Int) {
            self.division = division
            // Stable: of two changes at one tick the later in the file wins.
            let sorted = tempos.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
            segments = [(0, 0, 500_000)]
            for t in sorted {
                let last = segments[segments.count - 1]
                let ms = last.ms + Double(t.tick - last.tick) * Double(last.micros) / Double(division) / 1000
                if t.tick == last.tick { segments[segments.count - 1].micros = t.microsPerQuarter } else { segments.append((t.tick, ms, t.microsPerQuarter)) }
            }
        }

        func ms(_ tick: Int) -> Double {
            var lo = 0, hi = segments.count
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if segments[mid].tick <= tick { lo = mid } else { hi = mid }
            }
            let s = segments[lo]
            return s.ms + Double(tick - s.tick) * Double(s.micros) / Double(division) / 1000
        }
    }

    /// A bounded reader over the file's bytes; every error names a byte offset.
    struct Parser {
        let bytes: [UInt8]
        let path: String
        var offset = 0

        init(bytes: [UInt8], path: String) {
            self.bytes = bytes
            self.path = path
        }

        func bad(_ at: Int?, _ detail: String) -> ScoreError {
            .badReference(path: path, line: nil, detail: (at.map { "byte offset \($0): " } ?? "") + detail)
        }

        func need(_ count: Int, before end: Int, _ what: String) throws(ScoreError) {
            guard count <= end - offset else {
                throw bad(offset, "\(what) needs \(count) bytes, only \(max(0, end - offset)) remain; the file is truncated")
            }
        }

        mutating func u8(_ end: Int, _ what: String) throws(ScoreError) -> UInt8 {
            try need(1, before: end, what)
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func be(_ count: Int, _ end: Int, _ what: String) throws(ScoreError) -> Int {
            try need(count, before: end, what)
            var v = 0
            for k in 0..<count { v = v << 8 | Int(bytes[offset + k]) }
            offset += count
            return v
        }

        mutating func vlq(_ end: Int, _ what: String) throws(ScoreError) -> Int {
            let at = offset
            var v = 0
            for _ in 0..<4 {
                let b = try u8(end, what)
                v = v << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { return v }
            }
            throw bad(at, "\(what): a variable-length number longer than 4 bytes")
        }

        mutating func parse() throws(ScoreError) -> File {
            let count = bytes.count
            try need(14, before: count, "the MThd header")
            offset = 4
            let headerLength = try be(4, count, "the MThd header")
            guard headerLength >= 6 else { throw bad(4, "the MThd header is \(headerLength) bytes; it must be at least 6") }
            try need(headerLength, before: count, "the MThd header")
            let format = try be(2, count, "the MThd header")
            _ = try be(2, count, "the MThd header")  // the track count: the chunks present are read instead
            let division = try be(2, count, "the MThd header")
            guard format <= 1 else {
                throw bad(8, format == 2 ? "format 2 (independent patterns) is not supported; save the song as format 0 or 1"
                                         : "format \(format) is not a MIDI file format (0, 1 or 2)")
            }
            guard division & 0x8000 == 0 else {
                throw bad(12, "SMPTE time division is not supported; save the file with ticks per quarter note")
            }
            guard division > 0 else { throw bad(12, "the division is 0 ticks per quarter note") }
            offset = 8 + headerLength
            var tracks: [Track] = []
            while offset < count {
                let chunkAt = offset
                try need(8, before: count, "a chunk header")
                let type = Array(bytes[offset..<offset + 4])
                offset += 4
                let length = try be(4, count, "a chunk header")
                guard length <= count - offset else {
                    throw bad(chunkAt, "the \(String(decoding: type.map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self)) chunk claims \(length) bytes, only \(count - offset) remain; the file is truncated")
                }
                let end = offset + length
                if type == Array("MTrk".utf8) { tracks.append(try track(until: end)) }
                offset = end  // other chunk types are skipped, as the standard asks
            }
            return File(division: division, tracks: tracks)
        }

        mutating func track(until end: Int) throws(ScoreError) -> Track {
            var t = Track()
            var tick = 0
            var running: UInt8?
            var open: [Int: [Int]] = [:]  // channel·128 + key → start ticks, oldest first
            func close(_ slot: Int, at tick: Int, into t: inout Track) {
                guard var starts = open[slot], !starts.isEmpty else { return }
                let start = starts.removeFirst()
                open[slot] = starts
                t.notes.append(RawNote(startTick: start, endTick: tick, key: slot & 0x7F))
            }
            events: while offset < end {
                tick += try vlq(end, "an event's delta time")
                let at = offset
                var status = try u8(end, "an event")
                if status < 0x80 {
                    guard let r = running else { throw bad(at, "a data byte 0x\(hex(status)) where an event's status byte belongs (no running status)") }
                    status = r
                    offset -= 1
                }
                switch status {
                case 0xFF:
                    running = nil
                    let type = try u8(end, "a meta event")
                    let length = try vlq(end, "a meta event's length")
                    try need(length, before: end, "a meta event")
                    let data = Array(bytes[offset..<offset + length])
                    offset += length
                    switch type {
                    case 0x2F: break events
                    case 0x51:
                        guard length == 3 else { throw bad(at, "a set-tempo event has \(length) bytes of data; it must have 3") }
                        let micros = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
                        guard micros > 0 else { throw bad(at, "a tempo of 0 µs per quarter note") }
                        t.tempos.append((tick, micros))
                    case 0x05: t.lyrics.append((tick, data))
                    case 0x01: t.texts.append((tick, data))
                    default: break
                    }
                case 0xF0, 0xF7:
                    running = nil
                    let length = try vlq(end, "a sysex event's length")
                    try need(length, before: end, "a sysex event")
                    offset += length
                case 0x80...0xEF:
                    running = status
                    let kind = status >> 4
                    let first = try u8(end, "a channel event")
                    var second: UInt8 = 0
                    if kind != 0xC && kind != 0xD { second = try u8(end, "a channel event") }
                    guard first < 0x80, second < 0x80 else { throw bad(at, "a channel event's data byte is above 0x7F") }
                    let slot = Int(status & 0x0F) << 7 | Int(first)
                    if kind == 0x9, second > 0 {
                        close(slot, at: tick, into: &t)  // a repeated note-on ends the note it repeats
                        open[slot, default: []].append(tick)
                    } else if kind == 0x8 || kind == 0x9 {
                        close(slot, at: tick, into: &t)
                    }
                default:
                    throw bad(at, "status byte 0x\(hex(status)) cannot appear in a MIDI file's track")
                }
            }
            for slot in open.keys.sorted() { while open[slot]?.isEmpty == false { close(slot, at: tick, into: &t) } }
            t.notes.removeAll { $0.endTick <= $0.startTick }
            return t
        }

        func hex(_ b: UInt8) -> String {
            let s = String(b, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }
    }
}
