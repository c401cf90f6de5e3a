#!/usr/bin/env python3
r"""Score a ktv batch manifest on Apache Spark: each partition's rows go through `ktv batch - -o -`.

    python score_with_spark.py --ktv PATH/TO/ktv --manifest manifest.jsonl --out results.parquet \
        [--partitions 4] [--master local[*]] [--conf KEY=VALUE ...] [--expect plain.jsonl]
        [--summary summary.json]

The manifest is JSON Lines (one row per line: id, take, reference, optional rules, timing, ...; the
columns of `ktv batch`) with absolute paths. The results are Parquet: one row per take with id,
line, status, reason, error, elapsed_ms, score, max_score, rules, result_json (the whole `ktv score`
JSON of an ok take) and manifest_line (the row's line in the manifest). Then a report, read back
from the Parquet: rows by status, failures by reason, scores by rule set, throughput, the first rows,
and a check that every manifest id came back exactly once (exit 1 if not); --summary also writes
those figures as JSON.

Why a subprocess per partition. Spark is only the scheduler: it splits the manifest into
partitions, runs one `ktv batch - -o - --jobs 1` process per partition on whichever executor core is
free, and retries a failed task. ktv stays a plain process reading rows on standard input and
writing JSON lines on standard output: no JNI, no Python binding, the same binary and the same
result lines as `ktv batch` on a laptop, a Slurm array or a Kubernetes Indexed Job. `--jobs 1`
because Spark already runs one task per core.

Exit codes. Each partition's ktv runs under `mapPartitions` with its exit status checked (not
`RDD.pipe`, which either ignores it or fails on exit 1). Exit 0 and 1 are results: 1 only means
some take of the slice failed, and each failure is a line with a reason. Anything else (2 and
above, or death by a signal: the OOM killer, a SIGKILL) fails the task with ktv's stderr in the
message, so Spark retries it on a fresh process (up to `spark.task.maxFailures`); an empty partition
starts no ktv at all.

Duplicates. A task that is retried, or run twice by speculative execution, reruns its whole
partition; only the attempt that succeeds is kept, so a retry never duplicates an id, and one
partition's failure loses no other partition's results. Anything that writes outside Spark (or a
job rerun by hand into the same folder) could still see a take twice. Every result line carries its
id, so duplicates are detectable: the check below counts them, and downstream a
`dropDuplicates(["id"])` (preferring status ok) removes them.

`line` is ktv's line number within the slice its process read (Spark does not send it the
manifest's own); `manifest_line` is joined back from the manifest by id.

On a cluster (`make spark-cluster-demo` runs this on a standalone one, with faults), ship `make
dist`'s tarball, whose ktv needs no Swift, with --archives:

    spark-submit --master spark://master:7077 \
        --archives ktv-0.1.0-linux-x86_64.tar.gz#ktvdist --conf spark.task.maxFailures=4 \
        score_with_spark.py --ktv ./ktvdist/ktv-0.1.0-linux-x86_64/bin/ktv \
        --manifest hdfs:///karaoke/manifest.jsonl --out hdfs:///karaoke/results.parquet --partitions 400

- the nodes need the Debian packages the tarball's DEPENDENCIES names (libsndfile, FFTW, libsoxr,
  zlib, libzip, FFmpeg's libraries);
- the takes and references must be readable at the same absolute paths from every executor
  (NFS, a shared POSIX mount, or a FUSE mount of object storage): ktv opens them itself, Spark
  only moves the manifest lines. The manifest and the Parquet output can be on HDFS or S3;
- use many more partitions than cores (a few hundred takes each) so a retry reruns little and
  slow partitions even out; `--jobs 1` keeps one ktv worker per Spark core.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from pyspark import AccumulatorParam
from pyspark.sql import SparkSession, Row
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

SCHEMA = StructType([
    StructField("id", StringType(), True),
    StructField("line", LongType(), True),
    StructField("status", StringType(), True),
    StructField("reason", StringType(), True),
    StructField("error", StringType(), True),
    StructField("elapsed_ms", LongType(), True),
    StructField("score", DoubleType(), True),
    StructField("max_score", DoubleType(), True),
    StructField("rules", StringType(), True),
    StructField("result_json", StringType(), True),
])


def parse(text):
    """One output line of ktv batch as a tuple in SCHEMA's order; a line that is not JSON is kept."""
    try:
        d = json.loads(text)
    except ValueError:
        return (None, None, "unparsed", "unparsed", text[:1000], None, None, None, None, None)
    result = d.get("result")
    num = lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    return (
        d.get("id"),
        d.get("line"),
        d.get("status"),
        d.get("reason"),
        d.get("error"),
        d.get("elapsed_ms"),
        num(result.get("score")) if result else None,
        num(result.get("max_score")) if result else None,
        result.get("rules") if result else None,
        json.dumps(result, separators=(",", ":")) if result is not None else None,
    )


class TaskTimes(AccumulatorParam):
    """An accumulator of (stage, partition, task attempt, ktv seconds), one per task that ran ktv."""
    def zero(self, value):
        return []

    def addInPlace(self, a, b):
        a.extend(b)
        return a


def score_partition(ktv, env, task_times):
    """The function `mapPartitions` runs: the partition's rows through one `ktv batch` process.
    Exit 0 or 1 gives its lines; any other exit, or a signal, raises (Spark retries the task).
    `task_times` gets the ktv process's wall time (Spark keeps the accumulator updates of
    successful tasks only)."""
    def run(rows):
        rows = [r for r in rows if r.strip()]
        if not rows:
            return iter(())
        from pyspark import TaskContext
        start = time.monotonic()
        p = subprocess.run([ktv, "batch", "-", "-o", "-", "--progress", "never", "--jobs", "1"],
                           input=("\n".join(rows) + "\n").encode("utf-8"), capture_output=True, env=env)
        c = TaskContext.get()
        task_times.add([(c.stageId(), c.partitionId(), c.attemptNumber(), time.monotonic() - start)] if c else [])
        if p.returncode not in (0, 1):
            how = f"was killed by signal {-p.returncode}" if p.returncode < 0 else f"exited {p.returncode}"
            err = p.stderr.decode("utf-8", "replace").strip()[-2000:]
            raise RuntimeError(f"ktv {how} on a partition of {len(rows)} rows (the task is retried)"
                               + (f": {err}" if err else ""))
        return iter([parse(l) for l in p.stdout.decode("utf-8", "replace").splitlines() if l.strip()])
    return run


def compare(df, expect_path):
    """Each id's status, reason and whole result against a plain `ktv batch` run's (its last line
    per id). The results are small enough here to compare on the driver."""
    expected = {}
    with open(expect_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                expected[d.get("id")] = d
    got = {r["id"]: r for r in df.select("id", "status", "reason", "score", "result_json").collect()}
    differ = []
    for key in sorted(set(expected) | set(got), key=str):
        e, g = expected.get(key), got.get(key)
        if e is None or g is None:
            differ.append(f"{key}: only in {'Spark' if e is None else 'ktv batch'}")
            continue
        result = json.loads(g["result_json"]) if g["result_json"] else None
        if (e.get("status"), e.get("reason")) != (g["status"], g["reason"]) or e.get("result") != result:
            was = (e.get("result") or {}).get("score")
            differ.append(f"{key}: ktv batch {e.get('status')} {was}, Spark {g['status']} {g['score']}")
    n_ok = sum(1 for d in expected.values() if d.get("status") == "ok")
    print(f"== the same as plain ktv batch ({expect_path}): {len(expected)} ids, {n_ok} scored; "
          + ("every status, reason, score and whole result identical" if not differ
             else f"{len(differ)} differ: FAILED"))
    for d in differ[:20]:
        print("   " + d)
    return {"ok": not differ, "ids": len(expected), "scored": n_ok, "differ": differ[:20], "differ_count": len(differ)}


def manifest_id(text):
    try:
        return json.loads(text).get("id")
    except (ValueError, AttributeError):
        return None


def main():
    ap = argparse.ArgumentParser(description="Score a ktv batch manifest (JSON Lines) on Spark.")
    ap.add_argument("--ktv", required=True, help="the ktv binary, as the executors see it")
    ap.add_argument("--manifest", required=True, help="JSON Lines manifest (absolute take paths)")
    ap.add_argument("--out", required=True, help="Parquet output folder (overwritten)")
    ap.add_argument("--partitions", type=int, default=4, help="manifest partitions (default 4)")
    ap.add_argument("--master", default=None,
                    help="Spark master (default: spark-submit's --master, else local[*])")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting (repeatable), e.g. spark.archives=ktv.tar.gz#ktvdist")
    ap.add_argument("--expect", default=None, metavar="RESULTS.jsonl",
                    help="plain `ktv batch` results of the same manifest: every id's status, reason "
                         "and whole result must be the same (exit 1 if not)")
    ap.add_argument("--summary", default=None,
                    help="also write the report's figures and the id check as JSON here")
    args = ap.parse_args()

    builder = SparkSession.builder.appName("ktv-batch")
    # Under spark-submit the driver joins a JVM that already has spark-submit's --master (and
    # PYSPARK_GATEWAY_PORT in its environment); run as a plain script it is local mode.
    if args.master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        builder = builder.master(args.master or "local[*]")
        # The JVM's own start-up warnings come before setLogLevel can act: quiet them with a log4j2
        # file when this script starts the JVM.
        log4j = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
        if os.path.exists(log4j):
            builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
    for kv in args.conf:
        key, _, value = kv.partition("=")
        builder = builder.config(key, value)
    builder = (builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(max(1, args.partitions))))
    t0 = time.monotonic()
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")  # the executors' and the scheduler's warnings too
    started = time.monotonic()
    print(f"spark {spark.version} ({sc.master}, {sc.defaultParallelism} cores), "
          f"session in {started - t0:.1f} s", flush=True)

    manifest = os.path.abspath(args.manifest) if "://" not in args.manifest else args.manifest
    # Numbered before anything moves them: manifest_line is the line in the file.
    numbered = (sc.textFile(manifest, minPartitions=max(1, args.partitions)).zipWithIndex()
                .filter(lambda p: p[0].strip()).cache())
    lines = numbered.keys()
    n_rows = numbered.count()
    parts = max(1, min(args.partitions, n_rows))
    if lines.getNumPartitions() != parts:
        lines = lines.repartition(parts) if lines.getNumPartitions() < parts else lines.coalesce(parts)

    # ktv's exit status counts (see the top of the file); it runs with this environment only.
    env = {"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}
    for k in ("KTV_BATCH_CRASH_ID", "KTV_BATCH_HANG_ID", "KTV_BATCH_SLOW_MS"):
        if k in os.environ:
            env[k] = os.environ[k]
    task_times = sc.accumulator([], TaskTimes())
    out = lines.mapPartitions(score_partition(args.ktv, env, task_times))
    results = spark.createDataFrame(out, SCHEMA)

    ids = numbered.map(lambda p: Row(id=manifest_id(p[0]), manifest_line=p[1] + 1))
    ids_df = spark.createDataFrame(ids, "id string, manifest_line long").cache()
    # A left join keeps result lines whose id is not in the manifest (unparsed lines) for the report.
    joined = results.join(ids_df.dropDuplicates(["id"]), "id", "left")
    joined.write.mode("overwrite").parquet(args.out)
    wall = time.monotonic() - started
    cores = sc.defaultParallelism
    ktv_s = sum(t[3] for t in task_times.value)
    # Retried: a task that succeeded on a later attempt, or a partition scored again when a lost
    # executor took its finished output with it (the stage is resubmitted).
    retried = (sum(1 for t in task_times.value if t[2] > 0)
               + len(task_times.value) - len({(t[0], t[1]) for t in task_times.value}))
    # Spark's share: the cores' time in this job (numbering, scoring, join, Parquet) not spent in ktv.
    overhead = (wall * cores - ktv_s) / parts
    print(f"wrote {args.out}: {n_rows} manifest rows in {parts} partitions, "
          f"scored and written in {wall:.1f} s ({n_rows / wall * 60:.0f} takes/min); ktv ran "
          f"{ktv_s:.1f} s of the {wall * cores:.1f} core-seconds, the rest is Spark's: "
          f"{overhead:.2f} s per task; {retried} task(s) retried or rerun", flush=True)

    # The report reads the Parquet back: it is what a downstream job would see.
    df = spark.read.parquet(args.out).cache()
    summary = {"manifest": manifest, "out": args.out, "rows": n_rows, "partitions": parts,
               "session_s": round(started - t0, 1), "wall_s": round(wall, 1),
               "takes_per_min": round(n_rows / wall * 60, 1), "cores": cores,
               "ktv_s": round(ktv_s, 2), "overhead_s_per_task": round(overhead, 3), "retried_tasks": retried,
               "app_id": sc.applicationId,
               "tasks": [{"stage": t[0], "partition": t[1], "attempt": t[2], "ktv_s": round(t[3], 3)}
                         for t in sorted(task_times.value)]}
    print("\n== rows by status")
    by_status = df.groupBy("status").count().orderBy("status").cache()  # shown, then collected
    by_status.show(truncate=False)
    summary["by_status"] = {r["status"]: r["count"] for r in by_status.collect()}

    print("== failures by reason")
    by_reason = (df.where("status <> 'ok'").groupBy("reason")
                 .agg(F.count("*").alias("count"), F.first("id").alias("e.g. id"),
                      F.first("error").alias("e.g. error"))
                 .orderBy("reason").cache())
    by_reason.show(truncate=70)
    summary["by_reason"] = {r["reason"]: r["count"] for r in by_reason.collect()}

    print("== scores by rule set")
    by_rules = (df.where("status = 'ok'").groupBy("rules")
                .agg(F.count("*").alias("takes"), F.round(F.mean("score"), 1).alias("mean"),
                     F.expr("transform(percentile(score, array(0.1, 0.5, 0.9)), p -> round(p, 1))")
                      .alias("p10_p50_p90"),
                     F.min("score").alias("min"), F.max("score").alias("max"),
                     F.first("max_score").alias("max_score"), F.round(F.mean("elapsed_ms"), 1).alias("mean_ms"))
                .orderBy("rules").cache())
    by_rules.show(truncate=False)
    summary["by_rules"] = {r["rules"]: r.asDict() for r in by_rules.collect()}

    print("== the first rows of the manifest")
    first = (df.orderBy("manifest_line")
             .select("manifest_line", "id", "line", "status", "reason", "rules", "score", "elapsed_ms",
                     F.substring("result_json", 1, 40).alias("result_json"))
             .limit(6).cache())
    first.show(truncate=False)
    summary["first_rows"] = [r.asDict() for r in first.drop("result_json").collect()]

    # Every manifest id exactly once, counted in Spark (the manifest may not fit the driver).
    per_id = (ids_df.groupBy("id").agg(F.count("*").alias("in_manifest"))
              .join(df.where(F.col("id").isNotNull()).groupBy("id").agg(F.count("*").alias("in_results")),
                    "id", "full_outer")
              .fillna(0, ["in_manifest", "in_results"]).cache())
    checks = {
        "missing": (F.col("in_manifest") > 0) & (F.col("in_results") == 0),
        "not in the manifest": (F.col("in_manifest") == 0) & (F.col("in_results") > 0),
        "more than once": F.col("in_results") > 1,
        "repeated in the manifest": F.col("in_manifest") > 1,
    }
    totals = per_id.agg(*[F.sum(F.when(cond & F.col("id").isNotNull(), 1).otherwise(0)).alias(name)
                          for name, cond in checks.items()],
                        F.sum(F.when(F.col("in_manifest") > 0, 1).otherwise(0)).alias("n_ids"),
                        F.sum(F.when(F.col("in_results") > 0, 1).otherwise(0)).alias("n_seen")).first()
    n_ids, n_seen = totals["n_ids"] or 0, totals["n_seen"] or 0
    problems = {}
    for name, cond in checks.items():
        n = totals[name] or 0
        some = [r["id"] for r in per_id.where(cond & F.col("id").isNotNull()).orderBy("id").limit(20).collect()] if n else []
        problems[name] = (n, some)
    no_id = ids_df.where(F.col("id").isNull())
    problems["manifest lines without an id"] = (
        no_id.count(), [str(r["manifest_line"]) for r in no_id.orderBy("manifest_line").limit(20).collect()])
    unparsed = df.where("status = 'unparsed'")
    problems["unparsed output lines"] = (unparsed.count(), [r["error"][:60] for r in unparsed.limit(20).collect()])
    ok = not any(n for n, _ in problems.values())
    print(f"== id check: {n_ids} manifest ids, {n_seen} in the results; "
          + ", ".join(f"{name} {n}" for name, (n, _) in problems.items())
          + f": {'every id exactly once' if ok else 'FAILED'}")
    for name, (n, some) in problems.items():
        if n:
            print(f"   {name}: {', '.join(some)}{' ...' if n > len(some) else ''}")
    summary["id_check"] = {"ok": ok, "manifest_ids": n_ids, "result_ids": n_seen,
                           **{name: {"count": n, "first": some} for name, (n, some) in problems.items()}}
    if args.expect:
        same = compare(df, args.expect)
        summary["same_as_ktv_batch"] = same
        ok = ok and same["ok"]
    summary["total_s"] = round(time.monotonic() - t0, 1)
    print(f"total {summary['total_s']:.1f} s (Spark session start included)")
    if args.summary:
        tmp = args.summary + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
        os.replace(tmp, args.summary)
    spark.stop()
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
