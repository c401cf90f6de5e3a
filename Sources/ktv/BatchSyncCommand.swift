import ArgumentParser
import Foundation
import KTVBatch
import KTVCore
import KTVLyrics
import KTVPitch

/// `ktv batch sync MANIFEST --out-dir DIR`: `ktv lyrics sync` over a manifest of lyric/audio pairs.
struct BatchSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Retime the lyrics a manifest lists to their audio (ktv lyrics sync for a whole catalogue).",
        discussion: """
        The manifest: CSV with a header row, or JSON Lines. Columns: id, lyrics, take (the audio) (required); accompaniment, stream.
        Paths are relative to the manifest's folder. Each row's lyrics are written retimed to <out-dir>/<id>.<ext> and give one JSON line:
        ok (the sections, the lines dropped and low-confidence) or error (reason: bad-row, bad-lyrics, no-voice, …).
        Exit 0 when every line of every row was placed, 1 when any row has dropped or low-confidence lines or failed, 65 for a bad manifest.
        """)

    @Argument(help: "The manifest: CSV (header row) or JSON Lines; - for standard input.")
    var manifest: String

    @Option(help: "The folder the retimed lyrics go to (made when missing).")
    var outDir: String

    @Option(name: .shortAndLong, help: "The results, one JSON line per row in completion order; - for standard output.")
    var output: String = "-"

    @Option(help: "Write this format instead of each row's own: \(LyricsOutputFormat.allCases.map(\.rawValue).joined(separator: ", ")).",
            transform: { try namedValue($0, LyricsOutputFormat.init(name:), valid: LyricsOutputFormat.allCases.map(\.rawValue),
                                          aliases: Array(LyricsOutputFormat.aliases.keys)) })
    var to: LyricsOutputFormat?

    @Option(help: "Rows synced at once (default: the cores).")
    var jobs: Int?

    @Option(name: .customLong("search-seconds"), help: LyricSyncConfiguration.Spec.searchS.optionHelp)
    var searchS = LyricSyncConfiguration.Spec.searchS.defaultValue

    @OptionGroup var limit: TextLimitOptions

    func validate() throws {
        _ = try configuration()
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs \(jobs) is out of range; allowed: 1…256") }
    }

    func configuration() throws -> LyricSyncConfiguration {
        var c = LyricSyncConfiguration()
        c.searchS = searchS
        return try syncConfiguration(c)
    }

    func run() async throws {
        let config = try configuration()
        let rows: Manifest
        do { rows = try Manifest.read(path: manifest, required: SyncBatch.required) } catch { throw batchFailure(error) }
        try refuseOutputsOverInputs([("-o", output)], inputs: [("the manifest", manifest)])
        try makeFolder(outDir)
        let results: ResultsLog
        do { results = try ResultsLog(path: output == "-" ? nil : output, resume: false) } catch { throw batchFailure(error) }
        let counts: SyncBatch.Counts
        do {
            counts = try await SyncBatch.run(rows, folder: outDir, format: to, configuration: config, parseOptions: try limit.options(),
                                             jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, results: results)
        } catch let error as FileIOError {
            throw failure(error)
        }
        results.sync()
        printError("\(rows.rows.count) row(s): \(counts.synced) synced, \(counts.partial) with lines dropped or low-confidence, \(counts.failed) failed")
        if counts.partial + counts.failed > 0 { throw ExitCode(KTVExitCode.findings) }
    }
}

/// A sync configuration checked, its range errors as usage errors naming the flag.
func syncConfiguration(_ c: LyricSyncConfiguration) throws -> LyricSyncConfiguration {
    do { return try c.validated() } catch {
        if let p = error.parameterError { throw usageError(p, flags: ["searchS": "--search-seconds"]) }
        throw ValidationError("\(error)")
    }
}
