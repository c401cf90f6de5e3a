import Foundation
import KTVCore

/// A batch as a command line describes it: the manifest read, the results file opened (continued
/// with `resume`), then run. `ktv batch` is a few lines over this.
public struct BatchJob: Sendable {
    public let manifest: Manifest
    public let results: ResultsLog

    /// Reads the manifest (`-`: standard input) and opens the results (`-`: standard output).
    /// Refused: results that would overwrite the manifest itself (the same file, links followed).
    public init(manifestPath: String, outputPath: String, resume: Bool, retryCrashed: Bool) throws(BatchError) {
        if outputPath != "-", manifestPath != "-", Self.sameFile(outputPath, manifestPath) {
            throw .outputIsManifest(path: outputPath)
        }
        manifest = try Manifest.read(path: manifestPath)
        results = try ResultsLog(path: outputPath == "-" ? nil : outputPath, resume: resume, retryCrashed: retryCrashed)
    }

    /// What opening the results found (a torn last line dropped, lines that are not results).
    public var warnings: [String] { results.warnings }

    public func run(configuration: BatchConfiguration, stop: BatchStop = BatchStop(),
                    progress: @escaping @Sendable (BatchProgress) -> Void = { _ in }) async throws(BatchError) -> BatchSummary {
        try await BatchRunner.run(manifest, configuration: configuration, results: results, stop: stop, progress: progress)
    }

    /// Whether two paths name one file (same device and inode), links followed.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }
}
