import Foundation
import KTVCore
import KTVScore

// A batch manifest: one row per take, as CSV with a header row (RFC 4180: quoted fields, doubled
// quotes, CRLF or LF, newlines inside quotes) or as JSON Lines (one object per line). The whole
// manifest is checked before any take is scored: a column ktv does not know is an error naming it
// (a typo such as `latncy_ms` must not silently leave every take at the default), and so is a
// broken quote or a row with the wrong number of fields. A row whose values are wrong (a rule set
// that does not exist, a missing take) is the batch's business: it becomes that row's error line.

/// A manifest column. Paths are relative to the manifest's folder (to the current folder for stdin).
public enum ManifestColumn: String, Sendable, CaseIterable, Hashable {
    case id, take, reference, lyrics, accompaniment
    case progressLog = "progress_log"
    case device, rules, timing
    case latencyMs = "latency_ms"
    case keyShift = "key_shift"
    case pitchIntervalMs = "pitch_interval_ms"
    case stream

    /// Every row needs these.
    public static let required: [ManifestColumn] = [.id, .take, .reference]
    /// The columns holding paths.
    public static let paths: [ManifestColumn] = [.take, .reference, .lyrics, .accompaniment, .progressLog]
}

/// One row: its values as written (empty cells and JSON nulls are absent), and where it is.
public struct ManifestRow: Sendable, Equatable {
    /// 1-based line of the manifest the row starts on.
    public var line: Int
    public var values: [ManifestColumn: String]

    public init(line: Int, values: [ManifestColumn: String]) {
        self.line = line
        self.values = values
    }

    public subscript(_ column: ManifestColumn) -> String? { values[column] }
    public var id: String? { values[.id] }
}

/// A parsed manifest.
public struct Manifest: Sendable {
    public enum Format: String, Sendable { case csv, jsonl }

    /// What messages call the manifest (its path, or `<stdin>`).
    public var name: String
    public var format: Format
    public var rows: [ManifestRow]
    /// Relative paths in the rows are taken from here.
    public var baseDirectory: String

    /// Manifests larger than this are refused rather than read: split them (or use `--shard`).
    public static let maxBytes = 1 << 30
    /// A manifest that is no regular file (standard input, a pipe, a device: its size unknown until
    /// its end, which `/dev/zero` never reaches) is read no further than this.
    public static let maxStreamBytes = 64 << 20

    /// Reads a manifest file (`-`: standard input, whose relative paths are from the current folder).
    /// Over its size limit it is a bad manifest (the data, not the machine, is the problem).
    /// `required`: the columns every row needs (scoring's by default; `SyncBatch.required` for sync).
    public static func read(path: String, required: [ManifestColumn] = ManifestColumn.required) throws(BatchError) -> Manifest {
        let bytes: [UInt8]
        let name = path == "-" ? "<stdin>" : path
        do { bytes = try FileIO.read(path, maxBytes: maxBytes, maxStreamBytes: maxStreamBytes) } catch {
            guard case let .tooLarge(_, limit) = error else { throw .io(error) }
            throw .badManifest(path: name, line: nil, detail: limit == maxBytes
                ? "larger than the \(FileIO.describeSize(limit)) limit on manifests; split it into several"
                : "more than \(FileIO.describeSize(limit)) read from a stream (a pipe or a device, not a regular file) without its end; save a manifest that large to a file")
        }
        let base = path == "-" ? FileManager.default.currentDirectoryPath : (path as NSString).deletingLastPathComponent
        do {
            return try parse(bytes, name: name, baseDirectory: base.isEmpty ? "." : base,
                             format: path.hasSuffix(".csv") ? .csv : (path.hasSuffix(".jsonl") || path.hasSuffix(".ndjson")) ? .jsonl : nil, required: required)
        } catch {
            // A recording, lyrics or a reference given as the manifest: say what it is, not where its bytes broke CSV.
            if case .badManifest = error, let m = MisplacedInput.check(path: name, bytes: bytes, slot: .manifest) { throw .misplaced(m) }
            throw error
        }
    }

    /// Parses manifest bytes; `format` nil: JSON Lines when the first non-blank character is `{`, else CSV.
    public static func parse(_ bytes: [UInt8], name: String, baseDirectory: String, format: Format? = nil,
                             required: [ManifestColumn] = ManifestColumn.required) throws(BatchError) -> Manifest {
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        let body = bytes[start...]
        let detected = format ?? (body.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D && $0 != 0x0A } == UInt8(ascii: "{") ? .jsonl : .csv)
        let rows = detected == .csv ? try CSVManifest.rows(body, name: name, required: required) : try JSONLinesManifest.rows(body, name: name)
        return Manifest(name: name, format: detected, rows: rows, baseDirectory: baseDirectory)
    }

    /// A row's path value made absolute against the manifest's folder.
    public func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : (baseDirectory as NSString).appendingPathComponent(path)
    }

    /// `unknown column 'latncy_ms' (did you mean 'latency_ms'?); the columns are id, take, …`
    static func unknownColumn(_ name: String) -> String {
        let known = ManifestColumn.allCases.map(\.rawValue)
        let hint = nearest(name, among: known).flatMap { $0.distance <= 3 ? " (did you mean \(quoted($0.match))?)" : nil } ?? ""
        return "unknown column \(quoted(name))\(hint); the columns are \(known.joined(separator: ", "))"
    }
}

/// RFC 4180 CSV with a header row naming the columns.
enum CSVManifest {
    static func rows(_ bytes: ArraySlice<UInt8>, name: String, required: [ManifestColumn] = ManifestColumn.required) throws(BatchError) -> [ManifestRow] {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1, recordLine = 1
        var i = bytes.startIndex
        var inQuotes = false, wasQuoted = false
        func text(_ b: [UInt8], _ line: Int) throws(BatchError) -> String {
            guard let s = String(validating: b, as: UTF8.self) else { throw .badManifest(path: name, line: line, detail: "not UTF-8 text") }
            return s
        }
        func endRecord() throws(BatchError) {
            fields.append(try text(field, line))
            // A blank line is not a row.
            if !(fields.count == 1 && fields[0].trimmingCharacters(in: .whitespaces).isEmpty && !wasQuoted) { records.append((recordLine, fields)) }
            fields = []
            field = []
            wasQuoted = false
        }
        while i < bytes.endIndex {
            let c = bytes[i]
            if inQuotes {
                if c == UInt8(ascii: "\"") {
                    if i + 1 < bytes.endIndex && bytes[i + 1] == UInt8(ascii: "\"") { field.append(c); i += 2; continue }
                    inQuotes = false
                    let next = i + 1 < bytes.endIndex ? bytes[i + 1] : UInt8(ascii: "\n")
                    if next != UInt8(ascii: ",") && next != UInt8(ascii: "\n") && next != UInt8(ascii: "\r") {
                        throw .badManifest(path: name, line: line, detail: "text after a closing quote; a quote inside a quoted field is written twice (\"\")")
                    }
                } else {
                    if c == UInt8(ascii: "\n") { line += 1 }
                    field.append(c)
                }
                i += 1
                continue
            }
            switch c {
            case UInt8(ascii: "\""):
                guard field.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else {
                    throw .badManifest(path: name, line: line, detail: "a quote inside an unquoted field; quote the whole field and double the quote")
                }
                field = []
                inQuotes = true
                wasQuoted = true
            case UInt8(ascii: ","):
                fields.append(try text(field, line))
                field = []
            case UInt8(ascii: "\r") where i + 1 < bytes.endIndex && bytes[i + 1] == UInt8(ascii: "\n"):
                break
            case UInt8(ascii: "\n"):
                try endRecord()
                line += 1
                recordLine = line
            default:
                field.append(c)
            }
            i += 1
        }
        if inQuotes { throw .badManifest(path: name, line: recordLine, detail: "a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty || wasQuoted { try endRecord() }

        guard let header = records.first else { throw .badManifest(path: name, line: nil, detail: "empty: the first line names the columns (id,take,reference,…)") }
        var columns: [ManifestColumn] = []
        for h in header.fields {
            let key = h.trimmingCharacters(in: .whitespaces)
            guard let column = ManifestColumn(rawValue: key) else { throw .badManifest(path: name, line: header.line, detail: Manifest.unknownColumn(key)) }
            if columns.contains(column) { throw .badManifest(path: name, line: header.line, detail: "column \(quoted(key)) is named twice") }
            columns.append(column)
        }
        for r in required where !columns.contains(r) {
            let names = required.map(\.rawValue)
            throw .badManifest(path: name, line: header.line, detail: "no \(quoted(r.rawValue)) column; every manifest names \(names.dropLast().joined(separator: ", ")) and \(names.last!)")
        }
        var rows: [ManifestRow] = []
        rows.reserveCapacity(records.count - 1)
        for record in records.dropFirst() {
            guard record.fields.count == columns.count else {
                throw .badManifest(path: name, line: record.line, detail: "\(record.fields.count) fields, but the header names \(columns.count) columns")
            }
            var values: [ManifestColumn: String] = [:]
            for (column, value) in zip(columns, record.fields) {
                let v = value.trimmingCharacters(in: .whitespaces)
                if !v.isEmpty { values[column] = v }
            }
            rows.append(ManifestRow(line: record.line, values: values))
        }
        return rows
    }
}

/// JSON Lines: one object per line; strings or numbers, null for absent.
enum JSONLinesManifest {
    static func rows(_ bytes: ArraySlice<UInt8>, name: String) throws(BatchError) -> [ManifestRow] {
        var rows: [ManifestRow] = []
        var line = 0
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            line += 1
            let end = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            let text = Array(bytes[lineStart..<end])
            lineStart = end + 1
            if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let value: JSONValue
            do { value = try JSONReader.parse(text) } catch {
                throw .badManifest(path: name, line: line, detail: "not a JSON object: \(error)")
            }
            guard case let .object(members) = value else { throw .badManifest(path: name, line: line, detail: "not a JSON object; each line is one row {\"id\": …, \"take\": …, \"reference\": …}") }
            var values: [ManifestColumn: String] = [:]
            for (key, v) in members {
                guard let column = ManifestColumn(rawValue: key) else { throw .badManifest(path: name, line: line, detail: Manifest.unknownColumn(key)) }
                switch v {
                case .null: continue
                case let .string(s): if !s.isEmpty { values[column] = s }
                case let .int(n): values[column] = String(n)
                case let .double(d): values[column] = String(d)
                default: throw .badManifest(path: name, line: line, detail: "\(quoted(key)) is \(v.serialized(pretty: false).prefix(40)); give a string or a number")
                }
            }
            rows.append(ManifestRow(line: line, values: values))
        }
        return rows
    }
}
