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
/// when freed, until a large block freed teaches it otherwise. A take's pitch track, a second of
/// audio, a frame table: ktv allocates and frees such blocks all the time, and paying the kernel for
/// each (fresh zeroed pages) put 0.6 s of system time on a batch of 1,000 pitch-track takes. The
/// limits are set as they would stand after the first large block: blocks up to 32 MiB come from
/// the heap, which keeps up to 64 MiB free for the next.
private func tuneAllocator() {
    #if os(Linux)
    // mallopt is glibc's (malloc.h, which Swift's Glibc module leaves out): found by name.
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    let mmapThreshold: Int32 = -3, trimThreshold: Int32 = -1   // M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
    _ = mallopt(mmapThreshold, 32 << 20)
    _ = mallopt(trimThreshold, 64 << 20)
    #endif
}
