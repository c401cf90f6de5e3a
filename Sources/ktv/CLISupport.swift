import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

/// Writes a line to standard error.
func printError(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// Writes bytes to standard output, or atomically to `path` when one is given (`-` = stdout).
func emit(_ bytes: [UInt8], to path: String?) throws {
    if let path, path != "-" {
        do { try FileIO.writeAtomically(bytes, to: path) } catch {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.ioError)
        }
    } else {
        FileHandle.standardOutput.write(Data(bytes))
    }
}

/// Reads an input file (`-` = stdin), mapping failures to exit 74 with the path in the message.
func readInput(_ path: String) throws -> [UInt8] {
    do { return try FileIO.read(path) } catch {
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

/// The name a message uses for an input.
func displayName(_ path: String) -> String { path == "-" ? "<stdin>" : path }

/// `path: line N: message` / `path: byte offset N: message` for a file that cannot be read as lyrics.
func describe(_ error: LyricsError, path: String) -> String {
    "\(displayName(path)): \(lyricsErrorMessage(error))"
}

/// The error's message, with the option that gets past it when there is one.
func lyricsErrorMessage(_ error: LyricsError) -> String {
    if case .tooLarge = error { return "\(error); raise the limit with --max-text-mb N if the file is genuine" }
    return "\(error)"
}

/// Reads a lyric file and stops with exit 65 (or 74) and a precise message when it cannot.
func readLyrics(_ path: String, options: LyricsParseOptions) throws -> ParsedLyrics {
    let bytes = try readInput(path)
    do {
        return try LyricsReader.read(bytes, fileName: path == "-" ? nil : path, options: options)
    } catch {
        printError("ktv: \(describe(error, path: path))")
        throw ExitCode(KTVExitCode.dataError)
    }
}

extension OffsetSign: ExpressibleByArgument {}
extension LyricFormat: ExpressibleByArgument {}
extension LyricsOutputFormat: ExpressibleByArgument {}
