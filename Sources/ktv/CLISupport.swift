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
        try writeAll(bytes, to: STDOUT_FILENO, path: "<stdout>")
    }
}

/// Like `emit`, for output made in pieces (`produce` calls `put` with each): standard output gets
/// each piece as it comes; a file is written beside `path` and renamed into place, as
/// `FileIO.writeAtomically` does. The whole output (often several times the input) is never in memory.
func emitStreaming(to path: String?, _ produce: (_ put: ([UInt8]) throws -> Void) throws -> Void) throws {
    guard let path, path != "-" else {
        try produce { try writeAll($0, to: STDOUT_FILENO, path: "<stdout>") }
        return
    }
    let url = URL(fileURLWithPath: path)
    let temp = url.deletingLastPathComponent()
        .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
    guard fd >= 0 else { throw cannotWrite(path, errno) }
    var open = true
    defer {
        if open { close(fd) }
    }
    do {
        try produce { try writeAll($0, to: fd, path: path) }
    } catch {
        unlink(temp)
        throw error
    }
    open = false
    if close(fd) != 0 || rename(temp, url.path) != 0 {
        let code = errno
        unlink(temp)
        throw cannotWrite(path, code)
    }
}

/// Writes every byte to a file descriptor; failures stop with exit 74 naming the output.
private func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws {
    try bytes.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count {
            let n = write(fd, raw.baseAddress! + done, raw.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw cannotWrite(path, errno)
            }
            done += n
        }
    }
}

private func cannotWrite(_ path: String, _ code: Int32) -> Error {
    printError("ktv: \(FileIOError.cannotWrite(path: path, reason: String(cString: strerror(code))))")
    return ExitCode(KTVExitCode.ioError)
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

/// Reads a lyric file (`-` = stdin), refusing one over `limit` bytes before it is in memory: a
/// file by its size, standard input once a byte past the limit has come. Throws `LyricsError.tooLarge`
/// (the message `LyricsReader` gives) or `FileIOError`.
func readLyricBytes(_ path: String, limit: Int) throws -> [UInt8] {
    guard path == "-" else {
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > limit {
            throw LyricsError.tooLarge(limitBytes: limit, detail: "the input is \(size) bytes")
        }
        return try FileIO.read(path)
    }
    var bytes: [UInt8] = []
    while true {
        let chunk: Data?
        do { chunk = try FileHandle.standardInput.read(upToCount: 1 << 20) } catch {
            throw FileIOError.cannotRead(path: "<stdin>", reason: "\(error)")
        }
        guard let chunk, !chunk.isEmpty else { return bytes }
        bytes += chunk
        if bytes.count > limit {
            throw LyricsError.tooLarge(limitBytes: limit, detail: "the input is more than \(limit) bytes")
        }
    }
}

/// `readLyricBytes`, stopping with exit 65 (too large) or 74 (cannot read) and a message.
func readLyricInput(_ path: String, limit: Int) throws -> [UInt8] {
    do { return try readLyricBytes(path, limit: limit) } catch let error as LyricsError {
        printError("ktv: \(describe(error, path: path))")
        throw ExitCode(KTVExitCode.dataError)
    } catch {
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

/// Reads a lyric file and stops with exit 65 (or 74) and a precise message when it cannot.
func readLyrics(_ path: String, options: LyricsParseOptions) throws -> ParsedLyrics {
    let bytes = try readLyricInput(path, limit: options.maxTextBytes)
    do {
        // Handed over, not copied: the reader can then drop a BOM in place.
        return try LyricsReader.read(consume bytes, fileName: path == "-" ? nil : path, options: options)
    } catch {
        printError("ktv: \(describe(error, path: path))")
        throw ExitCode(KTVExitCode.dataError)
    }
}

extension OffsetSign: ExpressibleByArgument {}
extension LyricFormat: ExpressibleByArgument {}
extension LyricsOutputFormat: ExpressibleByArgument {}
