import KTVCore

/// Maps a take's clock to the song's: the stage between tracking and judging, replaceable (a
/// progress log, or free timing, maps time differently). One aligner serves any number of takes.
public protocol TakeAligner: Sendable {
    /// The take on the song's clock. `take` has the recording's own times (seconds from its start).
    func align(_ take: PitchContour) throws(ScoreError) -> SungTake
}

/// A take that started with the song and lags it by a fixed latency (the recording path's delay):
/// song time = take time − latency.
public struct LatencyAligner: TakeAligner {
    public var latencyMs: Double

    public init(latencyMs: Double) { self.latencyMs = latencyMs }

    public func align(_ take: PitchContour) throws(ScoreError) -> SungTake {
        let shiftS = latencyMs / 1000
        var song = take
        song.timesS = take.timesS.map { $0 - shiftS }
        let first = song.timesS.first ?? 0, last = song.timesS.last ?? 0
        var sung = SungTake(contour: song, coveredMs: Int((first * 1000).rounded(.down))...Int((last * 1000).rounded(.up)),
                            latencyMs: latencyMs)
        sung.recordingTimesS = take.timesS
        return sung
    }
}
