#!/usr/bin/env python3
"""The same manifest scored four ways, in one run (`make spark-bench`):

    python bench.py --dist ktv-VERSION-linux-ARCH.tar.gz --manifest manifest.jsonl --out DIR [--partitions 8]

1. plain `ktv batch --jobs 2` (the tarball's ktv, unpacked into DIR/local);
2. score_with_spark.py on Spark `local[2]`, with that ktv;
3. cluster_demo.py: the two-worker standalone cluster, no faults;
4. cluster_demo.py with both faults (a worker and a ktv process killed with SIGKILL).

Each Spark run must reproduce run 1's results exactly (`--expect`). Prints one table: wall time
(for the Spark runs: from the session being up to the Parquet written; the session's own start is
apart), takes per minute, the ktv processes' own time, and Spark's overhead two ways:
- per scoring task, from Spark's event log: each successful task's duration (launch to finish)
  less its ktv process's wall time, the median over the tasks;
- per task, all in: the cores' time in the job (numbering the manifest, scoring, the id join,
  Parquet, executors starting) not spent in ktv, divided by the tasks.
DIR/bench.json holds the figures.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from cluster_demo import plain_batch, unpack


def task_overheads(log_path, tasks):
    """Each scoring task's duration in Spark's event log less its ktv time (seconds): the tasks
    that succeeded and ran ktv (score_with_spark.py's summary names them)."""
    ktv = {}
    for t in tasks:  # a partition rerun in a resubmitted stage can repeat a key: matched in order
        ktv.setdefault((t["stage"], t["partition"], t["attempt"]), []).append(t["ktv_s"])
    found = []
    if not os.path.exists(log_path):
        return found
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            if '"SparkListenerTaskEnd"' not in line:
                continue
            e = json.loads(line)
            info = e["Task Info"]
            key = (e["Stage ID"], info.get("Partition ID", info["Index"]), info["Attempt"])
            if ktv.get(key) and not info.get("Failed") and not info.get("Killed"):
                found.append((info["Finish Time"] - info["Launch Time"]) / 1000 - ktv[key].pop(0))
    return sorted(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--partitions", type=int, default=8)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.abspath(a.out)
    manifest = os.path.abspath(a.manifest)
    ktv = unpack(a.dist, os.path.join(out, "local"))
    rows = sum(1 for line in open(manifest, encoding="utf-8") if line.strip())
    figures = []

    plain = os.path.join(out, "plain.jsonl")
    code, wall, err = plain_batch(ktv, manifest, plain)
    sys.stderr.write(err)  # its summary
    if code not in (0, 1):
        sys.exit(f"ktv batch exited {code}:\n{err}")
    figures.append({"run": "ktv batch --jobs 2", "wall_s": wall, "takes_per_min": rows / wall * 60,
                    "ktv_s": None, "overhead_s_per_task": None, "tasks": None, "retried": None, "same": True})

    events = os.path.join(out, "events")
    os.makedirs(events, exist_ok=True)
    event_log = ["--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir=file:{events}"]

    def spark_run(label, cmd, summary):
        print(f"\n== {label}", flush=True)
        t = time.monotonic()
        code = subprocess.run(cmd + event_log).returncode
        total = time.monotonic() - t
        s = json.load(open(summary)) if os.path.exists(summary) else {}
        per_task = task_overheads(os.path.join(events, s.get("app_id", "?")), s.get("tasks", []))
        figures.append({"run": label, "wall_s": s.get("wall_s"), "takes_per_min": s.get("takes_per_min"),
                        "ktv_s": s.get("ktv_s"), "overhead_s_per_task": s.get("overhead_s_per_task"),
                        "task_overhead_ms_median": statistics.median(per_task) * 1000 if per_task else None,
                        "task_overhead_ms": [round(x * 1000) for x in per_task],
                        "tasks": s.get("partitions"), "retried": s.get("retried_tasks"),
                        "session_s": s.get("session_s"), "total_s": round(total, 1),
                        "same": code == 0 and (s.get("same_as_ktv_batch") or {}).get("ok", False)})

    summary = os.path.join(out, "local2.summary.json")
    spark_run("Spark local[2]", [sys.executable, os.path.join(here, "score_with_spark.py"), "--master", "local[2]",
                                 "--ktv", ktv, "--manifest", manifest, "--out", os.path.join(out, "local2.parquet"),
                                 "--partitions", str(a.partitions), "--summary", summary, "--expect", plain], summary)
    for faults, label in (("none", "cluster, 2 workers, no faults"), ("worker,ktv", "cluster, 2 workers, worker and ktv killed")):
        run_dir = os.path.join(out, "cluster-" + faults.replace(",", "-"))
        spark_run(label, [sys.executable, os.path.join(here, "cluster_demo.py"), "--dist", a.dist, "--manifest", manifest,
                          "--out", run_dir, "--faults", faults, "--partitions", str(a.partitions), "--expect", plain],
                  os.path.join(run_dir, "summary.json"))

    print(f"\n{rows} manifest rows ({rows - 4} audio takes of 30 s with accompaniment, 4 bad rows), {a.partitions} partitions")
    print("| run | wall s | takes/min | ktv s | Spark per scoring task, ms (median) | Spark per task, all in, s | tasks retried | same results as ktv batch |")
    print("|---|---|---|---|---|---|---|---|")
    fmt = lambda v, f: "–" if v is None else f.format(v)
    for f in figures:
        print(f"| {f['run']} | {fmt(f['wall_s'], '{:.1f}')} | {fmt(f['takes_per_min'], '{:.0f}')} | {fmt(f['ktv_s'], '{:.1f}')} "
              f"| {fmt(f.get('task_overhead_ms_median'), '{:.0f}')} | {fmt(f['overhead_s_per_task'], '{:.2f}')} | {fmt(f['retried'], '{}')} | {'yes' if f['same'] else 'NO'} |")
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump({"rows": rows, "partitions": a.partitions, "runs": figures}, f, indent=1)
    return 0 if all(f["same"] for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
