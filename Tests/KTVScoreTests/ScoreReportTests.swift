import Foundation
import KTVCore
@testable import KTVScore
import Testing

/// The text report a singer reads.
@Suite struct ScoreReportTests {
    /// Twelve lines of three notes each.
    static let melody: ReferenceMelody = {
        var notes: [MelodyNote] = [], lines: [MelodyLine] = []
        var t = 1000
        for line in 0..<12 {
            let start = t
            for k in 0..<3 {
                notes.append(MelodyNote(startMs: t, durationMs: 500, cents: Double(60 + 2 * k) * 100, word: "w\(line)\(k)", line: line))
                t += 580
            }
            lines.append(MelodyLine(startMs: start, endMs: t - 80, text: "line \(line + 1)"))
            t += 1000
        }
        return ReferenceMelody(notes: notes, lines: lines)
    }()

    @Test func theWeakestLinesStandInColumnsPastLineNine() throws {
        let m = Self.melody
        // Lines 9 and 12 sung four semitones off, line 4 two: the three weakest, numbered 4, 9 and 12.
        let take = sungTake(m) { t, v, _ in
            let line = m.notes.first { Double($0.startMs) <= t && t < Double($0.endMs) }?.line
            return line == 8 || line == 11 ? v.map { $0 + 400 } : line == 3 ? v.map { $0 + 200 } : v
        }
        let card = try KTVRules().judge(try LatencyAligner(latencyMs: 0).align(take), against: m)
        let text = ScoreReport.text(card, take: "t")
        let rows = try #require(text.components(separatedBy: "  weakest lines:\n").last).split(separator: "\n")
        #expect(rows.count == 3, "\(text)")
        #expect(Set(rows.map { $0.prefix { $0 != "." }.trimmingCharacters(in: .whitespaces) }) == ["4", "9", "12"], "\(rows)")
        // Every row's number ends, and its score starts, in the same column.
        let dots = Set(rows.map { row in row.firstIndex(of: ".").map { row.distance(from: row.startIndex, to: $0) } ?? -1 })
        #expect(dots.count == 1, "\(rows)")
        #expect(rows.allSatisfy { $0.hasPrefix("     4.") || $0.hasPrefix("     9.") || $0.hasPrefix("    12.") }, "\(rows)")
    }
}
