import Foundation
import Testing

/// examples/spark end to end: generated takes scored on Spark (local mode) through `ktv batch - -o -`.
/// Runs when `make spark-demo` has set things up (.venv-spark with PySpark, java on PATH); otherwise
/// skipped, with the reason on standard error.
enum SparkExample {
    static let python = KTVBinary.packageRoot.appendingPathComponent(".venv-spark/bin/python").path
    static let folder = KTVBinary.packageRoot.appendingPathComponent("examples/spark")

    /// Why the example cannot run here, or nil.
    static let missing: String? = {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            return "no \(python) (make spark-demo creates it)"
        }
        guard (try? run(python, ["-c", "import pyspark"]).status) == 0 else {
            return "\(python) cannot import pyspark (make spark-demo installs it)"
        }
        guard (try? run("/bin/sh", ["-c", "command -v java"]).status) == 0 else {
            return "no java on PATH (make spark-demo installs openjdk-17-jre-headless)"
        }
        return nil
    }()

    static var available: Bool {
        guard let missing else { return true }
        FileHandle.standardError.write(Data("SparkExampleTests: skipped: \(missing)\n".utf8))
        return false
    }

    /// Runs a program to the end (see `runProcess`).
    static func run(_ executable: String, _ args: [String]) throws -> Run {
        try runProcess(URL(fileURLWithPath: executable), args)
    }
}

@Suite struct SparkExampleTests {
    @Test(.enabled(if: SparkExample.available,
                   "needs .venv-spark with PySpark and java on PATH (make spark-demo sets both up)"),
          .timeLimit(.minutes(10)))
    func scoresGeneratedTakesOnSparkEveryIdOnce() throws {
        let s = try Scratch()
        let takes = 40
        let made = try SparkExample.run(SparkExample.python, [
            SparkExample.folder.appendingPathComponent("make_takes.py").path, s.dir.path, "--takes", "\(takes)",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let manifest = try String(contentsOfFile: s.path("manifest.jsonl"), encoding: .utf8)
        let rows = manifest.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(rows.count == takes + 4)
        #expect(rows.allSatisfy { ($0["take"] as? String)?.hasPrefix("/") == true })

        let r = try SparkExample.run(SparkExample.python, [
            SparkExample.folder.appendingPathComponent("score_with_spark.py").path,
            "--ktv", KTVBinary.url.path, "--manifest", s.path("manifest.jsonl"),
            "--out", s.path("results.parquet"), "--partitions", "3", "--summary", s.path("summary.json"),
        ])
        #expect(r.status == 0, "stdout:\n\(r.out)\nstderr:\n\(r.stderr)")
        #expect(r.out.contains("every id exactly once"), "\(r.out)")
        #expect(FileManager.default.fileExists(atPath: s.path("results.parquet/_SUCCESS")))

        let data = try Data(contentsOf: URL(fileURLWithPath: s.path("summary.json")))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(summary["rows"] as? Int == takes + 4)
        #expect(summary["by_status"] as? [String: Int] == ["ok": takes, "error": 4])
        // bad-missing: the take file does not exist; bad-corrupt (random bytes): not audio ktv can
        // decode; bad-empty: no pitch track in it; bad-rules: the row itself is wrong (rules: karaoke).
        #expect(summary["by_reason"] as? [String: Int] == ["missing": 1, "audio": 1, "take": 1, "row": 1])
        let check = try #require(summary["id_check"] as? [String: Any])
        #expect(check["ok"] as? Bool == true, "\(check)")
        #expect(check["manifest_ids"] as? Int == takes + 4)
        #expect(check["result_ids"] as? Int == takes + 4)
        let first = try #require(summary["first_rows"] as? [[String: Any]])
        let perfect = try #require(first.first { $0["id"] as? String == "perfect-0" })
        #expect(perfect["status"] as? String == "ok")
        #expect(perfect["rules"] as? String == "ktv")
        #expect(try #require(perfect["score"] as? Double) >= 95)
        let byRules = try #require(summary["by_rules"] as? [String: [String: Any]])
        #expect(Set(byRules.keys) == ["ktv", "agora", "ultrastar"])
    }
}
