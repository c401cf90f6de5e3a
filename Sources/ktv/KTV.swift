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
        // A misspelt command or option is named first (ArgumentParser would validate the rest first).
        if let problem = ArgumentCheck.problem(arguments) {
            printError(problem)
            Foundation.exit(KTVExitCode.usage)
        }
        await main(arguments)
    }
}
