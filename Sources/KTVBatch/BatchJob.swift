import Foundation
import KTVCore

/// A batch as a command line describes it: the manifest read, the results file opened (continued
/// with `resume`), then run. `ktv batch` is a few lines over this.
public struct BatchJob: Sendable {
    public let manifest: Manifest
    public let results: ResultsLog

    /// Reads the manifest (`-`: standard input) and opens the results (`-`: standard output).
    /// Refused, before the results are opened: results, or any of `alsoWriting` (the other files the
    /// caller will write: a summary), that would overwrite the manifest itself or a file a row names
    /// (the same file, links followed: `FileIO.sameFile`).
    public init(manifestPath: String, outputPath: String, resume: Bool, retryCrashed: Bool, alsoWriting: [String] = []) throws(BatchError) {
        let outputs = ([outputPath] + alsoWriting).compactMap { path in FileIO.regularFileID(path).map { (path, $0) } }
        let manifestID = FileIO.regularFileID(manifestPath)
        if let hit = outputs.first(where: { $0.1 == manifestID }) { throw .outputIsManifest(path: hit.0, manifest: manifestPath) }
        manifest = try Manifest.read(path: manifestPath)
        if !outputs.isEmpty {
            for row in manifest.rows {
                for column in ManifestColumn.paths {
                    guard let value = row[column], let id = FileIO.regularFileID(manifest.resolve(value)),
                          let hit = outputs.first(where: { $0.1 == id }) else { continue }
                    throw .outputIsInput(path: hit.0, input: "\(manifest.resolve(value)) (\(manifest.name) line \(row.line), \(column.rawValue))")
                }
            }
        }
        results = try ResultsLog(path: outputPath == "-" ? nil : outputPath, resume: resume, retryCrashed: retryCrashed)
    }

    /// What opening the results found (a torn last line dropped, lines that are not results).
    public var warnings: [String] { results.warnings }

    public func run(configuration: BatchConfiguration, stop: BatchStop = BatchStop(),
                    progress: @escaping @Sendable (BatchProgress) -> Void = { _ in }) async throws(BatchError) -> BatchSummary {
        try await BatchRunner.run(manifest, configuration: configuration, results: results, stop: stop, progress: progress)
    }
}
