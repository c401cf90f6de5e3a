import Testing
@testable import KTVLyrics
import KTVCore

/// Migu / Agora XML (FORMATS.md §3.3).
@Suite struct MiguXMLTests {
    static func song(_ sentences: String) -> String {
        """
        <?xml version='1.0' encoding='utf-8'?>
        <song>
        <general><name>Bird Song </name><singer>Nobody</singer><type>1</type></general>
        <midi_lrc>
        <paragraph>
        \(sentences)
        </paragraph>
        </midi_lrc>
        </song>
        """
    }

    @Test(arguments: [
        ("18.487", 18487), ("20.74", 20740), ("1.0005", 1001), ("1.0004", 1000), ("0.1", 100),
        ("2", 2000), ("2.", 2000), (".5", 500), ("1000.000", 1_000_000), (" 3.25 ", 3250), ("0.0015", 2),
    ])
    func secondsToMillisecondsWithoutFloatError(seconds: String, ms: Int) {
        #expect(DecimalTime.milliseconds(fromSeconds: seconds) == ms)
    }

    @Test(arguments: ["bei", "", ".", "1.2.3", "1e3", "0x10", "--1"])
    func notSeconds(raw: String) {
        #expect(DecimalTime.milliseconds(fromSeconds: raw) == nil)
    }

    @Test func sentencesTonesAndPitch() throws {
        let p = try read(Self.song("""
            <sentence>
            <tone begin="18.487" end="18.659" lang="1" pitch="169" pronounce=""><word>鸟</word></tone>
            <tone begin="18.659" end="20.74" lang="1" pitch="0" pronounce=""><word>飞</word></tone>
            </sentence>
            <sentence>
            <tone begin="21.0005" end="21.5" lang="2" pitch="220"><word>fly</word></tone>
            </sentence>
            """))
        #expect(p.lyrics.format == .miguXML)
        #expect(p.lyrics.tags == [
            LyricTag(key: "ti", value: "Bird Song"), LyricTag(key: "ar", value: "Nobody"), LyricTag(key: "type", value: "1"),
        ])
        #expect(p.lyrics.lineSpans == [Span(18487, 20740, "鸟飞"), Span(21001, 21500, "fly")])
        #expect(p.lyrics.lines[0].wordSpans == [Span(18487, 18659, "鸟"), Span(18659, 20740, "飞")])
        #expect(p.lyrics.lines[0].words.map(\.pitchHz) == [169, nil])
        #expect(p.lyrics.lines.map(\.sourceLine) == [6, 10])
        #expect(p.lyrics.referencePitch == .notes(scale: .hz, [
            .init(startMs: 18487, durationMs: 172, value: 169), .init(startMs: 21001, durationMs: 499, value: 220),
        ]))
        #expect(p.diagnostics.isEmpty)
    }

    @Test func englishTonesAreSpacedInTheLineText() throws {
        let p = try read(Self.song("""
            <sentence>
            <tone begin="1" end="1.5" lang="2" pitch="0"><word>fly</word></tone>
            <tone begin="1.5" end="2" lang="2" pitch="0"><word>away</word></tone>
            </sentence>
            """))
        // One space between two English words, none after the line's last (Agora's rule).
        #expect(p.lyrics.lines[0].words.map(\.text) == ["fly ", "away"])
        #expect(p.lyrics.lines[0].text == "fly away")
        #expect(p.lyrics.referencePitch == nil)
    }

    @Test func englishBetweenChineseTones() throws {
        let p = try read(Self.song("""
            <sentence>
            <tone begin="1" end="1.5" lang="1"><word>我</word></tone>
            <tone begin="1.5" end="2" lang="2"><word> love </word></tone>
            <tone begin="2" end="2.5" lang="1"><word>你</word></tone>
            <tone begin="2.5" end="3" lang="2"><word>so</word></tone>
            </sentence>
            """))
        #expect(p.lyrics.lines[0].words.map(\.text) == ["我", " love ", "你", " so"])
        #expect(p.lyrics.lines[0].text == "我 love 你 so")
    }

    @Test func endBeiIsAnInvalidNumber() throws {
        let p = try read(Self.song("""
            <sentence>
            <tone begin="1.5" end="bei" pitch="100"><word>x</word></tone>
            <tone begin="2.0" end="2.5" pitch="100"><word>y</word></tone>
            </sentence>
            """))
        #expect(p.lyrics.lineSpans == [Span(2000, 2500, "y")])
        #expect(p.diagnostics.findings == [Finding("invalid-number", .error, line: 7)])
    }

    @Test func missingAttributeBadPitchMissingWordAndEmptySentence() throws {
        let p = try read(Self.song("""
            <sentence>
            <tone end="1.0"><word>a</word></tone>
            <tone begin="1.0" end="1.5" pitch="high"><word>b</word></tone>
            <tone begin="1.5" end="2.0" pitch="100"></tone>
            </sentence>
            <sentence>
            </sentence>
            """))
        #expect(p.lyrics.lines[0].wordSpans == [Span(1000, 1500, "b"), Span(1500, 2000, "")])
        #expect(p.diagnostics.findings == [
            Finding("invalid-number", .error, line: 7),
            Finding("invalid-number", .error, line: 8),
            Finding("empty-word", .warning, line: 9),
            Finding("empty-line", .warning, line: 11),
        ])
    }

    @Test func beginAfterEndIsANegativeWord() throws {
        let p = try read(Self.song("<sentence><tone begin=\"2.0\" end=\"1.5\"><word>x</word></tone></sentence>"))
        #expect(p.lyrics.lines[0].wordSpans == [Span(2000, 1500, "x")])
        #expect(LyricsValidator.validate(p).findings == [
            Finding("negative-duration", .error, line: 6),
            Finding("negative-duration", .error, line: 6),
        ])
    }

    @Test func sentencesOutOfOrder() throws {
        let p = try read(Self.song("""
            <sentence><tone begin="5" end="6"><word>b</word></tone></sentence>
            <sentence><tone begin="1" end="2"><word>a</word></tone></sentence>
            """))
        #expect(p.lyrics.lines.map(\.text) == ["a", "b"])
        #expect(p.diagnostics.findings == [Finding("lines-out-of-order", .warning, line: 7)])
    }

    @Test func singleLineDocumentWithoutDeclaration() throws {
        let p = try read("<song><general><name/></general><midi_lrc><paragraph><sentence><tone begin=\"0.5\" end=\"1\"><word>a</word></tone></sentence></paragraph></midi_lrc></song>")
        #expect(p.lyrics.title == "")
        #expect(p.lyrics.lineSpans == [Span(500, 1000, "a")])
    }

    @Test func malformedXML() {
        guard case let .malformed(line, _)? = readError(Array("<song>\n<midi_lrc>\n<paragraph>\n</song>\n".utf8)) else {
            Issue.record("expected malformed")
            return
        }
        #expect(line == 4)
        guard case .unrecognizedFormat? = readError(Array("<other/>".utf8)) else {
            Issue.record("expected unrecognizedFormat")
            return
        }
        guard case let .malformed(line2, _)? = readError(Array("<song>\n<general/>\n</song>".utf8)) else {
            Issue.record("expected malformed")
            return
        }
        #expect(line2 == 1)
    }
}

/// Agora `.pitch` JSON and the binary pitch contour v1 (FORMATS.md §3.4).
@Suite struct PitchFileTests {
    @Test func jsonNotes() throws {
        let p = try read(#"{"pitchDatas":[{"pitch":50,"startTime":1200,"duration":240},{"pitch":52.5,"startTime":1440,"duration":300}]}"#)
        #expect(p.lyrics.format == .agoraPitchJSON)
        #expect(p.lyrics.lines.isEmpty)
        #expect(p.lyrics.referencePitch == .notes(scale: .noteIndex, [
            .init(startMs: 1200, durationMs: 240, value: 50), .init(startMs: 1440, durationMs: 300, value: 52.5),
        ]))
    }

    @Test func jsonErrors() {
        for bad in [#"{"pitchDatas":[{"pitch":50}]}"#, #"{"pitchDatas":[{"pitch":50,"startTime":-1,"duration":2}]}"#,
                    #"{"pitchDatas":[1,}"#] {
            guard case .malformed? = readError(Array(bad.utf8), options: LyricsParseOptions(format: .agoraPitchJSON)) else {
                Issue.record("expected malformed for \(bad)")
                continue
            }
        }
    }

    static func binary(version: Int32 = 1, interval: Int32 = 10, reserved: Int32 = 0, _ hz: [Double]) -> [UInt8] {
        var out: [UInt8] = []
        for v in [version, interval, reserved] {
            withUnsafeBytes(of: v.littleEndian) { out += $0 }
        }
        for h in hz {
            withUnsafeBytes(of: h.bitPattern.littleEndian) { out += $0 }
        }
        return out
    }

    @Test func binaryContour() throws {
        let p = try read(bytes: Self.binary([0, 220, 220.5, 0, 440]))
        #expect(p.lyrics.format == .agoraPitchBinary)
        #expect(p.encoding == nil)
        #expect(p.lyrics.referencePitch == .contour(intervalMs: 10, hz: [nil, 220, 220.5, nil, 440]))
        #expect(p.diagnostics.isEmpty)
    }

    @Test func binaryHeaderOnlyIsAnEmptyContour() throws {
        let p = try read(bytes: Self.binary(interval: 20, []))
        #expect(p.lyrics.referencePitch == .contour(intervalMs: 20, hz: []))
    }

    @Test func binaryErrors() {
        let forced = LyricsParseOptions(format: .agoraPitchBinary)
        guard case .unsupported? = readError(Self.binary(version: 2, [1]), options: forced) else {
            Issue.record("expected unsupported version")
            return
        }
        guard case .malformed? = readError(Self.binary(interval: 0, [1]), options: forced) else {
            Issue.record("expected malformed interval")
            return
        }
        guard case let .badContainer(offset, _)? = readError(Self.binary([1]) + [0, 0, 0], options: forced) else {
            Issue.record("expected truncated data")
            return
        }
        #expect(offset == 20)
        guard case let .badContainer(offset2, _)? = readError(Self.binary([1, -5]), options: forced) else {
            Issue.record("expected negative value")
            return
        }
        #expect(offset2 == 20)
        guard case .malformed? = readError([1, 0, 0], options: forced) else {
            Issue.record("expected short header")
            return
        }
    }

    @Test func sentencesStraightUnderMidiLrcAreRead() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <song><general><name>t</name></general><midi_lrc>
        <sentence><tone begin="1.500" end="2.000" pitch="440"><word>我</word></tone></sentence>
        <paragraph><sentence><tone begin="2.500" end="3.000" pitch="0"><word>们</word></tone></sentence></paragraph>
        </midi_lrc></song>
        """
        let lyrics = try LyricsReader.read(Array(xml.utf8)).lyrics
        #expect(lyrics.lines.map(\.text) == ["我", "们"])
        #expect(lyrics.lines[0].words[0].pitchHz == 440)
    }
}
