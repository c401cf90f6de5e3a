import Foundation
import KTVCore

/// `split.json`: what `DualMonoSplitter.split` found and wrote, for machines.
public enum SplitReport {
    /// The report of one split. Paths are null for outputs not written (a track that was not split).
    public static func json(_ result: SplitResult, input: String, outputs: SplitOutputs, reportPath: String) -> JSONValue {
        let a = result.analysis
        let written = a.dualMono
        func path(_ p: String?) -> JSONValue { written ? p.map(JSONValue.string) ?? .null : .null }
        func rounded(_ v: Double, _ scale: Double) -> JSONValue { .double((v * scale).rounded() / scale) }
        return .object([
            ("input", .string(input)),
            ("dual_mono", .bool(a.dualMono)),
            ("original_channel", a.originalChannel.map { .string(channelName($0)) } ?? .null),
            ("confidence", rounded(a.confidence, 1000)),
            ("lag_samples", .int(a.lagSamples)),
            ("gain", rounded(written ? result.gainMedian : a.gain, 10000)),
            ("vocal_energy_share", written ? rounded(result.vocalEnergyShare, 10000) : .null),
            ("vocal_activity_share", written ? rounded(result.vocalActivityShare, 10000) : .null),
            ("correlation", rounded(a.correlation, 1000)),
            ("reason", .string(a.reason)),
            ("original", path(outputs.original)),
            ("accompaniment", path(outputs.accompaniment)),
            ("vocals", path(outputs.vocals)),
            ("report", .string(reportPath)),
            ("truncated_at_s", result.truncation.map { rounded($0.decodedS, 1000) } ?? .null),
        ])
    }

    /// What a person reads: the decision, the numbers, the files written.
    public static func text(_ result: SplitResult, outputs: SplitOutputs, reportPath: String) -> String {
        let a = result.analysis
        var lines: [String] = []
        if a.dualMono {
            lines.append("dual-mono KTV track: original = \(a.originalChannel.map(channelName) ?? "?"), confidence \(String(format: "%.2f", a.confidence))")
            lines.append("  \(a.reason)")
            lines.append("  accompaniment lag \(a.lagSamples) samples, gain \(String(format: "%.4f", result.gainMedian))")
            lines.append("  vocal energy share \(String(format: "%.3f", result.vocalEnergyShare)), vocal activity \(String(format: "%.1f", result.vocalActivityShare * 100))% of the time")
            let written = [outputs.original, outputs.accompaniment, outputs.vocals].compactMap { $0 } + [reportPath]
            lines.append("  wrote \(written.joined(separator: ", "))")
        } else {
            lines.append("not split: \(a.reason) (confidence \(String(format: "%.2f", a.confidence)))")
            lines.append("  wrote \(reportPath)")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// `left`, `right`, `channel 3` for a 0-based channel.
    public static func channelName(_ c: Int) -> String {
        switch c {
        case 0: return "left"
        case 1: return "right"
        default: return "channel \(c + 1)"
        }
    }
}
