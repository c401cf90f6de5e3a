import ArgumentParser
import Foundation
import Testing
@testable import ktv

/// Help that explains itself (issue 23): every command's page ends with two to four examples that
/// parse with the real command tree; each default is printed once; old spellings still work.
@Suite struct HelpTests {
    /// Every command path, walked from the root (ArgumentParser's own `help` left out).
    static func paths(_ command: ParsableCommand.Type = KTV.self, _ path: String = "ktv") -> [(String, ParsableCommand.Type)] {
        [(path, command)] + command.configuration.subcommands.flatMap { paths($0, path + " " + $0._commandName) }
    }

    @Test func everyPageEndsWithExamplesThatParse() throws {
        for (path, _) in Self.paths() {
            let words = Array(path.split(separator: " ").dropFirst().map(String.init))
            let r = try ktv(words + ["--help"])
            #expect(r.status == 0, "\(path)")
            // A group with a default command shows that command's page and examples.
            let shown = HelpPage.defaults[path].map { path + " " + $0 } ?? path
            let examples = try #require(HelpPage.examples[shown], "\(shown) has no examples")
            #expect((2...4).contains(examples.count) || shown == "ktv lyrics decrypt" && examples.count == 2, "\(shown)")
            let tail = r.out.components(separatedBy: "\nEXAMPLES:\n").last ?? ""
            #expect(r.out.contains("\nEXAMPLES:\n") && tail == examples.map { "  " + $0 }.joined(separator: "\n") + "\n", "\(path)")
            for example in examples {
                for part in example.split(separator: "|") {
                    let args = part.split(separator: " ").map(String.init).dropFirst()
                    #expect(throws: Never.self, "\(part)") { _ = try KTV.parseAsRoot(Array(args)) }
                }
            }
        }
    }

    @Test func eachDefaultIsPrintedOnce() throws {
        for (path, _) in Self.paths() {
            let words = Array(path.split(separator: " ").dropFirst().map(String.init))
            let page = try ktv(words + ["--help"]).out.replacingOccurrences(of: "\n", with: " ")
                .replacingOccurrences(of: "  ", with: " ")
            // "default 1. (default: 1)": ours and ArgumentParser's.
            #expect(page.range(of: #"default [^()\s]+\. \(default: "#, options: .regularExpression) == nil, "\(path)")
            #expect(!page.contains("0 = one per core"), "\(path)")
        }
        // --threads says what its default does, once.
        let pitch = try ktv(["pitch", "--help"]).out
        #expect(pitch.contains("Default: one per core") && !pitch.contains("(default: 0)"))
    }

    @Test func oldSpellingsStillWorkWithANote() throws {
        let s = try Scratch()
        let ref = KTVBinary.packageRoot.appendingPathComponent("fixtures/lyrics/migu.xml").path
        let notes = try ktv(["score", "notes", ref, "--format", "ultrastar"])
        #expect(notes.status == 0 && notes.out.contains("#BPM") && notes.stderr == "ktv: warning: --format is now --to; the old spelling still works for now\n", "\(notes.stderr)")
        // --offset (Agora's compensation, not a time) is --agora-offset.
        let take = try s.write("take.csv", "time_s,f0_hz\n" + (0..<3000).map { String(format: "%.2f,220\n", Double($0) / 100) }.joined())
        let old = try ktv(["score", take, "--reference", ref, "--rules", "agora", "--offset", "20", "--format", "json"])
        let new = try ktv(["score", take, "--reference", ref, "--rules", "agora", "--agora-offset", "20", "--format", "json"])
        #expect(old.status == 0 && new.status == 0 && old.out == new.out, "\(old.stderr) \(new.stderr)")
        #expect(old.stderr.contains("ktv: warning: --offset is now --agora-offset") && new.stderr.isEmpty)
        let bad = try ktv(["score", take, "--reference", ref, "--rules", "agora", "--agora-offset", "200"])
        #expect(bad.status == 64 && bad.stderr.contains("--agora-offset"), "\(bad.stderr)")
        // `ktv score take TAKE` is still `ktv score TAKE`.
        #expect(try ktv(["score", "take", take, "--reference", ref, "--format", "json"]).out == ktv(["score", take, "--reference", ref, "--format", "json"]).out)
        // Negative numbers after a flag.
        #expect(try ktv(["score", take, "--reference", ref, "--latency-ms", "-100"]).status == 0)
        #expect(try ktv(["score", take, "--reference", ref, "--key-shift", "-200"]).status == 0)
    }
}

/// `ktv batch` stays a thin command over `KTVBatch` (issue 23: under 120 code lines).
@Suite struct ThinCommandTests {
    @Test func batchCommandIsUnder120CodeLines() throws {
        let text = try String(contentsOf: KTVBinary.packageRoot.appendingPathComponent("Sources/ktv/BatchCommand.swift"), encoding: .utf8)
        let code = text.split(separator: "\n").filter { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            return !t.isEmpty && !t.hasPrefix("//")
        }
        #expect(code.count < 120, "\(code.count) code lines")
    }
}

/// The README is the front door (issue 23): under 250 lines, and every page it points to exists.
@Suite struct ReadmeTests {
    @Test func readmeIsShortAndItsLinksResolve() throws {
        let root = KTVBinary.packageRoot
        let text = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count < 250)
        let links = text.matches(of: /\]\(([^)#]+)\)/).map { String($0.1) }
        #expect(links.count >= 10)
        for link in links {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(link).path), "README links to \(link), which is not there")
        }
    }
}
