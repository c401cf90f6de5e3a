import ArgumentParser
import Foundation
import KTVAudio
import KTVBatch
import KTVCore
import KTVLyrics
import KTVScore

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
    let suggestion = nearest(text, among: valid + aliases.sorted()).map { "did you mean `\($0.match)`? " } ?? ""
    throw ValidationError("\(suggestion)valid values: \(valid.joined(separator: ", "))")
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

/// `--latency-ms`'s value: milliseconds, or `auto` (estimated from the take); nil: not given.
func parseLatency(_ text: String?) throws -> LatencySetting? {
    guard let text else { return nil }
    guard let setting = LatencySetting(parsing: text) else { throw ValidationError("--latency-ms \(text) \(LatencySetting.expected)") }
    return setting
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

/// Exit code and message for a batch that cannot run (`BatchError.exitCode`), saying how to go on
/// with results already there.
func batchFailure(_ error: BatchError) -> Error {
    switch error {
    case let .resultsExist(path, bytes):
        printError("ktv: \(path): already holds \(bytes) bytes of results; pass --resume to continue it, or remove it to start over")
        return ExitCode(error.exitCode)
    case .invalidParameter: return batchUsage(error)
    case let .misplaced(m):
        printError("ktv: \(m.message(naming: { slotFlag($0, in: "batch") }))")
        return ExitCode(error.exitCode)
    default: return failure(error)
    }
}
