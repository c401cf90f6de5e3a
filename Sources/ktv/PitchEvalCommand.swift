import ArgumentParser
import Foundation
import KTVCore
import KTVPitch

/// `ktv pitch eval REFERENCE ESTIMATE`: mir_eval's melody metrics for a pitch track.
struct PitchEvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Score a pitch track against a reference (mir_eval / MIREX melody metrics).",
        discussion: """
        Both files: `time,f0` CSV (header optional), `time f0` text (`#` comments), the CSV `ktv pitch` \
        writes (`time_s,f0_hz,confidence`), or the JSON `ktv pitch --format json` writes. f0 = 0 is \
        unvoiced; a negative f0 is unvoiced with |f0| as a pitch guess. The estimate is resampled onto \
        the reference's times as mir_eval.melody.evaluate does.

        Prints raw pitch and chroma accuracy, voicing recall and false alarm, and overall accuracy at \
        --cents; raw pitch and chroma accuracy at 25 and 10 cents; the share of gross errors (more than \
        20 % off) and the median error in cents.

        Exit codes: 0 ok, 64 usage error, 65 a file that is not a pitch track, 74 a file that cannot be read.
        """)

    @Argument(help: "The reference (ground-truth) track; - reads standard input.")
    var reference: String

    @Argument(help: "The estimated track; - reads standard input.")
    var estimate: String

    @Option(help: "Report: text or json.")
    var format: ReportFormat = .text

    @Option(help: "Pitch tolerance in cents for raw pitch/chroma and overall accuracy (greater than 0, at most 1200).")
    var cents: Double = 50

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    func validate() throws {
        guard cents.isFinite, cents > 0, cents <= 1200 else {
            throw ValidationError("--cents must be greater than 0 and at most 1200, not \(cents)")
        }
        if reference == "-", estimate == "-" {
            throw ValidationError("only one of REFERENCE and ESTIMATE can be standard input (-)")
        }
    }

    func run() throws {
        let ref = try readTrack(reference)
        let est = try readTrack(estimate)
        let config = MelodyMetricsConfiguration(toleranceCents: cents)
        let aligned: AlignedMelody
        let scores: MelodyScores
        do {
            aligned = try MelodyMetrics.align(reference: ref, estimate: est, baseFrequencyHz: config.baseFrequencyHz)
            scores = aligned.scores(try config.validated())
        } catch {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
        let extra: [(cents: Double, rpa: Double, rca: Double)] = [25.0, 10.0].map {
            ($0, aligned.rawPitchAccuracy(toleranceCents: $0), aligned.rawChromaAccuracy(toleranceCents: $0))
        }
        switch format {
        case .json:
            var pairs: [(String, JSONValue)] = [
                ("reference", .string(displayName(reference))),
                ("estimate", .string(displayName(estimate))),
                ("tolerance_cents", .double(cents)),
                ("reference_frames", .int(scores.referenceFrames)),
                ("voiced_reference_frames", .int(scores.voicedReferenceFrames)),
                ("estimate_frames", .int(est.count)),
                ("raw_pitch_accuracy", .double(scores.rawPitchAccuracy)),
                ("raw_chroma_accuracy", .double(scores.rawChromaAccuracy)),
                ("voicing_recall", .double(scores.voicingRecall)),
                ("voicing_false_alarm", .double(scores.voicingFalseAlarm)),
                ("overall_accuracy", .double(scores.overallAccuracy)),
            ]
            for e in extra {
                let suffix = "_\(Self.number(e.cents))c"
                pairs.append(("raw_pitch_accuracy" + suffix, .double(e.rpa)))
                pairs.append(("raw_chroma_accuracy" + suffix, .double(e.rca)))
            }
            pairs += [
                ("pitched_frames", .int(scores.pitchedFrames)),
                ("gross_error_share", scores.grossErrorShare.map(JSONValue.double) ?? .null),
                ("median_abs_cents", scores.medianAbsoluteCents.map(JSONValue.double) ?? .null),
            ]
            try writeStandardOutput(JSONValue.object(pairs).serialized())
        case .text:
            var out = ""
            func print(_ line: String) { out += line + "\n" }
            func row(_ name: String, _ value: Double, _ note: String = "") {
                let padded = name.padding(toLength: 24, withPad: " ", startingAt: 0)
                print("  \(padded)\(String(format: "%.4f", value))\(note.isEmpty ? "" : "  (\(note))")")
            }
            let tol = "\(Self.number(cents)) cents"
            print("reference \(displayName(reference)): \(scores.referenceFrames) frames, \(scores.voicedReferenceFrames) voiced; estimate \(displayName(estimate)): \(est.count) frames")
            row("raw pitch accuracy", scores.rawPitchAccuracy, tol)
            row("raw chroma accuracy", scores.rawChromaAccuracy, tol)
            row("voicing recall", scores.voicingRecall)
            row("voicing false alarm", scores.voicingFalseAlarm)
            row("overall accuracy", scores.overallAccuracy, tol)
            for e in extra {
                row("raw pitch accuracy", e.rpa, "\(Self.number(e.cents)) cents")
                row("raw chroma accuracy", e.rca, "\(Self.number(e.cents)) cents")
            }
            if let g = scores.grossErrorShare, let m = scores.medianAbsoluteCents {
                row("gross errors", g, "more than 20 % off, of \(scores.pitchedFrames) frames with both pitches")
                print("  \("median |error|".padding(toLength: 24, withPad: " ", startingAt: 0))\(String(format: "%.1f", m)) cents")
            } else {
                print("  no frame where both the reference is voiced and the estimate has a pitch")
            }
            try writeStandardOutput(out)
        }
    }

    /// Reads and parses one track: unreadable → 74, not a pitch track → 65, messages name the file.
    private func readTrack(_ path: String) throws -> MelodySeries {
        let bytes = try readInput(path)
        do {
            return try PitchTrackFile.parse(bytes, path: displayName(path))
        } catch {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
    }

    /// 50 → "50", 12.5 → "12.5".
    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v)
    }
}
