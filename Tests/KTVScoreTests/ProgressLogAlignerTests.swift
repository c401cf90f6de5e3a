import Foundation
import Testing
import KTVCore
import KTVSync
@testable import KTVScore

@Suite struct ProgressLogAlignerTests {
    /// Device "B": records from at=1000; plays from song 0 at at=1000; pauses 3000-4000 (song 2000);
    /// seeks forward to song 8000 at at=6000; seeks back to song 5000 at at=9000; callbacks every 50 ms.
    func log() throws -> ReplayLog {
        var lines: [String] = []
        func event(_ at: Int, _ body: String) { lines.append("{\"device\":\"B\",\"at\":\(at),\"ntp\":\(1_700_000_000_000 + at),\(body)}") }
        event(1000, "\"kind\":\"record\",\"action\":\"start\"")
        var position = 0
        for at in stride(from: 1000, to: 12_000, by: 50) {
            if at == 6000 { event(at, "\"kind\":\"seek\",\"to\":8000"); position = 8000 }
            if at == 9000 { event(at, "\"kind\":\"seek\",\"to\":5000"); position = 5000 }
            let paused = at >= 3000 && at < 4000
            event(at, "\"kind\":\"progress\",\"position\":\(position),\"state\":\"\(paused ? "paused" : "playing")\"")
            if !paused { position += 50 }
        }
        return try LogReader.read(bytes: Array(lines.joined(separator: "\n").utf8), name: "room.jsonl")
    }

    @Test func pausesAndSeeksPlaceTheTakeOnTheSong() throws {
        let aligner = try ProgressLogAligner(log: try log(), device: "B", latencyMs: 100, logName: "room.jsonl")
        // Take time τ is sung at device time 1000 + τ − 100.
        let take = PitchContour(timesS: stride(from: 0.0, to: 11.0, by: 0.01).map { $0 }, f0Hz: Array(repeating: 220, count: 1100))
        let sung = try aligner.align(take)
        func song(_ takeS: Double) -> Double? {
            sung.contour.timesS.first { abs($0 - (takeS - 0.1)) < 1e-9 }  // only for the first stretch
        }
        #expect(song(0.6) == 0.5)  // device 1500 → song 500
        // Paused from device 3000 to 4000: nothing sung is placed there; song 2000 carries on after.
        let spans = sung.spansMs
        #expect(spans == [0...3990, 5000...7890], "\(spans)")
        #expect(sung.covers(0, 1900))
        // The forward seek at device 6000 (song 4000 → 8000) leaves 4000-5000 unsung until the seek back.
        #expect(sung.covers(4100, 4900) == false)
        // The seek back at device 9000 (song 11000 → 5000): the second pass from 5000 replaces the
        // first, up to the take's end (device 11900, song 7900).
        #expect(sung.covers(5000, 7800))
        let times = sung.contour.timesS
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        #expect(abs((times.last ?? 0) - 7.89) < 1e-9)
    }

    @Test func aMissingDeviceOrRecordIsAClearError() throws {
        #expect(throws: ScoreError.badTake(path: "room.jsonl", line: nil, detail: "no device `C` in the log (it has: B); pick one with --device")) {
            _ = try ProgressLogAligner(log: try log(), device: "C", logName: "room.jsonl")
        }
        let noRecord = try LogReader.read(bytes: Array("{\"device\":\"B\",\"at\":1,\"ntp\":5,\"kind\":\"progress\",\"position\":0,\"state\":\"playing\"}".utf8))
        #expect(throws: ScoreError.self) { _ = try ProgressLogAligner(log: noRecord, device: "B", logName: "x") }
    }
}
