import Foundation
import KTVAudio
import KTVCore
import KTVLyrics
import KTVPitch

// `ktv batch sync`: `LyricRetiming.sync` (see LyricSync.swift for the method) over a manifest of
// lyric/audio pairs, for a whole catalogue. Each row names its `id`, its `lyrics` and the audio
// (`take`; optional `accompaniment`, `stream`); the retimed lyrics go to `<folder>/<id>.<ext>` in
// the row's own format or the one asked for; one JSON line per row, ok or error, as for scoring.
// Rows run on `jobs` workers in this process (each sync makes its own tracker).

public enum SyncBatch {
    /// The columns a sync manifest needs.
    public static let required: [ManifestColumn] = [.id, .lyrics, .take]

    public struct Counts: Sendable, Equatable {
        /// Every line placed.
        public var synced = 0
        /// Written, with lines dropped or placed with low confidence.
        public var partial = 0
        public var failed = 0
    }

    /// Syncs every row and appends its result line to `results` (in completion order).
    /// - Parameters:
    ///   - folder: where the retimed files go (created if missing).
    ///   - format: the format written; nil: each row's own.
    public static func run(_ manifest: Manifest, folder: String, format: LyricsOutputFormat?, configuration: LyricSyncConfiguration,
                           parseOptions: LyricsParseOptions, jobs: Int, results: ResultsLog) async throws -> Counts {
        let configuration = try configuration.validated()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var counts = Counts()
        var seen: Set<String> = []
        var rows: [(ManifestRow, String?)] = []
        for row in manifest.rows {
            let id = row.id ?? ""
            if id.isEmpty { rows.append((row, "the row has no id")) } else if !seen.insert(id).inserted {
                rows.append((row, "id \(quoted(id)) is used by an earlier row; give each row its own id"))
            } else if row[.lyrics] == nil || row[.take] == nil {
                rows.append((row, "the row names no \(row[.lyrics] == nil ? "lyrics" : "take (the audio)")"))
            } else { rows.append((row, nil)) }
        }
        try await withThrowingTaskGroup(of: (JSONValue, Int).self) { group in
            var next = 0
            func start() {
                guard next < rows.count else { return }
                let (row, problem) = rows[next]
                next += 1
                group.addTask { one(row, problem: problem, manifest: manifest, folder: folder, format: format,
                                    configuration: configuration, parseOptions: parseOptions) }
            }
            for _ in 0..<max(1, jobs) { start() }
            while let (line, kind) = try await group.next() {
                try results.append(line)
                switch kind { case 0: counts.synced += 1; case 1: counts.partial += 1; default: counts.failed += 1 }
                start()
            }
        }
        return counts
    }

    /// One row: its result line and its kind (0 synced, 1 partial, 2 failed).
    static func one(_ row: ManifestRow, problem: String?, manifest: Manifest, folder: String, format: LyricsOutputFormat?,
                    configuration: LyricSyncConfiguration, parseOptions: LyricsParseOptions) -> (JSONValue, Int) {
        let id = row.id ?? ""
        func failure(_ reason: String, _ message: String) -> (JSONValue, Int) {
            (.object([("id", .string(id)), ("line", .int(row.line)), ("status", .string("error")), ("reason", .string(reason)), ("message", .string(message))]), 2)
        }
        if let problem { return failure("bad-row", problem) }
        let lyricsPath = manifest.resolve(row[.lyrics]!), audio = manifest.resolve(row[.take]!)
        let accompaniment = row[.accompaniment].map(manifest.resolve)
        let stream = row[.stream].flatMap { Int($0) }
        if row[.stream] != nil && stream == nil { return failure("bad-row", "stream \(quoted(row[.stream]!)) is not a number") }
        do {
            let bytes = try FileIO.read(lyricsPath, maxBytes: parseOptions.maxTextBytes)
            let parsed = try LyricsReader.read(bytes, fileName: lyricsPath, options: parseOptions)
            guard let target = format ?? LyricsOutputFormat(writing: parsed.lyrics.format) else {
                return failure("bad-lyrics", "\(parsed.lyrics.format.rawValue) is not written by ktv; run the batch with a target format")
            }
            let outcome = try LyricRetiming.sync(parsed.lyrics, audio: audio, stream: stream, accompaniment: accompaniment, configuration: configuration)
            let out = (folder as NSString).appendingPathComponent(safeName(id) + "." + fileExtension(target))
            if [lyricsPath, audio, accompaniment].contains(where: { $0 == out }) {
                return failure("output-is-input", "\(out) is an input of the row; give the output folder another place")
            }
            try FileIO.writeAtomically(LyricsWriter.write(outcome.lyrics, as: target).bytes, to: out)
            let m = outcome.map
            let partial = !m.dropped.isEmpty || !m.lowConfidence.isEmpty
            let line: JSONValue = .object([
                ("id", .string(id)), ("line", .int(row.line)), ("status", .string("ok")),
                ("lyrics", .string(lyricsPath)), ("audio", .string(audio)), ("output", .string(out)),
                ("ratio", .double((m.ratio * 10000).rounded() / 10000)),
                ("sections", .array(m.sections.map { s in .object([
                    ("first_line", .int(s.lines.lowerBound + 1)), ("last_line", .int(s.lines.upperBound + 1)),
                    ("offset_ms", .int(s.offsetMs)), ("ratio", .double((s.ratio * 10000).rounded() / 10000)), ("confidence", .double(s.confidence)),
                ]) })),
                ("lines", .int(parsed.lyrics.lines.count)),
                ("dropped", .array(m.dropped.map { .int($0 + 1) })),
                ("low_confidence", .array(m.lowConfidence.map { .int($0 + 1) })),
            ])
            return (line, partial ? 1 : 0)
        } catch let e as PitchError {
            if case .noAudio = e { return failure("no-voice", "\(audio): \(e)") }
            return failure("error", "\(e)")
        } catch let e as FileIOError {
            return failure("unreadable", "\(e)")
        } catch let e as AudioError {
            return failure("bad-audio", "\(audio): \(e)")
        } catch let e as LyricsError {
            return failure("bad-lyrics", "\(lyricsPath): \(e)")
        } catch {
            return failure("error", "\(error)")
        }
    }

    /// The file ending of a written format.
    static func fileExtension(_ f: LyricsOutputFormat) -> String {
        switch f {
        case .krcText: return "krc"
        case .elrc: return "lrc"
        case .qrcXML: return "xml"
        default: return f.rawValue
        }
    }

    /// An id as a file name: letters, digits, `.`, `-` and `_` kept, anything else `_`.
    static func safeName(_ id: String) -> String {
        let s = String(id.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        return s.hasPrefix(".") ? "_" + s.dropFirst() : s
    }
}
