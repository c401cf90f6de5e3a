import ArgumentParser
import Foundation
import KTVCore
import KTVPitch
import KTVScore

struct ScoreNotesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "Write a reference melody's notes, to inspect it or convert it (notes JSON, UltraStar .txt, MIDI, MusicXML).")

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, ultrastar, midi, musicxml }

    @Argument(help: "The reference file (or give --reference-audio).")
    var source: String?

    @OptionGroup var reference: ReferenceFlags

    @Option(help: "Write the notes as json, ultrastar, midi or musicxml.")
    var to: Format = .json

    // The old name of --to: --format names a report's format everywhere else.
    @Option(name: .customLong("format"), help: .hidden)
    var oldFormat: Format?

    @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
    var output: String?

    func validate() throws {
        if oldFormat != nil { deprecatedFlag("--format", "--to") }
        try reference.requireOne(reference.reference ?? source)
    }

    func run() throws {
        try refuseOutputsOverInputs([("-o", output)], inputs: [("the reference", source), ("--reference", reference.reference),
                                                            ("--reference-audio", reference.referenceAudio), ("--lyrics", reference.lyrics)])
        let bytes: [UInt8]
        do {
            let scorer = try Scorer(configuration: ScoreConfiguration())
            let (melody, truncations) = try scorer.readReference(path: reference.reference ?? source, audio: reference.referenceAudio,
                                                                 lyricsPath: reference.lyrics, options: try reference.options())
            for t in truncations { printError("ktv: warning: \(t)") }
            let title = (((reference.reference ?? source ?? reference.name) as NSString).lastPathComponent as NSString).deletingPathExtension
            switch oldFormat ?? to {
            case .json: bytes = NotesJSON.write(melody)
            case .ultrastar: bytes = UltraStarFile.write(melody, title: title, artist: "")
            case .midi:
                // MIDI holds pitched notes only: a melody of rap or unpitched notes would be an empty file.
                guard !MIDIFile.writtenNotes(melody).isEmpty else {
                    throw ScoreError.badReference(path: reference.reference ?? source ?? reference.name, line: nil,
                                                  detail: "no pitched note of some length, so a MIDI file of it would hold no note; write json or ultrastar")
                }
                bytes = MIDIFile.write(melody, title: title)
            case .musicxml: bytes = MusicXMLFile.write(melody, title: title)
            }
        } catch { throw scoreFailure(error) }
        try emit(bytes, to: output)
    }
}
