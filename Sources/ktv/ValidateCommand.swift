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

        @OptionGroup var read: ReadOptions

        @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.")
        var output: String?

        @Option(help: "Check the timing against this audio: a vocal stem, or a dual-mono KTV track (split first). One lyric file only.")
        var audio: String?

        @Option(help: "With --audio: auto, left-original, right-original, or O,A (1-based channel numbers).")
        var layout: String = "auto"

        @Option(help: ArgumentHelp("With --audio: " + AlignmentConfiguration.Spec.searchMs.help))
        var searchMs = AlignmentConfiguration.Spec.searchMs.defaultValue

        func validate() throws {
            _ = try parseSplitLayout(layout)
            if audio != nil && paths.count != 1 {
                throw ValidationError("--audio checks one lyric file against one track; give exactly one lyric file")
            }
            var alignment = AlignmentConfiguration()
            alignment.searchMs = searchMs
            do { _ = try alignment.validated() } catch {
                throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)")
            }
        }

        func run() throws {
            var files: [String] = []
            for p in paths {
                do { files += try LyricsBatch.expand(p) } catch {
                    printError("ktv: \(error)")
                    throw ExitCode(KTVExitCode.ioError)
                }
            }
            var results: [FileFindings]
            if let audio, let first = files.first {
                // The lyric file is parsed once: its model feeds the audio check too.
                let (findings, parsed) = LyricsBatch.readOne(first, options: try read.parseOptions())
                var checked = findings
                if let parsed {
                    var alignment = AlignmentConfiguration()
                    alignment.searchMs = searchMs
                    do {
                        let r = try LyricTimingCheck.check(findings, parsed: parsed, audio: audio, layout: try parseSplitLayout(layout),
                                                           alignment: alignment, offsetSign: read.offsetSign)
                        for t in r.truncations { printError("ktv: warning: \(t)") }
                        checked = r.findings
                    } catch let error as AudioError {
                        throw audioFailure(error)
                    }
                }
                results = [checked] + LyricsBatch.validate(Array(files.dropFirst()), options: try read.parseOptions())
            } else {
                results = LyricsBatch.validate(files, options: try read.parseOptions())
            }
            // The library names the limit; how to raise it is the command line's to say.
            for i in results.indices {
                for j in results[i].diagnostics.indices where results[i].diagnostics[j].rule == LyricsBatch.tooLargeRule {
                    results[i].diagnostics[j].message += "; raise the limit with --max-text-mb N if the file is genuine"
                }
            }
            let report: String
            switch format {
            case .text: report = DiagnosticReport.textSummary(results, displayName: displayName)
            case .json: report = DiagnosticReport.json(results).serialized()
            case .sarif:
                let rules = LyricsValidator.rules.map { RuleDescription(id: $0.id, severity: $0.severity, summary: $0.summary) }
                report = DiagnosticReport.sarif(results, rules: rules, toolVersion: KTV.version).serialized()
            }
            try emit(Array(report.utf8), to: output)
            if results.contains(where: \.unreadable) { throw ExitCode(KTVExitCode.ioError) }
            if results.contains(where: \.fatal) { throw ExitCode(KTVExitCode.dataError) }
            let failing: Severity = strict ? .warning : .error
            if results.contains(where: { $0.diagnostics.contains { $0.severity >= failing } }) {
                throw ExitCode(KTVExitCode.findings)
            }
        }
    }
}
