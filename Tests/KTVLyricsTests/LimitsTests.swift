import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// A `krc1` file whose zlib stream inflates to `size` bytes of `a`: one literal, then copies of
/// 258 bytes at distance 1 in a fixed-Huffman block, 13 bits each (about 1:160). It has no Adler-32
/// trailer: a reader that inflated it to the end would call it truncated, one that stops early never sees.
func krcBomb(inflatingTo size: Int) -> [UInt8] {
    var bits = BitWriter()
    bits.bytes.reserveCapacity(size / 258 * 13 / 8 + 16)
    bits.bytes = [0x78, 0x01]  // zlib header: deflate, 32 KiB window; 0x7801 % 31 == 0
    bits.put(1, count: 1)  // final block
    bits.put(1, count: 2)  // fixed Huffman codes
    bits.code(0x30 + 0x61, length: 8)  // literal `a`
    for _ in 0..<((size - 1) / 258) {
        bits.code(0xC5, length: 8)  // length code 285: 258 bytes
        bits.code(0, length: 5)  // distance code 0: distance 1
    }
    bits.code(0, length: 7)  // end of block
    bits.flush()
    var file = KRCContainer.magic
    for (k, byte) in bits.bytes.enumerated() { file.append(byte ^ KRCContainer.key[k & 15]) }
    return file
}

/// Deflate's bit order: values least-significant bit first, Huffman codes most-significant bit first.
struct BitWriter {
    var bytes: [UInt8] = []
    private var acc: UInt32 = 0
    private var n = 0

    mutating func put(_ value: UInt32, count: Int) {
        acc |= value << UInt32(n)
        n += count
        while n >= 8 {
            bytes.append(UInt8(acc & 0xFF))
            acc >>= 8
            n -= 8
        }
    }

    mutating func code(_ code: UInt32, length: Int) {
        var reversed: UInt32 = 0
        for k in 0..<length where code & (1 << UInt32(k)) != 0 { reversed |= 1 << UInt32(length - 1 - k) }
        put(reversed, count: length)
    }

    mutating func flush() {
        if n > 0 { bytes.append(UInt8(acc & 0xFF)) }
        acc = 0
        n = 0
    }
}

@Suite struct TextLimitTests {
    static let mib = 1_048_576

    /// The byte offset a `.tooLarge` detail names, and the detail without it.
    static func split(_ detail: String) -> (offset: Int, rest: String)? {
        let head = "byte offset "
        guard detail.hasPrefix(head) else { return nil }
        let digits = detail.dropFirst(head.count).prefix { $0.isNumber }
        guard let offset = Int(digits) else { return nil }
        return (offset, String(detail.dropFirst(head.count + digits.count)))
    }

    @Test func bombIsRefusedAtTheDefaultLimitQuickly() throws {
        let bomb = krcBomb(inflatingTo: 256 * Self.mib)
        let clock = ContinuousClock()
        var error: LyricsError?
        let elapsed = clock.measure { error = readError(bomb, fileName: "bomb.krc") }
        guard case let .tooLarge(limit, detail)? = error, let (offset, rest) = Self.split(detail) else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
        #expect(limit == 67_108_864)
        #expect(rest == " of the encrypted KRC: its text decompresses to more than 67108864 bytes")
        // It stopped about a quarter of the way in (64 of 256 MiB), not at the end.
        #expect(offset > bomb.count / 4 - 4096 && offset < bomb.count / 4 + 4096)
        #expect(error?.description == "byte offset \(offset) of the encrypted KRC: its text decompresses to more than 67108864 bytes, over the 64 MB limit on lyric text; the file is likely a decompression bomb or not a lyric file, or it must be read with a larger limit")
        #expect(elapsed < .seconds(3))
    }

    @Test func decryptTakesTheLimitToo() {
        let bomb = krcBomb(inflatingTo: 8 * Self.mib)
        do {
            _ = try KRCContainer.decrypt(bomb, maxTextBytes: Self.mib)
            Issue.record("expected tooLarge")
        } catch {
            guard case let .tooLarge(limit, _) = error else {
                Issue.record("expected tooLarge, got \(error)")
                return
            }
            #expect(limit == Self.mib)
            #expect(error.description.contains("over the 1 MB limit"))
        }
        // Under the limit the whole stream is read, and its missing trailer is what fails.
        guard case let .badContainer(offset, detail)? = Self.decryptError(bomb, limit: 9 * Self.mib) else {
            Issue.record("expected badContainer")
            return
        }
        #expect(offset == bomb.count)
        #expect(detail.contains("truncated"))
    }

    static func decryptError(_ bytes: [UInt8], limit: Int) -> LyricsError? {
        do {
            _ = try KRCContainer.decrypt(bytes, maxTextBytes: limit)
            return nil
        } catch {
            return error
        }
    }

    static let song = "\u{FEFF}[ti:Limit]\r\n[1000,1000]<0,500,0>la<500,500,0>li\r\n[2000,1000]<0,1000,0>lo\r\n"

    @Test func krcExactlyAtASmallLimitParsesOneByteLessDoesNot() throws {
        let plain = Array(Self.song.utf8)
        let file = try KRCContainer.encrypt(plain)
        let at = try read(bytes: file, options: LyricsParseOptions(maxTextBytes: plain.count))
        #expect(at.lyrics.lineSpans == [Span(1000, 2000, "lali"), Span(2000, 3000, "lo")])
        #expect(try KRCContainer.decrypt(file, maxTextBytes: plain.count) == plain)
        let error = readError(file, options: LyricsParseOptions(maxTextBytes: plain.count - 1))
        #expect(error == .tooLarge(limitBytes: plain.count - 1,
                                   detail: "byte offset \(file.count) of the encrypted KRC: its text decompresses to more than \(plain.count - 1) bytes"))
    }

    @Test func plainTextOverTheLimitIsRefusedBeforeParsing() throws {
        let bytes = Array(Self.song.utf8)
        #expect(try read(bytes: bytes, options: LyricsParseOptions(maxTextBytes: bytes.count)).lyrics.lines.count == 2)
        let error = readError(bytes, options: LyricsParseOptions(maxTextBytes: 60))
        #expect(error == .tooLarge(limitBytes: 60, detail: "the input is \(bytes.count) bytes"))
        #expect(error?.description == "the input is 77 bytes, over the 0.000 MB (60 bytes) limit on lyric text; the file is likely a decompression bomb or not a lyric file, or it must be read with a larger limit")
    }

    @Test func limitInMegabytes() {
        #expect(LyricsError.megabytes(67_108_864) == "64 MB")
        #expect(LyricsError.megabytes(1_572_864) == "1.500 MB (1572864 bytes)")
        #expect(LyricsParseOptions().maxTextBytes == 64 * Self.mib)
        #expect(LyricsParseOptions.defaultMaxTextBytes == 67_108_864)
    }
}
