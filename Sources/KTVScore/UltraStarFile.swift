import Foundation
import KTVCore

// The UltraStar song format (`.txt`), read into the note model and written from it.
// Source: "The UltraStar File Format" (Unversioned), (v1) and the (v2) draft, UltraStar-Deluxe/format
// at 98dcb844; where the spec is silent, what UltraStar Deluxe does (shared/spec/scoring-anchors.md §1).
//
// Read: headers `#KEY:VALUE` (keys case-insensitive) up to the first body line; `#BPM` (decimal
// comma or point) is quadrupled before `#VERSION` 2 (a beat is 15000/BPM ms) and not from 2 on
// (60000/BPM); `#GAP` ms to beat 0 (may be decimal); `#RELATIVE:yes` (beats count from the phrase's
// base, which `- start offset` moves on, per voice; the base starts at 0 and #GAP still applies, as
// UltraStar Deluxe reads it); `#ENCODING` CP1252/CP1250 (else UTF-8, and a file that is not UTF-8
// is read as CP1252, UltraStar Deluxe's legacy default); a UTF-8 or UTF-16 BOM. Body: notes
// `T start length pitch text` (`:` normal, `*` golden, `F` freestyle, `R` rap, `G` golden rap,
// other types freestyle as the spec allows), pitch 0 = C4 = MIDI 60; `R`, `G` and `F` carry no
// pitch (the spec: it MUST be ignored) so they are read unpitched; `- beat` ends a phrase (a line);
// `P1`/`P2` switch voice (`P3`, both voices, as older games write it); `E` ends the song.
// Refused: variable BPM (`B` lines; UltraStar Deluxe ignores them, which would mistime the notes),
// a missing `#BPM` or one outside 1-6000, note fields that are not whole numbers, pitches outside MIDI
// 0-127, times before the audio or past 24 hours. `#START`/`#END` are not applied (they do not move
// notes). Overlapping notes are repaired as the other references are (`ReferenceReader.repaired`).

/// Reads and writes UltraStar `.txt` songs.
public enum UltraStarFile {
    /// The `#BPM` values read and written: up to 6000, a 2.5 ms beat before #VERSION 2, far finer
    /// than any song needs (the rules judge beat by beat).
    static let bpmRange: ClosedRange<Double> = 1...6000

    /// True when the text opens with headers and has `#TITLE` or `#BPM` among them.
    public static func looksLike(_ bytes: [UInt8]) -> Bool {
        var head = Array(bytes.prefix(65_536))
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            guard let decoded = try? TextDecoder.decode(Array(bytes.prefix(131_072))) else { return false }
            head = decoded.utf8
        }
        // Line by line, stopping at the first that is no header: a take's pitch track is not split whole.
        var looks = false
        ByteText.eachLine(head[...]) { line in
            guard line.first == UInt8(ascii: "#") else { return false }
            let key = String(decoding: line.dropFirst().prefix { $0 != UInt8(ascii: ":") }, as: UTF8.self)
                .trimmingCharacters(in: .whitespaces).uppercased()
            looks = key == "TITLE" || key == "BPM"
            return !looks
        }
        return looks
    }

    /// The melody of voice `player` (1 for a song without voices). `beatMs` is the song's beat.
    public static func read(_ bytes: [UInt8], path: String, player: Int = 1) throws(ScoreError) -> ReferenceMelody {
        do { try ReferenceOptions.Spec.player.check(player) } catch { throw ScoreError(error) }
        let text = decodedText(bytes)
        var reader = Reader(path: path, player: player)
        var lineNumber = 0
        var index = text.startIndex
        while index < text.endIndex {
            lineNumber += 1
            let end = text[index...].firstIndex(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) ?? text.endIndex
            let line = text[index..<end]
            index = end < text.endIndex ? text.index(after: end) : end
            if try !reader.take(line, lineNumber) { break }
        }
        return try reader.melody()
    }

    /// The song as UTF-8 text: `#TITLE`, `#ARTIST`, `#MP3` (`audioFile`, by default
    /// "artist - title.mp3"), `#BPM`, `#GAP`, then the notes with a `-` after each line, and `E`.
    ///
    /// The beat grid: `#GAP` is the first note's start and the beat the longest whole number of ms,
    /// at most 50, that divides every note's start and end from there, so every boundary lands on
    /// a beat exactly (games judge one pitch a beat, so beats stay as short as ktv's own 50 ms). When
    /// that beat would be under 10 ms (times off any common grid, as a pitch tracker's) the beat is
    /// 10 ms (BPM 1500) and boundaries move to the nearest beat, at most 5 ms; a game needs no finer
    /// grid. A melody read from UltraStar keeps its own beat when every boundary lies within 1 ms
    /// of it. The BPM is written with the fewest decimals that keep the grid.
    /// Lost: fractions of a semitone; an unpitched normal or golden note is written freestyle (`F`,
    /// not judged, as ktv treats it); rap and freestyle notes get pitch 0.
    public static func write(_ melody: ReferenceMelody, title: String, artist: String, audioFile: String? = nil) -> [UInt8] {
        let notes = melody.notes.sorted { $0.startMs < $1.startMs }
        let grid = BeatGrid(notes: notes, beatMs: melody.beatMs)
        var out = "#TITLE:\(oneLine(title))\n#ARTIST:\(oneLine(artist))\n#MP3:\(oneLine(audioFile ?? "\(artist) - \(title).mp3"))\n"
        out += "#BPM:\(grid.bpmText)\n#GAP:\(grid.gapMs)\n"
        let starts = notes.map { grid.beat($0.startMs) }
        var previousEnd = 0
        for (k, n) in notes.enumerated() {
            let start = max(starts[k], k > 0 ? previousEnd : 0)
            var end = max(grid.beat(n.endMs), start + (n.durationMs > 0 ? 1 : 0))
            if k + 1 < notes.count, starts[k + 1] >= start { end = min(end, starts[k + 1]) }
            if k > 0, n.line != notes[k - 1].line { out += "- \(previousEnd)\n" }
            let (type, pitch) = typeAndPitch(n)
            out += "\(type) \(start) \(end - start) \(pitch) \(oneLine(n.word))\n"
            previousEnd = end
        }
        out += "E\n"
        return Array(out.utf8)
    }

    static func typeAndPitch(_ n: MelodyNote) -> (Character, Int) {
        let pitch = n.cents.map { Int(($0 / 100).rounded()) - 60 }
        switch (n.kind, pitch) {
        case let (.normal, p?): return (":", p)
        case let (.golden, p?): return ("*", p)
        case (.rap, _): return ("R", 0)
        case (.goldenRap, _): return ("G", 0)
        case (.freestyle, _), (.normal, nil), (.golden, nil): return ("F", 0)
        }
    }

    static func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }

    /// The text as a String: BOMs as `TextDecoder` reads them; otherwise `#ENCODING` (CP1252, CP1250),
    /// else UTF-8 when it is valid, else CP1252.
    static func decodedText(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]),
           let decoded = try? TextDecoder.decode(bytes) {
            return String(decoding: decoded.utf8, as: UTF8.self)
        }
        let declared = declaredEncoding(bytes)
        if declared == nil, TextDecoder.firstInvalidUTF8(bytes) == nil { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: TextDecoder.decode(bytes, codePage: declared ?? "CP1252"), as: UTF8.self)
    }

    /// The code page an `#ENCODING` header names (read from the raw bytes: headers are ASCII), or nil for UTF-8 and names it does not know.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        for raw in bytes.prefix(65_536).split(omittingEmptySubsequences: true, whereSeparator: { $0 == 0x0A || $0 == 0x0D }) {
            let line = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("#") else { return nil }
            let parts = line.dropFirst().split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).uppercased() == "ENCODING" else { continue }
            switch parts[1].trimmingCharacters(in: .whitespaces).uppercased().replacingOccurrences(of: "-", with: "") {
            case "CP1252", "WINDOWS1252": return "CP1252"
            case "CP1250", "WINDOWS1250": return "CP1250"
            default: return nil
            }
        }
        return nil
    }

    /// A decimal number with a point or a comma (`284,5`), optionally negative; nil for anything else.
    static func decimal(_ s: Substring) -> Double? {
        let body = s.hasPrefix("-") ? s.dropFirst() : s
        var separators = 0
        guard !body.isEmpty, body.allSatisfy({ c in
            if c == "." || c == "," { separators += 1; return true }
            return c.isASCII && c.isNumber
        }), separators <= 1, body.first != ".", body.first != ",", body.last != ".", body.last != "," else { return nil }
        return Double(s.replacingOccurrences(of: ",", with: "."))
    }

    /// The reading state, one text line at a time.
    struct Reader {
        let path: String
        let player: Int
        var bpm: Double?
        var bpmLine: Int?
        var gapMs = 0.0
        var relative = false
        var version2 = false
        var inBody = false
        var firstBodyLine: Int?
        /// The voice being read: nil before any `P` line (voice 1), 3 for both.
        var voice: Int?
        var sawVoices = false
        /// Relative mode's base beat, per voice.
        var base: [Int: Int] = [:]
        var line = 0
        var lineHasNotes = false
        var notes: [MelodyNote] = []

        init(path: String, player: Int) {
            self.path = path
            self.player = player
        }

        func bad(_ lineNumber: Int?, _ detail: String) -> ScoreError {
            .badReference(path: path, line: lineNumber, detail: detail)
        }

        /// Reads one line; false at `E`.
        mutating func take(_ raw: Substring, _ n: Int) throws(ScoreError) -> Bool {
            var text = raw
            if n == 1, text.first == "\u{FEFF}" { text = text.dropFirst() }
            let line = text.drop(while: { $0 == " " || $0 == "\t" })
            guard let first = line.first else { return true }
            if first == "#" {
                if !inBody { try header(line, n) }
                return true
            }
            if !inBody {
                inBody = true
                firstBodyLine = n
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            switch first {
            case "E" where trimmed == "E":
                return false
            case "-":
                try phraseEnd(line.dropFirst(), n)
            case "P" where line.dropFirst().trimmingCharacters(in: .whitespaces).allSatisfy({ $0.isASCII && $0.isNumber }):
                guard let v = Int(line.dropFirst().trimmingCharacters(in: .whitespaces)), (1...9).contains(v) else {
                    throw bad(n, "a voice change is `P1` or `P2`; found \(quoted(trimmed))")
                }
                voice = v
                sawVoices = true
            case "B" where line.dropFirst().first == " " || line.dropFirst().first == "\t":
                throw bad(n, "variable BPM (`B` lines) is not supported; give the song one #BPM")
            default:
                try note(line, n)
            }
            return true
        }

        mutating func header(_ line: Substring, _ n: Int) throws(ScoreError) {
            let parts = line.dropFirst().split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return }
            let key = parts[0].trimmingCharacters(in: .whitespaces).uppercased()
            let value = Substring(parts[1].trimmingCharacters(in: .whitespaces))
            if value.isEmpty { return }  // the spec: an empty value is an absent header
            switch key {
            case "BPM":
                guard let v = decimal(value), bpmRange.contains(v) else {
                    throw bad(n, "#BPM \(quoted(String(value))) must be a number from 1 to 6000 (a decimal comma or point is fine)")
                }
                bpm = v
                bpmLine = n
            case "GAP":
                guard let v = decimal(value), v.isFinite, abs(v) <= Double(ReferenceReader.maxTimeMs) else {
                    throw bad(n, "#GAP \(quoted(String(value))) must be the ms from the audio's start to beat 0")
                }
                gapMs = v
            case "RELATIVE":
                relative = value.uppercased() == "YES"
            case "VERSION":
                version2 = (Int(value.prefix(while: { $0 != "." })) ?? 0) >= 2
            default:
                break
            }
        }

        /// Whether notes of `voice` belong to the player read.
        func reads(_ voice: Int?) -> Bool { (voice ?? 1) == player || voice == 3 }

        mutating func endLine() {
            line += 1
            lineHasNotes = false
        }

        mutating func phraseEnd(_ rest: Substring, _ n: Int) throws(ScoreError) {
            let fields = rest.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count <= 2, fields.allSatisfy({ Int($0) != nil }) else {
                throw bad(n, "a line break is `- beat` (`- beat offset` in relative mode); found \(quoted("-" + rest))")
            }
            if relative {
                guard fields.count == 2, let offset = Int(fields[1]), abs(offset) <= 100_000_000 else {
                    throw bad(n, "in relative mode (#RELATIVE:yes) a line break is `- beat offset`: the offset moves the next line's beats")
                }
                base[voice ?? 1, default: 0] += offset
            }
            if reads(voice), lineHasNotes { endLine() }
        }

        mutating func note(_ line: Substring, _ n: Int) throws(ScoreError) {
            let shown = quoted(String(line))
            guard let type = line.first else { return }
            var rest = line.dropFirst()
            var fields: [Substring] = []
            for _ in 0..<3 {
                rest = rest.drop(while: { $0 == " " || $0 == "\t" })
                let field = rest.prefix(while: { $0 != " " && $0 != "\t" })
                fields.append(field)
                rest = rest.dropFirst(field.count)
            }
            let names = ["start beat", "length", "pitch"]
            for (k, f) in fields.enumerated() where Int(f) == nil {
                throw bad(n, f.isEmpty
                    ? "\(shown): a note is `type start-beat length pitch text`; the \(names[k]) is missing"
                    : "\(shown): the \(names[k]) \(quoted(String(f))) is not a whole number; a note is `type start-beat length pitch text`")
            }
            guard let startBeat = Int(fields[0]), let length = Int(fields[1]), let pitch = Int(fields[2]) else { return }
            // Bounded so that beat arithmetic cannot overflow (10^8 beats is days at any tempo).
            guard abs(startBeat) <= 100_000_000, (0...100_000_000).contains(length) else {
                throw bad(n, "\(shown): the start beat and length must be whole numbers from 0 to 100000000")
            }
            guard (-60...67).contains(pitch) else {
                throw bad(n, "\(shown): pitch \(pitch) is outside MIDI 0-127 (pitch 0 is C4, MIDI 60)")
            }
            // One separator, then the syllable as written (its spaces join words).
            let word = rest.first == " " || rest.first == "\t" ? String(rest.dropFirst()) : String(rest)
            guard reads(voice) else { return }
            guard let bpm else {
                throw bad(n, "a note before any #BPM; an UltraStar file needs `#BPM:` in its header")
            }
            let beatMs = version2 ? 60_000 / bpm : 15_000 / bpm
            let beat = (relative ? base[voice ?? 1, default: 0] : 0) + startBeat
            let startMs = gapMs + Double(beat) * beatMs, endMs = gapMs + Double(beat + length) * beatMs
            guard startMs >= -0.5, endMs <= Double(ReferenceReader.maxTimeMs) else {
                throw bad(n, "\(shown): the note lies outside the audio (before 0 ms or past 24 hours); check #GAP and #BPM")
            }
            let start = Int(startMs.rounded()), end = Int(endMs.rounded())
            let kind: MelodyNote.Kind
            switch type {
            case ":": kind = .normal
            case "*": kind = .golden
            case "R": kind = .rap
            case "G": kind = .goldenRap
            default: kind = .freestyle
            }
            let cents: Double? = kind == .normal || kind == .golden ? Double(60 + pitch) * 100 : nil
            notes.append(MelodyNote(startMs: start, durationMs: end - start, cents: cents, word: word, line: self.line, kind: kind))
            lineHasNotes = true
        }

        func melody() throws(ScoreError) -> ReferenceMelody {
            if player > 1, !sawVoices {
                throw bad(nil, "player \(player) was asked for, but the song has no voices (P1, P2): it is not a duet")
            }
            guard !notes.isEmpty else {
                if bpm == nil { throw bad(firstBodyLine, "no #BPM header and no notes; an UltraStar file needs `#BPM:` and notes") }
                throw bad(nil, sawVoices ? "no notes for player \(player) (voice P\(player))" : "no notes in the song")
            }
            let beatMs = version2 ? 60_000 / (bpm ?? 1) : 15_000 / (bpm ?? 1)
            return ReferenceReader.grouped(ReferenceReader.repaired(notes), scale: .absolute, beatMs: beatMs)
        }
    }

    /// Where a written song's beats lie (see `write`).
    struct BeatGrid {
        let gapMs: Int
        let beatMs: Double
        let bpmText: String

        init(notes: [MelodyNote], beatMs kept: Double?) {
            let first = notes.first?.startMs ?? 0
            let offsets = notes.flatMap { [$0.startMs - first, $0.endMs - first] }
            gapMs = first
            func fits(_ b: Double, within tolerance: Double) -> Bool {
                offsets.allSatisfy { abs(Double($0) - (Double($0) / b).rounded() * b) <= tolerance }
            }
            var beat: Double
            var tolerance = 0.49
            if let kept, bpmRange.contains(15_000 / kept), fits(kept, within: 1) {
                beat = kept
                tolerance = 1
            } else {
                let g = offsets.reduce(0) { Self.gcd($0, $1) }
                let divisor = g == 0 ? 50 : (1...min(50, g)).reversed().first { g % $0 == 0 } ?? 1
                beat = Double(divisor >= 10 ? divisor : 10)
                if divisor < 10 { tolerance = .infinity }
            }
            // The shortest BPM text whose beat (15000/BPM, as a reader computes it) keeps the grid.
            let bpm = 15_000 / beat
            var chosen = bpm
            for digits in 0...6 {
                let scale = pow(10, Double(digits))
                let candidate = (bpm * scale).rounded() / scale
                if candidate > 0, fits(15_000 / candidate, within: tolerance) {
                    chosen = candidate
                    break
                }
            }
            beatMs = 15_000 / chosen
            let text = chosen == chosen.rounded() && chosen < 1e9 ? String(Int(chosen)) : String(chosen)
            bpmText = text.replacingOccurrences(of: ".", with: ",")
        }

        /// The beat nearest `ms`.
        func beat(_ ms: Int) -> Int { Int((Double(ms - gapMs) / beatMs).rounded()) }

        static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? abs(a) : gcd(b, a % b) }
    }
}
