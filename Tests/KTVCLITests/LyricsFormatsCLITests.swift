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
}
