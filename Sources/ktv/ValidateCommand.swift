import ArgumentParser
import Foundation
import KTVAudio
import KTVCore
import KTVLyrics
import KTVPitch

extension LyricsCommand {
    struct Validate: ParsableCommand {
        enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json, sarif }

        static let configuration = CommandConfiguration(
            abstract: "Check lyric files and folders (recursively) and report findings.",
            discussion: """
            Text output looks like a compiler's (`file:line: error: message [rule]`); SARIF 2.1.0 is for code-review tools.
            Line numbers of encrypted KRC files refer to the decrypted text (see `ktv lyrics decrypt`).
            Folders are searched for files ending in \(LyricsBatch.extensions.sorted().map { "." + $0 }.joined(separator: ", ")).
            Exit 0 when there is no error, 1 when any file has an error (with --strict: any warning), 65 when a file cannot be read as lyrics at all.
            """)

        @Argument(help: "Lyric files and folders (`-` for standard input).")
        var paths: [String]

        @Option(help: "Report format: text, json or sarif.")
        var format: ReportFormat = .text

        @Flag(help: "Treat warnings as failures (exit 1).")
        var strict = false

        @Option(help: "Report only findings at this severity or above: info, warning or error (the exit code follows what is reported).")
        var minSeverity: Severity = .info

        @Option(help: "With --format sarif: the folder locations are relative to (SARIF's SRCROOT), so review tools map them onto their checkout. Default: the current folder.")
        var base: String?

        @OptionGroup var read: ReadOptions

        @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.")
        var output: String?

        @Option(help: "Check the timing against this audio: a vocal stem, or a dual-mono KTV track (split first). One lyric file only.")
        var audio: String?

        @OptionGroup var stream: StreamOption

        @Option(help: ArgumentHelp("With --audio: " + layoutHelp))
        var layout: String = "auto"

        @Option(help: AlignmentConfiguration.Spec.searchMs.optionHelp("With --audio: "))
        var searchMs = AlignmentConfiguration.Spec.searchMs.defaultValue

        func validate() throws {
            if audio != nil { warnOldLayout(layout) }
            _ = try alignment()
            if audio != nil && paths.count != 1 {
                throw ValidationError("--audio checks one lyric file against one track; give exactly one lyric file")
            }
        }

        func alignment() throws -> (AlignmentConfiguration, SplitLayout) {
            var alignment = AlignmentConfiguration()
            alignment.searchMs = searchMs
            do { return (try alignment.validated(), try splitLayout(layout)) } catch let error as PitchError {
                throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)")
            }
        }

        func run() throws {
            var files: [String] = []
            var skipped: [FileFindings] = []
            for p in paths {
                do {
                    let walk = try LyricsBatch.walk(p)
                    files += walk.files
                    skipped += walk.skipped.map { path, kind in
                        FileFindings(path: path, diagnostics: [.warning("not-a-file", "\(kind), not a regular file; skipped (a folder walk reads regular files and links to them)")])
                    }
                } catch {
                    printError("ktv: \(error)")
                    throw ExitCode(KTVExitCode.ioError)
                }
            }
            try refuseOutputsOverInputs([("-o", output)], inputs: files.map { ("the lyric file", $0) } + [("--audio", audio)])
            var results: [FileFindings]
            if let audio {
                let (alignment, layout) = try alignment()
                do {
                    let checked = try LyricTimingCheck.validate(files, options: try read.parseOptions(), audio: audio, audioStream: try stream.checked(), layout: layout, alignment: alignment)
                    for t in checked.truncations { printError("ktv: warning: \(t)") }
                    results = checked.results
                    mentionSyncCommand(&results, audio: audio)
                } catch let error as AudioError {
                    throw failure(error)
                } catch let error as PitchError {
                    printError("ktv: \(audio): \(error)")
                    throw ExitCode(KTVExitCode.dataError)
                }
            } else {
                results = LyricsBatch.validate(files, options: try read.parseOptions())
            }
            results += skipped
            mentionTextLimitFlag(&results)
            results = DiagnosticReport.filtered(results, minimum: minSeverity)
            // JSON and SARIF stream to the output: a folder's report can be tens of MB.
            switch format {
            case .text: try emit(Array(DiagnosticReport.textSummary(results, displayName: displayName).utf8), to: output)
            case .json: try emitStreaming(to: output) { put in try DiagnosticReport.json(results).write(to: put) }
            case .sarif:
                let rules = LyricsValidator.rules.map { RuleDescription(id: $0.id, severity: $0.severity, summary: $0.summary) }
                let cwd = FileManager.default.currentDirectoryPath
                let base = self.base.map { $0.hasPrefix("/") ? $0 : cwd + "/" + $0 } ?? cwd
                let report = DiagnosticReport.sarif(results, rules: rules, toolVersion: KTV.version, base: base, workingDirectory: cwd)
                try emitStreaming(to: output) { put in try report.write(to: put) }
            }
            if results.contains(where: \.unreadable) { throw ExitCode(KTVExitCode.ioError) }
            if results.contains(where: \.fatal) { throw ExitCode(KTVExitCode.dataError) }
            let failing: Severity = strict ? .warning : .error
            if results.contains(where: { $0.diagnostics.contains { $0.severity >= failing } }) {
                throw ExitCode(KTVExitCode.findings)
            }
        }
    }
}

extension Severity: ExpressibleByArgument {}
