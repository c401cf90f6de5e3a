import Foundation
import Testing

/// `ktv lyrics validate` for pipelines (issue 23): totals in the JSON, `--min-severity` for every
/// format, SARIF locations relative to `--base` on SRCROOT.
@Suite struct ValidateOutputTests {
    let fixtures = KTVBinary.packageRoot.appendingPathComponent("fixtures/lyrics").path

    func json(_ args: [String]) throws -> [String: Any] {
        let r = try ktv(["lyrics", "validate", fixtures, "--format", "json"] + args)
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
    }

    @Test func totalsAndSeverityFilter() throws {
        let all = try json([])
        let totals = try #require(all["totals"] as? [String: Int])
        let files = try #require(all["files"] as? [[String: Any]])
        let findings = files.flatMap { $0["findings"] as? [[String: Any]] ?? [] }
        #expect(totals["files"] == files.count)
        for severity in ["error", "warning", "info"] {
            #expect(totals[severity == "info" ? "infos" : severity + "s"] == findings.filter { $0["severity"] as? String == severity }.count)
        }
        #expect(totals["infos", default: 0] > 0 && totals["errors", default: 0] > 0)
        // --min-severity warning drops the infos from every format, and the exit code follows.
        let warnings = try json(["--min-severity", "warning"])
        let t = try #require(warnings["totals"] as? [String: Int])
        #expect(t["infos"] == 0 && t["warnings"] == totals["warnings"] && t["errors"] == totals["errors"])
        let text = try ktv(["lyrics", "validate", fixtures, "--min-severity", "error"])
        #expect(!text.out.contains(": warning:") && !text.out.contains(": info:") && text.out.contains(": error:"))
        let clean = try ktv(["lyrics", "validate", fixtures + "/krc-language.krc", "--min-severity", "error", "--strict"])
        #expect(clean.status == 0, "\(clean.out)")
        #expect(try ktv(["lyrics", "validate", fixtures, "--min-severity", "loud"]).status == 64)
    }

    @Test func sarifLocationsAreRelativeToTheBase() throws {
        let root = KTVBinary.packageRoot.path
        let r = try ktv(["lyrics", "validate", fixtures, "--format", "sarif", "--base", root])
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        let run = try #require((obj["runs"] as? [[String: Any]])?.first)
        #expect((run["originalUriBaseIds"] as? [String: [String: String]])?["SRCROOT"]?["uri"] == "file://" + root + "/")
        let locations = (run["results"] as? [[String: Any]] ?? []).compactMap {
            (($0["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])?["artifactLocation"] as? [String: String]
        }
        #expect(!locations.isEmpty)
        #expect(locations.allSatisfy { $0["uriBaseId"] == "SRCROOT" && $0["uri"]?.hasPrefix("fixtures/lyrics/") == true }, "\(locations.prefix(2))")
    }
}
