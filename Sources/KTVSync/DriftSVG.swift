import KTVCore

/// Drift of each follower over time, one panel per lead → follower pair: the threshold band,
/// the drift line, and every decision marked and colored by its verdict.
public enum DriftSVG {
    static let width = 1200.0
    static let panelHeight = 230.0
    static let left = 70.0, right = 24.0, top = 84.0, gapBetween = 50.0

    static func color(_ v: Verdict) -> String {
        switch v {
        case .ok: return "#2e7d32"
        case .missing: return "#ef6c00"
        case .wrongTarget: return "#c62828"
        case .unexpected: return "#6a1b9a"
        }
    }

    static func num(_ v: Double) -> String { ReplayOutput.fixed(v, 1) }

    static func timeLabel(_ seconds: Int) -> String {
        let h = seconds / 3600, m = (seconds / 60) % 60, s = seconds % 60
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):\(m < 10 ? "0" : "")\(m):\(ss)" }
        return "\(m):\(ss)"
    }

    public static func render(_ r: ReplayReport) -> String {
        let pairs = r.pairs
        let panels = max(1, pairs.count)
        let height = top + Double(panels) * (panelHeight + gapBetween) + 10
        var t0 = r.originNtpMs
        var t1 = t0 + 1000
        for p in pairs { if let l = p.samples.last { t1 = max(t1, l.ntpMs) }; if let f = p.samples.first { t0 = min(t0, f.ntpMs) } }
        for d in r.decisions { t1 = max(t1, d.ntpMs) }
        let plotW = width - left - right
        func x(_ ntp: Int) -> Double { left + Double(ntp - t0) / Double(t1 - t0) * plotW }

        var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="#ffffff"/>
        <text x="\(left)" y="22" font-size="16" font-weight="bold">Chorus drift (follower − lead position at the follower's callbacks)</text>

        """
        // Legend.
        var lx = left
        let legend: [(String, String)] = [("drift", "#1565c0"), ("threshold band", "#a5d6a7")] + Verdict.allCases.map { ("seek: \($0.rawValue)", color($0)) }
        for (label, c) in legend {
            s += "<rect x=\"\(num(lx))\" y=\"34\" width=\"14\" height=\"10\" fill=\"\(c)\"/><text x=\"\(num(lx + 18))\" y=\"43\">\(xmlEscaped(label))</text>\n"
            lx += 18 + Double(label.count) * 7 + 18
        }
        if !r.gaps.isEmpty {
            s += "<rect x=\"\(num(lx))\" y=\"34\" width=\"14\" height=\"10\" fill=\"#bdbdbd\"/><text x=\"\(num(lx + 18))\" y=\"43\">no messages</text>\n"
        }
        if pairs.isEmpty {
            s += "<text x=\"\(left)\" y=\"\(top + 40)\">No follower with drift samples: the log has no chorus device playing while the lead played.</text>\n</svg>\n"
            return s
        }

        // Time ticks shared by every panel.
        let span = Double(t1 - t0) / 1000
        let steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200]
        let step = steps.first { span / Double($0) <= 12 } ?? max(7200, Int((span / 12 / 3600).rounded(.up)) * 3600)

        for (k, p) in pairs.enumerated() {
            let py = top + Double(k) * (panelHeight + gapBetween)
            let thr = Double(p.thresholdMs)
            // Scale to the usual drift, not the worst spike: spikes are drawn at the edge.
            let maxAbs = p.drift?.maxAbsMs ?? thr
            let p95 = p.drift?.p95AbsMs ?? thr
            var yMax = max(2.5 * thr, min(maxAbs * 1.1, 1.6 * p95))
            yMax = (yMax / 10).rounded(.up) * 10
            func y(_ v: Double) -> Double {
                let c = max(-yMax, min(yMax, v))
                return py + panelHeight / 2 - c / yMax * (panelHeight / 2)
            }
            let title = "\(p.lead) → \(p.follower)  ·  \(p.rules.rawValue) rules, threshold \(p.thresholdMs) ms\(p.twoSided ? "" : " (one-sided: only a late follower is corrected)")"
                + (p.drift.map { "  ·  median \(num($0.medianMs)) ms, p95 |d| \(num($0.p95AbsMs)) ms, max |d| \(num($0.maxAbsMs)) ms" } ?? "")
            s += "<text x=\"\(left)\" y=\"\(num(py - 8))\" font-weight=\"bold\">\(xmlEscaped(title))</text>\n"
            s += "<rect x=\"\(left)\" y=\"\(num(py))\" width=\"\(num(plotW))\" height=\"\(num(panelHeight))\" fill=\"#fafafa\" stroke=\"#9e9e9e\"/>\n"
            // Message gaps of this follower.
            for g in r.gaps where g.device == p.follower {
                let a = x(g.startNtpMs), b = x(g.endNtpMs)
                s += "<rect x=\"\(num(a))\" y=\"\(num(py))\" width=\"\(num(max(1, b - a)))\" height=\"\(num(panelHeight))\" fill=\"#bdbdbd\" opacity=\"0.6\"/>\n"
            }
            // Threshold band.
            s += "<rect x=\"\(left)\" y=\"\(num(y(thr)))\" width=\"\(num(plotW))\" height=\"\(num(y(-thr) - y(thr)))\" fill=\"#a5d6a7\" opacity=\"0.35\"/>\n"
            s += "<line x1=\"\(left)\" x2=\"\(num(left + plotW))\" y1=\"\(num(y(thr)))\" y2=\"\(num(y(thr)))\" stroke=\"#388e3c\" stroke-dasharray=\"5,4\"/>\n"
            s += "<line x1=\"\(left)\" x2=\"\(num(left + plotW))\" y1=\"\(num(y(-thr)))\" y2=\"\(num(y(-thr)))\" stroke=\"#388e3c\" stroke-dasharray=\"\(p.twoSided ? "5,4" : "2,6")\" opacity=\"\(p.twoSided ? "1" : "0.5")\"/>\n"
            s += "<line x1=\"\(left)\" x2=\"\(num(left + plotW))\" y1=\"\(num(y(0)))\" y2=\"\(num(y(0)))\" stroke=\"#757575\" stroke-width=\"0.8\"/>\n"
            // Y ticks.
            for v in [yMax, thr, 0, -thr, -yMax] {
                s += "<text x=\"\(num(left - 6))\" y=\"\(num(y(v) + 4))\" text-anchor=\"end\" fill=\"#424242\">\(Int(v))</text>\n"
            }
            s += "<text x=\"18\" y=\"\(num(py + panelHeight / 2))\" transform=\"rotate(-90 18 \(num(py + panelHeight / 2)))\" text-anchor=\"middle\" fill=\"#424242\">drift ms (+ = follower ahead)</text>\n"
            // X ticks.
            var tick = 0
            while Double(tick) <= span {
                let xx = x(t0 + tick * 1000)
                s += "<line x1=\"\(num(xx))\" x2=\"\(num(xx))\" y1=\"\(num(py + panelHeight))\" y2=\"\(num(py + panelHeight + 5))\" stroke=\"#757575\"/>"
                s += "<text x=\"\(num(xx))\" y=\"\(num(py + panelHeight + 18))\" text-anchor=\"middle\" fill=\"#424242\">\(timeLabel(tick))</text>\n"
                tick += step
            }
            s += drawLine(p.samples, x: x, y: y, plotW: plotW)
            // Decisions of this follower.
            // Many ok seeks (a long room) get a tick each instead of a full-height line.
            let okCount = r.decisions.reduce(0) { $0 + ($1.device == p.follower && $1.verdict == .ok ? 1 : 0) }
            let okLines = okCount <= 150
            var lastOkX = -Double.infinity
            for d in r.decisions where d.device == p.follower {
                let xx = x(d.loggedNtpMs ?? d.ntpMs)
                let c = color(d.verdict)
                if d.verdict == .ok {
                    if !okLines && xx - lastOkX < 1 { continue }
                    lastOkX = xx
                    if okLines {
                        s += "<line x1=\"\(num(xx))\" x2=\"\(num(xx))\" y1=\"\(num(py + 2))\" y2=\"\(num(py + panelHeight - 2))\" stroke=\"\(c)\" stroke-width=\"0.8\" opacity=\"0.45\"/>"
                    } else {
                        s += "<line x1=\"\(num(xx))\" x2=\"\(num(xx))\" y1=\"\(num(py + 2))\" y2=\"\(num(py + 12))\" stroke=\"\(c)\" stroke-width=\"1\"/>"
                    }
                    s += "<circle cx=\"\(num(xx))\" cy=\"\(num(py + 7))\" r=\"3\" fill=\"\(c)\"/>\n"
                } else {
                    s += "<line x1=\"\(num(xx))\" x2=\"\(num(xx))\" y1=\"\(num(py + 2))\" y2=\"\(num(py + panelHeight - 2))\" stroke=\"\(c)\" stroke-width=\"2\"\(d.verdict == .missing ? " stroke-dasharray=\"6,3\"" : "")/>"
                    s += "<path d=\"M\(num(xx - 6)) \(num(py + 2)) L\(num(xx + 6)) \(num(py + 2)) L\(num(xx)) \(num(py + 13)) Z\" fill=\"\(c)\"/>"
                    s += "<text x=\"\(num(xx + 5))\" y=\"\(num(py + panelHeight - 8))\" fill=\"\(c)\" font-weight=\"bold\">\(xmlEscaped(d.verdict.rawValue))</text>\n"
                }
            }
            // Storms: a bar under the markers, labelled where there is room for the label.
            var labelEnd = -Double.infinity
            for st in r.storms where st.device == p.follower {
                let a = x(st.startNtpMs), b = max(x(st.endNtpMs), a + 2)
                s += "<rect x=\"\(num(a))\" y=\"\(num(py + 15))\" width=\"\(num(b - a))\" height=\"4\" fill=\"#1b5e20\"/>"
                let label = "storm: \(st.seeks) seeks"
                if a > labelEnd {
                    s += "<text x=\"\(num(a))\" y=\"\(num(py + 31))\" fill=\"#1b5e20\" font-size=\"11\">\(label)</text>"
                    labelEnd = a + Double(label.count) * 6.5 + 8
                }
                s += "\n"
            }
        }
        s += "<text x=\"\(num(left + plotW))\" y=\"\(num(height - 4))\" text-anchor=\"end\" fill=\"#757575\" font-size=\"11\">room time (m:ss) · values beyond the axis are drawn at its edge</text>\n"
        s += "</svg>\n"
        return s
    }

    /// The drift line: every sample when they are few, otherwise the min-max envelope per pixel
    /// column (a 3-hour room has ~180,000 samples per follower). Broken where the follower was silent.
    static func drawLine(_ samples: [DriftSample], x: (Int) -> Double, y: (Double) -> Double, plotW: Double) -> String {
        guard !samples.isEmpty else { return "" }
        var d = ""
        var lastNtp = samples[0].ntpMs - 10_000
        if samples.count <= Int(plotW) * 2 {
            for p in samples {
                let cmd = p.ntpMs - lastNtp > 1000 ? "M" : "L"
                d += "\(cmd)\(num(x(p.ntpMs))) \(num(y(p.driftMs))) "
                lastNtp = p.ntpMs
            }
        } else {
            var column = Int.min
            var lo = 0.0, hi = 0.0, colNtp = 0
            func flush() {
                guard column != Int.min else { return }
                d += "L\(num(x(colNtp))) \(num(y(lo))) L\(num(x(colNtp))) \(num(y(hi))) "
            }
            for p in samples {
                let c = Int(x(p.ntpMs))
                if p.ntpMs - lastNtp > 1000 {
                    flush()
                    column = c
                    lo = p.driftMs; hi = p.driftMs; colNtp = p.ntpMs
                    d += "M\(num(x(p.ntpMs))) \(num(y(p.driftMs))) "
                } else if c != column {
                    flush()
                    column = c
                    lo = p.driftMs; hi = p.driftMs; colNtp = p.ntpMs
                } else {
                    lo = min(lo, p.driftMs)
                    hi = max(hi, p.driftMs)
                }
                lastNtp = p.ntpMs
            }
            flush()
        }
        return "<path d=\"\(d)\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.2\" stroke-linejoin=\"round\"/>\n"
    }
}
