import ArgumentParser
import Foundation
import KTVCore
import KTVLyrics

extension LyricsCommand {
    struct Validate: ParsableCommand {
        enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json, sarif }

        static let configuration = CommandConfiguration(
            abstract: "Check lyric files and folders (recursively) and report findings.",
            discussion: """
            Text output looks like a compiler's (`file:line: error: message [rule]`); SARIF 2.1.0 is for code-review tools.
            Line numbers of encrypted KRC files refer to the decrypted text (see `ktv lyrics decrypt`).
            Folders are searched for files ending in \(LyricFiles.extensions.sorted().map { "." + $0 }.joined(separator: ", ")).
            Exit 0 when there is no error, 1 when any file has an error (with --strict: any warning), 65 when a file cannot be read as lyrics at all.
            """)

        @Argument(help: "Lyric files and folders (`-` for standard input).")
        var paths: [String]

        @Option(help: "Report format: text, json or sarif.")
        var format: ReportFormat = .text

        @Flag(help: "Treat warnings as failures (exit 1).")
        var strict = false

        @OptionGroup var read: ReadOptions

        @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.")
        var output: String?

        func run() throws {
            var files: [String] = []
            for p in paths {
                do { files += try LyricFiles.expand(p) } catch {
                    printError("ktv: \(error)")
                    throw ExitCode(KTVExitCode.ioError)
                }
            }
            let results = LyricFiles.validate(files, options: read.parseOptions)
            let report: String
            switch format {
            case .text:
                var s = ""
                for r in results {
                    for d in r.diagnostics { s += DiagnosticReport.text(d, path: displayName(r.path)) + "\n" }
                }
                let errors = results.reduce(0) { $0 + $1.diagnostics.filter { $0.severity == .error }.count }
                let warnings = results.reduce(0) { $0 + $1.diagnostics.filter { $0.severity == .warning }.count }
                let failed = results.filter { r in r.diagnostics.contains { $0.severity == .error } }.count
                s += "\(results.count) file(s) checked: \(errors) error(s), \(warnings) warning(s); \(failed) file(s) with errors\n"
                report = s
            case .json:
                report = DiagnosticReport.json(results).serialized()
            case .sarif:
                let rules = LyricsValidator.rules.map { RuleDescription(id: $0.id, severity: $0.severity, summary: $0.summary) }
                report = DiagnosticReport.sarif(results, rules: rules, toolVersion: KTV.version).serialized()
            }
            try emit(Array(report.utf8), to: output)
            if results.contains(where: \.fatal) { throw ExitCode(KTVExitCode.dataError) }
            let failing: Severity = strict ? .warning : .error
            if results.contains(where: { $0.diagnostics.contains { $0.severity >= failing } }) {
                throw ExitCode(KTVExitCode.findings)
            }
        }
    }
}

/// Finding and validating many lyric files in one process.
enum LyricFiles {
    static let extensions: Set<String> = ["krc", "lrc", "elrc", "yrc", "qrc", "xml", "pitch", "txt"]

    /// A file as given, or every lyric file below a folder, sorted.
    static func expand(_ path: String) throws -> [String] {
        if path == "-" { return [path] }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw FileIOError.cannotRead(path: path, reason: "no such file or folder")
        }
        guard isDir.boolValue else { return [path] }
        guard let walker = FileManager.default.enumerator(atPath: path) else {
            throw FileIOError.cannotRead(path: path, reason: "folder cannot be listed")
        }
        var found: [String] = []
        while let rel = walker.nextObject() as? String {
            let name = (rel as NSString).lastPathComponent
            if name.hasPrefix(".") { continue }
            let ext = (name as NSString).pathExtension.lowercased()
            guard extensions.contains(ext) else { continue }
            let full = (path as NSString).appendingPathComponent(rel)
            var d: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &d), !d.boolValue { found.append(full) }
        }
        return found.sorted()
    }

    /// Reads, parses and validates each file; files are independent, so they are spread over the cores.
    static func validate(_ paths: [String], options: LyricsParseOptions) -> [FileFindings] {
        final class Slots: @unchecked Sendable {
            // Each index is written by exactly one iteration, under the lock.
            var items: [FileFindings?]
            let lock = NSLock()
            init(_ n: Int) { items = .init(repeating: nil, count: n) }
        }
        let slots = Slots(paths.count)
        let chunk = max(1, paths.count / (ProcessInfo.processInfo.activeProcessorCount * 8))
        let chunks = (paths.count + chunk - 1) / chunk
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            var local: [(Int, FileFindings)] = []
            for k in (c * chunk)..<min(paths.count, (c + 1) * chunk) {
                local.append((k, validateOne(paths[k], options: options)))
            }
            slots.lock.lock()
            for (k, r) in local { slots.items[k] = r }
            slots.lock.unlock()
        }
        return slots.items.map { $0! }
    }

    static func validateOne(_ path: String, options: LyricsParseOptions) -> FileFindings {
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch {
            return FileFindings(path: path, diagnostics: [.error("unreadable", "\(error)")], fatal: true)
        }
        do {
            let parsed = try LyricsReader.read(bytes, fileName: path == "-" ? nil : path, options: options)
            return FileFindings(path: path, diagnostics: LyricsValidator.validate(parsed))
        } catch {
            var d = Diagnostic(rule: "unreadable", severity: .error, line: error.line, message: "\(error)")
            if case let .undecodable(offset, detail) = error { d.byteOffset = offset; d.message = detail }
            if case let .badContainer(offset?, detail) = error { d.byteOffset = offset; d.message = detail }
            if case let .malformed(_, detail) = error { d.message = detail }
            return FileFindings(path: path, diagnostics: [d], fatal: true)
        }
    }
}
