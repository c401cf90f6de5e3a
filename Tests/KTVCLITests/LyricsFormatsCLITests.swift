import Foundation
import Testing

/// `ktv lyrics convert --to qrc|qrc-xml|xml|ass|vtt|ttml|lys` from the command line (issue 22): each
/// written file parses back to the same lines, with the notes on stderr; `--qrc-wrapper`.
@Suite struct LyricsFormatsCLITests {
    let source = KTVBinary.packageRoot.appendingPathComponent("fixtures/lyrics/krc-language.krc").path

    @Test func everyNewFormatConvertsAndParsesBack() throws {
        let s = try Scratch()
        let lines = try ktv(["lyrics", "parse", source, "--format", "text"]).out.split(separator: "\n").filter { $0.first?.isNumber == true }
        for (format, ext) in [("qrc", "qrc"), ("qrc-xml", "xml"), ("xml", "xml"), ("ass", "ass"), ("vtt", "vtt"), ("ttml", "ttml"), ("lys", "lys")] {
            let out = s.path("out-\(format).\(ext)")
            let r = try ktv(["lyrics", "convert", source, "--to", format, "-o", out])
            #expect(r.status == 0, "\(format): \(r.stderr)")
            // krc-language carries a translation and romanizations: each writer says what it drops.
            #expect(r.stderr.contains("info:"), "\(format): \(r.stderr)")
            let back = try ktv(["lyrics", "parse", out, "--format", "text"])
            #expect(back.status == 0, "\(format): \(back.stderr)")
            // The same lines: number, start, duration and text.
            let again = back.out.split(separator: "\n").filter { $0.first?.isNumber == true }.map { $0.split(separator: "\t").prefix(3).joined(separator: "\t") }
            #expect(again == lines.map { $0.split(separator: "\t").prefix(3).joined(separator: "\t") }, "\(format)")
        }
        let wrapped = try ktv(["lyrics", "convert", source, "--to", "qrc", "--qrc-wrapper"])
        #expect(wrapped.status == 0 && wrapped.out.contains("<QrcInfos>") && wrapped.out.contains("LyricContent=\"[ti:Xing Guang]"))
        let misuse = try ktv(["lyrics", "convert", source, "--to", "lrc", "--qrc-wrapper"])
        #expect(misuse.status == 64 && misuse.stderr.contains("--qrc-wrapper goes with --to qrc"))
    }

    /// `--ttml-timing`: relative span times by default (TTML's model), absolute on request (Apple,
    /// AMLL); both parse back to the same words; the option goes with --to ttml only.
    @Test func ttmlTimingChoosesTheDialect() throws {
        let relative = try ktv(["lyrics", "convert", source, "--to", "ttml"])
        let absolute = try ktv(["lyrics", "convert", source, "--to", "ttml", "--ttml-timing", "absolute"])
        #expect(relative.status == 0 && absolute.status == 0)
        #expect(relative.out != absolute.out)
        // The first line begins after 0: its first word is at 0 relative to it, not on the song's clock.
        let firstSpan = { (text: String) in text.components(separatedBy: "<span begin=\"").dropFirst().first?.prefix(12) }
        #expect(firstSpan(relative.out) == "00:00:00.000", "\(relative.out)")
        #expect(firstSpan(absolute.out) != "00:00:00.000", "\(absolute.out)")
        let s = try Scratch()
        let words = try [relative.out, absolute.out].map { text in
            try ktv(["lyrics", "parse", try s.write("w.ttml", text), "--format", "json"]).out
        }
        #expect(words[0] == words[1])
        let misuse = try ktv(["lyrics", "convert", source, "--to", "lrc", "--ttml-timing", "absolute"])
        #expect(misuse.status == 64 && misuse.stderr.contains("--ttml-timing goes with --to ttml"), "\(misuse.stderr)")
        let typo = try ktv(["lyrics", "convert", source, "--to", "ttml", "--ttml-timing", "absolut"])
        #expect(typo.status == 64 && typo.stderr.contains("did you mean `absolute`?"), "\(typo.stderr)")
    }
}
