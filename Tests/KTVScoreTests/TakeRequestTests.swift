import Foundation
import KTVCore
@testable import KTVScore
import Testing

/// A take's settings as a command line or a manifest row writes them, read once for both.
@Suite struct TakeRequestTests {
    @Test func aLatencyIsMillisecondsOrAuto() {
        #expect(LatencySetting(parsing: "120") == .ms(120) && LatencySetting(parsing: "-35.5")?.ms == -35.5)
        #expect(LatencySetting(parsing: "AUTO") == .auto && LatencySetting(parsing: "auto")?.estimates == true && LatencySetting(parsing: "auto")?.ms == nil)
        for bad in ["", "soon", "nan", "inf", "1e999", "12ms"] { #expect(LatencySetting(parsing: bad) == nil, "\(bad)") }
    }

    @Test func theRuleOptionsAreReadFromTheirNames() throws {
        let o = try ScoringRuleSet.Options(keyShift: "-300", wholeSong: true, agora: AgoraRulesConfiguration(), difficulty: "hard")
        #expect(o.keyShift == .cents(-300) && o.wholeSong && o.ultrastar.difficulty == .hard)
        #expect(try ScoringRuleSet.Options(keyShift: "none", wholeSong: false, agora: AgoraRulesConfiguration(), difficulty: "easy").keyShift == KeyShift.none)
        #expect(throws: ParameterError.self) { try ScoringRuleSet.Options(keyShift: "sideways", wholeSong: false, agora: AgoraRulesConfiguration(), difficulty: "easy") }
        do {
            _ = try ScoringRuleSet.Options(keyShift: "auto", wholeSong: false, agora: AgoraRulesConfiguration(), difficulty: "impossible")
            Issue.record("an unknown difficulty was read")
        } catch { #expect(error.name == "difficulty" && error.allowed == "easy, medium or hard") }
    }

    @Test func anAccompanimentGoesOnlyWithAnAudioTake() throws {
        let dir = NSTemporaryDirectory() + "ktv-take-request-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let track = dir + "/take.csv", wav = dir + "/take.wav"
        try "time,f0\n0.00,220\n0.01,221\n".write(toFile: track, atomically: true, encoding: .utf8)
        try Data("RIFF\u{24}\0\0\0WAVEfmt ".utf8).write(to: URL(fileURLWithPath: wav))
        #expect(TakeRequest.accompanimentRefusal(takePath: track, name: "take.csv")
                == "goes with an audio take, and take.csv is a pitch track: it has no accompaniment bleed to cancel")
        #expect(TakeRequest.accompanimentRefusal(takePath: wav, name: "take.wav") == nil)
        // A take that cannot be read yet is left to the reader to name.
        #expect(TakeRequest.accompanimentRefusal(takePath: dir + "/none.csv", name: "none.csv") == nil)
    }
}
