import Foundation
import KTVCore

/// A picture of a scored take for the singer: one panel per line, the reference notes as bars
/// coloured by how each was sung (green good, amber fair, red poor, grey not judged), the words
/// under them, the sung pitch over them (on the song's clock; the notes are drawn in the key the
/// singer was judged in, so a transposed singer sees their line over the notes), and each line's score.
public enum ScoreSVG {
    static let width = 1100.0, panelHeight = 120.0, left = 64.0, right = 86.0, top = 86.0, gap = 26.0

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }

    static func color(_ score: Double?) -> String {
        guard let s = score else { return "#bdbdbd" }
        return s >= 80 ? "#43a047" : s >= 50 ? "#f9a825" : "#e53935"
    }

    static let names = ["C", "C♯", "D", "D♯", "E", "F", "F♯", "G", "G♯", "A", "A♯", "B"]

    /// `card` as judged, with `take` the sung pitch it was judged on.
    public static func render(_ card: ScoreCard, take: SungTake, title: String) -> String {
        let lines = card.lines.filter { !$0.notes.isEmpty }
        let height = top + Double(max(1, lines.count)) * (panelHeight + gap) + 10
        let frames = SongFrames(take.contour)
        // The subtitle is the card's first finding that costs points: what to work on first.
        let worst = card.findings.first { $0.severity >= .warning }
        let said = worst.map { "\($0.severity == .fault ? "✗" : "!") \($0.message)" } ?? "no fault found"
        let headline = (text: said.count > 160 ? String(said.prefix(159)) + "…" : said,
                        color: worst?.severity == .fault ? "#c62828" : worst == nil ? "#2e7d32" : "#ef6c00")
        var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans, Noto Sans CJK SC, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="#ffffff"/>
        <text x="\(left)" y="26" font-size="18" font-weight="bold">\(xmlEscaped(title)): \(f(card.score))\(card.maxScore == 100 ? "" : " of \(Int(card.maxScore))")</text>
        <text x="\(left)" y="48" fill="#555">rules \(xmlEscaped(card.rules)) · notes: green good, amber fair, red poor, grey not judged · blue: your pitch\(card.keyShiftCents.magnitude >= 30 ? " · notes drawn in the key you sang (\(Int(card.keyShiftCents.rounded())) cents)" : "")</text>
        <text x="\(left)" y="68" fill="\(headline.color)">\(xmlEscaped(headline.text))</text>

        """
        for (row, line) in lines.enumerated() {
            let y0 = top + Double(row) * (panelHeight + gap)
            let t0 = Double(min(line.startMs, line.notes.map(\.note.startMs).min() ?? line.startMs)) - 200
            let t1 = Double(max(line.endMs, line.notes.map(\.note.endMs).max() ?? line.endMs)) + 200
            let targets = line.notes.compactMap { $0.targetCents ?? $0.note.cents.map { $0 + card.keyShiftCents } }
            let lo = (targets.min() ?? 6000) - 350, hi = (targets.max() ?? 6000) + 350
            let plotW = width - left - right, plotH = panelHeight - 22
            func x(_ ms: Double) -> Double { left + (ms - t0) / (t1 - t0) * plotW }
            func y(_ cents: Double) -> Double { y0 + plotH - (min(max(cents, lo), hi) - lo) / (hi - lo) * plotH }
            s += "<rect x=\"\(f(left))\" y=\"\(f(y0))\" width=\"\(f(plotW))\" height=\"\(f(plotH))\" fill=\"#fafafa\" stroke=\"#e0e0e0\"/>\n"
            // Semitone grid, C labelled.
            var g = (lo / 100).rounded(.up) * 100
            while g <= hi {
                let midi = Int(g / 100)
                let isC = midi % 12 == 0
                s += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotW))\" y1=\"\(f(y(g)))\" y2=\"\(f(y(g)))\" stroke=\"\(isC ? "#cfd8dc" : "#f0f0f0")\"/>\n"
                if isC || midi % 12 == 5 || midi % 12 == 9 {
                    s += "<text x=\"\(f(left - 6))\" y=\"\(f(y(g) + 4))\" text-anchor=\"end\" font-size=\"10\" fill=\"#90a4ae\">\(names[midi % 12])\(midi / 12 - 1)</text>\n"
                }
                g += 100
            }
            for n in line.notes {
                guard let target = n.targetCents ?? n.note.cents.map({ $0 + card.keyShiftCents }) else { continue }
                let xa = x(Double(n.note.startMs)), xb = x(Double(n.note.endMs))
                s += "<rect x=\"\(f(xa))\" y=\"\(f(y(target) - 6))\" width=\"\(f(max(2, xb - xa)))\" height=\"12\" rx=\"4\" fill=\"\(color(n.score))\" fill-opacity=\"0.55\"/>\n"
                s += "<text x=\"\(f((xa + xb) / 2))\" y=\"\(f(y0 + panelHeight - 6))\" text-anchor=\"middle\" font-size=\"13\">\(xmlEscaped(n.note.word.trimmingCharacters(in: .whitespaces)))</text>\n"
            }
            // The sung pitch, broken where unvoiced, moved into the song's key.
            var path = "", pen = false
            frames.forEach(in: Int(t0), Int(t1)) { ms, cents in
                guard let c = cents else { pen = false; return }
                path += "\(pen ? "L" : "M")\(f(x(ms))) \(f(y(c))) "
                pen = true
            }
            if !path.isEmpty { s += "<path d=\"\(path)\" fill=\"none\" stroke=\"#1e88e5\" stroke-width=\"2\" stroke-linejoin=\"round\"/>\n" }
            let score = line.score.map { f($0) } ?? "—"
            s += "<text x=\"\(f(width - right + 12))\" y=\"\(f(y0 + plotH / 2 + 8))\" font-size=\"22\" font-weight=\"bold\" fill=\"\(color(line.score))\">\(score)</text>\n"
            s += "<text x=\"\(f(width - right + 12))\" y=\"\(f(y0 + plotH / 2 + 26))\" font-size=\"10\" fill=\"#777\">line \(line.index + 1)</text>\n"
        }
        s += "</svg>\n"
        return s
    }
}
