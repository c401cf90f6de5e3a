import Foundation
import Testing
import KTVCore
@testable import KTVScore

/// Agora's fixtures and golden scores (shared/agora, NOTES.md §2.8), beside the package; nil when absent.
let agoraShared: String? = {
    // #filePath is <package>/Tests/KTVScoreTests/AgoraRulesTests.swift.
    let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let dir = package.deletingLastPathComponent().appendingPathComponent("shared/agora").path
    return FileManager.default.fileExists(atPath: dir + "/golden-scores.json") ? dir : nil
}()

/// One case of golden-scores.json: Android's expected line scores (a prefix; the rest are 0), the
/// total and how many lines were scored.
struct AgoraGoldenCase {
    var reference: String, pitchFile: String
    var linePrefix: [Int]
    var total: Int, scoredLines: Int

    static func all(in dir: String) throws -> [AgoraGoldenCase] {
        guard case let .object(root) = try JSONReader.parse(try FileIO.read(dir + "/golden-scores.json")),
              case let .array(cases)? = root.first(where: { $0.0 == "cases" })?.1 else { return [] }
        return cases.compactMap { value in
            guard case let .object(o) = value else { return nil }
            func member(_ key: String) -> JSONValue? { o.first { $0.0 == key }?.1 }
            guard case let .string(reference)? = member("reference"), case let .string(pitchFile)? = member("pitch_file"),
                  case let .array(prefix)? = member("line_scores_prefix"), case let .int(total)? = member("total"),
                  case let .int(lines)? = member("lines") else { return nil }
            let scores = prefix.compactMap { v -> Int? in if case let .int(i) = v { return i } else { return nil } }
            return AgoraGoldenCase(reference: reference, pitchFile: pitchFile, linePrefix: scores, total: total, scoredLines: lines)
        }
    }
}

/// A take with one value every 50 ms, the first at 50 ms (Agora's harness).
func agoraTake(_ hz: [Double?]) throws -> SungTake {
    try LatencyAligner(latencyMs: 0).align(PitchContour(timesS: hz.indices.map { Double($0 + 1) * 0.05 }, f0Hz: hz))
}

@Suite struct AgoraRulesTests {
    // MARK: - Algorithm.c (NOTES §2.2-2.3)

    @Test func frameScoresMatchAgorasGoldenValuesAtLevel10() {
        // TestScoringMachine.testCalculatedScore / Android testCalculatedScoreForAi: reference 100 Hz.
        let golden: [(Double, Float)] = [(110, 100), (120, 82.12307), (130, 65.494354), (140, 50.098568), (150, 35.765438),
                                         (160, 22.357689), (170, 9.763043), (180, 0), (99, 100), (80, 73.64238), (70, 45.901512),
                                         (60, 13.877029), (59, 10.3853855), (58, 6.834053), (57, 3.2209551), (56, 0)]
        for (voice, expected) in golden {
            #expect(AgoraRules.frameScore(voiceHz: voice, refHz: 100, level: 10, offset: 0) == expected, "\(voice) Hz")
        }
        // testCalculatedScoreForScoreCompensationOffset: 80 Hz against 100 Hz.
        for (offset, expected) in [(0, Float(73.64238)), (10, 85.64239), (50, 100), (100, 100)] {
            #expect(AgoraRules.frameScore(voiceHz: 80, refHz: 100, level: 10, offset: offset) == expected, "offset \(offset)")
        }
        #expect(AgoraRules.frameScore(voiceHz: 0, refHz: 100, level: 10, offset: 0) == 0)
        #expect(AgoraRules.frameScore(voiceHz: 100, refHz: 0, level: 10, offset: 0) == 0)
    }

    @Test func frameScoresAtLevel15FollowTheClosedForm() {
        // S = clamp(100·(1 + L/50)·(1 − L·d/100)) at d semitones: 100/100/100/91/71.5/52/32.5/13.
        for (d, expected) in [(0.0, 100.0), (1, 100), (1.5, 100), (2, 91), (3, 71.5), (4, 52), (5, 32.5), (6, 13)] {
            let s = AgoraRules.frameScore(voiceHz: 220 * pow(2, d / 12), refHz: 220, level: 15, offset: 0)
            #expect(abs(Double(s) - expected) < 0.01, "d = \(d): \(s)")
        }
    }

    @Test func theOctaveFoldMatchesHandlePitchC() {
        // TestScoringMachine.testHandlePitch: (reference, voice) → folded.
        for (ref, voice, expected) in [(200.0, 80.0, 160.0), (400, 80, 320), (400, 200, 400), (400, 500, 500), (400, 600, 300),
                                       (400, 700, 350), (400, 800, 400), (213, 100, 200)] {
            #expect(AgoraRules.octaveFolded(voiceHz: voice, refHz: ref) == expected, "\(ref), \(voice)")
        }
        #expect(AgoraRules.octaveFolded(voiceHz: 0, refHz: 200) == 0)
        // After the fold every voiced frame is within 6 semitones: at level 15 it scores at least 13.
        var voice = 40.0
        while voice < 2000 {
            let folded = AgoraRules.octaveFolded(voiceHz: voice, refHz: 262)
            #expect(AgoraRules.frameScore(voiceHz: folded, refHz: 262, level: 15, offset: 0) >= 13, "\(voice) Hz")
            voice *= 1.037
        }
    }

    @Test func samplesAreJudgedAtTheLastProgressTick() {
        #expect(AgoraRules.progressStamp(songMs: 50, intervalMs: 20) == 40)
        #expect(AgoraRules.progressStamp(songMs: 100, intervalMs: 20) == 100)
        #expect(AgoraRules.progressStamp(songMs: 19.999, intervalMs: 20) == 0)
        #expect(AgoraRules.progressStamp(songMs: -30, intervalMs: 20) == 0)
        // 0.35 s is not exact in binary; its ms must still land on the 340 tick, not below.
        let times = try? AgoraRules.songTimesMs(PitchContour(timesS: [0.35, 0.7, 1.05], f0Hz: [nil, nil, nil]))
        #expect(times == [350, 700, 1050])
    }

    @Test func settingsAreChecked() {
        #expect(throws: ScoreError.self) { try AgoraRulesConfiguration(level: 0).validated() }
        #expect(throws: ScoreError.self) { try AgoraRulesConfiguration(compensationOffset: -10).validated() }
        #expect(throws: ScoreError.self) { try AgoraRulesConfiguration(progressIntervalMs: 0).validated() }
        #expect((try? AgoraRulesConfiguration().validated()) == AgoraRulesConfiguration(level: 15, compensationOffset: 0, progressIntervalMs: 20))
        #expect(AgoraRulesConfiguration.Spec.all.map(\.name) == ["level", "compensationOffset", "progressIntervalMs"])
    }

    // MARK: - Generated references

    @Test func unpitchedTonesScoreZero() throws {
        let melody = ReferenceMelody(notes: [
            MelodyNote(startMs: 1000, durationMs: 1000, cents: ReferenceMelody.cents(hz: 220), word: "a", line: 0),
            MelodyNote(startMs: 2000, durationMs: 1000, cents: nil, word: "b", line: 0),
            MelodyNote(startMs: 4000, durationMs: 1000, cents: ReferenceMelody.cents(hz: 220), word: "c", line: 1),
        ], lines: [MelodyLine(startMs: 1000, endMs: 3000, text: "ab"), MelodyLine(startMs: 4000, endMs: 5000, text: "c")])
        let card = try AgoraRules().judge(try agoraTake(Array(repeating: 220, count: 120)), against: melody)
        #expect(card.lines.map(\.score) == [50, 100])
        #expect(card.lines[0].notes.map(\.score) == [100, 0])
        #expect(card.score == 150)
        #expect(card.maxScore == 200)
        #expect(card.rules == "agora")
    }

    @Test func linesWithoutNotesAreLeftOut() throws {
        // A lyric line with no note (an instrumental break in a non-Migu reference) is not a line to Agora.
        let melody = ReferenceMelody(notes: [
            MelodyNote(startMs: 1000, durationMs: 1000, cents: ReferenceMelody.cents(hz: 220), line: 1),
            MelodyNote(startMs: 4000, durationMs: 1000, cents: ReferenceMelody.cents(hz: 196), line: 3),
        ], lines: (0..<4).map { MelodyLine(startMs: $0 * 1000, endMs: $0 * 1000 + 500, text: "") })
        let card = try AgoraRules().judge(try agoraTake(Array(repeating: 220, count: 120)), against: melody)
        #expect(card.lines.map(\.score) == [0, 100, 0, 91])
        #expect(card.score == 191)
    }

    @Test func aLineNoSampleEndsIsNeverScoredAndSpoilsTheNext() throws {
        // Line 1's last tone (4005-4015 ms) holds no 20 ms tick: line 1 never becomes current, and its
        // samples, still stored, close every tone of line 2 at 0 (Android does the same).
        let hz = ReferenceMelody.cents(hz: 220)
        let melody = ReferenceMelody(notes: [
            MelodyNote(startMs: 1000, durationMs: 1000, cents: hz, line: 0),
            MelodyNote(startMs: 3000, durationMs: 990, cents: hz, line: 1),
            MelodyNote(startMs: 4005, durationMs: 10, cents: hz, line: 1),
            MelodyNote(startMs: 5000, durationMs: 1000, cents: hz, line: 2),
        ], lines: [MelodyLine(startMs: 1000, endMs: 2000, text: ""), MelodyLine(startMs: 3000, endMs: 4015, text: ""),
                   MelodyLine(startMs: 5000, endMs: 6000, text: "")])
        let take = try agoraTake(Array(repeating: 220, count: 140))
        let rules = AgoraRules()
        #expect(try rules.replay(take, against: melody).referenceLineScores == [0: 100, 2: 0])
        #expect(try rules.judge(take, against: melody).lines.map(\.score) == [100, 0, 0])
    }

    @Test func overlappingLinesAreRepairedAsAgoraDoes() throws {
        let notes = [
            MelodyNote(startMs: 1000, durationMs: 1000, cents: 5700, line: 0),
            MelodyNote(startMs: 1500, durationMs: 300, cents: 5700, line: 1),  // inside line 0: [2000, 2000]
            MelodyNote(startMs: 1900, durationMs: 600, cents: 5700, line: 1),  // [2000, 2500]
            MelodyNote(startMs: 2400, durationMs: 200, cents: 5700, line: 1),  // starts after 2000: the repair stops
            MelodyNote(startMs: 2550, durationMs: 450, cents: 5700, line: 2),  // after line 1's last note: [2600, 3000]
        ]
        let repaired = AgoraRules.overlapRepaired(notes)
        #expect(repaired.map(\.startMs) == [1000, 2000, 2000, 2400, 2600])
        #expect(repaired.map(\.endMs) == [2000, 2000, 2500, 2600, 3000])
        // The judge repairs what it is given, and reports the notes it judged.
        let melody = ReferenceMelody(notes: notes, lines: (0..<3).map { _ in MelodyLine(startMs: 0, endMs: 0, text: "") })
        let card = try AgoraRules().judge(try agoraTake(Array(repeating: 220, count: 80)), against: melody)
        #expect(card.lines.flatMap(\.notes).map(\.note.startMs) == [1000, 2000, 2000, 2400, 2600])
    }

    @Test func miguXMLKeepsItsTonesAndRepairsOnlyAtSentences() throws {
        func tone(_ b: String, _ e: String, _ p: Int, _ w: String) -> String {
            "<tone begin=\"\(b)\" end=\"\(e)\" pitch=\"\(p)\" pronounce=\"\" lang=\"1\"><word>\(w)</word></tone>"
        }
        let xml = """
        <?xml version='1.0' encoding='utf-8'?>
        <song><general><name>t</name><singer>s</singer><type>1</type></general><midi_lrc><paragraph>
        <sentence>\(tone("1.000", "2.000", 220, "a"))\(tone("2.000", "2.200", 0, "b"))</sentence>
        <sentence>\(tone("1.900", "2.500", 247, "c"))\(tone("2.400", "2.600", 262, "d"))</sentence>
        </paragraph></midi_lrc></song>
        """
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("agora-overlap-\(UUID().uuidString).xml").path
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let melody = try ReferenceReader.read(path: path)
        // The pitch-0 tone is kept (unpitched); line 1 starts at line 0's end; its second tone still
        // overlaps its first, in file order, as in Agora.
        #expect(melody.notes.map(\.word) == ["a", "b", "c", "d"])
        #expect(melody.notes.map { $0.cents == nil } == [false, true, false, false])
        #expect(melody.notes.map(\.startMs) == [1000, 2000, 2200, 2400])
        #expect(melody.notes.map(\.endMs) == [2000, 2200, 2500, 2600])
        #expect(melody.notes.map { AgoraRules.toneHz(cents: $0.cents) } == [220, 0, 247, 262])
    }

    // MARK: - Agora's golden harness (NOTES §2.8-2.9)

    @Test(.enabled(if: agoraShared != nil, "needs ../shared/agora (Agora's fixtures)"), arguments: ["bad1", "good1", "good2", "good3", "good4"])
    func goldenScoresOn660250(take name: String) throws {
        let dir = try #require(agoraShared)
        let golden = try #require(try AgoraGoldenCase.all(in: dir).first { $0.pitchFile.hasSuffix("qilixiang_\(name)_50ms_pitch.txt") })
        let reference = try ReferenceReader.read(path: "\(dir)/\(golden.reference)")
        let take = try LatencyAligner(latencyMs: 0).align(try TakeReader.read(path: "\(dir)/\(golden.pitchFile)", pitchIntervalMs: 50))
        let rules = AgoraRules(progressIntervalMs: 20)
        let card = try rules.judge(take, against: reference)
        let expected = golden.linePrefix + Array(repeating: 0, count: max(0, reference.lines.count - golden.linePrefix.count))
        #expect(card.lines.map { $0.score.map { Int($0) } } == expected.map { Optional($0) })
        #expect(card.score == Double(golden.total))
        #expect(card.maxScore == 100 * Double(reference.lines.count))
        #expect(try rules.replay(take, against: reference).lineScores.count == golden.scoredLines)
    }

    @Test(.enabled(if: agoraShared != nil, "needs ../shared/agora (Agora's fixtures)"))
    func aConstantDroneScoresHighOn660250() throws {
        let dir = try #require(agoraShared)
        let reference = try ReferenceReader.read(path: "\(dir)/LrcView-iOS/Tests/Resource/660250.xml")
        let count = (reference.notes.map(\.endMs).max() ?? 0) / 50
        let card = try AgoraRules().judge(try agoraTake(Array(repeating: 150, count: count)), against: reference)
        let mean = card.score / Double(card.lines.count)
        #expect(abs(mean - 78.6) <= 0.1, "mean line score \(mean)")
    }
}

@Suite struct TakeReaderTests {
    @Test func oneValuePerLineIsReportedAtTheEndOfItsInterval() throws {
        let contour = try TakeReader.parse(Array("0.000\r\n220.5\r\n 0 \r\n196\r\n\r\n".utf8), path: "t.txt", pitchIntervalMs: 50)
        #expect(contour.timesS == [0.05, 0.1, 0.15, 0.2])
        #expect(contour.f0Hz == [nil, 220.5, nil, 196])
    }

    @Test func badValuesNameTheirLine() {
        let cases: [(String, Int?)] = [("220\nabc\n", 2), ("220\n-5\n", 2), ("220\n\n196\n", 2), ("220\nnan\n", 2), ("220\n0x10\n", 2),
                                       ("", nil), ("0\n0.0\n", nil)]
        for (text, line) in cases {
            do {
                _ = try TakeReader.parse(Array(text.utf8), path: "t.txt", pitchIntervalMs: 50)
                Issue.record("\(quoted(text)) was read")
            } catch {
                if case let .badTake(path, l, _) = error {
                    #expect(path == "t.txt")
                    #expect(l == line, "\(quoted(text))")
                } else {
                    Issue.record("unexpected \(error)")
                }
            }
        }
        #expect(throws: ScoreError.self) { try TakeReader.parse(Array("220\n".utf8), path: "t.txt", pitchIntervalMs: 0) }
    }

    @Test func pitchTracksAreReadByPitchTrackFile() throws {
        let contour = try TakeReader.parse(Array("time_s,f0_hz,confidence\n0.01,0,0.1\n0.02,220,0.9\n".utf8), path: "t.csv")
        #expect(contour.timesS == [0.01, 0.02])
        #expect(contour.f0Hz == [nil, 220])
        do {
            _ = try TakeReader.parse(Array("220\n196\n".utf8), path: "t.txt")
            Issue.record("a single column without an interval was read")
        } catch {
            #expect(error.description.contains("pitchIntervalMs"))
        }
        #expect(throws: ScoreError.self) { try TakeReader.parse(Array("0.01 0\n0.02 0\n".utf8), path: "t.txt") }
    }
}
