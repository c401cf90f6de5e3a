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

        @Option(help: "Check the timing against this audio: a vocal stem, or a dual-mono KTV track (split first). One lyric file only.")
        var audio: String?

        @Option(help: "With --audio: auto, left-original, right-original, or O,A (1-based channel numbers).")
        var layout: String = "auto"

        @Option(help: "With --audio: largest shift searched either way, ms.")
        var searchMs: Int = 5000

        func validate() throws {
            _ = try parseSplitLayout(layout)
            if audio != nil && paths.count != 1 {
                throw ValidationError("--audio checks one lyric file against one track; give exactly one lyric file")
            }
            guard (0...60000).contains(searchMs) else { throw ValidationError("--search-ms must be 0-60000") }
        }

        func run() throws {
            var files: [String] = []
            for p in paths {
                do { files += try LyricFiles.expand(p) } catch {
                    printError("ktv: \(error)")
                    throw ExitCode(KTVExitCode.ioError)
                }
            }
            var results: [FileFindings]
            if let audio, let first = files.first {
                // The lyric file is parsed once: its model feeds the audio check too.
                let (findings, parsed) = LyricFiles.readOne(first, options: read.parseOptions)
                var checked = findings
                if let parsed {
                    checked = try AudioTiming.check(findings, parsed: parsed, audio: audio, layout: try parseSplitLayout(layout),
                                                    searchMs: searchMs, options: read.parseOptions)
                }
                results = [checked] + LyricFiles.validate(Array(files.dropFirst()), options: read.parseOptions)
            } else {
                results = LyricFiles.validate(files, options: read.parseOptions)
            }
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
        readOne(path, options: options).findings
    }

    /// Reads, parses and validates one file; the model too, when the file could be read as lyrics.
    static func readOne(_ path: String, options: LyricsParseOptions) -> (findings: FileFindings, parsed: ParsedLyrics?) {
        func unreadable(_ error: LyricsError) -> (findings: FileFindings, parsed: ParsedLyrics?) {
            var d = Diagnostic(rule: "unreadable", severity: .error, line: error.line, message: lyricsErrorMessage(error))
            if case let .undecodable(offset, detail) = error { d.byteOffset = offset; d.message = detail }
            if case let .badContainer(offset?, detail) = error { d.byteOffset = offset; d.message = detail }
            if case let .malformed(_, detail) = error { d.message = detail }
            return (FileFindings(path: path, diagnostics: [d], fatal: true), nil)
        }
        let bytes: [UInt8]
        do { bytes = try readLyricBytes(path, limit: options.maxTextBytes) } catch let error as LyricsError {
            return unreadable(error)
        } catch {
            return (FileFindings(path: path, diagnostics: [.error("unreadable", "\(error)")], fatal: true), nil)
        }
        do {
            let parsed = try LyricsReader.read(consume bytes, fileName: path == "-" ? nil : path, options: options)
            return (FileFindings(path: path, diagnostics: LyricsValidator.validate(parsed)), parsed)
        } catch {
            return unreadable(error)
        }
    }
}

/// `validate --audio`: where the voice sings against where the lyric words are.
enum AudioTiming {
    static func check(_ findings: FileFindings, parsed: ParsedLyrics, audio: String, layout: SplitLayout, searchMs: Int,
                      options: LyricsParseOptions) throws -> FileFindings {
        var result = findings
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-validate-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: temp) }
        var voicePath = audio
        var channel: ChannelSelection = .mix
        var note = "treated as a vocal stem"
        do {
            let info = try AudioReader(path: audio).info
            if info.channels >= 2 {
                var config = SplitConfiguration()
                config.layout = layout
                try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
                let vocals = temp.appendingPathComponent("vocals.wav").path
                // One call: split analyses the track and writes the vocal only when it is dual-mono.
                let analysis = try DualMonoSplitter.split(path: audio, configuration: config,
                                                          outputs: SplitOutputs(vocals: vocals, format: .wavFloat)).analysis
                if analysis.dualMono {
                    voicePath = vocals
                    channel = .channel(0)
                    note = "dual-mono track split first (original = channel \((analysis.originalChannel ?? 0) + 1))"
                } else {
                    note = "not a dual-mono track (\(analysis.reason)); its mix was treated as a vocal stem"
                }
            }
        } catch let error as AudioError {
            throw audioFailure(error)
        }
        let track: PitchTrack
        do { track = try PitchTracker(configuration: PitchConfiguration()).track(path: voicePath, channel: channel) } catch let error as AudioError {
            throw audioFailure(error)
        }
        var spans: [SungSpan] = []
        for (i, line) in parsed.lyrics.lines.enumerated() {
            if line.words.isEmpty {
                spans.append(SungSpan(startMs: line.startMs, endMs: line.endMs, group: i))
            } else {
                for w in line.words where !w.text.isBlank { spans.append(SungSpan(startMs: w.startMs, endMs: w.endMs, group: i)) }
            }
        }
        var config = AlignmentConfiguration()
        config.searchMs = searchMs
        let a = try VoicingAlignment.align(spans: spans, voiced: track.frames.map { $0.f0Hz != nil }, hopMs: track.hopS * 1000, configuration: config)
        let shift = Int(a.bestShiftMs.rounded())
        // The tag that moves every time by `shift` under the reading convention in force.
        let tag = options.offsetSign == .subtract ? -shift : shift
        result.diagnostics.append(.info("audio-alignment",
            "against \(audio) (\(note)): best shift \(shift) ms (add to every lyric time); \(pct(a.voicedShareAtBest)) of word time voiced there, \(pct(a.voicedShareAtZero)) as written"))
        if abs(shift) > 200 {
            result.diagnostics.append(.warning("lyrics-offset",
                "the lyrics are \(abs(shift)) ms \(shift < 0 ? "late" : "early") against the audio; move every time by \(shift) ms, or add `[offset:\(tag > 0 ? "+" : "")\(tag)]` (read with --offset-sign \(options.offsetSign.rawValue))"))
        }
        for g in a.mostlyUnvoicedGroups {
            let line = parsed.lyrics.lines[g]
            result.diagnostics.append(.warning("unvoiced-line", line: line.sourceLine,
                "only \(pct(a.groupShares[g] ?? 0)) of this line's word time is sung (after the best shift of \(shift) ms): `\(line.text.trimmingCharacters(in: .whitespaces))` may be mistimed"))
        }
        result.diagnostics.sort { ($0.line ?? 0) < ($1.line ?? 0) }
        result.extra = [("audio", .object([
            ("track", .string(audio)),
            ("best_shift_ms", .int(shift)),
            ("voiced_share", .double((a.voicedShareAtBest * 1000).rounded() / 1000)),
            ("voiced_share_at_zero", .double((a.voicedShareAtZero * 1000).rounded() / 1000)),
            ("equivalent_offset_tag", abs(shift) > 200 ? .string("[offset:\(tag > 0 ? "+" : "")\(tag)]") : .null),
            ("mostly_unvoiced_lines", .array(a.mostlyUnvoicedGroups.map { .int(parsed.lyrics.lines[$0].sourceLine ?? $0 + 1) })),
        ]))]
        return result
    }

    static func pct(_ v: Double) -> String { "\(Int((v * 100).rounded()))%" }
}

extension String {
    var isBlank: Bool { allSatisfy { $0 == " " || $0 == "\t" || $0 == "\u{3000}" } }
}
