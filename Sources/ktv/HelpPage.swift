import ArgumentParser

/// `--help`, `-h` and `ktv help …`: ArgumentParser's page for the command asked about, ending with
/// its examples. A group that runs a default command (`score` scores a take, `pitch` tracks,
/// `batch` runs a manifest, `replay` analyzes a log) shows that command's page, since that is what
/// `ktv score TAKE …` runs; its usage names the sibling commands.
enum HelpPage {
    /// Two to four runnable examples per command, on the files in `fixtures/` (run from the
    /// repository's root). `HelpTests` parses every one with the real command tree.
    static let examples: [String: [String]] = [
        "ktv": [
            "ktv lyrics validate fixtures/lyrics",
            "ktv score fixtures/audio/demo-dualmono.f0.csv --reference-audio fixtures/audio/demo-dualmono.flac --lyrics fixtures/audio/demo-dualmono.krc",
            "ktv replay fixtures/replay/demo.jsonl",
        ],
        "ktv lyrics": [
            "ktv lyrics parse fixtures/lyrics/krc-language.krc --format text",
            "ktv lyrics convert fixtures/lyrics/krc-encrypted.krc --to ttml -o song.ttml",
            "ktv lyrics validate fixtures/lyrics --min-severity warning",
        ],
        "ktv lyrics parse": [
            "ktv lyrics parse fixtures/lyrics/krc-language.krc --format text",
            "ktv lyrics parse fixtures/lyrics/migu.xml --format json -o migu.json",
            "ktv lyrics parse fixtures/lyrics/lrc-offset.lrc --offset-sign add",
        ],
        "ktv lyrics decrypt": [
            "ktv lyrics decrypt fixtures/lyrics/krc-encrypted.krc",
            "ktv lyrics decrypt fixtures/lyrics/krc-encrypted.krc -o song.krc.txt",
        ],
        "ktv lyrics convert": [
            "ktv lyrics convert fixtures/lyrics/krc-encrypted.krc --to elrc",
            "ktv lyrics convert fixtures/lyrics/krc-language.krc --to ass -o song.ass",
            "ktv lyrics convert fixtures/lyrics/ttml-duet.ttml --to lys -o duet.lys",
            "ktv lyrics convert fixtures/lyrics/krc-language.krc --to ttml --ttml-timing absolute -o apple.ttml",
        ],
        "ktv lyrics validate": [
            "ktv lyrics validate fixtures/lyrics",
            "ktv lyrics validate fixtures/lyrics --format sarif --base . -o lyrics.sarif",
            "ktv lyrics validate fixtures/lyrics --min-severity error --format json",
            "ktv lyrics validate fixtures/audio/demo-dualmono.krc --audio fixtures/audio/demo-dualmono.flac",
        ],
        "ktv batch sync": [
            "ktv batch sync catalogue.csv --out-dir synced -o sync.jsonl",
            "ktv batch sync catalogue.csv --out-dir synced --to krc --jobs 2",
        ],
        "ktv lyrics sync": [
            "ktv lyrics sync fixtures/audio/demo-dualmono-late.lrc --audio fixtures/audio/demo-dualmono.flac -o synced.lrc",
            "ktv lyrics sync fixtures/audio/demo-dualmono-late.lrc --audio fixtures/audio/demo-dualmono.flac --to krc -o synced.krc --format json",
        ],
        "ktv split": [
            "ktv split fixtures/audio/demo-dualmono.flac --vocals --out-dir split",
            "ktv split fixtures/audio/demo-dualmono.flac --layout left --out-dir split",
            "ktv split fixtures/audio/demo-dualmono.flac --format json --out-dir split",
        ],
        "ktv pitch track": [
            "ktv pitch fixtures/audio/demo-dualmono.flac --channel left -o vocal.f0.csv",
            "ktv pitch fixtures/audio/demo-dualmono.flac --channel left --to agora-bin -o vocal.pitch",
            "ktv pitch take.mp4 --stream 2 --to json -o take.f0.json",
        ],
        "ktv pitch eval": [
            "ktv pitch eval fixtures/audio/demo-dualmono.f0.csv vocal.f0.csv",
            "ktv pitch eval fixtures/audio/demo-dualmono.f0.csv vocal.f0.csv --cents 25 --format json",
        ],
        "ktv replay analyze": [
            "ktv replay fixtures/replay/demo.jsonl",
            "ktv replay fixtures/replay/demo.jsonl --svg drift.svg --csv drift.csv",
            "ktv replay fixtures/replay/demo.jsonl --rules zego --threshold-ms 40 --format json",
        ],
        "ktv replay simulate": [
            "ktv replay simulate --scenario zego-faults -o room.jsonl",
            "ktv replay simulate --scenario agora --seed 7 -o - | ktv replay -",
        ],
        "ktv score take": [
            "ktv score fixtures/audio/demo-dualmono.f0.csv --reference-audio fixtures/audio/demo-dualmono.flac --lyrics fixtures/audio/demo-dualmono.krc",
            "ktv score take.wav --reference fixtures/lyrics/migu.xml --rules agora --agora-offset 10",
            "ktv score take.m4a --reference song.musicxml --accompaniment acc.flac --html take.html",
            "ktv score take.wav --reference song.txt --timing free --format json -o score.json",
        ],
        "ktv score notes": [
            "ktv score notes fixtures/lyrics/migu.xml",
            "ktv score notes fixtures/lyrics/migu.xml --to musicxml -o song.musicxml",
            "ktv score notes fixtures/musicxml/tied-tempo-transposed.mxl --part 3 --to midi -o clarinet.mid",
        ],
        "ktv batch run": [
            "ktv batch takes.csv -o results.jsonl",
            "ktv batch takes.csv -o results.jsonl --resume",
            "ktv batch takes.csv -o shard-2.jsonl --shard 2/4 --html-dir pages",
        ],
        "ktv batch report": [
            "ktv batch report results.jsonl",
            "ktv batch report results.jsonl --html dashboard.html --csv results.csv",
        ],
    ]

    /// Groups whose page is their default command's.
    static let defaults: [String: String] = ["ktv score": "take", "ktv pitch": "track", "ktv batch": "run", "ktv replay": "analyze"]

    /// The page `arguments` ask for, or nil when they ask for none.
    static func page(for arguments: [String]) -> String? {
        var words = arguments
        if words.first == "help" {
            words.removeFirst()
        } else if let k = words.firstIndex(where: { $0 == "--help" || $0 == "-h" }) {
            words = Array(words[..<k])
        } else {
            return nil
        }
        var command: ParsableCommand.Type = KTV.self
        var path = "ktv"
        for word in words {
            guard let sub = command.configuration.subcommands.first(where: { $0._commandName == word }) else { break }
            command = sub
            path += " " + word
        }
        if let name = defaults[path], let sub = command.configuration.subcommands.first(where: { $0._commandName == name }) {
            command = sub
            path += " " + name
        }
        var text = KTV.helpMessage(for: command)
        if let lines = examples[path] {
            text += "\nEXAMPLES:\n" + lines.map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        return text
    }
}
