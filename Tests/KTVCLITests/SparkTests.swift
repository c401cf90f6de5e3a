import Foundation
import Testing

/// examples/spark end to end: generated takes scored on Spark in local mode, and on a two-worker
/// standalone cluster with a worker and a ktv process killed mid-job. They need Java and PySpark
/// (.venv-spark) and take minutes, so they run under `make spark-test` (KTV_SPARK_TESTS=1), which
/// sets both up; otherwise they are skipped, with the reason on standard error.
enum SparkExample {
    static let python = KTVBinary.packageRoot.appendingPathComponent(".venv-spark/bin/python").path
    static let folder = KTVBinary.packageRoot.appendingPathComponent("examples/spark")

    /// Why the examples cannot run here, or nil.
    static let missing: String? = {
        guard ProcessInfo.processInfo.environment["KTV_SPARK_TESTS"] == "1" else {
            return "the Spark tests run under make spark-test (KTV_SPARK_TESTS=1)"
        }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            return "no \(python) (make spark-test creates it)"
        }
        guard (try? run(python, ["-c", "import pyspark"]).status) == 0 else {
            return "\(python) cannot import pyspark (make spark-test installs it)"
        }
        guard (try? run("/bin/sh", ["-c", "command -v java"]).status) == 0 else {
            return "no java on PATH (make spark-test installs openjdk-17-jre-headless)"
        }
        return nil
    }()

    static var available: Bool {
        guard let missing else { return true }
        FileHandle.standardError.write(Data("SparkTests: skipped: \(missing)\n".utf8))
        return false
    }

    /// Runs a program to the end (see `runProcess`).
    static func run(_ executable: String, _ args: [String]) throws -> Run {
        try runProcess(URL(fileURLWithPath: executable), args)
    }
}

@Suite(.serialized) struct SparkTests {
    @Test(.enabled(if: SparkExample.available, "runs under make spark-test (KTV_SPARK_TESTS=1), with Java and PySpark; the reason it did not is on standard error"),
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

    /// The cluster demo as `make spark-cluster-demo` runs it, on 36 short audio takes: a master and
    /// two workers, ktv shipped as a tarball with spark.archives (here the ktv these tests built, in
    /// `make dist`'s layout: the dist's own binary is checked by `make dist-test`), a worker killed
    /// with SIGKILL during its second task and a ktv process killed mid-partition. Every id must come back exactly once, every result
    /// the same as plain `ktv batch`'s, the killed tasks retried, and nothing left running.
    @Test(.enabled(if: SparkExample.available, "runs under make spark-test (KTV_SPARK_TESTS=1), with Java and PySpark; the reason it did not is on standard error"),
          .timeLimit(.minutes(10)))
    func clusterWithAWorkerAndAKtvKilledKeepsEveryResultExact() throws {
        let s = try Scratch()
        let bench = KTVBinary.url.deletingLastPathComponent().appendingPathComponent("ktv-bench")
        let made = try runProcess(bench, ["make-takes", s.path("takes"), "--takes", "36", "--seconds", "8"])
        #expect(made.status == 0, "\(made.stderr)")
        let stage = s.dir.appendingPathComponent("stage/ktv-test-linux/bin")
        try FileManager.default.createDirectory(at: stage, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: KTVBinary.url, to: stage.appendingPathComponent("ktv"))
        let tar = try SparkExample.run("/bin/tar", ["-czf", s.path("ktv-test-linux.tar.gz"), "-C", s.path("stage"), "ktv-test-linux"])
        #expect(tar.status == 0, "\(tar.stderr)")

        let out = s.path("run")
        let r = try SparkExample.run(SparkExample.python, [
            SparkExample.folder.appendingPathComponent("cluster_demo.py").path, "--dist", s.path("ktv-test-linux.tar.gz"),
            "--manifest", s.path("takes/manifest.jsonl"), "--out", out, "--faults", "worker,ktv", "--partitions", "6",
        ])
        #expect(r.status == 0, "stdout:\n\(r.out)\nstderr:\n\(r.stderr)")
        #expect(r.out.contains("fault: SIGKILL to ktv"), "\(r.out)")
        #expect(r.out.contains("fault: SIGKILL to worker 2"), "\(r.out)")
        #expect(r.out.contains("every id exactly once"), "\(r.out)")
        #expect(r.out.contains("every status, reason, score and whole result identical"), "\(r.out)")

        let data = try Data(contentsOf: URL(fileURLWithPath: out + "/summary.json"))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(summary["rows"] as? Int == 40)
        #expect(summary["by_status"] as? [String: Int] == ["ok": 36, "error": 4])
        #expect(summary["by_reason"] as? [String: Int] == ["missing": 1, "audio": 1, "take": 1, "row": 1])
        #expect((summary["id_check"] as? [String: Any])?["ok"] as? Bool == true)
        let same = try #require(summary["same_as_ktv_batch"] as? [String: Any])
        #expect(same["ok"] as? Bool == true && same["scored"] as? Int == 36, "\(same)")
        // Worker 2 dies in its second task: that task, the first one's output (lost with the
        // executor) and the task whose ktv was killed are all run again.
        let demo = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/demo.json"))) as? [String: Any])
        let injected = demo["injected"] as? [[String: Any]] ?? []
        #expect(Set(injected.compactMap { $0["fault"] as? String }) == ["ktv", "worker"])
        #expect(injected.first { $0["fault"] as? String == "worker" }?["task"] as? Int == 2)
        #expect(try #require(summary["retried_tasks"] as? Int) >= 3)
        // Stopped by process id: no JVM or ktv of this run is left.
        let ps = try SparkExample.run("/bin/ps", ["-eo", "pid=,args="])
        let left = ps.out.split(separator: "\n").filter { $0.contains(out) }
        #expect(left.isEmpty, "left running: \(left)")
    }
}
