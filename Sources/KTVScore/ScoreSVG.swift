import Foundation
import KTVCore

/// The colours every picture and page of a score uses: Okabe & Ito's palette ("Color Universal
/// Design", 2008), told apart by viewers with any common colour-vision deficiency. Blue, orange and
/// vermillion run from good to poor; grey is not judged; the sung pitch is black.
public enum ScorePalette {
    public static let good = "#0072B2", fair = "#E69F00", poor = "#D55E00", notJudged = "#BBBBBB", sung = "#000000"

    /// A note's or a line's colour by its score (0-100): ≥ 80 good, ≥ 50 fair, else poor; nil = not judged.
    public static func color(score: Double?) -> String {
        guard let s = score else { return notJudged }
        return s >= 80 ? good : s >= 50 ? fair : poor
    }
}

/// Which lines of the song a score picture draws.
public enum SVGLineSelection: Sendable, Equatable {
    /// Every line with notes.
    case all
    /// The lines judged (all, when none was).
    case judged
    /// The N judged lines with the lowest scores, in song order.
    case weakest(Int)

    /// `all`, `judged` or `weakest:N` (N ≥ 1).
    public init(parsing text: String) throws(ScoreError) {
        switch text {
        case "all": self = .all
        case "judged": self = .judged
        default:
            guard text.hasPrefix("weakest:"), let n = Int(text.dropFirst("weakest:".count)), n >= 1 else {
                throw .invalidParameter(name: "svgLines", value: text, allowed: "all, judged or weakest:N with N ≥ 1")
            }
            self = .weakest(n)
        }
    }
}

/// A picture of a scored take for the singer: one panel per line (`SVGLineSelection`), the reference
/// notes as bars coloured by how each was sung, the words under them, the sung pitch over them on
/// the song's clock, each line's score, a time axis in m:ss under each panel and one pitch scale for
/// the whole picture. The notes are drawn in the key the singer was judged in, so a transposed singer
/// sees their line over the notes; sung pitch beyond the scale is a marked arrow at its edge, not a
/// line along it. Text is left to the viewer's fonts (a generic family ends the list).
public enum ScoreSVG {
    static let width = 1100.0, left = 64.0, right = 86.0, top = 112.0
    /// A panel: the plot, the words under it, then the time axis.
    static let plotHeight = 100.0, wordsHeight = 18.0, axisHeight = 22.0, gap = 18.0
    static var panelHeight: Double { plotHeight + wordsHeight + axisHeight }
    static let names = ["C", "C♯", "D", "D♯", "E", "F", "F♯", "G", "G♯", "A", "A♯", "B"]

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }

    /// `m:ss` of a song time.
    static func clock(_ ms: Double) -> String {
        let s = Int((ms / 1000).rounded())
        return "\(s < 0 ? "-" : "")\(abs(s) / 60):\(String(format: "%02d", abs(s) % 60))"
    }

    /// `card` as judged, with `take` the sung pitch it was judged on.
    public static func render(_ card: ScoreCard, take: SungTake, title: String, lines selection: SVGLineSelection = .judged) -> String {
        let withNotes = card.lines.filter { !$0.notes.isEmpty }
        let (lines, chosen) = pick(withNotes, selection)
        let height = top + Double(max(1, lines.count)) * (panelHeight + gap) + 24
        let frames = SongFrames(take.contour)
        let drawn = lines.flatMap(\.notes).compactMap { drawnCents($0, card) }
        let scale = (lo: (drawn.min() ?? 6000) - 350, hi: (drawn.max() ?? 6000) + 350)
        // The subtitle is the card's first finding that costs points: what to work on first.
        let worst = card.findings.first { $0.severity >= .warning }
        let said = worst.map { "\($0.severity == .fault ? "✗" : "!") \($0.message)" } ?? "no fault found"
        let headline = (text: said.count > 160 ? String(said.prefix(159)) + "…" : said,
                        color: worst?.severity == .fault ? ScorePalette.poor : worst == nil ? ScorePalette.good : "#8a5a00")
        let key = card.keyShiftCents.magnitude >= 30 ? " · notes drawn in the key you sang (\(Int(card.keyShiftCents.rounded())) cents)" : ""
        var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans, Noto Sans CJK SC, Noto Sans, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="#ffffff"/>
        <text x="\(left)" y="26" font-size="18" font-weight="bold">\(xmlEscaped(title)): \(f(card.score))\(card.maxScore == 100 ? "" : " of \(Int(card.maxScore))")</text>
        <text x="\(left)" y="46" fill="#555">rules \(xmlEscaped(card.rules)) · \(lines.count) of \(withNotes.count) lines (\(chosen))\(key)</text>
        <text x="\(left)" y="66" fill="\(headline.color)">\(xmlEscaped(headline.text))</text>

        """
        s += legend(y: 88)
        s += "<text x=\"16\" y=\"\(f(top + plotHeight / 2))\" transform=\"rotate(-90 16 \(f(top + plotHeight / 2)))\" text-anchor=\"middle\" fill=\"#555\">pitch</text>\n"
        for (row, line) in lines.enumerated() {
            s += panel(line, card: card, frames: frames, y0: top + Double(row) * (panelHeight + gap), scale: scale)
        }
        s += "<text x=\"\(f(left + (width - left - right) / 2))\" y=\"\(f(height - 8))\" text-anchor=\"middle\" fill=\"#555\">time (m:ss, the song's clock)</text>\n"
        s += "</svg>\n"
        return s
    }

    /// The lines to draw and how the subtitle names the choice.
    static func pick(_ lines: [LineScore], _ selection: SVGLineSelection) -> ([LineScore], String) {
        let judged = lines.filter(\.judged)
        switch selection {
        case .all: return (lines, "all")
        case .judged: return judged.isEmpty ? (lines, "none judged, so all") : (judged, "judged")
        case let .weakest(n):
            if judged.isEmpty { return (lines, "none judged, so all") }
            let weakest = Set(judged.sorted { ($0.score ?? 0, $0.index) < ($1.score ?? 0, $1.index) }.prefix(n).map(\.index))
            return (judged.filter { weakest.contains($0.index) }, "the \(min(n, judged.count)) weakest")
        }
    }

    /// A note's pitch as drawn: where it was judged, or the reference moved into the singer's key.
    static func drawnCents(_ n: NoteScore, _ card: ScoreCard) -> Double? {
        n.targetCents ?? n.note.cents.map { $0 + card.keyShiftCents }
    }

    static func legend(y: Double) -> String {
        var s = "", x = left
        let bars = [(ScorePalette.good, "good ≥ 80"), (ScorePalette.fair, "fair 50–80"), (ScorePalette.poor, "poor &lt; 50"), (ScorePalette.notJudged, "not judged")]
        for (color, label) in bars {
            s += "<rect x=\"\(f(x))\" y=\"\(f(y - 9))\" width=\"22\" height=\"10\" rx=\"3\" fill=\"\(color)\"/><text x=\"\(f(x + 28))\" y=\"\(f(y))\">\(label)</text>\n"
            x += 118
        }
        s += "<path d=\"M\(f(x)) \(f(y - 2)) l7 -6 l7 4 l8 -5\" fill=\"none\" stroke=\"\(ScorePalette.sung)\" stroke-width=\"2\"/><text x=\"\(f(x + 28))\" y=\"\(f(y))\">your pitch</text>\n"
        x += 118
        s += "<path d=\"M\(f(x + 5)) \(f(y)) l6 -10 l6 10 z\" fill=\"\(ScorePalette.sung)\"/><text x=\"\(f(x + 28))\" y=\"\(f(y))\">your pitch off the scale</text>\n"
        return s
    }

    static func panel(_ line: LineScore, card: ScoreCard, frames: SongFrames, y0: Double, scale: (lo: Double, hi: Double)) -> String {
        let t0 = Double(min(line.startMs, line.notes.map(\.note.startMs).min() ?? line.startMs)) - 200
        let t1 = Double(max(line.endMs, line.notes.map(\.note.endMs).max() ?? line.endMs)) + 200
        let plotW = width - left - right
        func x(_ ms: Double) -> Double { left + (ms - t0) / (t1 - t0) * plotW }
        func y(_ cents: Double) -> Double { y0 + plotHeight - (cents - scale.lo) / (scale.hi - scale.lo) * plotHeight }
        var s = "<g class=\"panel\" data-line=\"\(line.index + 1)\">\n"
        s += "<rect x=\"\(f(left))\" y=\"\(f(y0))\" width=\"\(f(plotW))\" height=\"\(f(plotHeight))\" fill=\"#fafafa\" stroke=\"#e0e0e0\"/>\n"
        // Semitone grid, C, F and A named.
        var g = (scale.lo / 100).rounded(.up) * 100
        while g <= scale.hi {
            let midi = Int(g / 100), pc = ((midi % 12) + 12) % 12
            s += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotW))\" y1=\"\(f(y(g)))\" y2=\"\(f(y(g)))\" stroke=\"\(pc == 0 ? "#cfd8dc" : "#f0f0f0")\"/>\n"
            if pc == 0 || pc == 5 || pc == 9 {
                s += "<text x=\"\(f(left - 6))\" y=\"\(f(y(g) + 4))\" text-anchor=\"end\" font-size=\"10\" fill=\"#78909c\">\(names[pc])\(midi / 12 - 1)</text>\n"
            }
            g += 100
        }
        for n in line.notes {
            guard let target = drawnCents(n, card) else { continue }
            let xa = x(Double(n.note.startMs)), xb = x(Double(n.note.endMs))
            s += "<rect x=\"\(f(xa))\" y=\"\(f(y(target) - 6))\" width=\"\(f(max(2, xb - xa)))\" height=\"12\" rx=\"4\" fill=\"\(ScorePalette.color(score: n.score))\" fill-opacity=\"0.75\"/>\n"
            s += "<text x=\"\(f((xa + xb) / 2))\" y=\"\(f(y0 + plotHeight + 14))\" text-anchor=\"middle\" font-size=\"13\">\(xmlEscaped(n.note.word.trimmingCharacters(in: .whitespaces)))</text>\n"
        }
        s += contour(frames, from: t0, to: t1, x: x, y: y, scale: scale, top: y0, bottom: y0 + plotHeight)
        s += timeAxis(from: t0, to: t1, x: x, y: y0 + plotHeight + wordsHeight)
        let score = line.score.map { f($0) } ?? "—"
        s += "<text x=\"\(f(width - right + 12))\" y=\"\(f(y0 + plotHeight / 2 + 8))\" font-size=\"22\" font-weight=\"bold\" fill=\"\(ScorePalette.color(score: line.score))\">\(score)</text>\n"
        s += "<text x=\"\(f(width - right + 12))\" y=\"\(f(y0 + plotHeight / 2 + 26))\" font-size=\"10\" fill=\"#777\">line \(line.index + 1)</text>\n"
        return s + "</g>\n"
    }

    /// Ticks at a round step (1, 2, 5, 10, 15 or 30 s) giving 4-10 labels across the panel.
    static func timeAxis(from t0: Double, to t1: Double, x: (Double) -> Double, y: Double) -> String {
        let stepMs = [1000.0, 2000, 5000, 10_000, 15_000, 30_000, 60_000].first { (t1 - t0) / $0 <= 10 } ?? 60_000
        var s = "<line x1=\"\(f(x(t0)))\" x2=\"\(f(x(t1)))\" y1=\"\(f(y))\" y2=\"\(f(y))\" stroke=\"#90a4ae\"/>\n"
        var t = (t0 / stepMs).rounded(.up) * stepMs
        while t <= t1 {
            s += "<line x1=\"\(f(x(t)))\" x2=\"\(f(x(t)))\" y1=\"\(f(y))\" y2=\"\(f(y + 4))\" stroke=\"#90a4ae\"/>"
            s += "<text x=\"\(f(x(t)))\" y=\"\(f(y + 15))\" text-anchor=\"middle\" font-size=\"10\" fill=\"#607d8b\">\(clock(t))</text>\n"
            t += stepMs
        }
        return s
    }

    /// The sung pitch, broken where unvoiced or beyond the scale; each run beyond it (runs closer
    /// than 8 px merged) is one arrow at the edge, titled with how far it went.
    static func contour(_ frames: SongFrames, from t0: Double, to t1: Double, x: (Double) -> Double, y: (Double) -> Double,
                        scale: (lo: Double, hi: Double), top: Double, bottom: Double) -> String {
        var path = "", pen = false
        var runs: [(up: Bool, x0: Double, x1: Double, far: Double)] = []
        frames.forEach(in: Int(t0), Int(t1)) { ms, cents in
            guard let c = cents else { pen = false; return }
            if c > scale.hi || c < scale.lo {
                pen = false
                let up = c > scale.hi, px = x(ms)
                if let last = runs.last, last.up == up, px - last.x1 < 8 {
                    runs[runs.count - 1].x1 = px
                    runs[runs.count - 1].far = up ? max(last.far, c) : min(last.far, c)
                } else {
                    runs.append((up, px, px, c))
                }
                return
            }
            path += "\(pen ? "L" : "M")\(f(x(ms))) \(f(y(c))) "
            pen = true
        }
        var s = path.isEmpty ? "" : "<path d=\"\(path)\" fill=\"none\" stroke=\"\(ScorePalette.sung)\" stroke-width=\"1.8\" stroke-linejoin=\"round\"/>\n"
        for r in runs {
            let cx = (r.x0 + r.x1) / 2
            let d = r.up ? "M\(f(cx - 5)) \(f(top + 10)) L\(f(cx)) \(f(top + 1)) L\(f(cx + 5)) \(f(top + 10)) Z"
                         : "M\(f(cx - 5)) \(f(bottom - 10)) L\(f(cx)) \(f(bottom - 1)) L\(f(cx + 5)) \(f(bottom - 10)) Z"
            let beyond = Int((r.up ? r.far - scale.hi : scale.lo - r.far).rounded())
            s += "<path class=\"offscale\" d=\"\(d)\" fill=\"\(ScorePalette.sung)\"><title>your pitch \(r.up ? "above" : "below") the scale, up to \(beyond) cents beyond it</title></path>\n"
        }
        return s
    }
}
