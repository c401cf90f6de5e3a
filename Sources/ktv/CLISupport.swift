import ArgumentParser
import Foundation
import KTVAudio
import KTVBatch
import KTVCore
import KTVLyrics
import KTVScore
import KTVPitch

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
    do { return try FileIO.read(path, maxBytes: maxBytes) } catch { throw fileFailure(error) }
}

/// Exit code and message for a file that cannot be read or written: over its size limit is the
/// input's problem (65); missing, unreadable or unwritable, the machine's (74).
func fileFailure(_ error: FileIOError) -> ExitCode {
    printError("ktv: \(error)")
    if case .tooLarge = error { return ExitCode(KTVExitCode.dataError) }
    return ExitCode(KTVExitCode.ioError)
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

/// `path: line N: message` / `path: byte offset N: message` for a file that cannot be read as lyrics.
func describe(_ error: LyricsError, path: String) -> String {
    "\(displayName(path)): \(lyricsErrorMessage(error))"
}

/// The error's message, with the option that gets past it when there is one.
func lyricsErrorMessage(_ error: LyricsError) -> String {
    if case .tooLarge = error { return "\(error); raise the limit with --max-text-mb N if the file is genuine" }
    return "\(error)"
}

/// Reads a lyric file's bytes, never more than the text ceiling (more could not be lyrics we read).
func readLyricBytes(_ path: String, maxTextBytes: Int) throws -> [UInt8] {
    do { return try FileIO.read(path, maxBytes: maxTextBytes) } catch {
        if case let .tooLarge(_, limit) = error {
            printError("ktv: \(describe(LyricsBatch.tooLargeInput(path, limitBytes: limit), path: path))")
            throw ExitCode(KTVExitCode.dataError)
        }
        printError("ktv: \(error)")
        throw ExitCode(KTVExitCode.ioError)
    }
}

/// Reads a lyric file and stops with exit 65 (or 74) and a precise message when it cannot: what the
/// file is when it is no lyrics (a recording, a reference melody, a pitch track, a manifest).
func readLyrics(_ path: String, options: LyricsParseOptions) throws -> ParsedLyrics {
    let bytes = try readLyricBytes(path, maxTextBytes: options.maxTextBytes)
    let head = options.format == nil ? Array(bytes.prefix(1 << 20)) : []
    do {
        // Handed over, not copied: the reader can then drop a BOM in place.
        return try LyricsReader.read(consume bytes, fileName: path == "-" ? nil : path, options: options)
    } catch {
        let misplaced = head.isEmpty ? nil : MisplacedInput.check(path: displayName(path), bytes: head, slot: .lyrics)
        printError("ktv: \(misplaced?.message(naming: { slotFlag($0, in: "lyrics") }) ?? describe(error, path: path))")
        throw ExitCode(KTVExitCode.dataError)
    }
}

/// Where a file belongs, as the command line names it: "with --lyrics" within `ktv score`, "to
/// ktv score with --reference" from another command.
func slotFlag(_ slot: InputSlot) -> String { slotFlag(slot, in: "score") }

func slotFlag(_ slot: InputSlot, in command: String) -> String {
    let score = command == "score" ? "" : "to ktv score "
    switch slot {
    case .take: return command == "score" ? "as the take (the first argument)" : "to ktv score as the take"
    case .reference: return score + "with --reference"
    case .referenceAudio: return score + "with --reference-audio"
    case .lyrics: return score + "with --lyrics"
    case .manifest: return "to ktv batch"
    }
}

extension OffsetSign: ExpressibleByArgument {}
extension LyricFormat: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
}

extension LyricsOutputFormat: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
}

/// An option's value read by `make`, or a usage error that lists the `valid` values and suggests
/// the nearest of them or of the `aliases` (`--to webvt`: did you mean `webvtt`?).
func namedValue<T>(_ text: String, _ make: (String) -> T?, valid: [String], aliases: [String] = []) throws -> T {
    if let value = make(text) { return value }
    let suggestion = nearest(text, among: valid + aliases.sorted()).map { "did you mean `\($0)`? " } ?? ""
    throw ValidationError("\(suggestion)valid values: \(valid.joined(separator: ", "))")
}

/// The string among `valid` nearest to `text`: fewest single-character edits (Levenshtein, case
/// ignored), the first on a tie; nil when `valid` is empty.
func nearest(_ text: String, among valid: [String]) -> String? {
    valid.min { editDistance(text, $0) < editDistance(text, $1) }
}

/// Single-character edits (insert, delete, replace) from `a` to `b`, case ignored (Levenshtein).
func editDistance(_ a: String, _ b: String) -> Int {
    let x = Array(a.lowercased()), y = Array(b.lowercased())
    var row = Array(0...y.count)   // edits from x's first i characters to y's first j
    for (i, p) in x.enumerated() {
        var diagonal = row[0]
        row[0] = i + 1
        for (j, q) in y.enumerated() {
            let above = row[j + 1]
            row[j + 1] = min(above + 1, row[j] + 1, diagonal + (p == q ? 0 : 1))
            diagonal = above
        }
    }
    return row[y.count]
}

/// The command-line spelling of a library parameter: `maxLagSamples` → `--max-lag-samples`, unless
/// the command names it otherwise in `flags`.
func flagName(_ parameter: String, _ flags: [String: String] = [:]) -> String {
    if let f = flags[parameter] { return f }
    var out = "--"
    for ch in parameter {
        if ch.isUppercase { out += "-" + ch.lowercased() } else { out.append(ch) }
    }
    return out
}

/// A library configuration error, worded with the command's flags (exit 64): its name, and any
/// parameter its allowed range names (`above minHz` → `above --min-hz`).
func usageError(_ error: ParameterError, flags: [String: String] = [:]) -> ValidationError {
    var e = error.renamed(flagName(error.name, flags))
    e.allowed = flagText(error.allowed, flags: flags)
    return ValidationError(e.description)
}

/// The library parameters (camelCase) a flag of ktv sets, by name, with the flags not spelt as
/// their kebab-case name; `flagText` writes these as flags in help and messages.
let parameterFlags: [String: String] = [
    "hopMs": "--hop-ms", "minHz": "--min-hz", "maxHz": "--max-hz", "analysisRateHz": "--analysis-rate", "windowMs": "--window-ms",
    "pitchIntervalMs": "--pitch-interval-ms", "latencyMs": "--latency-ms", "compensationOffset": "--agora-offset",
    "progressIntervalMs": "--progress-interval-ms", "maxTextMb": "--max-text-mb", "lrcFractionDigits": "--lrc-digits",
    "referenceCacheSize": "--reference-cache-size", "takeTimeoutS": "--take-timeout-seconds", "maxLagSamples": "--max-lag-samples",
    "gainBlockS": "--gain-block-seconds", "searchMs": "--search-ms", "thresholdMs": "--threshold-ms", "toleranceMs": "--tolerance-ms",
]

/// `text` with the library parameters it names written as their flags (`minHz` → `--min-hz`);
/// `flags` gives a command's own spellings.
func flagText(_ text: String, flags: [String: String] = [:]) -> String {
    respellingParameters(in: text) { flags[$0] ?? parameterFlags[$0] }
}

/// Prints parse findings (warnings and errors) to standard error; stops with 65 on errors unless lenient.
func reportParseFindings(_ parsed: ParsedLyrics, path: String, lenient: Bool) throws {
    for d in parsed.diagnostics where d.severity >= .warning {
        printError(DiagnosticReport.text(d, path: displayName(path)))
    }
    let errors = parsed.diagnostics.filter { $0.severity == .error }.count
    if errors > 0 && !lenient {
        printError("ktv: \(displayName(path)): \(errors) error(s); fix them, or pass --lenient to leave the bad lines out")
        throw ExitCode(KTVExitCode.dataError)
    }
}

/// `--layout`'s help, one wording for every command that takes it.
let layoutHelp = "Where the original (voice + music) is: auto (detected), left, right, or O,A (1-based channel numbers of the original and the accompaniment, for more than two channels)."

/// Says so when `--layout` is given in its old spelling (`left-original`, `right-original`).
func warnOldLayout(_ text: String) {
    if text == "left-original" || text == "right-original" { deprecatedFlag("--layout \(text)", "--layout \(text.dropLast(9))") }
}

/// `--layout`'s value (`auto`, `left`, `right` or `O,A`) as a layout.
func splitLayout(_ text: String) throws -> SplitLayout {
    do { return try SplitLayout(parsing: text) } catch { throw usageError(error) }
}

/// Exit code and message for an audio error: unreadable or unwritable files are I/O errors (74),
/// audio that cannot be used is bad data (65).
func audioFailure(_ error: AudioError) -> ExitCode {
    printError("ktv: \(error)")
    switch error {
    case .unreadable, .cannotWrite: return ExitCode(KTVExitCode.ioError)
    case .invalidArgument: return ExitCode(KTVExitCode.usage)
    default: return ExitCode(KTVExitCode.dataError)
    }
}

/// The library names the lyric text limit; how to raise it is the command line's to say.
func mentionTextLimitFlag(_ results: inout [FileFindings]) {
    for i in results.indices {
        for j in results[i].diagnostics.indices where results[i].diagnostics[j].rule == LyricsBatch.tooLargeRule {
            results[i].diagnostics[j].message += "; raise the limit with --max-text-mb N if the file is genuine"
        }
    }
}

/// The library says the lyrics follow another edit of the song; the command that fixes it is the command line's to say.
func mentionSyncCommand(_ results: inout [FileFindings], audio: String) {
    for i in results.indices {
        for j in results[i].diagnostics.indices where results[i].diagnostics[j].rule == LyricTimingCheck.differentEditRule {
            let path = results[i].path, ext = (path as NSString).pathExtension
            results[i].diagnostics[j].message += "; fix it with `ktv lyrics sync \(shellQuoted(path)) --audio \(shellQuoted(audio)) -o synced\(ext.isEmpty ? "" : "." + ext)`"
        }
    }
}

/// A path as a shell reads it back: quoted when it holds anything but safe characters.
func shellQuoted(_ s: String) -> String {
    let safe = s.allSatisfy { $0.isLetter || $0.isNumber || "-_./+,:@".contains($0) }
    return safe && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// `--latency-ms`'s value: milliseconds, or `auto` (estimated from the take); nil: not given.
func parseLatency(_ text: String?) throws -> (ms: Double?, auto: Bool) {
    guard let text else { return (nil, false) }
    if text.lowercased() == "auto" { return (nil, true) }
    guard let v = Double(text), v.isFinite else { throw ValidationError("--latency-ms \(text) is neither a number of milliseconds nor auto") }
    return (v, false)
}

/// `--stream N`: the audio stream of a container with several, for the commands that read audio.
struct StreamOption: ParsableArguments {
    @Option(help: AudioReader.Spec.stream.flagHelp)
    var stream: Int?

    func validate() throws { _ = try checked() }

    func checked() throws -> Int? {
        guard let stream else { return nil }
        do { try AudioReader.Spec.stream.check(stream) } catch { throw usageError(error) }
        return stream
    }
}

extension Parameter {
    /// Help for an option whose default ArgumentParser prints itself: what it does and its range
    /// (`.help`, with the default, is for options without one, whose default the library picks).
    var optionHelp: ArgumentHelp { optionHelp() }

    func optionHelp(_ prefix: String = "", _ suffix: String = "") -> ArgumentHelp {
        ArgumentHelp(flagText(prefix + "\(summary) \(rangeText)." + suffix))
    }

    /// `.help` (what it does, its range and default) for an option without a default of its own,
    /// the parameters it names written as flags.
    var flagHelp: ArgumentHelp { ArgumentHelp(flagText(help)) }
}

/// A renamed flag still read: one line on standard error naming the new spelling.
func deprecatedFlag(_ old: String, _ new: String) {
    printError("ktv: warning: \(old) is now \(new); the old spelling still works for now")
}

/// A batch setting out of range: a usage error naming the flag.
func batchUsage(_ error: BatchError) -> Error {
    error.parameterError.map { usageError($0, flags: ["takeTimeoutS": "--take-timeout-seconds"]) } ?? ValidationError("\(error)")
}

/// Exit code and message for a batch that cannot run: a bad manifest 65, files 74, results already there 64.
func batchFailure(_ error: BatchError) -> Error {
    switch error {
    case let .resultsExist(path, bytes):
        printError("ktv: \(path): already holds \(bytes) bytes of results; pass --resume to continue it, or remove it to start over")
        return ExitCode(KTVExitCode.usage)
    case let .io(e):
        return fileFailure(e)
    case .invalidParameter:
        return batchUsage(error)
    case .outputIsManifest, .outputIsInput:
        printError("ktv: \(error)")
        return ExitCode(KTVExitCode.usage)
    case .badManifest, .badResults:
        printError("ktv: \(error)")
        return ExitCode(KTVExitCode.dataError)
    case let .misplaced(m):
        printError("ktv: \(m.message(naming: { slotFlag($0, in: "batch") }))")
        return ExitCode(KTVExitCode.dataError)
    }
}
