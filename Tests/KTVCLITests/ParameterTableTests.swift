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

/// The parameter tables in docs/ are rendered from the libraries' declarations (`Spec.all`), so a
/// setting is declared once. Run with KTV_UPDATE_DOCS=1 to rewrite the tables after changing a spec.
@Suite struct ParameterTableTests {
    static let tables: [(marker: String, parameters: [ParameterInfo])] = [
        ("lyrics", LyricsParseOptions.Spec.all + LyricsWriteOptions.Spec.all),
        ("split", SplitConfiguration.Spec.all),
        ("pitch", PitchConfiguration.Spec.all + AudioReader.Spec.all),
        ("canceller", CancellerConfiguration.Spec.all),
        ("alignment", AlignmentConfiguration.Spec.all),
        ("lyrics-sync", LyricSyncConfiguration.Spec.all + WordTimingConfiguration.Spec.all),
        ("melody-metrics", MelodyMetricsConfiguration.Spec.all),
        ("replay", ReplayConfiguration.Spec.all),
        ("score-ktv", KTVRulesConfiguration.Spec.all),
        ("score-dimensions", DimensionWeights.Spec.all + VibratoMeasure.Spec.all + VoiceQualityMeasure.Spec.all + DynamicsMeasure.Spec.all),
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

    /// Each table lives in one page of docs/ (the command's reference), between its markers.
    @Test func docsTablesMatchTheDeclarations() throws {
        let folder = KTVBinary.packageRoot.appendingPathComponent("docs")
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".md") }.sorted()
        var texts = try Dictionary(uniqueKeysWithValues: pages.map { ($0, try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)) })
        var changed: Set<String> = []
        for (marker, parameters) in Self.tables {
            let open = "<!-- parameters: \(marker) -->\n", close = "<!-- /parameters -->"
            let table = ParameterInfo.markdownTable(parameters) + "\n"
            let holders = pages.filter { texts[$0]?.contains(open) == true }
            guard holders.count == 1, let page = holders.first, var text = texts[page] else {
                Issue.record("\(holders.count) pages of docs/ have a `\(open.trimmingCharacters(in: .newlines))` … `\(close)` block (\(holders)); one must, with:\n\(table)")
                continue
            }
            guard let start = text.range(of: open), let end = text.range(of: close, range: start.upperBound..<text.endIndex) else { continue }
            if String(text[start.upperBound..<end.lowerBound]) != table {
                if ProcessInfo.processInfo.environment["KTV_UPDATE_DOCS"] == "1" {
                    text.replaceSubrange(start.upperBound..<end.lowerBound, with: table)
                    texts[page] = text
                    changed.insert(page)
                } else {
                    Issue.record("docs/\(page)'s `\(marker)` parameter table is out of date; run the tests with KTV_UPDATE_DOCS=1, or paste:\n\(table)")
                }
            }
        }
        for page in changed { try texts[page]?.write(to: folder.appendingPathComponent(page), atomically: true, encoding: .utf8) }
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
