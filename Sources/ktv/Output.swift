import ArgumentParser
import KTVCore

// Standard output and error, output files, input files, and how a command stops on a library error.

/// Writes a line to standard error. A standard error nobody reads is not worth failing over.
func printError(_ s: String) {
    try? FileIO.writeAll(fd: 2, Array((s + "\n").utf8), path: "<stderr>")
}

/// Writes bytes to standard output, or to `path` when one is given (`-` = stdout): atomically for a
/// regular file, straight into a device or FIFO (see `FileIO.writeAtomically`).
func emit(_ bytes: [UInt8], to path: String?) throws {
    guard let path, path != "-" else { return try writeStandardOutput(bytes) }
    do { try FileIO.writeAtomically(bytes, to: path) } catch {
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

func writeStandardOutput(_ text: String) throws { try writeStandardOutput(Array(text.utf8)) }

/// Standard output, unbuffered and checked: a full disk or a closed descriptor is exit 74 with a
/// message; a reader that went away (`ktv … | head`, with SIGPIPE ignored) ends the command quietly.
func writeStandardOutput(_ bytes: [UInt8]) throws {
    do { try FileIO.writeAll(fd: 1, bytes, path: "<stdout>") } catch {
        if case .brokenPipe = error { throw ExitCode.success }
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

/// Like `emit`, for output made in pieces (`produce` calls `put` with each); see `FileIO.write(to:_:)`.
func emitStreaming(to path: String?, _ produce: (_ put: ([UInt8]) throws -> Void) throws -> Void) throws {
    guard let path, path != "-" else {
        try produce { try writeStandardOutput($0) }
        return
    }
    do {
        try FileIO.write(to: path, produce)
    } catch let error as FileIOError {
        if case .brokenPipe = error { throw ExitCode.success }
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

/// Reads an input file (`-` = stdin), mapping failures to exit 74 with the path in the message
/// (65 when it is over `maxBytes`: the input, not the machine, is the problem).
func readInput(_ path: String, maxBytes: Int = Int.max) throws -> [UInt8] {
    do { return try FileIO.read(path, maxBytes: maxBytes) } catch { throw failure(error) }
}

/// Prints a library error and gives the exit code its type says (`ExitCoded`: bad data 65, files
/// 74, settings 64); an error of any other type is bad data.
func failure(_ error: Error) -> ExitCode {
    printError("ktv: \(error)")
    return ExitCode((error as? any ExitCoded)?.exitCode ?? KTVExitCode.dataError)
}

/// Refuses (exit 64), before anything is read or written, an output that is one of the inputs: the
/// same regular file, through a symbolic or a hard link too (`FileIO.sameFile`), which writing the
/// output would replace. `outputs` are `(flag, path)`, `inputs` `(what, path)`, for the message;
/// `-` and absent paths are passed over.
func refuseOutputsOverInputs(_ outputs: [(flag: String, path: String?)], inputs: [(what: String, path: String?)]) throws {
    for case let (flag, output?) in outputs {
        for case let (what, input?) in inputs where FileIO.sameFile(output, input) {
            let how = output == input ? "" : " (the same file, through a link)"
            printError("ktv: \(flag) \(output) is \(what) \(input)\(how): writing it would destroy the input; write it elsewhere")
            throw ExitCode(KTVExitCode.usage)
        }
    }
}

/// The name a message uses for an input.
func displayName(_ path: String) -> String { path == "-" ? "<stdin>" : path }
