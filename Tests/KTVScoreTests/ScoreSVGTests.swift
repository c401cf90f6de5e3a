import Foundation
import KTVCore
@testable import KTVScore
import Testing

/// The score picture (issue 21): a colour-blind-safe palette with a legend, a time axis per panel,
/// one pitch scale for the picture, off-scale pitch as arrows, and the lines chosen.
@Suite struct ScoreSVGTests {
    let melody = generatedMelody()

    func render(_ take: PitchContour, _ lines: SVGLineSelection = .judged) throws -> String {
        let sung = try LatencyAligner(latencyMs: 0).align(take)
        return ScoreSVG.render(try KTVRules().judge(sung, against: melody), take: sung, title: "t", lines: lines)
    }

    /// Each panel's `data-line`, in order.
    func panels(_ svg: String) -> [Int] {
        svg.components(separatedBy: "<g class=\"panel\" data-line=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
    }

    func numbers(_ text: Substring, after key: String) -> [Double] {
        text.components(separatedBy: key).dropFirst().compactMap { Double($0.prefix { $0 != "\"" }) }
    }

    @Test func thePaletteIsColourBlindSafeAndHasALegend() throws {
        let svg = try render(sungTake(melody))
        for old in ["#43a047", "#e53935", "#f9a825", "#1e88e5"] { #expect(!svg.contains(old), "\(old)") }
        #expect(svg.contains(ScorePalette.good) && svg.contains(ScorePalette.fair) && svg.contains(ScorePalette.poor))
        for label in ["good ≥ 80", "fair 50–80", "poor &lt; 50", "not judged", "your pitch", "your pitch off the scale"] {
            #expect(svg.contains(">\(label)</text>"), "\(label)")
        }
        #expect(svg.contains(">pitch</text>") && svg.contains(">time (m:ss, the song's clock)</text>"))
    }

    @Test func eachPanelHasItsSongTimesInMinutesAndSeconds() throws {
        let svg = try render(sungTake(melody), .all)
        let blocks = svg.components(separatedBy: "<g class=\"panel\"").dropFirst()
        #expect(blocks.count == melody.lines.count)
        for (block, line) in zip(blocks, melody.lines) {
            // The first whole second inside the line is labelled, as m:ss.
            let second = (line.startMs + 999) / 1000
            #expect(block.contains(">\(second / 60):\(String(format: "%02d", second % 60))</text>"), "line at \(line.startMs) ms")
        }
        #expect(ScoreSVG.clock(62_400) == "1:02" && ScoreSVG.clock(600_000) == "10:00")
    }

    @Test func everyPanelSharesOnePitchScale() throws {
        let svg = try render(sungTake(melody), .all)
        // Where C5 sits below each panel's top: the same in every panel.
        let offsets = svg.components(separatedBy: "<g class=\"panel\"").dropFirst().compactMap { block -> Double? in
            guard let top = numbers(Substring(block), after: "<rect x=\"64.0\" y=\"").first,
                  let label = block.range(of: ">C5</text>") else { return nil }
            let before = block[..<label.lowerBound]
            guard let y = numbers(before, after: " y=\"").last else { return nil }
            return y - top   // both written with one decimal
        }
        #expect(offsets.count == melody.lines.count)
        #expect(Set(offsets.map { ($0 * 10).rounded() }).count == 1, "\(offsets)")
    }

    @Test func pitchBeyondTheScaleIsAnArrowNotALineAlongTheEdge() throws {
        // A yodel: 300 ms of the second note 15 semitones up.
        let n = melody.notes[1]
        let take = sungTake(melody) { t, v, _ in t >= Double(n.startMs + 50) && t < Double(n.startMs + 350) ? v.map { $0 + 1500 } : v }
        let svg = try render(take, .all)
        let arrows = svg.components(separatedBy: "class=\"offscale\"").count - 1
        #expect(arrows == 1)
        #expect(svg.contains("your pitch above the scale, up to "))
        // No point of the sung path lies on or beyond the first panel's top edge.
        let first = try #require(svg.components(separatedBy: "<g class=\"panel\"").dropFirst().first)
        let top = try #require(numbers(Substring(first), after: "<rect x=\"64.0\" y=\"").first)
        let path = try #require(first.components(separatedBy: "<path d=\"").dropFirst().first?.prefix { $0 != "\"" })
        let ys = path.split(separator: " ").enumerated().filter { $0.offset % 2 == 1 }.compactMap { Double($0.element) }
        #expect(!ys.isEmpty && ys.allSatisfy { $0 > top + 0.5 }, "\(ys.min() ?? 0) vs top \(top)")
    }

    @Test func theLinesDrawnAreChosen() throws {
        // Lines 2 and 4 (1-based) sung a major second flat: the two weakest.
        let flat = sungTake(melody) { t, v, _ in
            let line = melody.notes.first { Double($0.startMs) <= t && t < Double($0.endMs) }?.line
            return line == 1 || line == 3 ? v.map { $0 - 200 } : v
        }
        #expect(panels(try render(flat, .all)) == [1, 2, 3, 4, 5, 6])
        #expect(panels(try render(flat, .weakest(2))) == [2, 4])
        #expect(panels(try render(flat, .weakest(99))) == [1, 2, 3, 4, 5, 6])
        // A take that stops after line 3: judged draws the three lines sung.
        let short = sungTake(melody)
        let cut = Double(melody.lines[2].endMs + 200) / 1000
        let kept = short.timesS.indices.filter { short.timesS[$0] < cut }
        let svg = try render(PitchContour(timesS: kept.map { short.timesS[$0] }, f0Hz: kept.map { short.f0Hz[$0] }))
        #expect(panels(svg) == [1, 2, 3])
        #expect(svg.contains("3 of 6 lines (judged)"))
    }

    @Test func theSelectionIsParsedOrRefused() throws {
        #expect(try SVGLineSelection(parsing: "all") == .all)
        #expect(try SVGLineSelection(parsing: "judged") == .judged)
        #expect(try SVGLineSelection(parsing: "weakest:3") == .weakest(3))
        for bad in ["weakest:0", "weakest:", "weakest:x", "best", ""] {
            #expect(throws: ScoreError.invalidParameter(name: "svgLines", value: bad, allowed: "all, judged or weakest:N with N ≥ 1")) {
                try SVGLineSelection(parsing: bad)
            }
        }
    }
}
