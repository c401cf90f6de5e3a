import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// Text encodings: UTF-8 with and without BOM, UTF-16 with BOM, GB18030 fallback, undecodable bytes.
@Suite struct EncodingTests {
    @Test func gb18030IsReadWithAWarning() throws {
        // "你好" in GB18030 is C4 E3 BA C3; C4 E3 is not UTF-8, so the first bad byte is at offset 10.
        let bytes = Array("[00:01.00]".utf8) + [0xC4, 0xE3, 0xBA, 0xC3] + Array("\n[00:02.00]\n".utf8)
        let p = try read(bytes: bytes)
        #expect(p.encoding == .gb18030)
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "你好")])
        #expect(p.diagnostics.count == 1)
        #expect(p.diagnostics.first?.rule == "non-utf8")
        #expect(p.diagnostics.first?.severity == .warning)
        #expect(p.diagnostics.first?.line == nil)
        #expect(p.diagnostics.first?.byteOffset == 10)
    }

    @Test func utf16LittleEndianWithBOM() throws {
        let text = "[ti:Wide]\n[00:01.00]宽 la\n[00:02.00]\n"
        let bytes: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let p = try read(bytes: bytes)
        #expect(p.encoding == .utf16LE)
        #expect(p.lyrics.title == "Wide")
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "宽 la")])
        #expect(p.diagnostics.isEmpty)
    }

    @Test func utf16BigEndianWithBOM() throws {
        let text = "[00:01.00]宽\n[00:02.00]\n"
        let bytes: [UInt8] = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let p = try read(bytes: bytes)
        #expect(p.encoding == .utf16BE)
        #expect(p.lyrics.lineSpans == [Span(1000, 2000, "宽")])
    }

    @Test func plainUTF8() throws {
        let p = try read("[00:01.00]é\n[00:02.00]\n")
        #expect(p.encoding == .utf8)
        #expect(p.lyrics.lines[0].text == "é")
    }

    @Test func undecodableBytes() {
        // 0xFF is neither UTF-8 nor GB18030: the error points at it.
        let bytes = Array("[00:01.00]la\n[00:02.00]".utf8) + [0xFF] + Array("li\n".utf8)
        guard case let .undecodable(offset, detail)? = readError(bytes) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(offset == 23)
        #expect(detail.contains("0xFF"))
    }

    @Test func undecodableAfterValidGB18030PointsAtTheFirstNonUTF8Byte() {
        // The first byte that is not UTF-8 is where an editor shows the damage; the GB18030 failure
        // position is in the message.
        let bytes = Array("[00:01.00]".utf8) + [0xC4, 0xE3, 0xFF] + Array("\n".utf8)
        guard case let .undecodable(offset, detail)? = readError(bytes) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(offset == 10)
        #expect(detail.contains("byte offset 12"))
    }

    @Test func nulByteIsBinary() {
        let bytes = Array("[00:01.00]".utf8) + [0xFF, 0x00, 0x41]
        guard case let .undecodable(offset, _)? = readError(bytes) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(offset == 11)
    }

    @Test func invalidUTF8AfterBOM() {
        guard case let .undecodable(offset, _)? = readError([0xEF, 0xBB, 0xBF, 0x5B, 0xFF]) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(offset == 4)
    }

    @Test func oddLengthUTF16() {
        guard case let .undecodable(offset, _)? = readError([0xFF, 0xFE, 0x5B, 0x00, 0x30]) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(offset == 4)
    }
}

/// `LyricsReader.detect` and the formats `read` reports (the content decides; the extension only breaks ties).
@Suite struct DetectionTests {
    static func detect(_ text: String, ext: String = "") throws -> LyricFormat {
        try LyricsReader.detect(Array(text.utf8), ext: ext)
    }

    @Test func textFormats() throws {
        #expect(try Self.detect("[ti:x]\n[00:01.00]la\n") == .lrc)
        #expect(try Self.detect("[00:01.00]<00:01.00>la<00:02.00>\n") == .lrc)  // elrc is read by the LRC parser
        #expect(try Self.detect("[-00:01.00]la\n") == .lrc)
        #expect(try Self.detect("[id:$0]\n[1000,500]<0,500,0>la\n") == .krcText)
        #expect(try Self.detect("[1000,500]<0,500,1>la\n") == .krcText)
        #expect(try Self.detect("[1000,500]la<0,500,0>x\n") == .krcText)
        #expect(try Self.detect("[1000,500](1000,500,0)la\n") == .yrc)
        #expect(try Self.detect("{\"t\":0,\"c\":[{\"tx\":\"a\"}]}\n[1000,500](1000,500,0)la\n") == .yrc)
        #expect(try Self.detect("[1000,500]la(1000,500)\n") == .qrc)
        #expect(try Self.detect("[2740,548]((2740,274)共(3014,274)\n") == .qrc)
        #expect(try Self.detect("[0,410](390,21)\n") == .qrc)
        #expect(try Self.detect("<?xml version=\"1.0\"?>\n<QrcInfos>\n<Lyric_1 LyricContent=\"[1,1]a(1,1)\"/>\n</QrcInfos>") == .qrcXML)
        #expect(try Self.detect("<song><midi_lrc/></song>") == .miguXML)
        #expect(try Self.detect("{\"pitchDatas\":[]}") == .agoraPitchJSON)
        #expect(try Self.detect("{\"format\":\"lrc\",\"lines\":[]}") == .json)
    }

    @Test func readReportsTheFormat() throws {
        #expect(try read("[00:01.00]la\n").lyrics.format == .lrc)
        #expect(try read("[00:01.00]<00:01.00>la<00:02.00>\n").lyrics.format == .enhancedLRC)
        #expect(try read("[00:01.00]la[00:01.50]li\n").lyrics.format == .enhancedLRC)
        #expect(try read("[1000,500]<0,500,0>la\n").lyrics.format == .krcText)
        #expect(try read(bytes: try KRCContainer.encrypt(Array("[1000,500]<0,500,0>la\n".utf8))).lyrics.format == .krc)
        #expect(try read("[1000,500](1000,500,0)la\n").lyrics.format == .yrc)
        #expect(try read("[1000,500]la(1000,500)\n").lyrics.format == .qrc)
        #expect(try read("<QrcInfos><Lyric_1 LyricContent=\"[1,1]a(1,1)\"/></QrcInfos>").lyrics.format == .qrcXML)
        #expect(try read("<song><midi_lrc/></song>").lyrics.format == .miguXML)
        #expect(try read("{\"pitchDatas\":[]}").lyrics.format == .agoraPitchJSON)
        #expect(try read(bytes: PitchFileTests.binary([220])).lyrics.format == .agoraPitchBinary)
        #expect(try read("{\"format\":\"lrc\",\"lines\":[{\"start_ms\":1,\"duration_ms\":2,\"text\":\"a\"}]}").lyrics.format == .json)
    }

    @Test func tagsOnlyFallBackToTheExtension() throws {
        let tags = "[ti:x]\n[ar:y]\n"
        #expect(try Self.detect(tags, ext: "krc") == .krcText)
        #expect(try Self.detect(tags, ext: "yrc") == .yrc)
        #expect(try Self.detect(tags, ext: "qrc") == .qrc)
        #expect(try Self.detect(tags, ext: "lrc") == .lrc)
        #expect(try Self.detect(tags) == .lrc)
        #expect(try read(tags, fileName: "Song.KRC").lyrics.format == .krcText)
        #expect(LyricsReader.extensionOf("dir.v2/song.Yrc") == "yrc")
        #expect(LyricsReader.extensionOf("dir.v2/song") == "")
    }

    @Test func forcedFormatSkipsDetection() throws {
        let p = try read("[ti:x]\n[1000,500]la(1000,500)\n", options: LyricsParseOptions(format: .qrc))
        #expect(p.lyrics.format == .qrc)
    }

    @Test func notLyrics() {
        guard case .unrecognizedFormat? = readError([]) else { Issue.record("empty"); return }
        guard case .unrecognizedFormat? = readError(Array(" \n\r\n ".utf8)) else { Issue.record("blank"); return }
        guard case let .unrecognizedFormat(detail)? = readError(Array("hello\nworld\n".utf8)) else { Issue.record("text"); return }
        #expect(detail.contains("line 1"))
        guard case let .unrecognizedFormat(detail2)? = readError(Array("220.0\n0\n221.5\n".utf8)) else { Issue.record("numbers"); return }
        #expect(detail2.contains("pitch track"))
    }

    @Test func encryptedQQCacheIsUnsupported() {
        let bytes = LyricsReader.qrcLocalMagic + [0x01, 0x02, 0x03]
        guard case .unsupported? = readError(bytes) else {
            Issue.record("expected unsupported")
            return
        }
    }
}
