import Foundation
import Testing
import KTVCore
@testable import KTVScore

@Suite struct NotesJSONTests {
    @Test func notesJSONReadsBackToTheSameMelody() throws {
        // Every kind, an unpitched note, a fractional pitch exact in binary, a beat, a relative scale.
        var m = try ultraStar(everyNoteType)
        m.notes[0].cents = 6012.5
        m.notes[5].word = "wörld \"quoted\""
        let back = try readReference(NotesJSON.write(m), name: "notes.json")
        #expect(back == m)
        m.scale = .relative
        m.beatMs = nil
        #expect(try readReference(NotesJSON.write(m), name: "notes.json") == m)
        // Any fraction: within 1e-9 cents.
        m.notes[0].cents = 6012.34
        let fraction = try readReference(NotesJSON.write(m), name: "notes.json")
        #expect(abs((fraction.notes[0].cents ?? 0) - 6012.34) < 1e-9)
    }

    @Test func theNotesJSONShape() throws {
        let m = ReferenceReader.grouped([MelodyNote(startMs: 10, durationMs: 20, cents: 6900, word: "la"),
                                         MelodyNote(startMs: 40, durationMs: 20, cents: nil, word: "-", kind: .rap)], scale: .absolute)
        let text = String(decoding: NotesJSON.write(m), as: UTF8.self)
        let root = try JSONReader.parse(Array(text.utf8))
        guard case let .object(members) = root, case let .array(notes)? = root["notes"], case let .array(lines)? = root["lines"] else {
            Issue.record("not an object with notes and lines: \(text)")
            return
        }
        #expect(members.map { $0.0 } == ["notes", "lines"])
        #expect(notes[0] == .object([("start_ms", .int(10)), ("duration_ms", .int(20)), ("midi", .int(69)), ("word", .string("la")),
                                     ("line", .int(0)), ("kind", .string("normal"))]))
        #expect(notes[1]["midi"] == .null && notes[1]["kind"] == .string("rap"))
        #expect(lines == [.object([("start_ms", .int(10)), ("end_ms", .int(60)), ("text", .string("la-"))])])
    }
}
