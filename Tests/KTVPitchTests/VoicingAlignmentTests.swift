import Foundation
@testable import KTVPitch
import Testing

// The lyric/voice shift search on hand-built voicing masks, where every score can be counted by hand.

/// A voicing mask of `count` frames, voiced on the given frame ranges.
private func mask(_ count: Int, _ voiced: [Range<Int>]) -> [Bool] {
    var m = [Bool](repeating: false, count: count)
    for r in voiced { for k in r { m[k] = true } }
    return m
}

private func span(_ start: Int, _ end: Int, _ group: Int) -> SungSpan { SungSpan(startMs: start, endMs: end, group: group) }

@Suite struct VoicingAlignmentTests {
    /// Spans exactly as long as the voiced runs, 300 ms early: the scores form a peak (180 at +30
    /// frames, 177 either side), symmetric, so the parabola leaves it at exactly +300 ms.
    @Test func earlyLyricsGiveAPositiveShift() throws {
        let voiced = mask(1000, [200..<250, 400..<480, 600..<650])
        let spans = [span(1700, 2200, 0), span(3700, 4500, 1), span(5700, 6200, 2)]
        let r = try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10)
        #expect(r.bestShiftMs == 300)
        #expect(r.voicedShareAtBest == 1)
        #expect(r.voicedShareAtZero == 90.0 / 180)   // overlaps of 20, 50 and 20 frames as written
        #expect(r.groupShares == [0: 1, 1: 1, 2: 1])
        #expect(r.mostlyUnvoicedGroups == [])
    }

    /// The same words 700 ms late: −700 ms; as written only 10 of 180 span frames are voiced.
    @Test func lateLyricsGiveANegativeShift() throws {
        let voiced = mask(1000, [200..<250, 400..<480, 600..<650])
        let spans = [span(2700, 3200, 0), span(4700, 5500, 1), span(6700, 7200, 2)]
        let r = try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10)
        #expect(r.bestShiftMs == -700)
        #expect(r.voicedShareAtBest == 1)
        #expect(r.voicedShareAtZero == 10.0 / 180)
    }

    /// Words shorter than the voiced runs: span A (frames 120-169 in the run 100-199) stays voiced for
    /// shifts −20…+30 frames, span B (510-559 in 500-599) for −10…+40. Every word is voiced over
    /// −10…+30; the estimate is that plateau's centre, +10 frames, though 0 already scores the maximum.
    @Test func plateauCentre() throws {
        let voiced = mask(800, [100..<200, 500..<600])
        let r = try VoicingAlignment.align(spans: [span(1200, 1700, 0), span(5100, 5600, 1)], voiced: voiced, hopMs: 10)
        #expect(r.bestShiftMs == 100)
        #expect(r.voicedShareAtBest == 1)
        #expect(r.voicedShareAtZero == 1)
        #expect(r.mostlyUnvoicedGroups == [])
    }

    /// Two spans, one matching at 0 and one at +1 frame: scores 99 at 0 and at +1, 97 at −1 and +2.
    /// The two equal tops are a plateau; its centre is half a hop.
    @Test func twoEqualTopsGiveTheirMidpoint() throws {
        let voiced = mask(600, [100..<150, 300..<350])
        let r = try VoicingAlignment.align(spans: [span(1000, 1500, 0), span(2990, 3490, 1)], voiced: voiced, hopMs: 10)
        #expect(r.bestShiftMs == 5)
        #expect(r.voicedShareAtBest == 99.0 / 100)
        #expect(r.voicedShareAtZero == 99.0 / 100)
    }

    /// One span matching at 0 and two at +1: scores 148, 149, 146 at 0, +1, +2. The parabola through
    /// them peaks at +0.75 frames: 7.5 ms.
    @Test func singlePeakIsRefinedBelowTheHop() throws {
        let voiced = mask(700, [100..<150, 300..<350, 500..<550])
        let spans = [span(1000, 1500, 0), span(2990, 3490, 1), span(4990, 5490, 2)]
        let r = try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10)
        #expect(r.bestShiftMs == 7.5)
        #expect(r.voicedShareAtBest == 149.0 / 150)
        #expect(r.voicedShareAtZero == 148.0 / 150)
        #expect(r.groupShares == [0: 49.0 / 50, 1: 1, 2: 1])
    }

    /// On a 20 ms grid the frames are 20 ms apart: a 25-frame run matched 12 frames late is −240 ms.
    @Test func otherHop() throws {
        let voiced = mask(300, [50..<75, 150..<190])
        let r = try VoicingAlignment.align(spans: [span(1240, 1740, 0), span(3240, 4040, 1)], voiced: voiced, hopMs: 20)
        #expect(r.bestShiftMs == -240)
        #expect(r.voicedShareAtBest == 1)
    }

    /// Group 0 pins the shift at 0; group 1 falls where nothing is voiced, group 2 on 10 of its 40
    /// frames. Both are under the default 0.3; with a threshold of 0.2 only group 1 is.
    @Test func mostlyUnvoicedGroups() throws {
        let voiced = mask(700, [100..<200, 300..<310])
        let spans = [span(1000, 1500, 0), span(1500, 2000, 0), span(5000, 5500, 1), span(2950, 3350, 2)]
        let r = try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10)
        #expect(r.bestShiftMs == 0)
        #expect(r.groupShares == [0: 1, 1: 0, 2: 0.25])
        #expect(r.mostlyUnvoicedGroups == [1, 2])
        #expect(r.voicedShareAtBest == 110.0 / 190)
        var c = AlignmentConfiguration()
        c.unvoicedLineShare = 0.2
        #expect(try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10, configuration: c).mostlyUnvoicedGroups == [1])
    }

    @Test func emptySpansAndSilence() throws {
        let voiced = mask(500, [100..<200])
        let empty = AlignmentResult(bestShiftMs: 0, voicedShareAtBest: 0, voicedShareAtZero: 0, groupShares: [:], mostlyUnvoicedGroups: [])
        #expect(try VoicingAlignment.align(spans: [], voiced: voiced, hopMs: 10) == empty)
        // Zero-length and reversed spans hold no frame.
        #expect(try VoicingAlignment.align(spans: [span(1000, 1000, 0), span(2000, 1500, 1)], voiced: voiced, hopMs: 10) == empty)
        // Nothing voiced at all: every shift scores 0, the plateau is the whole search, its centre 0.
        let silent = try VoicingAlignment.align(spans: [span(1000, 1500, 0), span(3000, 3200, 1)], voiced: mask(500, []), hopMs: 10)
        #expect(silent.bestShiftMs == 0)
        #expect(silent.voicedShareAtBest == 0)
        #expect(silent.mostlyUnvoicedGroups == [0, 1])
        // An empty mask likewise.
        let none = try VoicingAlignment.align(spans: [span(1000, 1500, 0)], voiced: [], hopMs: 10)
        #expect(none.bestShiftMs == 0)
        #expect(none.groupShares == [0: 0])
    }

    /// The search stops at ±searchMs: a true shift of +300 ms searched within ±200 ends on the edge.
    @Test func searchRangeIsHonoured() throws {
        let voiced = mask(1000, [200..<250, 400..<480, 600..<650])
        let spans = [span(1700, 2200, 0), span(3700, 4500, 1), span(5700, 6200, 2)]
        var c = AlignmentConfiguration()
        c.searchMs = 200
        #expect(try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10, configuration: c).bestShiftMs == 200)
        c.searchMs = 0
        let zero = try VoicingAlignment.align(spans: spans, voiced: voiced, hopMs: 10, configuration: c)
        #expect(zero.bestShiftMs == 0)
        #expect(zero.voicedShareAtBest == 0.5)
    }

    @Test func parametersAreValidated() {
        func error(hopMs: Double = 10, _ change: (inout AlignmentConfiguration) -> Void) -> PitchError? {
            var c = AlignmentConfiguration()
            change(&c)
            do { _ = try VoicingAlignment.align(spans: [span(0, 100, 0)], voiced: [true], hopMs: hopMs, configuration: c); return nil } catch { return error }
        }
        #expect(error { $0.searchMs = -1 } == .invalidParameter(name: "searchMs", value: "-1", allowed: "0…60000 ms"))
        #expect(error { $0.searchMs = 60001 } == .invalidParameter(name: "searchMs", value: "60001", allowed: "0…60000 ms"))
        #expect(error { $0.unvoicedLineShare = 1.5 } == .invalidParameter(name: "unvoicedLineShare", value: "1.5", allowed: "0…1"))
        #expect(error { $0.unvoicedLineShare = -0.1 } == .invalidParameter(name: "unvoicedLineShare", value: "-0.1", allowed: "0…1"))
        #expect(error(hopMs: 0) { _ in } == .invalidParameter(name: "hopMs", value: "0.0", allowed: "> 0"))
        #expect(error(hopMs: -10) { _ in } == .invalidParameter(name: "hopMs", value: "-10.0", allowed: "> 0"))
        #expect(error { $0.searchMs = 60000; $0.unvoicedLineShare = 1 } == nil)
    }
}
