import Foundation
import Testing
import KTVCore
@testable import KTVLyrics

/// Real-world files from `../shared` (see its README for provenance). Skipped when it is absent.
enum SharedCorpus {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared")
    static var present: Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent("lyrics/krc").path) }

    static func bytes(_ rel: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(rel)))
    }

    static func files(under rel: String) -> [String] {
        let base = root.appendingPathComponent(rel).path
        let all = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String]) ?? []
        return all.filter { p in
            var d: ObjCBool = false
            return FileManager.default.fileExists(atPath: base + "/" + p, isDirectory: &d) && !d.boolValue
        }.map { rel + "/" + $0 }.sorted()
    }
}

@Suite(.enabled(if: SharedCorpus.present, "../shared is absent"))
struct SharedCorpusTests {
    static let encrypted = ["LYPlayLyric_nashideguang", "veficos_shiluolikong", "veficos_qingshang", "halfopen_mojito"]

    @Test(arguments: encrypted)
    func decryptionIsByteExact(name: String) throws {
        let plain = try KRCContainer.decrypt(try SharedCorpus.bytes("lyrics/krc/enc_\(name).krc"))
        #expect(plain == (try SharedCorpus.bytes("lyrics/derived/dec_\(name).krc.txt")))
        // Re-encrypting and decrypting gives the same bytes back.
        #expect(try KRCContainer.decrypt(try KRCContainer.encrypt(plain)) == plain)
    }

    @Test func thirdPartyDecryptionMatches() throws {
        let ours = try KRCContainer.decrypt(try SharedCorpus.bytes("lyrics/krc/enc_halfopen_mojito.krc"))
        #expect(ours == (try SharedCorpus.bytes("lyrics/krc/plain_halfopen_mojito_decoded.krc.txt")))
    }

    @Test func everyFileParsesOrFailsClearly() throws {
        let files = SharedCorpus.files(under: "lyrics") + SharedCorpus.files(under: "agora")
        #expect(files.count > 100)
        var parsed = 0, refused = 0
        for rel in files {
            let bytes = try SharedCorpus.bytes(rel)
            do {
                let p = try LyricsReader.read(bytes, fileName: rel)
                _ = LyricsValidator.validate(p)
                // Every diagnostic says something and, for text formats, where.
                for d in p.diagnostics { #expect(!d.message.isEmpty, "\(rel): \(d.rule)") }
                parsed += 1
            } catch {
                #expect(String(describing: error).count > 20, "\(rel): \(error)")
                refused += 1
            }
        }
        // Refused: the 3 encrypted QQ caches, 8 recorded pitch tracks, readme.txt, NOTES.md, golden-scores.json, 745012 (no extension, but XML) parses.
        #expect(refused < 20)
        #expect(parsed > 90)
    }

    @Test func knownFindingsOnRealFiles() throws {
        func findings(_ rel: String) throws -> [Diagnostic] {
            LyricsValidator.validate(try LyricsReader.read(try SharedCorpus.bytes(rel), fileName: rel))
        }
        let truncated = try findings("lyrics/krc/malformed_agora_krc-error-pattern.krc")
        #expect(truncated.map(\.rule) == ["unterminated-tag"])
        #expect(truncated.first?.line == 1)

        let bei = try findings("lyrics/xml/migu_agora_CJ1420023417.xml").filter { $0.rule == "invalid-number" }
        #expect(bei.count == 1)
        #expect(bei.first?.line == 1743)
        #expect(bei.first?.message.contains("`end=\"bei\"`") == true)

        let mixed = try findings("lyrics/qrc/mixed_lyricify_LsMixQrcDemo.txt").filter { $0.rule == "unparsable-line" }
        #expect(mixed.map { $0.line ?? 0 } == [7, 8, 9, 10, 13, 26])

        let total = try findings("lyrics/krc/enc_LYPlayLyric_nashideguang.krc").filter { $0.rule == "after-total" }
        #expect(total.count == 1)
        #expect(total.first?.severity == .warning)

        #expect(throws: LyricsError.self) { try LyricsReader.read(try SharedCorpus.bytes("lyrics/qrc/enc_local_LDDC_asterlore_qm.qrc")) }
    }

    @Test func realKRCModelValues() throws {
        let p = try LyricsReader.read(try SharedCorpus.bytes("lyrics/krc/plain_agora_7303315432472546953.krc"))
        #expect(p.lyrics.format == .krcText)
        // `[language:]` before `[id:]`; type 0 romanization aligned to every unit.
        let romanized = p.lyrics.lines.flatMap(\.words).filter { $0.romanization != nil }.count
        #expect(romanized > 100)
        #expect(!p.diagnostics.contains { $0.rule == "romanization-count-mismatch" })

        let mojito = try LyricsReader.read(try SharedCorpus.bytes("lyrics/krc/enc_halfopen_mojito.krc")).lyrics
        #expect(mojito.format == .krc)
        #expect(mojito.title == "Mojito")
        let first = try #require(mojito.lines.first)
        #expect(first.words.allSatisfy { $0.startMs >= first.startMs })
    }

    @Test func lrcFromTheSameSongAgreesWithKRCWithinTruncation() throws {
        // halfopen's test.lrc truncates the KRC line starts to centiseconds (16706 ms → [00:16.70]).
        let krc = try LyricsReader.read(try SharedCorpus.bytes("lyrics/krc/enc_halfopen_mojito.krc")).lyrics
        let lrc = try LyricsReader.read(try SharedCorpus.bytes("lyrics/lrc/simple_halfopen_test.lrc")).lyrics
        let krcStarts = Set(krc.lines.map { $0.startMs / 10 * 10 })
        let matched = lrc.lines.filter { krcStarts.contains($0.startMs) }.count
        #expect(matched >= lrc.lines.count * 9 / 10)
    }
}
