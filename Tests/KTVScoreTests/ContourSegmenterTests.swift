import Foundation
import Testing
import KTVCore
@testable import KTVScore

@Suite struct ContourSegmenterTests {
    /// Two notes as a pitch tracker reports them, every 10 ms: C (6000 cents) for 400 ms with a
    /// 30 ms glitch at 6700 in its middle, a 40 ms glide up in 80-cent steps, E (6400) for 400 ms, a
    /// 40 ms decay tail 150 cents below it, silence, and an isolated 40 ms blip.
    func trackedTwoNotes() -> PitchContour {
        var times: [Double] = [], cents: [Double?] = []
        for k in 0..<130 {
            let ms = k * 10
            let value: Double?
            switch ms {
            case 200..<230: value = 6700
            case 0..<400: value = 6000
            case 400..<440: value = 6000 + Double((ms - 400) / 10 + 1) * 80
            case 440..<840: value = 6400
            case 840..<880: value = 6250
            case 1200..<1240: value = 7000
            default: value = nil
            }
            times.append(Double(ms) / 1000)
            cents.append(value)
        }
        return PitchContour(timesS: times, f0Hz: cents.map { $0.map { ReferenceMelody.hz(cents: $0) } })
    }

    @Test func glitchesGlidesAndTailsGoToTheNotesAroundThem() throws {
        let notes = try ContourSegmenter().validated().notes(trackedTwoNotes())
        #expect(notes.map(\.startMs) == [0, 420])
        #expect(notes.map(\.durationMs) == [420, 460])
        #expect(notes.count == 2 && abs((notes[0].cents ?? 0) - 6000) < 1e-6 && abs((notes[1].cents ?? 0) - 6400) < 1e-6)
    }

    @Test func withoutCleaningEveryArtefactSplitsOrShortensANote() throws {
        var plain = ContourSegmenter()
        plain.mergeCents = 0
        plain.transitionMs = 0
        let notes = plain.notes(trackedTwoNotes())
        // The glitch cuts C in two; the glide's frames, the tail and the blip are too short to be notes.
        #expect(notes.map(\.startMs) == [0, 230, 440])
        #expect(notes.map(\.durationMs) == [200, 170, 400])
    }

    @Test func settingsAreChecked() {
        var bad = ContourSegmenter()
        bad.transitionMs = 501
        #expect(throws: ScoreError.self) { try bad.validated() }
        #expect(throws: ScoreError.self) { try ReferenceOptions(segmenter: bad).validated() }
    }
}
