import ArgumentParser
import Foundation
import KTVAudio
import KTVCore
import KTVPitch

/// `ktv pitch INPUT …` tracks pitch (the default subcommand); `ktv pitch eval REF EST` scores a track.
struct PitchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pitch",
        abstract: "Track the sung pitch of a recording (FFT YIN), or evaluate a pitch track against a reference.",
        subcommands: [PitchTrackCommand.self, PitchEvalCommand.self],
        defaultSubcommand: PitchTrackCommand.self
    )
}

struct PitchTrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Track the pitch of a recording (`ktv pitch INPUT` is short for `ktv pitch track INPUT`).",
        discussion: """
        YIN (de Cheveigné & Kawahara 2002) computed exactly by FFT at a reduced analysis rate, with pYIN-style
        candidate tracking (Viterbi) and a voicing decision from periodicity and energy.
        Frame k is centred at k·hop in the input's own timeline. CSV: time_s,f0_hz,confidence (f0 0 = unvoiced).
        With --accompaniment, the accompaniment's delay in the take is reported as latency_ms and its bleed
        is cancelled before tracking; times are not shifted by it.
        """)

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable { case csv, json, agoraBin = "agora-bin", agoraJSON = "agora-json" }

    @Argument(help: "The recording: WAV, FLAC, OGG, Opus, MP3, AIFF.")
    var input: String

    @Option(help: "left, right, mix, or a 1-based channel number.")
    var channel: String = "mix"

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.hopMs.help))
    var hopMs = PitchConfiguration.Spec.hopMs.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.minHz.help))
    var minHz = PitchConfiguration.Spec.minHz.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.maxHz.help))
    var maxHz = PitchConfiguration.Spec.maxHz.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.analysisRateHz.help))
    var analysisRate = PitchConfiguration.Spec.analysisRateHz.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.windowMs.help))
    var windowMs: Double?

    @Option(help: "The accompaniment played during the take: its bleed is cancelled and its delay reported.")
    var accompaniment: String?

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.threads.help + " 0 = one per core."))
    var threads: Int = 0

    @Option(help: "Output: csv, json, agora-bin (Agora binary pitch v1, 10 ms float64 Hz), agora-json (pitchDatas note segments, MIDI note numbers).")
    var format: OutputFormat = .csv

    @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
    var output: String?

    func parsedChannel() throws -> ChannelSelection {
        switch channel {
        case "mix": return .mix
        case "left": return .channel(0)
        case "right": return .channel(1)
        default:
            guard let n = Int(channel), n >= 1 else {
                throw ValidationError("--channel must be left, right, mix or a 1-based channel number, not `\(channel)`")
            }
            return .channel(n - 1)
        }
    }

    func validate() throws {
        _ = try parsedChannel()
        if format == .agoraBin && hopMs != 10 {
            throw ValidationError("--format agora-bin is a 10 ms contour; use --hop-ms 10")
        }
        do { _ = try makeConfiguration().validated() } catch {
            throw error.parameterError.map { usageError($0, flags: Self.flags) } ?? ValidationError("\(error)")
        }
    }

    /// Library parameters whose flag is not their kebab-case name.
    static let flags = ["analysisRateHz": "--analysis-rate"]

    func makeConfiguration() -> PitchConfiguration {
        var c = PitchConfiguration()
        c.hopMs = hopMs
        c.minHz = minHz
        c.maxHz = maxHz
        c.analysisRateHz = analysisRate
        c.windowMs = windowMs
        c.threads = threads == 0 ? ProcessInfo.processInfo.activeProcessorCount : threads
        return c
    }

    func run() throws {
        let track: PitchTrack
        do {
            let tracker = try PitchTracker(configuration: makeConfiguration())
            if let accompaniment {
                track = try tracker.track(path: input, channel: try parsedChannel(), accompaniment: accompaniment)
            } else {
                track = try tracker.track(path: input, channel: try parsedChannel())
            }
        } catch let error as AudioError {
            throw audioFailure(error)
        } catch {
            printError("ktv: \(input): \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
        for t in track.truncations { printError("ktv: warning: \(t)") }
        let bytes: [UInt8]
        switch format {
        case .csv: bytes = Array(PitchTrackWriter.csv(track).utf8)
        case .json: bytes = Array(PitchTrackWriter.json(track, input: input).serialized().utf8)
        case .agoraBin: bytes = PitchTrackWriter.agoraBinary(track)
        case .agoraJSON: bytes = Array(PitchTrackWriter.agoraNotes(track).serialized().utf8)
        }
        try emit(bytes, to: output)
    }
}
