import Testing
@testable import KTVLyrics
import KTVCore

/// The model checks of `LyricsValidator` (the parse findings are covered by each format's tests).
@Suite struct ValidatorTests {
    @Test func cleanFileHasNoFindings() throws {
        #expect(try validate("[1000,1000]<0,500,0>a<500,500,0>b\n[2000,1000]<0,1000,0>c\n").isEmpty)
    }

    @Test func ruleTableIsConsistent() {
        let ids = LyricsValidator.rules.map(\.id)
        #expect(Set(ids).count == ids.count)
        let severity = Dictionary(uniqueKeysWithValues: LyricsValidator.rules.map { ($0.id, $0.severity) })
        #expect(severity["negative-duration"] == .error)
        #expect(severity["overlapping-lines"] == .warning)
        #expect(severity["after-total"] == .error)
        #expect(severity["invalid-number"] == .error)
        #expect(severity["unknown-end"] == .info)
        #expect(severity["unknown-language-block"] == .info)
        #expect(LyricsValidator.rules.allSatisfy { !$0.summary.isEmpty })
    }

    @Test func negativeDurationOfALine() throws {
        let lyrics = Lyrics(format: .json, lines: [LyricLine(startMs: 2000, durationMs: -500, text: "x", sourceLine: 3)])
        let d = LyricsValidator.validate(ParsedLyrics(lyrics: lyrics, diagnostics: [], encoding: .utf8))
        #expect(d.findings == [Finding("negative-duration", .error, line: 3)])
    }

    @Test func zeroDurationLineAndWords() throws {
        let d = try validate("[1000,0]<0,0,0>a\n[2000,1000]<0,0,0>b<0,0,0>c<0,1000,0>d\n")
        #expect(d.findings == [
            Finding("zero-duration", .warning, line: 1),
            Finding("zero-duration", .warning, line: 1),
            Finding("zero-duration", .warning, line: 2),  // one finding for the two words
        ])
        #expect(d[2].message.hasPrefix("2 word(s)"))
    }

    @Test func wordOutsideLineBeyondTolerance() throws {
        let d = try validate("[1000,1000]<0,600,0>in<600,402,0>out\n[3000,1000]<0,1001,0>ok\n[5000,1000]<0,600,0>a<600,400,0>b\n")
        // 1 ms past the line end is tolerated (real KRC files do it); 1 ms more is reported.
        #expect(d.findings == [Finding("word-outside-line", .warning, line: 1)])
    }

    @Test func wordStartingBeforeItsLine() throws {
        let d = try validate("[00:01.00]<00:00.998>a<00:01.50>b<00:02.00>\n")
        #expect(d.findings == [Finding("word-outside-line", .warning, line: 1)])
    }

    @Test func wordOverlapBeyondTolerance() throws {
        let d = try validate("[3000,1000]<0,500,0>a<499,501,0>b\n[5000,1000]<0,500,0>c<400,600,0>d\n")
        #expect(d.findings == [Finding("word-overlap", .warning, line: 2)])
    }

    @Test func overlappingLinesInfoUpTo300msElseWarning() throws {
        let d = try validate("""
            [1000,1300]<0,1300,0>one
            [2000,1000]<0,1000,0>two
            [2600,1101]<0,1101,0>three
            [3700,500]<0,500,0>four
            """)
        #expect(d.findings == [
            Finding("overlapping-lines", .info, line: 1),      // 300 ms: common in user-made KRC
            Finding("overlapping-lines", .warning, line: 2),   // 400 ms
        ])                                                     // line 3 overlaps by 1 ms: tolerated
    }

    @Test func overlapThresholdIsConfigurable() throws {
        let p = try read("[1000,1300]<0,1300,0>one\n[2000,1000]<0,1000,0>two\n")
        let d = LyricsValidator.validate(p, options: LyricsValidationOptions(wordToleranceMs: 1, commonOverlapMs: 100))
        #expect(d.findings == [Finding("overlapping-lines", .warning, line: 1)])
    }

    @Test func linesOutOfOrderComesFromTheParser() throws {
        let d = try validate("[3000,1000]<0,1000,0>b\n[1000,1000]<0,1000,0>a\n")
        #expect(d.findings == [Finding("lines-out-of-order", .warning, line: 2)])
    }

    @Test func afterTotal() throws {
        let d = try validate("[total:5000]\n[1000,1000]<0,1000,0>in time\n[4500,1000]<0,1000,0>runs over\n[6000,500]<0,500,0>too late\n")
        #expect(d.findings == [
            Finding("after-total", .warning, line: 3),  // ends after the song
            Finding("after-total", .error, line: 4),    // starts after the song
        ])
    }

    @Test func lineStartingExactlyAtTotalIsAnError() throws {
        let d = try validate("[total:5000]\n[4000,1000]<0,1000,0>ends at total\n[5000,100]<0,100,0>x\n")
        #expect(d.findings == [Finding("after-total", .error, line: 3)])
    }

    @Test func totalOfZeroIsIgnored() throws {
        #expect(try validate("[total:0]\n[1000,1000]<0,1000,0>a\n").isEmpty)
    }

    @Test func emptyLine() throws {
        let d = try validate("[1000,500]<0,500,0>  \n[2000,500]<0,500,0>x\n")
        #expect(d.findings == [Finding("empty-line", .warning, line: 1)])
    }

    @Test func duplicateTimestamp() throws {
        let d = try validate("[00:01.00]la la\n[00:01.00](translation)\n[00:03.00]li li\n[00:05.00]\n")
        #expect(d.findings == [Finding("duplicate-timestamp", .warning, line: 2)])
    }

    @Test func everyParseRuleIsListed() throws {
        // Collect what the parsers and the validator report over the broken inputs of this suite;
        // each id must be in the published rule table (it feeds SARIF).
        let inputs = [
            "[ti:x\n[00:01.00]a\njunk\n[00:75.00]b\n[00:12:34]c\n[-00:01.00]d\n[offset:x]\n",
            "[1000,1500]<0,500,5>a\n[500,500]<0,0,0>b<0,900,0>c\n[total:600]\n[2000,1000]<0,600,0>e<300,700,0>f\n",
            "[1000,500](0,500,7)a\n",
            "[language:\(krcLanguage("x"))]\n[1000,500]<0,500,0>a\n",
            "[language:\(krcLanguage(#"{"content":[{"type":1,"lyricContent":[]},{"type":0,"lyricContent":[]},{"type":9,"lyricContent":[]}]}"#))]\n[1000,500]<0,500,0>a\n",
            "[offset:2000]\n[00:01.00]a\n[00:01.00]\n[00:01.00]\n[00:05.00]x\n[00:05.00]y\n[00:06.00]\n",
            "[00:02.00]<00:02.00>up<00:01.50>down<00:03.00>\n",
            "<song><midi_lrc><paragraph><sentence><tone begin=\"x\"/><tone begin=\"1\" end=\"2\"/></sentence></paragraph></midi_lrc></song>",
            "[00:01.00]open\n",
        ]
        var seen = Set<String>()
        for input in inputs {
            for d in try validate(input) { seen.insert(d.rule) }
        }
        seen.insert(try read(bytes: Array("[00:01.00]".utf8) + [0xC4, 0xE3]).diagnostics[0].rule)
        let listed = Set(LyricsValidator.rules.map(\.id))
        #expect(seen.subtracting(listed).isEmpty)
        #expect(listed.subtracting(seen) == ["unreadable"])  // reported by the CLI for a thrown LyricsError
    }
}
