import Foundation
import KTVCore

// MusicXML written from the note model (`ktv score notes --format musicxml`).
// Source: MusicXML 4.0 (W3C Music Notation Community Group, 2021), partwise.
//
// One part ("Voice") in 4/4 at 120 quarter notes a minute with 500 divisions a quarter note, so a
// division is exactly 1 ms and `MusicXMLFile.read` gives back the same times. Notes that cross a
// barline are split and tied; gaps are rests; a pitch is spelt with sharps, its fraction of a
// semitone kept in `<alter>` (to 1/10000 of a semitone); an unpitched note is `<unpitched/>`.
// Words are `<lyric>` syllables (`<syllabic>` from the spaces that end words); the last note of each
// line carries a `<breath-mark/>`, which the reader takes as the line's end. Durations that are
// plain note values get a `<type>`; others (most, at 1 ms) are left for a notation program to
// spell. Lost: note kinds (golden, rap, freestyle), notes of no length, overlaps (the notes go out
// as one voice, each ended where the next begins), an UltraStar beat, lines without notes, and
// characters XML 1.0 cannot hold (control characters).

extension MusicXMLFile {
    /// Divisions a quarter note in written files: at `defaultTempoBPM` (500 ms a quarter) one division is 1 ms.
    static let writtenDivisions = 500
    /// A 4/4 measure in written divisions (2 s).
    static let writtenMeasure = 2_000

    /// The melody as a partwise MusicXML score; `title` is the work title.
    public static func write(_ melody: ReferenceMelody, title: String? = nil) -> [UInt8] {
        let notes = melody.oneVoice { _ in true }
        let syllables = self.syllables(notes)
        var x = """
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <!DOCTYPE score-partwise PUBLIC "-//Recordare//DTD MusicXML 4.0 Partwise//EN" "http://www.musicxml.org/dtds/partwise.dtd">
        <score-partwise version="4.0">

        """
        if let title, !title.isEmpty { x += "  <work><work-title>\(text(title))</work-title></work>\n" }
        x += """
          <identification><encoding><software>ktv</software></encoding></identification>
          <part-list><score-part id="P1"><part-name>Voice</part-name></score-part></part-list>
          <part id="P1">

        """
        let pitched = notes.compactMap(\.cents).sorted()
        let bass = !pitched.isEmpty && pitched[pitched.count / 2] < 5500   // a low voice reads better in the F clef
        let end = notes.last?.endMs ?? 0
        let measures = max(1, (end + writtenMeasure - 1) / writtenMeasure)
        var k = 0
        for m in 0..<measures {
            let from = m * writtenMeasure, to = from + writtenMeasure
            x += "    <measure number=\"\(m + 1)\">\n"
            if m == 0 {
                x += "      <attributes><divisions>\(writtenDivisions)</divisions><key><fifths>0</fifths></key>"
                x += "<time><beats>4</beats><beat-type>4</beat-type></time>"
                x += bass ? "<clef><sign>F</sign><line>4</line></clef></attributes>\n" : "<clef><sign>G</sign><line>2</line></clef></attributes>\n"
                x += "      <direction placement=\"above\"><direction-type><metronome><beat-unit>quarter</beat-unit>"
                x += "<per-minute>\(Int(defaultTempoBPM))</per-minute></metronome></direction-type><sound tempo=\"\(Int(defaultTempoBPM))\"/></direction>\n"
            }
            var at = from
            if k < notes.count, notes[k].startMs >= to {
                x += "      <note><rest measure=\"yes\"/><duration>\(writtenMeasure)</duration></note>\n"
                x += "    </measure>\n"
                continue
            }
            while k < notes.count, notes[k].startMs < to {
                let n = notes[k]
                let start = max(n.startMs, from), stop = min(n.endMs, to)
                if start > at { x += rest(start - at) }
                let lastOfLine = k + 1 == notes.count || notes[k + 1].line != n.line
                x += note(n, duration: stop - start, tieStop: n.startMs < from, tieStart: n.endMs > to,
                          syllable: n.startMs >= from ? syllables[k] : nil, breath: lastOfLine && n.endMs <= to)
                at = stop
                if n.endMs > to { break }   // the rest of it goes in the next measure
                k += 1
            }
            if at < to { x += rest(to - at) }
            x += "    </measure>\n"
        }
        x += "  </part>\n</score-partwise>\n"
        return Array(x.utf8)
    }

    /// Each note's `(syllabic, text)`, or nil for a note without a word. A word ends at a space
    /// (after this syllable or before the next) or at the end of its line.
    static func syllables(_ notes: [MelodyNote]) -> [(syllabic: String, text: String)?] {
        var out = [(syllabic: String, text: String)?](repeating: nil, count: notes.count)
        let worded = notes.indices.filter { !notes[$0].word.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        for (j, k) in worded.enumerated() {
            let w = notes[k].word
            let previous = j > 0 ? worded[j - 1] : nil, next = j + 1 < worded.count ? worded[j + 1] : nil
            // A word ends at a space, at the line's end, or after a Chinese or Japanese character.
            let begins = previous.map { notes[$0].line != notes[k].line || notes[$0].word.last.map { $0.isWhitespace || isUnspaced($0) } == true } ?? true
                || w.first?.isWhitespace == true
            let ends = next.map { notes[$0].line != notes[k].line || notes[$0].word.first?.isWhitespace == true } ?? true
                || w.last.map { $0.isWhitespace || isUnspaced($0) } == true
            var syllabic = begins ? (ends ? "single" : "begin") : (ends ? "end" : "middle")
            // A Chinese or Japanese character: `single`, or `end` when a space follows it in the line.
            if let last = w.trimmingCharacters(in: .whitespacesAndNewlines).last, isUnspaced(last) {
                let spaced = w.last?.isWhitespace == true || next.map { notes[$0].line == notes[k].line && notes[$0].word.first?.isWhitespace == true } == true
                syllabic = spaced ? "end" : "single"
            }
            out[k] = (syllabic, w.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return out
    }

    static func rest(_ duration: Int) -> String {
        "      <note><rest/><duration>\(duration)</duration>\(type(duration))</note>\n"
    }

    static func note(_ n: MelodyNote, duration: Int, tieStop: Bool, tieStart: Bool, syllable: (syllabic: String, text: String)?, breath: Bool) -> String {
        var x = "      <note>"
        if let cents = n.cents {
            let (step, alter, octave) = spelt(cents)
            x += "<pitch><step>\(step)</step>" + (alter == 0 ? "" : "<alter>\(number(alter))</alter>") + "<octave>\(octave)</octave></pitch>"
        } else {
            x += "<unpitched/>"
        }
        x += "<duration>\(duration)</duration>"
        if tieStop { x += "<tie type=\"stop\"/>" }
        if tieStart { x += "<tie type=\"start\"/>" }
        x += "<voice>1</voice>" + type(duration)
        if tieStop || tieStart || breath {
            x += "<notations>"
            if tieStop { x += "<tied type=\"stop\"/>" }
            if tieStart { x += "<tied type=\"start\"/>" }
            if breath { x += "<articulations><breath-mark/></articulations>" }
            x += "</notations>"
        }
        if let s = syllable {
            x += "<lyric number=\"1\"><syllabic>\(s.syllabic)</syllabic><text>\(text(s.text))</text></lyric>"
        }
        return x + "</note>\n"
    }

    /// `<type>` (and `<dot/>`) when the duration is a plain or dotted note value, else nothing.
    static func type(_ duration: Int) -> String {
        let values: [(Int, String)] = [(2000, "whole"), (1000, "half"), (500, "quarter"), (250, "eighth"), (125, "16th")]
        for (d, name) in values {
            if duration == d { return "<type>\(name)</type>" }
            if duration * 2 == d * 3 { return "<type>\(name)</type><dot/>" }
        }
        return ""
    }

    /// Step, alter (semitones, with the fraction) and octave of a pitch in cents, spelt with sharps
    /// (octave 0 and an alter 12 lower for MIDI 0-11, which MusicXML's octaves 0-9 do not reach).
    static func spelt(_ cents: Double) -> (step: String, alter: Double, octave: Int) {
        let midi = cents / 100
        let key = Int(midi.rounded())
        let names: [(String, Double)] = [("C", 0), ("C", 1), ("D", 0), ("D", 1), ("E", 0), ("F", 0), ("F", 1), ("G", 0), ("G", 1), ("A", 0), ("A", 1), ("B", 0)]
        let pc = ((key % 12) + 12) % 12
        let fraction = ((midi - Double(key)) * 10_000).rounded() / 10_000
        let octave = (key - pc) / 12 - 1
        // MusicXML's octaves run from 0: MIDI 0-11 (below 16 Hz, no voice's) go in octave 0, an octave flat.
        if octave < 0 { return (names[pc].0, names[pc].1 + fraction - 12, 0) }
        return (names[pc].0, names[pc].1 + fraction, octave)
    }

    /// A decimal without trailing zeros ("1", "0.25", "-0.5").
    static func number(_ v: Double) -> String {
        var s = String(format: "%.4f", v)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s == "-0" ? "0" : s
    }

    /// Text for XML: escaped, with the control characters XML 1.0 cannot hold dropped.
    static func text(_ s: String) -> String {
        xmlEscaped(String(s.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\t" || $0 == "\n" }.map(Character.init)))
    }
}
