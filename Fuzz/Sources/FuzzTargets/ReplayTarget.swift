import KTVCore
import KTVLyrics
import KTVSync

/// `fuzz-replay`: the progress-log reader on the bytes (in memory, as one file), the replay
/// analysis with each rule set, with and without a lyric for the audience measures, and every
/// report form (text, JSON, CSV, SVG); then the simulator-scenario reader on the same bytes.
/// A thrown `SyncError` is the clean failure.
public enum ReplayTarget {
    /// Three short lines with words, for the audience analysis.
    static let lyrics: Lyrics = {
        var lines: [LyricLine] = []
        for k in 0..<3 {
            let start = 1_000 + k * 2_500
            let words = (0..<3).map { w in LyricWord(startMs: start + w * 600, durationMs: 500, text: "w\(w) ") }
            lines.append(LyricLine(startMs: start, durationMs: 2_000, text: "line \(k)", words: words))
        }
        return Lyrics(format: .json, lines: lines)
    }()

    public static func run(_ bytes: [UInt8]) {
        if let log = try? LogReader.read(bytes: bytes, name: "fuzz.jsonl") {
            for (k, rules) in ReplayConfiguration.Rules.allCases.enumerated() {
                var config = ReplayConfiguration()
                config.rules = rules
                config.twoSided = k % 2 == 1
                if rules == .auto { config.lyrics = lyrics }
                let report = Replay.analyze(log, configuration: config)
                _ = ReplayOutput.text(report)
                _ = ReplayOutput.json(report).serialized()
                _ = ReplayOutput.csv(report)
                _ = DriftSVG.render(report)
            }
        }
        if let scenario = try? Scenario.parse(bytes, fileName: "fuzz.json") {
            try? scenario.check(fileName: "fuzz.json")
        }
    }
}
