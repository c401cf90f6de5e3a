import ArgumentParser
import Foundation
import KTVCore

@main
struct KTV: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ktv",
        abstract: "Offline tools for karaoke content and recordings.",
        discussion: """
        Exit codes: 0 ok, 1 findings (invalid lyrics, failed takes), 64 usage error, 65 bad input data, 74 I/O error.
        """,
        version: version,
        subcommands: [LyricsCommand.self, SplitCommand.self, PitchCommand.self, ReplayCommand.self, ScoreCommand.self, BatchCommand.self]
    )

    /// Help pages end with examples (`HelpPage`); everything else is ArgumentParser's.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let page = HelpPage.page(for: arguments) {
            print(page, terminator: page.hasSuffix("\n") ? "" : "\n")
            return
        }
        // ArgumentParser's `main`, but a command line it refuses is first checked for a misspelt
        // command or option, which is named before whatever else was wrong (ArgumentParser
        // validates a command before it reports an option it does not know). Only a refused command
        // line pays for the check.
        let command: ParsableCommand
        do { command = try parseAsRoot(arguments) } catch {
            if let problem = ArgumentCheck.problem(arguments) {
                printError(problem)
                Foundation.exit(KTVExitCode.usage)
            }
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand { try await asyncCommand.run() } else {
                var command = command
                try command.run()
            }
        } catch { exit(withError: error) }
    }
}
