import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

extension LyricsCommand {
    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the exact plaintext bytes inside an encrypted KRC (`krc1`) file.")

        @Argument(help: "The encrypted KRC file (`-` for standard input).")
        var file: String

        @OptionGroup var limit: TextLimitOptions

        @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.")
        var output: String?

        func run() throws {
            try refuseOutputsOverInputs([("-o", output)], inputs: [("the KRC file", file)])
            let maxTextBytes = try limit.options().maxTextBytes
            let bytes = try readLyricBytes(file, maxTextBytes: maxTextBytes)
            let plain: [UInt8]
            do { plain = try KRCContainer.decrypt(bytes, maxTextBytes: maxTextBytes) } catch {
                printError("ktv: \(describe(error, path: file))")
                throw ExitCode(KTVExitCode.dataError)
            }
            try emit(plain, to: output)
        }
    }
}
