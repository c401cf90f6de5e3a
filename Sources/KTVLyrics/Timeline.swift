import KTVCore

/// Steps every text parser ends with: apply `[offset:]` once, then put lines in time order.
enum Timeline {
    static func finish(_ lyrics: inout Lyrics, options: LyricsParseOptions, reportOrder: Bool,
                       offsetLine: Int? = nil, into diags: inout [Diagnostic]) {
        applyOffset(&lyrics, options: options, tagLine: offsetLine, into: &diags)
        sortLines(&lyrics.lines, report: reportOrder, into: &diags)
    }

    static func applyOffset(_ lyrics: inout Lyrics, options: LyricsParseOptions, tagLine: Int?,
                            into diags: inout [Diagnostic]) {
        guard let raw = lyrics.tag("offset") else { return }
        guard let offset = LyricTags.parseOffset(raw) else {
            diags.append(.warning("invalid-offset", line: tagLine,
                                  "`[offset:\(raw)]` is not a whole number of milliseconds such as `[offset:-500]`; it was ignored"))
            return
        }
        guard offset != 0 else { return }
        let shift = options.offsetSign == .subtract ? -offset : offset
        lyrics.appliedShiftMs = shift
        var clipped = 0
        var firstClipped: Int?
        var lines = lyrics.lines
        for k in lines.indices {
            // One decode and one encode of the packed line.
            var line = lines[k].fields
            var hit = shiftSpan(&line.startMs, &line.durationMs, by: shift)
            for w in line.words.indices {
                var word = line.words[w]
                if shiftSpan(&word.startMs, &word.durationMs, by: shift) { hit = true; clipped += 1 }
                line.words[w] = word
            }
            if hit {
                clipped += 1
                firstClipped = firstClipped ?? line.sourceLine
            }
            lines[k].fields = line
        }
        lyrics.lines = lines
        if clipped > 0 {
            diags.append(.warning("negative-time", line: firstClipped,
                                  "applying `[offset:\(raw)]` (\(options.offsetSign.rawValue)) moves \(clipped) line or word start(s) before 0 ms; they were clipped to 0. Check the offset's sign (--offset-sign)"))
        }
    }

    /// Shifts a span, clipping at 0; returns true when it was clipped.
    private static func shiftSpan(_ start: inout Int, _ duration: inout Int, by shift: Int) -> Bool {
        let s = start + shift
        if s >= 0 { start = s; return false }
        duration = max(0, duration + s)
        start = 0
        return true
    }

    /// Stable sort by start; warns once, at the first row that starts before the row above it.
    static func sortLines(_ lines: inout [LyricLine], report: Bool, into diags: inout [Diagnostic]) {
        var sorted = true
        for k in lines.indices.dropFirst() where lines[k].startMs < lines[k - 1].startMs {
            if report {
                diags.append(.warning("lines-out-of-order", line: lines[k].sourceLine,
                                      "this line starts at \(TimeText.ms(lines[k].startMs)), before the line above it (\(TimeText.ms(lines[k - 1].startMs))); lines were sorted by start time"))
            }
            sorted = false
            break
        }
        if !sorted {
            lines = lines.enumerated().sorted { a, b in
                a.element.startMs != b.element.startMs ? a.element.startMs < b.element.startMs : a.offset < b.offset
            }.map(\.element)
        }
    }
}

/// Human-readable times for messages: `1:02.345 (62345 ms)`.
public enum TimeText {
    public static func ms(_ v: Int) -> String {
        let sign = v < 0 ? "-" : ""
        let a = abs(v)
        let m = a / 60000, s = (a / 1000) % 60, r = a % 1000
        return "\(sign)\(m):\(pad(s, 2)).\(pad(r, 3)) (\(v) ms)"
    }

    /// `v` left-padded with zeros to `width` digits.
    public static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
