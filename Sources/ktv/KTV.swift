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
        tuneAllocator()
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

/// glibc's allocator serves a block over 128 KiB with its own `mmap` and returns it with `munmap`
/// when freed, raising that limit to the size of the largest such block freed (mallopt(3)). ktv
/// allocates and frees blocks of a few hundred KiB all the time (a take's pitch track, a second of
/// audio); until something large is freed, each costs the kernel fresh zeroed pages: 0.6 s of
/// system time on a batch of 1,000 pitch-track takes, once the 1 MiB buffer that used to sniff every
/// input (and so raised the limit by chance) was gone. One MiB freed at the start raises it the same
/// way. Setting the limits with `mallopt` instead turns the raising off: fixed at 1 MiB, replay and
/// split ran 10-18 % slower; at 32 MiB, a 60-minute pitch track took 40 MB more.
private func tuneAllocator() {
    #if os(Linux)
    // Freed through a pointer looked up by name: the optimiser drops a plain malloc/free pair.
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "free") else { return }
    unsafeBitCast(symbol, to: Free.self)(malloc(1 << 20))
    #endif
}
