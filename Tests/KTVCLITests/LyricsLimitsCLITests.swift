import Foundation
import KTVLyrics
import Testing

/// A `krc1` file whose zlib stream inflates to `size` bytes of `a` (fixed-Huffman copies of 258 bytes
/// at distance 1, 13 bits each; no Adler-32 trailer). Same construction as `krcBomb` in KTVLyricsTests.
private func krcBomb(inflatingTo size: Int) -> [UInt8] {
    var bytes: [UInt8] = [0x78, 0x01]
    var acc: UInt32 = 0, n = 0
    func put(_ value: UInt32, _ count: Int) {
        acc |= value << UInt32(n)
        n += count
        while n >= 8 {
            bytes.append(UInt8(acc & 0xFF))
            acc >>= 8
            n -= 8
        }
    }
    // Huffman codes go most-significant bit first.
    func code(_ c: UInt32, _ length: Int) {
        var reversed: UInt32 = 0
        for k in 0..<length where c & (1 << UInt32(k)) != 0 { reversed |= 1 << UInt32(length - 1 - k) }
        put(reversed, length)
    }
    put(1, 1)
    put(1, 2)
    code(0x30 + 0x61, 8)
    for _ in 0..<((size - 1) / 258) {
        code(0xC5, 8)
        code(0, 5)
    }
    code(0, 7)
    if n > 0 { bytes.append(UInt8(acc & 0xFF)) }
    return KRCContainer.magic + bytes.enumerated().map { $0.element ^ KRCContainer.key[$0.offset & 15] }
}

@Suite struct LyricsLimitsCLITests {
    static let mib = 1_048_576

    @Test func bombIsRefusedWithExit65Quickly() throws {
        let s = try Scratch()
        let bomb = s.path("bomb.krc")
        try s.write("bomb.krc", krcBomb(inflatingTo: 256 * Self.mib))
        let start = Date()
        let parse = try ktv(["lyrics", "parse", bomb])
        let elapsed = Date().timeIntervalSince(start)
        #expect(parse.status == 65)
        #expect(parse.stdout.isEmpty)
        #expect(parse.stderr.hasPrefix("ktv: \(bomb): byte offset "))
        #expect(parse.stderr.contains("of the encrypted KRC: its text decompresses to more than 67108864 bytes, over the 64 MB limit on lyric text; the file is likely a decompression bomb or not a lyric file, or it must be read with a larger limit; raise the limit with --max-text-mb N if the file is genuine\n"))
        // Reading all 256 MB would take far longer in a debug build.
        #expect(elapsed < 10)

        let decrypt = try ktv(["lyrics", "decrypt", bomb, "-o", s.path("plain.krc")])
        #expect(decrypt.status == 65)
        #expect(decrypt.stderr.contains("over the 64 MB limit"))
        #expect(!FileManager.default.fileExists(atPath: s.path("plain.krc")))

        let validate = try ktv(["lyrics", "validate", bomb])
        #expect(validate.status == 65)
        #expect(validate.out.contains("\(bomb): error: byte offset "))
        #expect(validate.out.contains("over the 64 MB limit on lyric text"))
        #expect(validate.out.contains("--max-text-mb N if the file is genuine [too-large]\n"))
    }

    @Test func maxTextMbLetsAFileOverTheDefaultThrough() throws {
        let s = try Scratch()
        // 65 MiB of plaintext: just over the default. Decrypting is the cheap way to read it all.
        let plain = Array("[ti:Big]\n".utf8) + [UInt8](repeating: 0x0A, count: 65 * Self.mib)
        let file = try s.write("big.krc", try KRCContainer.encrypt(plain))
        let refused = try ktv(["lyrics", "decrypt", file, "-o", s.path("out.txt")])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("over the 64 MB limit"))
        let allowed = try ktv(["lyrics", "decrypt", file, "--max-text-mb", "66", "-o", s.path("out.txt")])
        #expect(allowed.status == 0)
        #expect(allowed.stderr == "")
        let attributes = try FileManager.default.attributesOfItem(atPath: s.path("out.txt"))
        #expect((attributes[.size] as? Int) == plain.count)
    }

    @Test func aSmallLimitRefusesASmallFile() throws {
        let s = try Scratch()
        var text = "[ti:Limit]\n"
        var t = 0
        while text.utf8.count <= Self.mib + 1000 {
            text += "[\(t),900]<0,300,0>la<300,300,0>li<600,300,0>lo\n"
            t += 1000
        }
        let file = try s.write("song.krc", text)
        let refused = try ktv(["lyrics", "parse", file, "--max-text-mb", "1"])
        #expect(refused.status == 65)
        #expect(refused.stderr == "ktv: \(file): the input is \(text.utf8.count) bytes, over the 1 MB limit on lyric text; the file is likely a decompression bomb or not a lyric file, or it must be read with a larger limit; raise the limit with --max-text-mb N if the file is genuine\n")
        let validate = try ktv(["lyrics", "validate", file, "--max-text-mb", "1", "--format", "json"])
        #expect(validate.status == 65)
        #expect(validate.out.contains("\"readable\": false"))
        let allowed = try ktv(["lyrics", "convert", file, "--to", "lrc", "--max-text-mb", "2"])
        #expect(allowed.status == 0)
        #expect(allowed.out.hasPrefix("[ti:Limit]\n[00:00.000]lalilo\n"))
    }

    @Test func aHugeFileIsRefusedBeforeItIsRead() throws {
        let s = try Scratch()
        // 5 GiB, sparse: reading it would take 5 GiB of memory.
        let file = try s.write("huge.lrc", "[00:01.00]la\n")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try handle.truncate(atOffset: 5 << 30)
        try handle.close()
        let start = Date()
        let validate = try ktv(["lyrics", "validate", file])
        #expect(validate.status == 65)
        #expect(validate.out.hasPrefix("\(file): error: the input is 5368709120 bytes, over the 64 MB limit on lyric text;"))
        let parse = try ktv(["lyrics", "parse", file])
        #expect(parse.status == 65)
        #expect(parse.stderr.hasPrefix("ktv: \(file): the input is 5368709120 bytes, over the 64 MB limit"))
        #expect(Date().timeIntervalSince(start) < 10)
        // Standard input has no size: it is read until a byte past the limit. (Only a little past:
        // ktv stops reading there, and what the pipe cannot hold would stop this test with SIGPIPE.)
        let piped = try ktv(["lyrics", "parse", "-", "--max-text-mb", "1"], stdin: [UInt8](repeating: 0x0A, count: Self.mib + 100))
        #expect(piped.status == 65)
        #expect(piped.stderr.hasPrefix("ktv: <stdin>: the input is more than 1048576 bytes, over the 1 MB limit"))
    }

    @Test func maxTextMbIsValidated() throws {
        for bad in ["0", "4097", "-1"] {
            let r = try ktv(["lyrics", "parse", "x.krc", "--max-text-mb=\(bad)"])
            #expect(r.status == 64, "\(bad)")
            #expect(r.stderr.contains("--max-text-mb = \(bad) is out of range; allowed: 1…4096 MiB"), "\(bad)")
        }
        #expect(try ktv(["lyrics", "decrypt", "x.krc", "--max-text-mb", "0"]).status == 64)
    }

    @Test func badJSONNamesTheLine() throws {
        let s = try Scratch()
        let file = try s.write("model.json", "{\n  \"format\": \"json\",\n  \"lines\": [\n    {\"start_ms\": 1 \"duration_ms\": 2}\n  ]\n}\n")
        let r = try ktv(["lyrics", "parse", file, "--from", "json"])
        #expect(r.status == 65)
        #expect(r.stderr == "ktv: \(file): line 4: invalid JSON at byte offset 54: expected `,` or `}` after an object member, found `\"duration_ms\": 2}`\n")
        let pitch = try s.write("song.pitch", "{\"pitchDatas\": [\n  {\"pitch\": 50, \"startTime\": 0, \"duration\": 10},\n  {\"pitch\": 51, \"startTime\": 10, \"duration\": }\n]}\n")
        let v = try ktv(["lyrics", "validate", pitch])
        #expect(v.status == 65)
        #expect(v.out.hasPrefix("\(pitch):3: error: invalid JSON in Agora pitch file at byte offset 111: expected a value (object, array, string, number, true, false or null), found `}`"))
    }
}
