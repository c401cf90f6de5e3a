import Foundation
import Testing

/// MusicXML references from the command line (issue 22): `--reference X.musicxml|.mxl --part N`,
/// `ktv score notes --to musicxml`, and the errors a user meets.
@Suite struct MusicXMLCLITests {
    let fixtures = KTVBinary.packageRoot.appendingPathComponent("fixtures/musicxml")

    @Test func scoreNotesReadsPartsAndWritesMusicXML() throws {
        let s = try Scratch()
        let score = fixtures.appendingPathComponent("tied-tempo-transposed.mxl").path
        let tenor = try ktv(["score", "notes", score, "--to", "ultrastar"])
        #expect(tenor.status == 0, "\(tenor.stderr)")
        let clarinet = try ktv(["score", "notes", "--reference", score, "--part", "3"])
        #expect(clarinet.status == 0 && clarinet.out.contains("\"midi\": 74"), "\(clarinet.stderr)")
        let missing = try ktv(["score", "notes", score, "--part", "9"])
        #expect(missing.status == 65 && missing.stderr.contains("part 9 does not exist; the score has 3 parts"), "\(missing.stderr)")
        let zero = try ktv(["score", "notes", score, "--part", "0"])
        #expect(zero.status == 64, "\(zero.stderr)")

        // Written, then read back as the same notes JSON.
        let written = s.path("tenor.musicxml")
        let w = try ktv(["score", "notes", score, "--to", "musicxml", "-o", written])
        #expect(w.status == 0, "\(w.stderr)")
        #expect(try String(contentsOfFile: written, encoding: .utf8).contains("<score-partwise version=\"4.0\">"))
        #expect(try ktv(["score", "notes", written]).out == ktv(["score", "notes", score]).out)
    }

    @Test func aTakeIsScoredAgainstAMusicXMLReference() throws {
        let s = try Scratch()
        // A pitch-track take that sings the tenor part's sounding notes (ms, MIDI), 10 ms a row.
        let notes: [(Int, Int, Double)] = [(0, 2000, 55), (2000, 5000, 57), (5000, 6000, 53), (6000, 8000, 59),
                                           (8000, 8500, 64), (8500, 9000, 62), (9000, 9500, 61), (9500, 10000, 61.5)]
        var csv = "time_s,f0_hz\n"
        for ms in stride(from: 0, to: 10_000, by: 10) {
            let hz = notes.first { $0.0 <= ms && ms < $0.1 - 30 }.map { 440 * pow(2, ($0.2 - 69) / 12) } ?? 0
            csv += String(format: "%.2f,%.3f\n", Double(ms) / 1000, hz)
        }
        let take = s.path("take.f0.csv")
        try csv.write(toFile: take, atomically: true, encoding: .utf8)
        let r = try ktv(["score", take, "--reference", fixtures.appendingPathComponent("tied-tempo-transposed.musicxml").path, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
        #expect((json?["score"] as? Double ?? 0) >= 95, "\(r.out.prefix(300))")

        let bomb = try ktv(["score", take, "--reference", fixtures.appendingPathComponent("bomb-2mib.mxl").path])
        #expect(bomb.status == 65 && bomb.stderr.contains("the score has no `<part>` (big.musicxml in the archive)"), "\(bomb.stderr)")
    }
}
