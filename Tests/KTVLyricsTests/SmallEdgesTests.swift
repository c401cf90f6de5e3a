import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// Small rough edges of issue 31: format names, negative WebVTT times, UTF-32 text and control
/// bytes quoted in messages.
@Suite struct LyricsSmallEdgesTests {
    @Test func webvttIsANameOfVTT() {
        #expect(LyricsOutputFormat(name: "webvtt") == .vtt && LyricsOutputFormat(name: "WebVTT") == .vtt)
        #expect(LyricFormat(name: "webvtt") == .webVTT && LyricFormat(name: "vtt") == .webVTT)
        #expect(LyricsOutputFormat(name: "webvt") == nil)
    }

    /// `Int("-00")` is 0: `-00:01.000` read as 1000 ms.
    @Test func aNegativeWebVTTTimeIsRefused() throws {
        #expect(WebVTTParser.time("-00:01.000") == nil && WebVTTParser.time("00:-1.000") == nil)
        #expect(WebVTTParser.time("+00:01.000") == nil && WebVTTParser.time("00:01.-01") == nil)
        #expect(WebVTTParser.time("01:00:01.250") == 3_601_250 && WebVTTParser.time("00:01.000") == 1000)
        let parsed = try read("WEBVTT\n\n-00:01.000 --> 00:02.000\nhello\n", fileName: "neg.vtt")
        #expect(parsed.lyrics.lines.isEmpty)
        #expect(parsed.diagnostics.contains { $0.rule == "invalid-time" && $0.severity == .error && $0.message.contains("cannot be negative") },
                "\(parsed.diagnostics)")
    }

    /// A UTF-32 file read as UTF-8 (its NULs are valid UTF-8) gave "starts with `WEBVTT`; found
    /// `WEBVTT`" with the NULs in the message.
    @Test func utf32IsRefusedByNameAndControlBytesAreEscaped() throws {
        let text = "WEBVTT\n\n00:01.000 --> 00:02.000\nhello\n"
        for (encoding, name) in [(String.Encoding.utf32, "UTF-32LE (its byte-order mark)"),
                                 (.utf32LittleEndian, "UTF-32LE (a character and three NUL bytes)"),
                                 (.utf32BigEndian, "UTF-32BE (three NUL bytes and a character)")] {
            let bytes = Array(try #require(text.data(using: encoding)))
            let error = try #require(readError(bytes, fileName: "song.vtt"))
            #expect("\(error)" == "byte offset 0: the text is \(name), which ktv does not read; re-save the file as UTF-8")
        }
        // UTF-16 without a mark is valid UTF-8 with NULs: the message shows them escaped.
        let parsed = try read(bytes: Array(try #require(text.data(using: .utf16LittleEndian))), fileName: "song.vtt")
        let header = try #require(parsed.diagnostics.first { $0.message.hasPrefix("a WebVTT file starts with") })
        #expect(!header.message.unicodeScalars.contains { $0.value < 0x20 }, "\(header.message)")
        #expect(header.message.contains("found `W\\u{0}E\\u{0}B\\u{0}V\\u{0}T\\u{0}T\\u{0}`"), "\(header.message)")
    }
}
