import Foundation
import Testing
import KTVAudio
import KTVBatch
import KTVCore
import KTVLyrics
import KTVPitch
import KTVReport
import KTVScore
import KTVSync

/// The README's parameter tables are rendered from the libraries' declarations (`Spec.all`), so a
/// setting is declared once. Run with KTV_UPDATE_README=1 to rewrite the tables after changing a spec.
@Suite struct ParameterTableTests {
    static let tables: [(marker: String, parameters: [ParameterInfo])] = [
        ("lyrics", LyricsParseOptions.Spec.all + LyricsWriteOptions.Spec.all),
        ("split", SplitConfiguration.Spec.all),
        ("pitch", PitchConfiguration.Spec.all),
        ("canceller", CancellerConfiguration.Spec.all),
        ("alignment", AlignmentConfiguration.Spec.all),
        ("melody-metrics", MelodyMetricsConfiguration.Spec.all),
        ("replay", ReplayConfiguration.Spec.all),
        ("score-ktv", KTVRulesConfiguration.Spec.all),
        ("score-agora", AgoraRulesConfiguration.Spec.all),
        ("score-ultrastar", UltraStarRulesConfiguration.Spec.all),
        ("score", ScoreConfiguration.Spec.all + TakeReader.Spec.all + ReferenceOptions.Spec.all),
        ("score-segmenter", ContourSegmenter.Spec.all),
        ("score-free", FreeTimingConfiguration.Spec.all),
        ("score-findings", FindingsConfiguration.Spec.all),
        ("score-latency", LatencyEstimatorConfiguration.Spec.all),
        ("batch", BatchConfiguration.Spec.all),
        ("pages", TakePageConfiguration.Spec.all),
    ]

    @Test func readmeTablesMatchTheDeclarations() throws {
        let url = KTVBinary.packageRoot.appendingPathComponent("README.md")
        var text = try String(contentsOf: url, encoding: .utf8)
        var changed = false
        for (marker, parameters) in Self.tables {
            let open = "<!-- parameters: \(marker) -->\n", close = "<!-- /parameters -->"
            let table = ParameterInfo.markdownTable(parameters) + "\n"
            guard let start = text.range(of: open), let end = text.range(of: close, range: start.upperBound..<text.endIndex) else {
                Issue.record("README.md has no `\(open.trimmingCharacters(in: .newlines))` … `\(close)` block; add one with:\n\(table)")
                continue
            }
            let current = String(text[start.upperBound..<end.lowerBound])
            if current != table {
                if ProcessInfo.processInfo.environment["KTV_UPDATE_README"] == "1" {
                    text.replaceSubrange(start.upperBound..<end.lowerBound, with: table)
                    changed = true
                } else {
                    Issue.record("README.md's `\(marker)` parameter table is out of date; run the tests with KTV_UPDATE_README=1, or paste:\n\(table)")
                }
            }
        }
        if changed { try text.write(to: url, atomically: true, encoding: .utf8) }
    }

    @Test func everyParameterIsDeclaredCompletely() {
        for (marker, parameters) in Self.tables {
            for p in parameters {
                #expect(!p.summary.isEmpty && p.summary.hasSuffix("."), "\(marker).\(p.name)")
                #expect(p.name.first?.isLowercase == true, "\(marker).\(p.name)")
            }
        }
        #expect(SplitConfiguration.Spec.maxLagSamples.help == "Largest lag searched between the two channels. 0…96000 samples, default 4096.")
    }
}
