import Foundation
import Testing
@testable import KTVCore

@Suite struct TextDecodingTests {
    @Test func plainUTF8IsPassedThrough() throws {
        let d = try TextDecoder.decode(Array("[ti:十年]\n".utf8))
        #expect(d.encoding == .utf8)
        #expect(String(decoding: d.utf8, as: UTF8.self) == "[ti:十年]\n")
    }

    @Test func utf8BOMIsRemoved() throws {
        let d = try TextDecoder.decode([0xEF, 0xBB, 0xBF] + Array("ab".utf8))
        #expect(d.encoding == .utf8BOM)
        #expect(d.utf8 == Array("ab".utf8))
    }

    @Test func utf16LittleAndBigEndianWithBOM() throws {
        let le: [UInt8] = [0xFF, 0xFE, 0x5B, 0x00, 0x41, 0x4E, 0x5D, 0x00]  // "[乁]" (U+4E41) little-endian
        let d = try TextDecoder.decode(le)
        #expect(d.encoding == .utf16LE)
        #expect(String(decoding: d.utf8, as: UTF8.self) == "[乁]")
        let be: [UInt8] = [0xFE, 0xFF, 0x00, 0x5B, 0x4E, 0x41, 0x00, 0x5D]
        let e = try TextDecoder.decode(be)
        #expect(e.encoding == .utf16BE)
        #expect(String(decoding: e.utf8, as: UTF8.self) == "[乁]")
    }

    @Test func gb18030IsDecoded() throws {
        // "十年" in GB18030/GBK: CA AE C4 EA
        let d = try TextDecoder.decode(Array("[ti:".utf8) + [0xCA, 0xAE, 0xC4, 0xEA] + Array("]".utf8))
        #expect(d.encoding == .gb18030)
        #expect(String(decoding: d.utf8, as: UTF8.self) == "[ti:十年]")
    }

    @Test func nulByteIsBinaryWithItsOffset() {
        #expect(throws: TextDecodingError.undecodable(byteOffset: 3, detail: "binary data (a NUL byte), not text; expected UTF-8, UTF-16 with BOM or GB18030 lyrics")) {
            try TextDecoder.decode([0x41, 0x42, 0xFF, 0x00, 0x43])
        }
    }

    @Test func undecodableNamesFirstBadUTF8Byte() {
        // 0x80 cannot start a UTF-8 sequence nor a GB18030 character.
        do {
            _ = try TextDecoder.decode(Array("abc".utf8) + [0x80, 0x41])
            Issue.record("expected an error")
        } catch {
            guard case let .undecodable(offset, detail) = error else { return }
            #expect(offset == 3)
            #expect(detail.hasPrefix("not valid UTF-8 (first bad byte 0x80)"))
        }
    }

    @Test func invalidUTF8AfterBOMIsAnError() {
        #expect(throws: TextDecodingError.self) { try TextDecoder.decode([0xEF, 0xBB, 0xBF, 0x41, 0xC3]) }
    }

    @Test(arguments: [
        ([0x41, 0xC3, 0xA9], nil as Int?),        // é
        ([0x41, 0xC3], 1),                         // truncated 2-byte sequence
        ([0xE0, 0x80, 0x80], 0),                   // overlong
        ([0xED, 0xA0, 0x80], 0),                   // surrogate
        ([0xF0, 0x9F, 0x8E, 0xA4], nil),           // 🎤
        ([0xF4, 0x90, 0x80, 0x80], 0),             // beyond U+10FFFF
    ] as [([UInt8], Int?)])
    func utf8Validation(bytes: [UInt8], bad: Int?) {
        #expect(TextDecoder.firstInvalidUTF8(bytes) == bad)
    }
}

@Suite struct JSONWriterTests {
    @Test func objectsKeepKeyOrderAndEscape() {
        let v: JSONValue = .object([("b", .int(1)), ("a", .string("x\"\n\u{01}")), ("c", .array([.null, .bool(true), .double(0.5)]))])
        #expect(v.serialized(pretty: false) == #"{"b":1,"a":"x\"\n\u0001","c":[null,true,0.5]}"#)
    }

    @Test func prettyPrintingIndentsTwoSpaces() {
        let v: JSONValue = .object([("k", .array([.int(1)]))])
        #expect(v.serialized() == "{\n  \"k\": [\n    1\n  ]\n}\n")
    }
}

@Suite struct ReportTests {
    @Test func compilerStyleText() {
        let d = Diagnostic.error("unterminated-tag", line: 3, "tag `[ar:` has no closing `]`")
        #expect(DiagnosticReport.text(d, path: "a.krc") == "a.krc:3: error: tag `[ar:` has no closing `]` [unterminated-tag]")
        let b = Diagnostic(rule: "non-utf8", severity: .warning, byteOffset: 17, message: "m")
        #expect(DiagnosticReport.text(b, path: "x.lrc") == "x.lrc: byte offset 17: warning: m [non-utf8]")
    }

    @Test func sarifHasVersionRulesAndLocations() throws {
        let files = [FileFindings(path: "dir/歌 1.lrc", diagnostics: [.warning("zero-duration", line: 4, "zero"), .info("unknown-end", line: 9, "end")])]
        let rules = [RuleDescription(id: "zero-duration", severity: .warning, summary: "Zero."), RuleDescription(id: "unknown-end", severity: .info, summary: "End.")]
        let others = FileFindings(path: "../elsewhere/./x.lrc", diagnostics: [.error("e", line: 1, "e")])
        let text = DiagnosticReport.sarif(files + [others], rules: rules, toolVersion: "9.9", base: "/work/repo", workingDirectory: "/work/repo").serialized()
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(obj["version"] as? String == "2.1.0")
        let run = try #require((obj["runs"] as? [[String: Any]])?.first)
        let results = try #require(run["results"] as? [[String: Any]])
        #expect(results.count == 3)
        #expect(results[0]["ruleId"] as? String == "zero-duration")
        #expect(results[0]["ruleIndex"] as? Int == 0)
        #expect(results[1]["level"] as? String == "note")
        let loc = try #require((results[0]["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])
        // Relative to the base, on SRCROOT, which the run maps to the base folder.
        #expect((loc["artifactLocation"] as? [String: Any])?["uri"] as? String == "dir/%E6%AD%8C%201.lrc")
        #expect((loc["artifactLocation"] as? [String: Any])?["uriBaseId"] as? String == "SRCROOT")
        #expect((run["originalUriBaseIds"] as? [String: Any])?["SRCROOT"] as? [String: String] == ["uri": "file:///work/repo/"])
        #expect((loc["region"] as? [String: Any])?["startLine"] as? Int == 4)
        // Outside the base: an absolute file URI, `..` and `.` resolved.
        let outside = try #require((results[2]["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])
        #expect(outside["artifactLocation"] as? [String: String] == ["uri": "file:///work/elsewhere/x.lrc"])
    }
}

@Suite struct FileIOTests {
    @Test func atomicWriteReplacesAndLeavesNoTemporaryFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-core-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.txt").path
        try FileIO.writeAtomically(Array("one".utf8), to: path)
        try FileIO.writeAtomically(Array("two".utf8), to: path)
        #expect(try FileIO.read(path) == Array("two".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.txt"])
    }

    @Test func legacyCodePagesDecodeAndNeverFail() {
        #expect(String(decoding: TextDecoder.decode([0x43, 0x61, 0x66, 0xE9, 0x20, 0x80], codePage: "CP1252"), as: UTF8.self) == "Café €")
        #expect(String(decoding: TextDecoder.decode([0x8A, 0xB9], codePage: "CP1250"), as: UTF8.self) == "Šą")
        // 0x81 has no CP1252 character, and no code page is called "nonsense": Latin-1 then.
        #expect(String(decoding: TextDecoder.decode([0x61, 0x81, 0xE9], codePage: "CP1252"), as: UTF8.self) == "a\u{81}é")
        #expect(String(decoding: TextDecoder.decode([0xE9], codePage: "nonsense"), as: UTF8.self) == "é")
    }

    @Test func writeIntoMissingFolderFailsWithPath() {
        #expect(throws: FileIOError.self) { try FileIO.writeAtomically([1], to: "/nonexistent-ktv/x.txt") }
    }

    @Test func readErrorsNameTheProblem() {
        #expect(throws: FileIOError.cannotRead(path: "/nonexistent-ktv/a.krc", reason: "no such file")) {
            try FileIO.read("/nonexistent-ktv/a.krc")
        }
        #expect(throws: FileIOError.cannotRead(path: "/tmp", reason: "is a folder, not a file")) { try FileIO.read("/tmp") }
    }

    @Test func seededGeneratorIsDeterministic() {
        var a = SeededGenerator(seed: 42), b = SeededGenerator(seed: 42), c = SeededGenerator(seed: 43)
        let xa = (0..<4).map { _ in a.next() }, xb = (0..<4).map { _ in b.next() }
        #expect(xa == xb)
        #expect(xa != (0..<4).map { _ in c.next() })
    }
}
