import KTVCore
import KTVSync

/// Maps a take onto the song through one device's progress log (docs/progress-log.md): sample 0 of
/// the take is at the device's `record` start; each moment of the take is placed at the song
/// position the device's player reported then (the last `progress` callback, moved on by the time
/// since while playing; a `seek` sets the position at once). While the player is paused or stopped
/// the singer is not singing against the song and those samples are dropped. After a seek back, the
/// new pass replaces what was sung before over the same stretch, as karaoke apps rescore it.
public struct ProgressLogAligner: TakeAligner {
    /// The device's events in its own clock order.
    let events: [LogEvent]
    let recordStartMs: Int
    /// For messages.
    let logName: String, device: String
    /// The recording path's delay: sound sung at device time t is at t + latency in the take.
    public var latencyMs: Double

    /// Picks `device` from `log`. Throws when the device is absent or never started recording.
    public init(log: ReplayLog, device: String, latencyMs: Double = 0, logName: String) throws(ScoreError) {
        guard let d = log.devices.first(where: { $0.name == device }) else {
            let names = log.devices.map(\.name).joined(separator: ", ")
            throw .badTake(path: logName, line: nil, detail: "no device \(quoted(device)) in the log (it has: \(names.isEmpty ? "none" : names)); pick one with --device")
        }
        guard let start = d.events.first(where: { if case .record(true) = $0.body { return true } else { return false } }) else {
            throw .badTake(path: logName, line: nil, detail: "device \(quoted(device)) has no `record` start event, so the take cannot be placed in the song")
        }
        events = d.events
        recordStartMs = start.atMs
        self.logName = logName
        self.device = device
        self.latencyMs = latencyMs
    }

    /// The song position (ms) at device time `atMs`, or nil when the player was not playing.
    func position(at atMs: Double, from index: inout Int) -> Double? {
        while index + 1 < events.count, Double(events[index + 1].atMs) <= atMs { index += 1 }
        // The last event that fixes the position: a progress callback or a seek.
        var k = index
        while k >= 0 {
            let e = events[k]
            if Double(e.atMs) > atMs { k -= 1; continue }
            switch e.body {
            case let .progress(p, state, _):
                return state == .playing ? Double(p) + (atMs - Double(e.atMs)) : nil
            case let .seek(to):
                return Double(to)
            case .command(.pause), .command(.stop):
                return nil
            default:
                k -= 1
            }
        }
        return nil
    }

    public func align(_ take: PitchContour) throws(ScoreError) -> SungTake {
        var times: [Double] = [], hz: [Double?] = [], recorded: [Double] = []
        var spans: [ClosedRange<Int>] = []
        var index = 0
        let stepMs = take.count > 1 ? (take.timesS[take.count - 1] - take.timesS[0]) * 1000 / Double(take.count - 1) : 10
        for k in take.timesS.indices {
            let atMs = Double(recordStartMs) + take.timesS[k] * 1000 - latencyMs
            // A position moved on past the song's end (a log with a gap of days) is no moment of the song.
            guard let songMs = position(at: atMs, from: &index), songMs <= Double(SongBounds.maxTimeMs) else { continue }
            if let last = times.last {
                if songMs * 0.001 < last - 0.05 {
                    // A seek back: the new pass replaces the old one from here on.
                    let keep = times.firstIndex { $0 >= songMs * 0.001 } ?? times.count
                    times.removeSubrange(keep...)
                    hz.removeSubrange(keep...)
                    recorded.removeSubrange(keep...)
                    spans = spans.compactMap { $0.lowerBound < Int(songMs) ? $0.lowerBound...min($0.upperBound, Int(songMs)) : nil }
                } else if songMs * 0.001 <= last {
                    // A callback that reports a position a little behind the one before (jitter, not
                    // a seek): that moment of the song is sung already, and the song's clock only goes on.
                    continue
                }
            }
            // A jump forward (a seek, or a pause) starts a new stretch.
            let ms = Int(songMs.rounded())
            if let open = spans.last, Double(ms - open.upperBound) <= 2 * stepMs + 1, ms >= open.upperBound {
                spans[spans.count - 1] = open.lowerBound...ms
            } else {
                spans.append(ms...ms)
            }
            times.append(songMs / 1000)
            hz.append(take.f0Hz[k])
            recorded.append(take.timesS[k])
        }
        guard let first = times.first, let last = times.last else {
            throw .badTake(path: logName, line: nil, detail: "no moment of the take falls while \(quoted(device))'s player was playing")
        }
        var sung = SungTake(contour: PitchContour(timesS: times, f0Hz: hz),
                            coveredMs: Int((first * 1000).rounded(.down))...Int((last * 1000).rounded(.up)), spansMs: spans, latencyMs: latencyMs)
        sung.recordingTimesS = recorded
        return sung
    }
}
