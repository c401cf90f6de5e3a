import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// Reads inline text through the public entry point, exactly as a file with these bytes would be read.
func read(_ text: String, fileName: String? = nil, options: LyricsParseOptions = .init()) throws -> ParsedLyrics {
    try LyricsReader.read(Array(text.utf8), fileName: fileName, options: options)
}

func read(bytes: [UInt8], fileName: String? = nil, options: LyricsParseOptions = .init()) throws -> ParsedLyrics {
    try LyricsReader.read(bytes, fileName: fileName, options: options)
}

/// The error `LyricsReader.read` throws for these bytes, or nil when it reads them.
func readError(_ bytes: [UInt8], fileName: String? = nil, options: LyricsParseOptions = .init()) -> LyricsError? {
    do {
        _ = try LyricsReader.read(bytes, fileName: fileName, options: options)
        return nil
    } catch {
        return error
    }
}

/// Parse findings plus validator findings.
func validate(_ text: String, fileName: String? = nil, options: LyricsParseOptions = .init()) throws -> [Diagnostic] {
    LyricsValidator.validate(try read(text, fileName: fileName, options: options))
}

/// What a finding is, without its message: rule id, severity and 1-based line.
struct Finding: Equatable, CustomStringConvertible {
    var rule: String
    var severity: Severity
    var line: Int?

    init(_ rule: String, _ severity: Severity, line: Int?) {
        self.rule = rule
        self.severity = severity
        self.line = line
    }

    var description: String { "\(rule)/\(severity.rawValue)@\(line.map(String.init) ?? "-")" }
}

extension Array where Element == Diagnostic {
    var findings: [Finding] { map { Finding($0.rule, $0.severity, line: $0.line) } }
}

/// Line spans and texts in one comparable shape: (start, end, text).
struct Span: Equatable, CustomStringConvertible {
    var start: Int
    var end: Int
    var text: String

    init(_ start: Int, _ end: Int, _ text: String) {
        self.start = start
        self.end = end
        self.text = text
    }

    var description: String { "\(start)-\(end) \"\(text)\"" }
}

extension Lyrics {
    var lineSpans: [Span] { lines.map { Span($0.startMs, $0.endMs, $0.text) } }
}

extension LyricLine {
    var wordSpans: [Span] { words.map { Span($0.startMs, $0.endMs, $0.text) } }
}

/// The committed sample files in `fixtures/lyrics`, found from this source file's path
/// (Tests/KTVLyricsTests/ → package root → fixtures/lyrics).
enum Fixtures {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support.swift
        .deletingLastPathComponent()  // KTVLyricsTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("fixtures/lyrics")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static func read(_ name: String, options: LyricsParseOptions = .init()) throws -> ParsedLyrics {
        try LyricsReader.read(try bytes(name), fileName: name, options: options)
    }

    static func validate(_ name: String, options: LyricsParseOptions = .init()) throws -> [Diagnostic] {
        LyricsValidator.validate(try read(name, options: options))
    }

    /// Every file in the directory except the README.
    static func allNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0 != "README.md" }
            .sorted()
    }
}
