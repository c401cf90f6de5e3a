import ArgumentParser
import Foundation
import KTVCore

/// Misspelt commands and options, named before anything else is said. ArgumentParser validates a
/// command (`give one of --reference and --reference-audio`) before it reports an option it does
/// not know, so `ktv score take.csv --referance ref.xml` heard only the validation; and a word that
/// is no subcommand is "an unexpected argument" with no suggestion (`ktv scor`). This walks the
/// command tree as ArgumentParser does and says which word is wrong and what was meant.
enum ArgumentCheck {
    /// The error for `arguments` (without the program name), or nil when every command word and
    /// long option is one the command knows.
    static func problem(_ arguments: [String]) -> String? {
        var command: ParsableCommand.Type = KTV.self
        var path = "ktv"
        var rest = arguments[...]
        // The command words: subcommands, then the default subcommand when the next word is none.
        while let word = rest.first {
            let subs = command.configuration.subcommands
            guard !subs.isEmpty else { break }
            if let sub = subs.first(where: { $0._commandName == word }) {
                command = sub
                path += " " + word
                rest = rest.dropFirst()
                continue
            }
            if word == "help" { return nil }   // help pages are ArgumentParser's
            if word.hasPrefix("-") {
                // An option before the take (`ktv score --rules agora take.csv …`): the default subcommand's.
                guard let fallback = command.configuration.defaultSubcommand else { return nil }
                command = fallback
                path += " " + fallback._commandName
                continue
            }
            let names = subs.map { $0._commandName }
            if let fallback = command.configuration.defaultSubcommand {
                // `ktv score note` (a typo of notes) would be read as a take called `note`: said when no such file exists.
                if !word.contains("/"), !word.contains("."), !FileManager.default.fileExists(atPath: word),
                   let near = nearest(word, among: names), near.distance <= max(1, near.match.count / 3) {
                    return unknown("command", word, suggestion: near.match, command: command, path: path)
                }
                command = fallback
                path += " " + fallback._commandName
                continue
            }
            return unknown("command", word, suggestion: nearest(word, among: names).flatMap { $0.distance <= max(2, $0.match.count / 2) ? $0.match : nil },
                           command: command, path: path)
        }
        // The long options the command knows: every `--name` its full help shows, hidden ones too
        // (old spellings, a worker's own); only the visible ones are suggested.
        let known = longOptions(KTV.helpMessage(for: command, includeHidden: true, columns: 1000))
            .union(["--help", "--version", "--experimental-dump-help", "--generate-completion-script"])
        for word in rest {
            if word == "--" { break }
            guard word.hasPrefix("--"), word.count > 2 else { continue }
            let name = String(word.prefix { $0 != "=" })
            if known.contains(name) { continue }
            let visible = longOptions(KTV.helpMessage(for: command, includeHidden: false, columns: 1000))
            let near = nearest(name, among: Array(visible).sorted()).flatMap { $0.distance <= max(2, $0.match.count / 3) ? $0.match : nil }
            return unknown("option", name, suggestion: near, command: command, path: path)
        }
        return nil
    }

    /// Every `--name` in a help text.
    static func longOptions(_ help: String) -> Set<String> {
        var out: Set<String> = []
        var i = help.startIndex
        while let r = help.range(of: "--", range: i..<help.endIndex) {
            var end = r.upperBound
            while end < help.endIndex, help[end].isLetter || help[end].isNumber || help[end] == "-" { end = help.index(after: end) }
            if end > r.upperBound { out.insert(String(help[r.lowerBound..<end])) }
            i = end
        }
        return out
    }

    /// ArgumentParser's own wording: the error, the usage, where the help is.
    static func unknown(_ what: String, _ word: String, suggestion: String?, command: ParsableCommand.Type, path: String) -> String {
        var out = "Error: Unknown \(what) '\(word)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? "") + "\n"
        out += "Usage: \(KTV.usageString(for: command))\n"
        out += "  See '\(path) --help' for more information."
        return out
    }
}
