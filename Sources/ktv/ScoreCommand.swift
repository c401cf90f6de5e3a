import ArgumentParser
import Foundation
import KTVAudio
import KTVCore
import KTVReport
import KTVScore
import KTVSync

extension ScoringRuleSet: ExpressibleByArgument {}
extension TakeRequest.Timing: ExpressibleByArgument {}

/// `ktv score TAKE …` scores a take (the default subcommand); `ktv score notes REF` writes a reference's notes.
struct ScoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "score",
        abstract: "Score a take against a reference melody, or write a reference's notes.",
        subcommands: [ScoreTakeCommand.self, ScoreNotesCommand.self],
        defaultSubcommand: ScoreTakeCommand.self
    )
}

/// Where the reference melody comes from, shared by `score` and `score notes`.
struct ReferenceFlags: ParsableArguments {
    @Option(help: "The reference melody: Migu/Agora XML, notes JSON, UltraStar .txt, MIDI, MusicXML (.musicxml, .mxl), a pitch track, or an Agora pitch file with --lyrics.")
    var reference: String?

    @Option(help: "Or a recording of the reference: a dual-mono KTV track is split and its vocal tracked and segmented into notes.")
    var referenceAudio: String?

    @Option(help: "Lyrics for the reference's words and lines (with a pitch file, a recording, or notes without lines).")
    var lyrics: String?

    @Option(help: ReferenceOptions.Spec.player.optionHelp)
    var player = ReferenceOptions.Spec.player.defaultValue

    @Option(help: ReferenceOptions.Spec.track.flagHelp)
    var track: Int?

    @Option(help: ReferenceOptions.Spec.part.flagHelp)
    var part: Int?

    func validate() throws { _ = try options() }

    /// Exactly one source: `file` (the reference file, from --reference or an argument) or --reference-audio.
    func requireOne(_ file: String?) throws {
        if (file == nil) == (referenceAudio == nil) { throw ValidationError("give one of --reference and --reference-audio") }
    }

    func options() throws -> ReferenceOptions {
        do { return try ReferenceOptions(player: player, track: track, part: part).validated() } catch {
            throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)")
        }
    }

    /// The name reports give the reference.
    var name: String { reference ?? referenceAudio ?? "" }
}

/// Exit code and message for a scoring failure: unreadable files 74, unusable content (or a file over
/// its size limit, or a file in the wrong slot, named with the flag it belongs to) 65; a progress
/// log's setting named as its flag.
func scoreFailure(_ error: Error) -> Error {
    switch error {
    case let e as SyncError: return syncFailure(e)
    case let ScoreError.misplaced(m):
        printError("ktv: \(m.message(naming: slotFlag))")
        return ExitCode(KTVExitCode.dataError)
    case is any ExitCoded: return failure(error)
    default:
        // The library's own errors name its parameters (`minHz`): written as the flags that set them.
        printError("ktv: \(flagText("\(error)"))")
        return ExitCode(KTVExitCode.dataError)
    }
}
