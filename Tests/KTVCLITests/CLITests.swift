import Foundation
import Testing

/// End-to-end tests of the built `ktv` binary: arguments, exit codes, standard streams, files.
enum KTVBinary {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var url: URL {
        if let env = ProcessInfo.processInfo.environment["KTV_BIN"] { return URL(fileURLWithPath: env) }
        // The test runner sits next to the products it was built with.
        let runnerDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for dir in [runnerDir, runnerDir.deletingLastPathComponent()] {
            let candidate = dir.appendingPathComponent("ktv")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug/ktv")
    }
}

struct Run {
    var status: Int32
    var stdout: [UInt8]
    var stderr: String
    var out: String { String(decoding: stdout, as: UTF8.self) }
}

func ktv(_ args: [String], stdin: [UInt8]? = nil) throws -> Run {
    try runProcess(KTVBinary.url, args, stdin: stdin)
}

/// Runs a program to the end with `stdin` (or nothing) on its standard input.
func runProcess(_ executable: URL, _ args: [String], stdin: [UInt8]? = nil) throws -> Run {
    let p = Process()
    p.executableURL = executable
    p.arguments = args
    // Files, not pipes, for the outputs: nothing can block however much the child prints.
    let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: tmp) }
    let outURL = tmp.appendingPathComponent("out"), errURL = tmp.appendingPathComponent("err")
    FileManager.default.createFile(atPath: outURL.path, contents: nil)
    FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    let inp = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = inp
    try p.run()
    if let stdin { inp.fileHandleForWriting.write(Data(stdin)) }
    try inp.fileHandleForWriting.close()
    p.waitUntilExit()
    try out.close()
    try err.close()
    return Run(status: p.terminationStatus, stdout: [UInt8](try Data(contentsOf: outURL)),
               stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

/// A scratch folder with the project's own small lyric files.
final class Scratch {
    let dir: URL

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url.path
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
}

let goodKRC = "\u{FEFF}[ti:Little Star]\r\n[ar:Nobody]\r\n[offset:0]\r\n[1000,1500]<0,500,0>Twin<500,400,0>kle <900,600,0>star\r\n[3000,1000]<0,1000,0>(high)\r\n"

@Suite struct CLIBasicsTests {
    @Test func helpAndVersion() throws {
        let v = try ktv(["--version"])
        #expect(v.status == 0)
        #expect(v.out == "0.1.0\n")
        let h = try ktv(["lyrics", "--help"])
        #expect(h.status == 0)
        #expect(h.out.contains("validate"))
    }

    @Test func usageErrorsExit64() throws {
        #expect(try ktv(["lyrics", "parse"]).status == 64)
        #expect(try ktv(["lyrics", "convert", "x.krc", "--to", "docx"]).status == 64)
        let s = try Scratch()
        let f = try s.write("a.krc", goodKRC)
        let r = try ktv(["lyrics", "convert", f, "--to", "lrc", "--lrc-digits", "4"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--lrc-digits = 4 is out of range; allowed: 2…3 digits"))
    }

    @Test func missingInputIsAnIOErrorNamingTheFile() throws {
        let r = try ktv(["lyrics", "parse", "/nonexistent-ktv/song.krc"])
        #expect(r.status == 74)
        #expect(r.stderr == "ktv: /nonexistent-ktv/song.krc: cannot read: no such file\n")
    }
}

@Suite struct CLIParseConvertTests {
    @Test func parseJSONHasTheModel() throws {
        let s = try Scratch()
        let f = try s.write("a.krc", goodKRC)
        let r = try ktv(["lyrics", "parse", f])
        #expect(r.status == 0)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(obj["format"] as? String == "krc-text")
        #expect(obj["offset_ms"] as? Int == 0)
        #expect((obj["tags"] as? [String: String])?["ti"] == "Little Star")
        let lines = try #require(obj["lines"] as? [[String: Any]])
        #expect(lines.count == 2)
        #expect(lines[0]["start_ms"] as? Int == 1000)
        #expect(lines[0]["duration_ms"] as? Int == 1500)
        #expect(lines[0]["text"] as? String == "Twinkle star")
        let words = try #require(lines[0]["words"] as? [[String: Any]])
        #expect(words.map { $0["start_ms"] as? Int } == [1000, 1500, 1900])
        #expect(words.map { $0["text"] as? String } == ["Twin", "kle ", "star"])
    }

    @Test func parseReadsStandardInput() throws {
        let r = try ktv(["lyrics", "parse", "-", "--format", "text"], stdin: Array("[00:01.50]one\n[00:02.25]two\n[00:03.00]\n".utf8))
        #expect(r.status == 0)
        #expect(r.out == "format: lrc (utf-8)\nlines: 2, words: 0\n1\t0:01.500 +750\tone\n2\t0:02.250 +750\ttwo\n")
    }

    @Test func parseRefusesErrorsUnlessLenient() throws {
        let s = try Scratch()
        let f = try s.write("bad.lrc", "[ti:x]\n[00:01.00]fine\nnot a lyric row\n[00:02.00]\n")
        let r = try ktv(["lyrics", "parse", f])
        #expect(r.status == 65)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("\(f):3: error: expected `[mm:ss.xx]text` or a tag `[key:value]`, found `not a lyric row` [unparsable-line]"))
        let lenient = try ktv(["lyrics", "parse", f, "--lenient"])
        #expect(lenient.status == 0)
        #expect(lenient.out.contains("\"text\": \"fine\""))
    }

    @Test func undecodableInputNamesByteOffset() throws {
        let s = try Scratch()
        let f = try s.write("bin.lrc", Array("[00:01.00]".utf8) + [0x80, 0x80])
        let r = try ktv(["lyrics", "parse", f])
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("ktv: \(f): byte offset 10: not valid UTF-8 (first bad byte 0x80)"))
    }

    @Test func convertWritesAtomicallyAndExactly() throws {
        let s = try Scratch()
        let f = try s.write("a.krc", goodKRC)
        let out = s.path("a.lrc")
        let r = try ktv(["lyrics", "convert", f, "--to", "elrc", "-o", out])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text == "[ti:Little Star]\n[ar:Nobody]\n[00:01.000]<00:01.000>Twin<00:01.500>kle <00:01.900>star<00:02.500>\n[00:03.000]<00:03.000>(high)<00:04.000>\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.path).sorted() == ["a.krc", "a.lrc"])
    }

    @Test func outputIntoMissingFolderIsIOErrorAndWritesNothing() throws {
        let s = try Scratch()
        let f = try s.write("a.krc", goodKRC)
        let r = try ktv(["lyrics", "convert", f, "--to", "lrc", "-o", s.path("no/such/dir/out.lrc")])
        #expect(r.status == 74)
        #expect(r.stderr.contains("no/such/dir/out.lrc: cannot write"))
        #expect(!FileManager.default.fileExists(atPath: s.path("no")))
    }

    @Test func offsetSignIsApplied() throws {
        let s = try Scratch()
        let f = try s.write("o.lrc", "[offset:+500]\n[00:10.00]ten\n[00:12.00]\n")
        let sub = try ktv(["lyrics", "convert", f, "--to", "lrc"])
        #expect(sub.out == "[00:09.500]ten\n[00:11.500]\n")
        #expect(sub.stderr.contains("times moved by -500 ms"))
        let add = try ktv(["lyrics", "convert", f, "--to", "lrc", "--offset-sign", "add"])
        #expect(add.out == "[00:10.500]ten\n[00:12.500]\n")
    }

    @Test func pitchFileCannotBecomeLRC() throws {
        let s = try Scratch()
        let f = try s.write("p.pitch", #"{"pitchDatas":[{"pitch":50,"startTime":100,"duration":200}]}"#)
        let r = try ktv(["lyrics", "convert", f, "--to", "lrc"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("pitch file with no lyric lines"))
        let j = try ktv(["lyrics", "parse", f])
        #expect(j.status == 0)
        #expect(j.out.contains("\"scale\": \"note-index\""))
    }
}

@Suite struct CLIKRCTests {
    @Test func encryptDecryptRoundTripIsByteExact() throws {
        let s = try Scratch()
        let f = try s.write("a.krc", goodKRC)
        let enc = s.path("a.enc.krc")
        #expect(try ktv(["lyrics", "convert", f, "--to", "krc", "-o", enc]).status == 0)
        let encBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: enc)))
        #expect(Array(encBytes.prefix(5)) == Array("krc18".utf8))  // magic + 0x78 ^ 0x40
        let plain = try ktv(["lyrics", "decrypt", enc])
        #expect(plain.status == 0)
        let text = try ktv(["lyrics", "convert", f, "--to", "krc-text"])
        #expect(plain.stdout == text.stdout)
        #expect(plain.out == goodKRC.replacingOccurrences(of: "[offset:0]\r\n", with: ""))
    }

    /// Another decoder (Python's zlib) accepts what ktv writes.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3 (make setup installs it)"))
    func independentDecoderAcceptsOurKRC() throws {
        let s = try Scratch()
        let f = try s.write("a.krc", goodKRC)
        let enc = s.path("a.enc.krc")
        #expect(try ktv(["lyrics", "convert", f, "--to", "krc", "-o", enc]).status == 0)
        let script = """
        import sys, zlib
        key = bytes([0x40,0x47,0x61,0x77,0x5E,0x32,0x74,0x47,0x51,0x36,0x31,0x2D,0xCE,0xD2,0x6E,0x69])
        d = open(sys.argv[1], 'rb').read()
        assert d[:4] == b'krc1'
        sys.stdout.buffer.write(zlib.decompress(bytes(b ^ key[i % 16] for i, b in enumerate(d[4:]))))
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", script, enc]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let ours = try ktv(["lyrics", "decrypt", enc])
        #expect([UInt8](out) == ours.stdout)
    }

    @Test func decryptRefusesPlaintextAndDamage() throws {
        let s = try Scratch()
        let f = try s.write("plain.krc", goodKRC)
        let r = try ktv(["lyrics", "decrypt", f])
        #expect(r.status == 65)
        #expect(r.stderr == "ktv: \(f): byte offset 0: not an encrypted KRC: the file does not start with the magic `krc1`\n")
        let t = try s.write("trunc.krc", Array("krc1".utf8) + [0x38, 0xDB, 0x11, 0x22])
        let tr = try ktv(["lyrics", "decrypt", t])
        #expect(tr.status == 65)
        #expect(tr.stderr.contains("does not decompress"))
    }
}

@Suite struct CLIValidateTests {
    @Test func exitCodesFollowTheWorstFinding() throws {
        let s = try Scratch()
        let good = try s.write("songs/good.krc", goodKRC)
        let warn = try s.write("songs/warn.lrc", "[00:01.00]a\n[00:01.00]b\n[00:02.00]\n")
        let bad = try s.write("songs/sub/bad.krc", "[ar:Someone\r\n[1000,500]<0,500,0>x\r\n")
        _ = try s.write("songs/notes.md", "# not checked: wrong extension")

        #expect(try ktv(["lyrics", "validate", good]).status == 0)
        let w = try ktv(["lyrics", "validate", warn])
        #expect(w.status == 0)
        #expect(w.out.contains("\(warn):2: warning: this line starts at the same time as the line above"))
        #expect(try ktv(["lyrics", "validate", "--strict", warn]).status == 1)

        let folder = try ktv(["lyrics", "validate", s.path("songs")])
        #expect(folder.status == 1)
        #expect(folder.out.contains("\(bad):1: error: tag `[ar:` has no closing `]`; end it with `]` on the same line [unterminated-tag]"))
        #expect(folder.out.hasSuffix("3 file(s) checked: 1 error(s), 1 warning(s); 1 file(s) with errors\n"))

        let unreadable = try s.write("songs/empty.lrc", "")
        let u = try ktv(["lyrics", "validate", s.path("songs")])
        #expect(u.status == 65)
        #expect(u.out.contains("\(unreadable): error: not a lyric file ktv can read: the file is empty [unreadable]"))
    }

    @Test func sarifAndJSONReports() throws {
        let s = try Scratch()
        let bad = try s.write("bad.lrc", "[00:01.00]x\nrow\n[00:02.00]\n")
        let r = try ktv(["lyrics", "validate", bad, "--format", "sarif"])
        #expect(r.status == 1)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(obj["version"] as? String == "2.1.0")
        let results = try #require(((obj["runs"] as? [[String: Any]])?.first?["results"]) as? [[String: Any]])
        #expect(results.map { $0["ruleId"] as? String } == ["unparsable-line"])
        let j = try ktv(["lyrics", "validate", bad, "--format", "json"])
        let jo = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout)) as? [String: Any])
        let file = try #require((jo["files"] as? [[String: Any]])?.first)
        #expect(file["errors"] as? Int == 1)
        #expect(((file["findings"] as? [[String: Any]])?.first?["line"]) as? Int == 2)
    }

    @Test func reportGoesToAFileAtomically() throws {
        let s = try Scratch()
        let good = try s.write("good.krc", goodKRC)
        let out = s.path("report.sarif")
        #expect(try ktv(["lyrics", "validate", good, "--format", "sarif", "-o", out]).status == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8).contains("\"version\": \"2.1.0\""))
    }
}
