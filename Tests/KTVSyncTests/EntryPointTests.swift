import Foundation
import Testing
import KTVCore
@testable import KTVSync

/// The library entries the CLI calls once: `Replay.run` (logs and lyric file by path) and
/// `RoomSimulator.run(scenario:seed:)` (a built-in name or a scenario file).
@Suite struct EntryPointTests {
    func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-sync-entry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func simulateByNameOrPath() throws {
        var s = Scenario.builtIn("demo")!
        s.seed = 3
        let byName = try RoomSimulator.run(scenario: "demo", seed: 3)
        #expect(byName.log == (try RoomSimulator.run(s)).log)
        #expect(byName.scenario.seed == 3 && byName.scenario.name == "demo")
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("room.json").path
        try Data(#"{"base": "demo", "name": "mine", "room_ms": 5000}"#.utf8).write(to: URL(fileURLWithPath: file))
        let byPath = try RoomSimulator.run(scenario: file)
        #expect(byPath.scenario.name == "mine" && byPath.scenario.roomMs == 5_000 && byPath.scenario.seed == 11)
        #expect(throws: SyncError.unknownScenario("nope")) { try RoomSimulator.run(scenario: "nope") }
        #expect(SyncError.unknownScenario("nope").description.hasPrefix("no scenario `nope`: use one of zego, zego-faults"))
        #expect(throws: SyncError.cannotRead(path: dir.path, reason: "is a folder, not a file")) { try RoomSimulator.run(scenario: dir.path) }
    }

    @Test func replayReadsTheLyricFileForTheAudience() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var s = Scenario.builtIn("zego")!
        s.roomMs = 20_000
        let log = dir.appendingPathComponent("room.jsonl").path
        try Data(try RoomSimulator.run(s).log).write(to: URL(fileURLWithPath: log))
        let lrc = dir.appendingPathComponent("song.lrc").path
        try Data("[00:01.00]a\n[00:05.00]b\n[00:09.00]c\n".utf8).write(to: URL(fileURLWithPath: lrc))
        let r = try Replay.run(paths: [log], lyricsPath: lrc, configuration: ReplayConfiguration())
        #expect(r.audience.first?.wrongLineShare != nil)
        #expect(try Replay.run(paths: [log], configuration: ReplayConfiguration()).audience.first?.wrongLineShare == nil)

        let empty = dir.appendingPathComponent("empty.lrc").path
        try Data("[ti:nothing]\n".utf8).write(to: URL(fileURLWithPath: empty))
        let noLines = SyncError.badLyrics(path: empty, detail: "the lyric file has no timed lines to compare the audience with")
        #expect(throws: noLines) { try Replay.run(paths: [log], lyricsPath: empty, configuration: ReplayConfiguration()) }
        #expect(noLines.isDataError)
        #expect(throws: SyncError.cannotRead(path: dir.path + "/none.lrc", reason: "no such file")) {
            try Replay.run(paths: [log], lyricsPath: dir.path + "/none.lrc", configuration: ReplayConfiguration())
        }
        // The settings are checked before any file is read.
        var bad = ReplayConfiguration()
        bad.toleranceMs = -1
        #expect(throws: SyncError.invalidParameter(ParameterError(name: "toleranceMs", value: "-1", allowed: "0…10000 ms"))) {
            try Replay.run(paths: [dir.path + "/none.jsonl"], lyricsPath: dir.path + "/none.lrc", configuration: bad)
        }
    }
}
