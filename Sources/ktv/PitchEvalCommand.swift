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

    @Option(help: MelodyMetricsConfiguration.Spec.toleranceCents.optionHelp)
    var cents = MelodyMetricsConfiguration.Spec.toleranceCents.defaultValue

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    func validate() throws {
        do { _ = try MelodyMetricsConfiguration(toleranceCents: cents).validated() } catch {
            throw error.parameterError.map { usageError($0, flags: ["toleranceCents": "--cents"]) } ?? ValidationError("\(error)")
        }
        if reference == "-", estimate == "-" {
            throw ValidationError("only one of REFERENCE and ESTIMATE can be standard input (-)")
        }
    }

    func run() throws {
        let ref = try readTrack(reference)
        let est = try readTrack(estimate)
        let evaluation: MelodyEvaluation
        do {
            evaluation = try MelodyEvaluation.evaluate(reference: ref, estimate: est, referenceName: displayName(reference),
                                                       estimateName: displayName(estimate),
                                                       configuration: MelodyMetricsConfiguration(toleranceCents: cents))
        } catch {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
        switch format {
        case .json: try writeStandardOutput(evaluation.json.serialized())
        case .text: try writeStandardOutput(evaluation.text)
        }
    }

    /// Reads and parses one track: unreadable → 74, not a pitch track → 65, messages name the file.
    private func readTrack(_ path: String) throws -> PitchContour {
        let bytes = try readInput(path)
        do {
            return try PitchTrackFile.parse(bytes, path: displayName(path))
        } catch {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
    }
}
