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
        abstract: "Track the pitch of a recording.",
        usage: """
        ktv pitch <input> [--to csv|json|agora-bin|agora-json] [-o FILE] [<options>]     (the same as ktv pitch track <input> …)
          ktv pitch eval <reference> <estimate>   (compare two pitch tracks: ktv pitch eval --help)
        """,
        discussion: """
        YIN (de Cheveigné & Kawahara 2002) computed exactly by FFT at a reduced analysis rate, with pYIN-style
        candidate tracking (Viterbi) and a voicing decision from periodicity and energy.
        Frame k is centred at k·hop in the input's own timeline. CSV: time_s,f0_hz,confidence (f0 0 = unvoiced).
        With --accompaniment, the accompaniment's delay in the take is reported as latency_ms and its bleed
        is cancelled before tracking; times are not shifted by it.
        """)

    @Argument(help: "The recording: WAV, FLAC, OGG, Opus, MP3, AIFF.")
    var input: String

    @Option(help: "left, right, mix, or a 1-based channel number.")
    var channel: String = "mix"

    @OptionGroup var tracker: TrackerOptions

    @Option(help: "The accompaniment played during the take: its bleed is cancelled and its delay reported.")
    var accompaniment: String?

    @Option(help: "Write the track as csv, json, agora-bin (Agora binary pitch v1, 10 ms float64 Hz) or agora-json (pitchDatas note segments, MIDI note numbers).")
    var to: PitchTrackFormat = .csv

    // The old name of --to: --format names a report's format everywhere else.
    @Option(name: .customLong("format"), help: .hidden)
    var oldFormat: PitchTrackFormat?

    var format: PitchTrackFormat { oldFormat ?? to }

    @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
    var output: String?

    @OptionGroup var stream: StreamOption

    func validate() throws {
        if oldFormat != nil { deprecatedFlag("--format", "--to") }
        _ = try configuration()
    }

    func configuration() throws -> (PitchConfiguration, ChannelSelection) {
        do { try format.check(hopMs: tracker.hopMs) } catch { throw usageError(error, flags: ["format": "--to"]) }
        return (try tracker.configuration(), try TrackerOptions.channel(channel))
    }

    func run() throws {
        try refuseOutputsOverInputs([("-o", output)], inputs: [("the recording", input), ("--accompaniment", accompaniment)])
        let (config, channel) = try configuration()
        let track: PitchTrack
        do {
            track = try PitchTracker(configuration: config).track(path: input, stream: try stream.checked(), channel: channel, accompaniment: accompaniment)
        } catch let error as AudioError {
            throw failure(error)
        } catch {
            printError("ktv: \(input): \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
        for t in track.truncations { printError("ktv: warning: \(t)") }
        try emit(format.bytes(track, input: input), to: output)
    }
}

extension PitchTrackFormat: ExpressibleByArgument {}
