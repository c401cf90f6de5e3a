import KTVCore
import KTVScore

/// `fuzz-reference`: every reference reader on the bytes (`ReferenceReader.parse`: detection, notes
/// JSON, Migu XML, pitch tracks segmented into notes, Agora pitch, UltraStar, MIDI, MusicXML and
/// .mxl; and the UltraStar, MIDI and MusicXML readers forced), then every melody read written back
/// as UltraStar, MIDI, MusicXML and notes JSON
/// and read again through `ReferenceReader` (what ktv writes, ktv reads, with every note it could
/// write), and judged under every rule set against a short take.
/// A thrown error from a reader is the clean failure; a written file that does not read back whole
/// is a failure (`run` returns its description).
public enum ReferenceTarget {
    /// Longer melodies are not judged: the rules' work grows with the song, and the fuzzer wants
    /// many short runs (a 24-hour song is read, not scored).
    public static let maxJudgedMs = 600_000

    public static func run(_ bytes: [UInt8]) -> String? {
        let melodies: [(String, ReferenceMelody?)] = [
            ("detected", try? ReferenceReader.parse(bytes, path: "fuzz")),
            ("UltraStar", try? UltraStarFile.read(bytes, path: "fuzz.txt").validated(path: "fuzz.txt")),
            ("MIDI", try? MIDIFile.read(bytes, path: "fuzz.mid").validated(path: "fuzz.mid")),
            ("MusicXML", try? MusicXMLFile.read(bytes, path: "fuzz.musicxml").validated(path: "fuzz.musicxml")),
        ]
        for (format, melody) in melodies {
            guard let melody else { continue }
            if let failure = roundTrips(melody) { return "\(format): \(failure)" }
            judge(melody)
        }
        return nil
    }

    /// Each writer's output read back by the reader `ktv score --reference` uses.
    static func roundTrips(_ melody: ReferenceMelody) -> String? {
        do {
            let song = try ReferenceReader.parse(UltraStarFile.write(melody, title: "t", artist: "a"), path: "w.txt")
            if song.notes.count != melody.notes.count { return "UltraStar written with \(melody.notes.count) notes reads back \(song.notes.count)" }
        } catch {
            return "the UltraStar ktv wrote does not read back: \(error)"
        }
        // `ktv score notes` writes no MIDI of a melody without a pitched note of some length.
        let playable = MIDIFile.writtenNotes(melody).count
        if playable > 0 {
            do {
                let back = try ReferenceReader.parse(MIDIFile.write(melody), path: "w.mid")
                if back.notes.count != playable { return "MIDI written with \(playable) notes reads back \(back.notes.count)" }
            } catch {
                return "the MIDI ktv wrote does not read back: \(error)"
            }
        }
        // MusicXML holds every note of some length as one voice; a melody with a pitched note reads back whole.
        let voice = melody.oneVoice { _ in true }
        if voice.contains(where: { $0.cents != nil }) {
            do {
                let back = try ReferenceReader.parse(MusicXMLFile.write(melody, title: "t"), path: "w.musicxml")
                if back.notes.count != voice.count { return "MusicXML written with \(voice.count) notes reads back \(back.notes.count)" }
                if back.notes.map(\.startMs) != voice.map(\.startMs) { return "MusicXML notes read back at other times" }
            } catch {
                return "the MusicXML ktv wrote does not read back: \(error)"
            }
        }
        do {
            let back = try ReferenceReader.parse(NotesJSON.write(melody), path: "w.json")
            if back.notes.count != melody.notes.count { return "notes JSON written with \(melody.notes.count) notes reads back \(back.notes.count)" }
        } catch {
            return "the notes JSON ktv wrote does not read back: \(error)"
        }
        return nil
    }

    /// A take at a steady 220 Hz over the song's first 10 s, judged under every rule set.
    static func judge(_ melody: ReferenceMelody) {
        guard let first = melody.notes.first?.startMs, let last = melody.notes.map(\.endMs).max(), last - first <= maxJudgedMs else { return }
        let times = (0..<1000).map { Double(first) / 1000 + Double($0) / 100 }
        let take = SungTake(contour: PitchContour(timesS: times, f0Hz: times.map { _ in 220 }), coveredMs: first...(first + 10_000), latencyMs: 0)
        var rules: [any ScoringRules] = [KTVRules(), AgoraRules()]
        for difficulty in UltraStarRulesConfiguration.Difficulty.allCases {
            rules.append(UltraStarRules(configuration: UltraStarRulesConfiguration(difficulty: difficulty)))
        }
        for r in rules { _ = try? r.judge(take, against: melody) }
    }
}
