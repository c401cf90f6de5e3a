import Testing
@testable import KTVLyrics
import KTVCore

/// The encrypted `krc1` container (FORMATS.md §1.1).
@Suite struct KRCContainerTests {
    static let plain = Array("\u{FEFF}[ti:Box]\r\n[1000,500]<0,250,0>la<250,250,0>li\r\n".utf8)

    @Test func keyIsTheLatin1Bytes() {
        #expect(KRCContainer.key == [0x40, 0x47, 0x61, 0x77, 0x5E, 0x32, 0x74, 0x47,
                                     0x51, 0x36, 0x31, 0x2D, 0xCE, 0xD2, 0x6E, 0x69])
        // Not the UTF-8 encoding of "@Gaw^2tGQ61-ÎÒni" (18 bytes, C3 8E C3 92 in the middle).
        #expect(KRCContainer.key.count == 16)
        #expect(Array("@Gaw^2tGQ61-".utf8) == Array(KRCContainer.key[0..<12]))
        #expect(KRCContainer.magic == [0x6B, 0x72, 0x63, 0x31])
    }

    @Test func encryptThenDecryptRoundTrips() throws {
        let enc = try KRCContainer.encrypt(Self.plain)
        // A zlib header starts with 0x78, and 0x78 ^ 0x40 = 0x38: every KRC starts with `krc18`.
        #expect(Array(enc.prefix(5)) == Array("krc18".utf8))
        #expect(KRCContainer.isEncrypted(enc))
        #expect(try KRCContainer.decrypt(enc) == Self.plain)
    }

    @Test func decryptsAContainerBuiltByHand() throws {
        // A zlib stream with one stored block, XORed with the key counted from the byte after the magic.
        let text = Array("[1,2]<0,2,0>x".utf8)
        var a: UInt32 = 1, b: UInt32 = 0
        for c in text { a = (a + UInt32(c)) % 65521; b = (b + a) % 65521 }
        let adler = (b << 16) | a
        let len = UInt16(text.count)
        var zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(len & 0xFF), UInt8(len >> 8), UInt8(~len & 0xFF), UInt8(~len >> 8)]
        zlib += text
        zlib += [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)]
        let key = KRCContainer.key
        let file = Array("krc1".utf8) + zlib.enumerated().map { $0.element ^ key[$0.offset % 16] }
        #expect(Array(file.prefix(5)) == Array("krc18".utf8))
        #expect(try KRCContainer.decrypt(file) == text)
        let p = try read(bytes: file)
        #expect(p.lyrics.format == .krc)
        #expect(p.lyrics.lineSpans == [Span(1, 3, "x")])
    }

    @Test func readerDecryptsAndParses() throws {
        let p = try read(bytes: try KRCContainer.encrypt(Self.plain), fileName: "song.krc")
        #expect(p.lyrics.format == .krc)
        #expect(p.encoding == .utf8BOM)
        #expect(p.lyrics.title == "Box")
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1250, "la"), Span(1250, 1500, "li")])
        #expect(p.lyrics.lines[0].sourceLine == 2)
    }

    @Test func notAContainer() {
        #expect(throws: LyricsError.badContainer(byteOffset: 0, detail: "not an encrypted KRC: the file does not start with the magic `krc1`")) {
            try KRCContainer.decrypt(Array("[ti:x]".utf8))
        }
    }

    @Test func magicWithoutPayload() {
        guard case let .badContainer(offset, _)? = readError(Array("krc1".utf8)) else {
            Issue.record("expected badContainer")
            return
        }
        #expect(offset == 4)
    }

    @Test func truncatedPayload() throws {
        let enc = try KRCContainer.encrypt(Self.plain)
        let cut = Array(enc.prefix(enc.count - 6))
        guard case let .badContainer(offset, detail)? = readError(cut) else {
            Issue.record("expected badContainer")
            return
        }
        // Everything there was consumed; the stream just ends early.
        #expect(offset == cut.count)
        #expect(detail.contains("truncated"))
    }

    @Test func damagedPayload() throws {
        // `krc1` and a first byte that XORs to 0x79: not a valid zlib header.
        let file = Array("krc1".utf8) + [0x79 ^ 0x40, 0x9C ^ 0x47, 0x00, 0x00]
        guard case let .badContainer(offset, detail)? = readError(file) else {
            Issue.record("expected badContainer")
            return
        }
        // zlib reads the 2-byte header before it rejects it; the offset is where it stopped reading.
        #expect(offset == 6)
        #expect(detail.contains("damaged"))
    }

    @Test func forcingKRCOnPlaintextFails() {
        guard case let .badContainer(offset, _)? = readError(Array("[1000,500]<0,500,0>x\n".utf8),
                                                               options: LyricsParseOptions(format: .krc)) else {
            Issue.record("expected badContainer")
            return
        }
        #expect(offset == 0)
    }
}
