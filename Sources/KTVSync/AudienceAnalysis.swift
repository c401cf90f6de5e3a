import KTVCore
import KTVLyrics

/// What the audience sees: how far the progress they are sent lags the lead, and, with lyrics,
/// how often that shows a line (or word) other than the one the lead is singing.
enum AudienceAnalysis {
    static func analyze(_ devices: [DeviceLog], roles: [RoleTimeline], timelines: [PositionTimeline],
                        leadAt: (Int) -> Int?, configuration c: ReplayConfiguration) -> [AudienceReport] {
        var out: [AudienceReport] = []
        let lineStarts = c.lyrics.map { $0.lines.map(\.startMs).sorted() }
        let wordStarts = c.lyrics.map { $0.lines.flatMap { $0.words.map(\.startMs) }.sorted() }
        for (d, dev) in devices.enumerated() where dev.hasNTP {
            // (local NTP of the recv, position carried)
            var received: [(ntp: Int, pos: Int)] = []
            var lags: [Double] = []
            for e in dev.events {
                guard case let .recv(_, _, m) = e.body, roles[d].role(at: e.ntpMs) == .audience else { continue }
                let carried: Int
                switch m {
                case let .progress(rp):
                    guard rp.state == nil || rp.state == .playing else { continue }
                    carried = rp.positionMs
                case let .display(p): carried = p
                default: continue
                }
                received.append((e.ntpMs, carried))
                if let lead = leadAt(e.ntpMs), lead != d, let lp = timelines[lead].position(at: e.ntpMs) {
                    lags.append(lp - Double(carried))
                }
            }
            guard !received.isEmpty else { continue }
            let sorted = lags.sorted()
            var report = AudienceReport(device: dev.name, samples: lags.count, lagMedianMs: Stats.median(sorted),
                                        lagP95Ms: Stats.percentile(sorted, 0.95), wrongLineShare: nil, wrongWordShare: nil)
            if let lineStarts, let wordStarts {
                let shares = wrongShares(received, lineStarts: lineStarts, wordStarts: wordStarts, self: d,
                                         timelines: timelines, leadAt: leadAt, configuration: c)
                report.wrongLineShare = shares.line
                report.wrongWordShare = wordStarts.isEmpty ? nil : shares.word
            }
            out.append(report)
        }
        return out
    }

    /// Index of the last start at or before `pos` (-1 before the first): the line or word shown.
    static func index(_ starts: [Int], _ pos: Int) -> Int {
        starts.partitionPoint { $0 <= pos } - 1
    }

    /// On a fixed grid: the audience shows the last received position moved on by the time since
    /// (as the apps extrapolate), up to the staleness limit; the truth is the lead's position.
    /// The grid is walked message by message, so the work is bounded by the number of messages
    /// whatever their time stamps.
    static func wrongShares(_ received: [(ntp: Int, pos: Int)], lineStarts: [Int], wordStarts: [Int], self d: Int,
                            timelines: [PositionTimeline], leadAt: (Int) -> Int?, configuration c: ReplayConfiguration) -> (line: Double?, word: Double?) {
        guard let first = received.first?.ntp else { return (nil, nil) }
        var total = 0, wrongLine = 0, wrongWord = 0
        let step = c.displayGridMs
        // Grid points are first + j·step; message k covers [its time, next time) up to the staleness limit.
        for k in received.indices {
            let r = received[k]
            let until = min(k + 1 < received.count ? received[k + 1].ntp - 1 : Int.max, r.ntp + c.displayStalenessMs)
            guard until >= r.ntp else { continue }
            // First grid point at or after the message.
            var t = first + ((r.ntp - first + step - 1) / step) * step
            while t <= until {
                if let lead = leadAt(t), lead != d, let lp = timelines[lead].position(at: t) {
                    let shown = r.pos + (t - r.ntp)
                    let truth = Int(lp.rounded())
                    total += 1
                    if index(lineStarts, shown) != index(lineStarts, truth) { wrongLine += 1 }
                    if index(wordStarts, shown) != index(wordStarts, truth) { wrongWord += 1 }
                }
                t += step
            }
        }
        guard total > 0 else { return (nil, nil) }
        return (Double(wrongLine) / Double(total), Double(wrongWord) / Double(total))
    }
}
