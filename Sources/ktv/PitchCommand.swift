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

    @Argument(help: "The recording: WAV, FLAC, OGG, Opus, MP3, AIFF.")
    var input: String

    @Option(help: "left, right, mix, or a 1-based channel number.")
    var channel: String = "mix"

    @OptionGroup var tracker: TrackerOptions

    @Option(help: "The accompaniment played during the take: its bleed is cancelled and its delay reported.")
    var accompaniment: String?

    @Option(help: "Output: csv, json, agora-bin (Agora binary pitch v1, 10 ms float64 Hz), agora-json (pitchDatas note segments, MIDI note numbers).")
    var format: PitchTrackFormat = .csv

    @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
    var output: String?

    @OptionGroup var stream: StreamOption

    func validate() throws { _ = try configuration() }

    func configuration() throws -> (PitchConfiguration, ChannelSelection) {
        do { try format.check(hopMs: tracker.hopMs) } catch { throw usageError(error) }
        return (try tracker.configuration(), try TrackerOptions.channel(channel))
    }

    func run() throws {
        let (config, channel) = try configuration()
        let track: PitchTrack
        do {
            track = try PitchTracker(configuration: config).track(path: input, stream: try stream.checked(), channel: channel, accompaniment: accompaniment)
        } catch let error as AudioError {
            throw audioFailure(error)
        } catch {
            printError("ktv: \(input): \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
        for t in track.truncations { printError("ktv: warning: \(t)") }
        try emit(format.bytes(track, input: input), to: output)
    }
}

extension PitchTrackFormat: ExpressibleByArgument {}
