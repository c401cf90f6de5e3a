import KTVCore
import KTVLyrics

// MusicXML scores (what notation programs export) read into the note model; the writer is in
// MusicXMLFile+Write.swift.
// Source: MusicXML 4.0 (W3C Music Notation Community Group, 2021,
// https://www.w3.org/2021/06/musicxml40/): `<score-partwise>` (parts of measures) and
// `<score-timewise>` (measures of parts, regrouped here into parts); `.mxl` through `MXLContainer`.
//
// Time: a `<note>`'s `<duration>` is in the part's `<divisions>` per quarter note (which may change
// between measures); `<chord/>` notes start with the note before them; `<backup>` and `<forward>`
// move the cursor; a measure lasts as far as its cursor went. Tempo is in quarter notes a minute:
// `<sound tempo>` (in a `<direction>` or in the measure), else a `<metronome>` mark's beat unit
// and per-minute, 120 until the first; any part's tempo marks count (scores put them in the top
// part). Repeats are played out: a backward `<repeat>` (its `times`, default 2) goes back to the
// forward repeat before it (or the start), and `<ending number="1, 2">` measures are played only
// on those passes. Da capo, dal segno and coda jumps are not followed.
//
// Notes: `<pitch>` step, alter (decimal, so quarter tones survive) and octave, shifted by the part's
// `<transpose>` (chromatic + 12·octave-change: the written pitch of a transposing instrument becomes
// the sounding one); `<unpitched>` notes have no pitch; rests, cue notes and grace notes are not
// sung. Tied notes (`<tie>` or `<tied>` start/stop, same pitch and voice) are one note. The melody
// is one voice: the highest note sounding at each moment, as for MIDI (so a chord gives its top
// note, and a second voice counts only above the first).
//
// Words: each note's `<lyric>` for the pass through a repeat (number 2 on the second pass when the
// note has one), else verse 1 (`number="1"` or unnumbered), else its first. `<syllabic>` begin and
// middle join the next syllable; single and end close a word with a space, as UltraStar and
// karaoke MIDI write syllables; `<elision>` texts are joined with a space. Lines: a note with a
// `<breath-mark>` ends its line (ktv's writer marks lines so), else lines split at silences of
// `ReferenceReader.phraseGapMs`; `--lyrics` names them instead.
//
// Refused, with the XML line: a note or backup without `<divisions>` before it, a duration,
// tempo or pitch that is not a number in range, a part that does not exist, a score with no part,
// a part with no note, repeats that play out to more than `maxPlayedMeasures` measures.

/// Reads MusicXML and compressed MusicXML (`.mxl`) scores.
public enum MusicXMLFile {
    /// Repeats played out give at most this many measures (a hostile `times` cannot loop forever).
    public static let maxPlayedMeasures = 100_000
    /// The tempo before the first mark, in quarter notes a minute (MusicXML's and MIDI's default).
    public static let defaultTempoBPM = 120.0

    /// True for a zip archive (`.mxl`) or XML whose root element is `score-partwise` or `score-timewise`.
    public static func looksLike(_ bytes: [UInt8]) -> Bool {
        if MXLContainer.looksLike(bytes) { return true }
        let head = utf8(Array(bytes.prefix(65_536)))[...]
        return ByteText.contains(head, "<score-partwise") || ByteText.contains(head, "<score-timewise")
    }

    /// The melody of `part` (1-based, in file order; nil = the first part with lyrics, else the
    /// first). `maxBytes` caps what an `.mxl` unpacks to.
    public static func read(_ bytes: [UInt8], path: String, part: Int? = nil,
                            maxBytes: Int = LyricsParseOptions.defaultMaxTextBytes) throws(ScoreError) -> ReferenceMelody {
        if let part { do { try ReferenceOptions.Spec.part.check(part) } catch { throw ScoreError(error) } }
        var xml = bytes
        var inside = ""
        if MXLContainer.looksLike(bytes) {
            let entry = try MXLContainer.score(bytes, path: path, maxBytes: maxBytes)
            xml = entry.bytes
            inside = " (\(entry.name) in the archive)"
        }
        let root: XMLElement
        do { root = try MiniXML.parse(utf8(xml)) } catch {
            throw .badReference(path: path, line: error.line, detail: "not well-formed XML\(inside): \(error.message)")
        }
        var reader = Reader(path: path, inside: inside)
        return try reader.melody(root, part: part)
    }

    /// UTF-8 text: a UTF-8 byte-order mark dropped, UTF-16 (with its mark) transcoded.
    static func utf8(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
        let little = bytes.starts(with: [0xFF, 0xFE]), big = bytes.starts(with: [0xFE, 0xFF])
        guard little || big else { return bytes }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var k = 2
        while k + 1 < bytes.count {
            units.append(little ? UInt16(bytes[k]) | UInt16(bytes[k + 1]) << 8 : UInt16(bytes[k]) << 8 | UInt16(bytes[k + 1]))
            k += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    /// A character of a script written without spaces between words (Chinese, Japanese kana and
    /// their punctuation): the writer marks each such syllable `single`, as Chinese scores do (or
    /// `end` when a space follows it), and the reader joins `single` ones as written.
    static func isUnspaced(_ c: Character) -> Bool {
        guard let v = c.unicodeScalars.first?.value else { return false }
        return (0x3000...0x30FF).contains(v) || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0xFF00...0xFF60).contains(v) || (0x20000...0x2FA1F).contains(v)
    }

    /// A note as read, in quarter notes from the start of the performance.
    struct Note {
        var startQ: Double
        var endQ: Double
        /// MIDI number, sounding (transposition applied); nil when unpitched.
        var midi: Double?
        var voice: String
        var tieStart: Bool
        var tieStop: Bool
        /// The word this note carries, with the space that closes a word.
        var word: String
        var breath: Bool
        var line: Int
    }

    /// A tempo mark: quarter notes a minute from `atQ` on.
    struct Tempo {
        var atQ: Double
        var bpm: Double
    }

    struct Reader {
        let path: String
        let inside: String

        func bad(_ line: Int?, _ detail: String) -> ScoreError { .badReference(path: path, line: line, detail: detail + inside) }

        mutating func melody(_ root: XMLElement, part wanted: Int?) throws(ScoreError) -> ReferenceMelody {
            let parts = try self.parts(root)
            guard !parts.isEmpty else { throw bad(root.line, "the score has no `<part>`") }
            let chosen: Int
            if let wanted {
                guard wanted <= parts.count else {
                    throw bad(nil, "part \(wanted) does not exist; the score has \(parts.count) part\(parts.count == 1 ? "" : "s"): \(list(parts))")
                }
                chosen = wanted - 1
            } else {
                chosen = parts.firstIndex { Self.hasLyrics($0.measures) } ?? 0
            }
            let order = try playOrder(parts[chosen].measures)
            var tempos: [Tempo] = []
            var notes: [Note] = []
            for (k, p) in parts.enumerated() {
                let walked = try walk(p.measures, order: order, notes: k == chosen)
                tempos += walked.tempos
                if k == chosen { notes = walked.notes }
            }
            guard notes.contains(where: { $0.endQ > $0.startQ }) else {
                throw bad(nil, "part \(chosen + 1) (\(parts[chosen].name)) has no note to sing" + (parts.count > 1 ? "; the parts are \(list(parts)); choose one with --part" : ""))
            }
            return try placed(tied(notes), clock: TempoClock(tempos))
        }

        func list(_ parts: [Part]) -> String {
            parts.enumerated().map { "\($0.offset + 1) \($0.element.name)" }.joined(separator: ", ")
        }

        struct Part {
            var name: String
            var measures: [XMLElement]
        }

        /// The parts in file order, each with its measures; a timewise score is regrouped. A part's
        /// name is its `<part-name>` from the part list, else its id.
        func parts(_ root: XMLElement) throws(ScoreError) -> [Part] {
            var names: [String: String] = [:]
            for p in root.child("part-list")?.children("score-part") ?? [] {
                if let id = p.attribute("id") { names[id] = p.child("part-name")?.text.trimmingCharacters(in: .whitespacesAndNewlines) }
            }
            func name(_ id: String?) -> String {
                let n = id.flatMap { names[$0] } ?? ""
                return quoted(n.isEmpty ? (id ?? "?") : n)
            }
            switch root.name {
            case "score-partwise":
                return root.children("part").map { Part(name: name($0.attribute("id")), measures: $0.children("measure")) }
            case "score-timewise":
                var ids: [String] = []
                var measures: [String: [XMLElement]] = [:]
                for m in root.children("measure") {
                    for p in m.children("part") {
                        let id = p.attribute("id") ?? ""
                        if measures[id] == nil { ids.append(id) }
                        var measure = p   // the part's content, under the measure's name and number
                        measure.name = "measure"
                        measure.attributes = m.attributes
                        measures[id, default: []].append(measure)
                    }
                }
                return ids.map { Part(name: name($0), measures: measures[$0] ?? []) }
            default:
                throw bad(root.line, "the root element is `<\(root.name)>`; a MusicXML score is `<score-partwise>` or `<score-timewise>`")
            }
        }

        static func hasLyrics(_ measures: [XMLElement]) -> Bool {
            measures.contains { m in
                m.children("note").contains { n in n.children("lyric").contains { !($0.child("text")?.text.isEmpty ?? true) } }
            }
        }

        /// The measures in the order they are played, each with its pass through a repeat (1, 2, …).
        func playOrder(_ measures: [XMLElement]) throws(ScoreError) -> [(index: Int, pass: Int)] {
            // Which passes each measure is played on: from an ending's start to its stop or discontinue.
            var endings = [Set<Int>?](repeating: nil, count: measures.count)
            var open: Set<Int>?
            for (i, m) in measures.enumerated() {
                for barline in m.children("barline") {
                    guard let e = barline.child("ending"), e.attribute("type") == "start" else { continue }
                    let numbers = Set((e.attribute("number") ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).compactMap { Int($0) })
                    open = numbers.isEmpty ? nil : numbers
                }
                endings[i] = open
                for barline in m.children("barline") {
                    if let e = barline.child("ending"), e.attribute("type") == "stop" || e.attribute("type") == "discontinue" { open = nil }
                }
            }
            func repeatMark(_ m: XMLElement, _ direction: String) -> XMLElement? {
                m.children("barline").compactMap { $0.child("repeat") }.first { $0.attribute("direction") == direction }
            }
            var order: [(index: Int, pass: Int)] = []
            var i = 0, pass = 1, sectionStart = 0
            var taken: [Int: Int] = [:]   // backward repeat measure → times played
            var jumped = false
            while i < measures.count {
                if repeatMark(measures[i], "forward") != nil, !jumped { sectionStart = i; pass = 1 }
                jumped = false
                if let e = endings[i], !e.contains(pass) { i += 1; continue }
                order.append((i, pass))
                guard order.count <= maxPlayedMeasures else {
                    throw bad(measures[i].line, "the repeats play out to more than \(maxPlayedMeasures) measures; check the `times` of the repeat signs")
                }
                if let back = repeatMark(measures[i], "backward") {
                    let times = back.attribute("times").flatMap { Int($0) } ?? 2
                    let played = taken[i, default: 1]
                    if played < times {
                        taken[i] = played + 1
                        pass = played + 1
                        i = sectionStart
                        jumped = true
                        continue
                    }
                    taken[i] = nil
                    pass = 1
                    sectionStart = i + 1
                }
                i += 1
            }
            return order
        }

        /// One part played through: its notes (when `notes`) and its tempo marks, in quarter notes.
        func walk(_ measures: [XMLElement], order: [(index: Int, pass: Int)], notes wantNotes: Bool) throws(ScoreError) -> (notes: [Note], tempos: [Tempo]) {
            var notes: [Note] = []
            var tempos: [Tempo] = []
            var divisions: Double?
            var transpose = 0.0
            var measureQ = 0.0
            for (index, pass) in order where index < measures.count {
                let measure = measures[index]
                var cursor = 0.0, longest = 0.0, chordStart = 0.0
                func quarters(_ e: XMLElement, _ what: String) throws(ScoreError) -> Double {
                    guard let d = divisions else {
                        throw bad(e.line, "\(what) comes before any `<divisions>`; the part must say how many divisions make a quarter note")
                    }
                    guard let text = e.child("duration")?.text, let v = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                          v.isFinite, v >= 0, v <= 1e9 else {
                        throw bad(e.line, "\(what) has no `<duration>` that is a number of divisions from 0 to 1e9")
                    }
                    return v / d
                }
                for child in measure.children {
                    switch child.name {
                    case "attributes":
                        if let d = child.child("divisions") {
                            guard let v = Double(d.text.trimmingCharacters(in: .whitespacesAndNewlines)), v.isFinite, v > 0, v <= 1e9 else {
                                throw bad(d.line, "`<divisions>` is \(quoted(d.text)); it must be a number of divisions a quarter note, above 0")
                            }
                            divisions = v
                        }
                        if let t = child.children("transpose").first(where: { ($0.attribute("number") ?? "1") == "1" }) {
                            transpose = try semitones(t)
                        }
                    case "note":
                        guard child.child("grace") == nil else { continue }
                        let length = try quarters(child, "a note")
                        let isChord = child.child("chord") != nil
                        let start = isChord ? chordStart : cursor
                        if !isChord {
                            chordStart = cursor
                            cursor += length
                        }
                        longest = max(longest, cursor, start + length)
                        guard wantNotes, child.child("rest") == nil, child.child("cue") == nil else { continue }
                        var midi: Double?
                        if let p = child.child("pitch") {
                            midi = try pitch(p) + transpose
                        } else if child.child("unpitched") == nil {
                            throw bad(child.line, "a note with neither `<pitch>`, `<unpitched>` nor `<rest>`")
                        }
                        let ties = child.children("tie").compactMap { $0.attribute("type") }
                            + (child.child("notations")?.children("tied").compactMap { $0.attribute("type") } ?? [])
                        let breath = child.children("notations").contains { $0.child("articulations")?.child("breath-mark") != nil }
                        notes.append(Note(startQ: measureQ + start, endQ: measureQ + start + length, midi: midi,
                                          voice: child.child("voice")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? "1",
                                          tieStart: ties.contains("start"), tieStop: ties.contains("stop"),
                                          word: word(child, pass: pass), breath: breath, line: child.line))
                    case "backup":
                        cursor -= try quarters(child, "`<backup>`")
                        guard cursor > -1e-9 else {
                            throw bad(child.line, "`<backup>` goes back before the start of measure \(measure.attribute("number") ?? String(index + 1))")
                        }
                        cursor = max(0, cursor)
                    case "forward":
                        cursor += try quarters(child, "`<forward>`")
                        longest = max(longest, cursor)
                    case "direction":
                        var at = cursor
                        if let o = child.child("offset"), o.attribute("sound") == "yes", let d = divisions,
                           let v = Double(o.text.trimmingCharacters(in: .whitespacesAndNewlines)), v.isFinite, abs(v) <= 1e9 {
                            at = max(0, cursor + v / d)
                        }
                        if let bpm = try tempo(child) { tempos.append(Tempo(atQ: measureQ + at, bpm: bpm)) }
                    case "sound":
                        if let bpm = try soundTempo(child) { tempos.append(Tempo(atQ: measureQ + cursor, bpm: bpm)) }
                    default:
                        break
                    }
                }
                measureQ += longest
            }
            return (notes, tempos)
        }

        /// The sounding shift of a `<transpose>`: chromatic semitones plus 12 per octave-change.
        func semitones(_ t: XMLElement) throws(ScoreError) -> Double {
            func number(_ name: String) throws(ScoreError) -> Double {
                guard let e = t.child(name) else { return 0 }
                guard let v = Double(e.text.trimmingCharacters(in: .whitespacesAndNewlines)), v.isFinite, abs(v) <= 48 else {
                    throw bad(e.line, "`<\(name)>` of `<transpose>` is \(quoted(e.text)); it must be a number of semitones (octaves) within ±48")
                }
                return v
            }
            return try number("chromatic") + 12 * number("octave-change")
        }

        /// MIDI number of a written `<pitch>`: step, alter (semitones, decimal) and octave (4 = middle C's).
        func pitch(_ p: XMLElement) throws(ScoreError) -> Double {
            let steps: [String: Double] = ["C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11]
            let stepText = p.child("step")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            guard let step = steps[stepText] else {
                throw bad(p.line, "`<step>` is \(quoted(stepText)); it must be one of A to G")
            }
            let octaveText = p.child("octave")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            guard let octave = Int(octaveText), (0...9).contains(octave) else {
                throw bad(p.line, "`<octave>` is \(quoted(octaveText)); it must be 0 to 9")
            }
            var alter = 0.0
            if let a = p.child("alter") {
                guard let v = Double(a.text.trimmingCharacters(in: .whitespacesAndNewlines)), v.isFinite, abs(v) <= 12 else {
                    throw bad(a.line, "`<alter>` is \(quoted(a.text)); it must be a number of semitones within ±12")
                }
                alter = v
            }
            return Double((octave + 1) * 12) + step + alter
        }

        /// A direction's tempo: its `<sound tempo>`, else its metronome mark in quarter notes a minute.
        func tempo(_ direction: XMLElement) throws(ScoreError) -> Double? {
            if let s = direction.child("sound"), let bpm = try soundTempo(s) { return bpm }
            for type in direction.children("direction-type") {
                guard let m = type.child("metronome"), let unit = m.child("beat-unit")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
                      let per = m.child("per-minute")?.text else { continue }
                let quartersPer: [String: Double] = ["long": 16, "breve": 8, "whole": 4, "half": 2, "quarter": 1, "eighth": 0.5,
                                                     "16th": 0.25, "32nd": 0.125, "64th": 0.0625]
                guard var q = quartersPer[unit] else { continue }
                var dot = q / 2
                for _ in m.children("beat-unit-dot") { q += dot; dot /= 2 }
                // "c. 120" or "120-132": the first number.
                let digits = per.drop { !$0.isNumber }.prefix { $0.isNumber || $0 == "." }
                guard let v = Double(digits), v.isFinite, v > 0 else { continue }
                let bpm = v * q
                guard bpm <= 10_000 else { throw bad(m.line, "the metronome mark gives \(bpm) quarter notes a minute; at most 10000") }
                return bpm
            }
            return nil
        }

        /// `<sound tempo>` in quarter notes a minute, checked.
        func soundTempo(_ s: XMLElement) throws(ScoreError) -> Double? {
            guard let text = s.attribute("tempo") else { return nil }
            guard let v = Double(text.trimmingCharacters(in: .whitespaces)), v.isFinite, v > 0, v <= 10_000 else {
                throw bad(s.line, "`<sound tempo=\"\(text)\">`: a tempo is quarter notes a minute, above 0 and at most 10000")
            }
            return v
        }

        /// The note's word for `pass`, closed with a space at a word's end.
        func word(_ note: XMLElement, pass: Int) -> String {
            let lyrics = note.children("lyric").filter { $0.child("text") != nil }
            guard let lyric = lyrics.first(where: { $0.attribute("number") == String(pass) })
                ?? lyrics.first(where: { ($0.attribute("number") ?? "1") == "1" }) ?? lyrics.first else { return "" }
            let text = lyric.children("text").map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: " ")
            guard !text.isEmpty else { return "" }
            let syllabic = lyric.children("syllabic").last?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? "single"
            // Chinese and Japanese characters are not spaced: a `single` one is joined to the next as
            // written; one that ends a word (`end`) is followed by a space.
            let unspaced = syllabic == "single" && text.last.map(MusicXMLFile.isUnspaced) == true
            return syllabic == "begin" || syllabic == "middle" || unspaced ? text : text + " "
        }

        /// Tied notes merged: a note tied from one of the same pitch and voice that ends where it
        /// starts lengthens that note (a tie with no partner is a note of its own).
        func tied(_ notes: [Note]) -> [Note] {
            var out: [Note] = []
            var open: [String: Int] = [:]
            for n in notes {
                let key = "\(n.voice)|\(n.midi.map { String($0) } ?? "-")"
                if n.tieStop, let k = open[key], abs(out[k].endQ - n.startQ) < 1e-6 {
                    out[k].endQ = n.endQ
                    out[k].breath = out[k].breath || n.breath
                    if out[k].word.isEmpty { out[k].word = n.word }
                    if !n.tieStart { open[key] = nil }
                    continue
                }
                out.append(n)
                if n.tieStart { open[key] = out.count - 1 } else { open[key] = nil }
            }
            return out
        }

        /// The notes in ms, one voice (the highest sounding), with words and lines.
        func placed(_ notes: [Note], clock: TempoClock) throws(ScoreError) -> ReferenceMelody {
            var raw: [MIDIFile.RawNote] = []
            for (k, n) in notes.enumerated() {
                let start = clock.ms(n.startQ), end = clock.ms(n.endQ)
                guard end.isFinite, end <= Double(ReferenceReader.maxTimeMs) else {
                    throw bad(n.line, "this note lies past 24 hours; check the tempo and the durations")
                }
                let startMs = Int(start.rounded()), endMs = Int(end.rounded())
                guard endMs > startMs else { continue }
                // The key only picks the highest note; the pitch itself keeps its fraction.
                let key = n.midi.map { max(0, min(127, Int($0.rounded()))) } ?? 0
                raw.append(MIDIFile.RawNote(startTick: startMs, endTick: endMs, key: key, source: k))
            }
            let voice = MIDIFile.monophonic(raw)
            var out: [MelodyNote] = []
            var sourceOf: [Int] = []
            var worded = Set<Int>()
            for r in voice {
                let n = notes[raw[r.source].source]
                let first = !worded.contains(raw[r.source].source)
                worded.insert(raw[r.source].source)
                out.append(MelodyNote(startMs: r.startTick, durationMs: r.endTick - r.startTick, cents: n.midi.map { $0 * 100 },
                                      word: first ? n.word : ""))
                sourceOf.append(raw[r.source].source)
            }
            // A word on a note hidden under a higher one (a chord's lower note) goes to the note sung then.
            for r in raw where !worded.contains(r.source) && !notes[r.source].word.isEmpty {
                if let k = MIDIFile.nearest(Double(r.startTick), in: out), out[k].word.isEmpty { out[k].word = notes[r.source].word }
            }
            guard notes.contains(where: \.breath) else { return ReferenceReader.placed(out, lyrics: nil, scale: .absolute) }
            var line = 0
            for k in out.indices {
                out[k].line = line
                // A breath mark ends the line after the note's last sounding piece.
                if notes[sourceOf[k]].breath, k + 1 == out.count || sourceOf[k + 1] != sourceOf[k] { line += 1 }
            }
            return ReferenceReader.grouped(out, scale: .absolute)
        }
    }

    /// Quarter notes to ms through the tempo marks.
    struct TempoClock {
        /// (quarter, ms at it, ms a quarter from there)
        var segments: [(atQ: Double, ms: Double, msPerQ: Double)] = [(0, 0, 60_000 / defaultTempoBPM)]

        init(_ tempos: [Tempo]) {
            // In time order; of marks at one moment the first read (the top part's) wins.
            var lastMarkQ: Double?
            for t in tempos.enumerated().sorted(by: { ($0.element.atQ, $0.offset) < ($1.element.atQ, $1.offset) }).map(\.element) {
                if let q = lastMarkQ, abs(t.atQ - q) < 1e-9 { continue }
                lastMarkQ = t.atQ
                let last = segments[segments.count - 1]
                if abs(t.atQ - last.atQ) < 1e-9 {
                    segments[segments.count - 1].msPerQ = 60_000 / t.bpm
                } else {
                    segments.append((t.atQ, last.ms + (t.atQ - last.atQ) * last.msPerQ, 60_000 / t.bpm))
                }
            }
        }

        func ms(_ q: Double) -> Double {
            let k = max(0, segments.partitionPoint { $0.atQ <= q } - 1)
            return segments[k].ms + (q - segments[k].atQ) * segments[k].msPerQ
        }
    }
}
