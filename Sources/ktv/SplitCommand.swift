import ArgumentParser
import Foundation
import KTVAudio
import KTVCore

extension AudioFileFormat: ExpressibleByArgument {}

struct SplitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Split a dual-mono KTV track into original, accompaniment and (with --vocals) a vocal estimate.",
        discussion: """
        Writes original.wav, accompaniment.wav, vocals.wav (with --vocals) and split.json into --out-dir.
        The layout is decided from the signals: the original is the channel that holds the other plus a voice.
        When the channels are unrelated (ordinary stereo, a voice-only channel) nothing is split and the
        command exits 1 with the finding; name the layout with --layout to split anyway.
        """)

    @Argument(help: "The stereo (or multichannel) track: WAV, FLAC, OGG, Opus, MP3, AIFF.")
    var input: String

    @Option(help: "Folder for the outputs (created if missing). Default: <input name>.split beside the current folder.")
    var outDir: String?

    @Option(help: ArgumentHelp(layoutHelp))
    var layout: String = "auto"

    @Flag(help: "Also write vocals.wav: the original minus the aligned, gain-matched accompaniment.")
    var vocals = false

    @Option(help: "Output encoding: wav16, wav24, wav-float, flac16, flac24. Default: the input's PCM depth, else wav-float.")
    var audioFormat: AudioFileFormat?

    @Option(help: SplitConfiguration.Spec.maxLagSamples.optionHelp)
    var maxLagSamples = SplitConfiguration.Spec.maxLagSamples.defaultValue

    // The flag keeps its spelled-out unit: `--gain-block-s` would read badly on a command line.
    @Option(name: .customLong("gain-block-seconds"), help: SplitConfiguration.Spec.gainBlockS.optionHelp)
    var gainBlockS = SplitConfiguration.Spec.gainBlockS.defaultValue

    @Option(help: "Report: text or json.")
    var format: ReportFormat = .text

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    func configuration() throws -> SplitConfiguration {
        var config = SplitConfiguration()
        config.layout = try splitLayout(layout)
        config.maxLagSamples = maxLagSamples
        config.gainBlockS = gainBlockS
        do { return try config.validated() } catch {
            if case let .invalidParameter(p) = error { throw usageError(p, flags: ["gainBlockS": "--gain-block-seconds"]) }
            throw ValidationError("\(error)")
        }
    }

    @OptionGroup var stream: StreamOption

    func validate() throws {
        warnOldLayout(layout)
        _ = try configuration()
    }

    func run() throws {
        let config = try configuration()
        let dir = outDir ?? (((input as NSString).lastPathComponent as NSString).deletingPathExtension + ".split")
        let join = { (name: String) in (dir as NSString).appendingPathComponent(name) }
        let reportPath = join("split.json")
        var outputs = SplitOutputs(original: join("original.wav"), accompaniment: join("accompaniment.wav"),
                                   vocals: vocals ? join("vocals.wav") : nil, format: audioFormat, folder: dir)
        let input = self.input, plan = outputs
        outputs.report = SplitReportOutput(path: reportPath) { result in
            Array(SplitReport.json(result, input: input, outputs: plan, reportPath: reportPath).serialized().utf8)
        }
        try refuseOutputsOverInputs([outputs.original, outputs.accompaniment, outputs.vocals, reportPath].map { ("--out-dir's", $0) },
                                    inputs: [("the input", input)])
        let result: SplitResult
        let stream = try self.stream.checked()
        do { result = try DualMonoSplitter.split(path: input, stream: stream, configuration: config, outputs: outputs) } catch {
            throw failure(error)
        }
        if let t = result.truncation { printError("ktv: warning: \(t)") }
        switch format {
        case .json: try writeStandardOutput(SplitReport.json(result, input: input, outputs: plan, reportPath: reportPath).serialized())
        case .text:
            var text = SplitReport.text(result, outputs: plan, reportPath: reportPath)
            if !result.analysis.dualMono { text += "  split anyway with --layout left, right or O,A\n" }
            try writeStandardOutput(text)
        }
        if !result.analysis.dualMono { throw ExitCode(KTVExitCode.findings) }
    }
}
