#!/usr/bin/env python3
"""A Spark standalone cluster on one machine, with faults, scoring a manifest (`make spark-cluster-demo`).

    python cluster_demo.py --dist ktv-VERSION-linux-ARCH.tar.gz --manifest manifest.jsonl --out DIR
        [--faults worker,ktv] [--partitions 8]

1. The ktv tarball (`make dist`) is unpacked into DIR/local and `ktv batch --jobs 2` scores the
   manifest there: the results every Spark run must reproduce (DIR/plain.jsonl).
2. A master and two workers start from the PySpark distribution (`spark-class
   org.apache.spark.deploy.master.Master` / `...worker.Worker`), each its own JVM on 127.0.0.1 with
   its own port, one core, 1 GB and its own work folder (DIR/worker1, DIR/worker2); logs in DIR.
3. score_with_spark.py runs against it with the tarball shipped to the executors with
   `spark.archives` (a real cluster's way: each executor unpacks it into its own folder, and runs
   `./ktvdist/NAME/bin/ktv`; nothing is read from this checkout on the executors), and checks every
   id exactly once and every result identical to step 1's (`--expect`).
4. The faults (`--faults`, or SPARK_FAULTS; both by default, `none` for neither):
   - `ktv`: as soon as a ktv process runs under worker 1, it is killed with SIGKILL (what the OOM
     killer does); its task fails with ktv's status and Spark retries it;
   - `worker`: as soon as a ktv process runs under worker 2, worker 2 is killed with SIGKILL, its
     executor and everything under it too (a machine lost); its tasks, and the shuffle output it
     held, are redone on worker 1.
5. Everything started is stopped by process id: at the end, on failure, on Ctrl-C or SIGTERM.

Exit 0 when the Spark run passed its checks; DIR/summary.json holds its figures, DIR/demo.json the
demo's own (plain ktv batch's time, the faults injected).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False


def descendants(pid):
    """Every process under pid (the executor JVM under its worker, Python under the executor, ktv
    under Python, ktv's own worker process under it)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children = {}
    for line in out.splitlines():
        p, pp = (int(x) for x in line.split())
        children.setdefault(pp, []).append(p)
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def ktv_batches(pid):
    """The `ktv batch - -o -` processes under pid, one per running task (not the worker process
    each starts, `… --worker`)."""
    return [p for p in descendants(pid) if (c := cmdline(p)) and c[0].endswith(b"/ktv")
            and c[1:4] == [b"batch", b"-", b"-o"] and b"--worker" not in c]


def kill(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def unpack(dist, into):
    """The ktv tarball unpacked into `into`; its ktv's path."""
    with tarfile.open(dist) as t:
        t.extractall(into, filter="tar") if hasattr(tarfile, "data_filter") else t.extractall(into)
    return os.path.join(into, os.path.basename(dist)[: -len(".tar.gz")], "bin", "ktv")


def plain_batch(ktv, manifest, results):
    """`ktv batch --jobs 2` on this machine into a fresh `results`: (exit status, seconds, stderr)."""
    if os.path.exists(results):
        os.remove(results)
    start = time.monotonic()
    r = subprocess.run([ktv, "batch", manifest, "-o", results, "--jobs", "2", "--progress", "never"],
                       stderr=subprocess.PIPE, text=True)
    return r.returncode, time.monotonic() - start, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", required=True, help="the ktv tarball (make dist)")
    ap.add_argument("--manifest", required=True, help="JSON Lines manifest with absolute paths")
    ap.add_argument("--out", required=True, help="work folder: logs, worker folders, results.parquet, summaries")
    ap.add_argument("--faults", default=os.environ.get("SPARK_FAULTS", "worker,ktv"),
                    help="worker,ktv (default, or $SPARK_FAULTS), one of them, or none")
    ap.add_argument("--partitions", type=int, default=8, help="manifest partitions (default 8)")
    ap.add_argument("--worker-fault-at", type=int, default=2, metavar="K",
                    help="kill worker 2 during its K-th task (default 2: the output of its first is lost with it)")
    ap.add_argument("--expect", default=None, metavar="RESULTS.jsonl",
                    help="plain ktv batch's results of this manifest, already made: step 1 is skipped")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="one more Spark setting for the job (repeatable), e.g. spark.eventLog.enabled=true")
    a = ap.parse_args()
    faults = {f.strip() for f in a.faults.split(",") if f.strip() and f.strip() != "none"}
    if faults - {"worker", "ktv"}:
        ap.error(f"--faults: {', '.join(sorted(faults - {'worker', 'ktv'}))} is not one of worker, ktv, none")
    if not a.dist.endswith(".tar.gz") or not os.path.isfile(a.dist):
        ap.error(f"--dist {a.dist}: not a .tar.gz file (make dist writes .build/dist/ktv-VERSION-linux-ARCH.tar.gz)")
    import pyspark
    spark_home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(spark_home, "bin", "spark-class")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    name = os.path.basename(a.dist)[: -len(".tar.gz")]
    demo = {"faults": sorted(faults), "injected": []}

    # 1. Plain ktv batch, from the same tarball, on this machine: the expected results.
    rows = sum(1 for line in open(a.manifest, encoding="utf-8") if line.strip())
    demo["rows"] = rows
    plain = os.path.abspath(a.expect) if a.expect else os.path.join(out, "plain.jsonl")
    if not a.expect:
        ktv = unpack(a.dist, os.path.join(out, "local"))
        code, seconds, err = plain_batch(ktv, a.manifest, plain)
        demo["ktv_batch_s"] = round(seconds, 2)
        if code not in (0, 1):
            print(f"plain ktv batch exited {code}:\n{err}")
            return 1
        print(f"plain ktv batch --jobs 2 ({name}): {rows} rows in {seconds:.1f} s "
              f"({rows / seconds * 60:.0f} takes/min) -> {plain}", flush=True)

    env = dict(os.environ, SPARK_HOME=spark_home, SPARK_LOG_DIR=os.path.join(out, "logs"),
               SPARK_LOCAL_IP="127.0.0.1",
               # The master declares a silent worker dead after 15 s, not the default minute.
               SPARK_MASTER_OPTS="-Dspark.worker.timeout=15")
    procs = []

    def start(args, label):
        log = open(os.path.join(out, label + ".log"), "w")
        p = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append((label, p))
        return p

    def stop_all():
        for _, p in reversed(procs):
            if p.poll() is None:
                kids = descendants(p.pid)
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                kill(kids)  # anything its children left behind
        print(f"stopped the {len(procs)} processes this demo started (pids "
              f"{', '.join(str(p.pid) for _, p in procs)})", flush=True)

    def on_term(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    status = 1
    try:
        # 2. The cluster.
        mport = free_port()
        start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(mport),
               "--webui-port", str(free_port())], "master")
        if not wait_port(mport):
            print("the master did not start; see", os.path.join(out, "master.log"))
            return 1
        master = f"spark://127.0.0.1:{mport}"
        workers = []
        for k in (1, 2):
            wdir = os.path.join(out, f"worker{k}")
            os.makedirs(wdir, exist_ok=True)
            wport = free_port()
            workers.append(start([spark_class, "org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1",
                                  "--port", str(wport), "--webui-port", str(free_port()), "--cores", "1",
                                  "--memory", "1g", "--work-dir", wdir], f"worker{k}"))
            if not wait_port(wport):
                print(f"worker {k} did not start; see", os.path.join(out, f"worker{k}.log"))
                return 1
        print(f"cluster: master {master} (pid {procs[0][1].pid}), 2 workers of 1 core "
              f"(pids {', '.join(str(w.pid) for w in workers)}); faults: {', '.join(sorted(faults)) or 'none'}", flush=True)

        # 4. The faults, from a thread watching the workers' process trees.
        done = threading.Event()

        def inject():
            pending = set(faults)
            seen_on_2 = set()  # the ktv processes seen under worker 2: one per task it ran
            while pending and not done.is_set():
                if "ktv" in pending and (victims := ktv_batches(workers[0].pid)):
                    kill(victims[:1])
                    pending.discard("ktv")
                    demo["injected"].append({"fault": "ktv", "pid": victims[0], "at_s": round(time.monotonic() - t1, 2)})
                    print(f"fault: SIGKILL to ktv (pid {victims[0]}) mid-partition on worker 1", flush=True)
                running_on_2 = ktv_batches(workers[1].pid) if "worker" in pending and workers[1].poll() is None else []
                seen_on_2.update(running_on_2)
                if running_on_2 and len(seen_on_2) >= a.worker_fault_at:
                    victims = [workers[1].pid] + descendants(workers[1].pid)
                    kill(victims)
                    pending.discard("worker")
                    demo["injected"].append({"fault": "worker", "pids": victims, "task": len(seen_on_2),
                                             "at_s": round(time.monotonic() - t1, 2)})
                    print(f"fault: SIGKILL to worker 2 while its task {len(seen_on_2)} ran: the worker, its executor and "
                          f"everything under them ({len(victims)} processes), with the scored output of its "
                          f"{len(seen_on_2) - 1} finished task(s)", flush=True)
                time.sleep(0.05)
            if pending:
                demo["not_injected"] = sorted(pending)

        here = os.path.dirname(os.path.abspath(__file__))
        summary = os.path.join(out, "summary.json")
        cmd = [sys.executable, os.path.join(here, "score_with_spark.py"), "--master", master,
               "--ktv", f"./ktvdist/{name}/bin/ktv", "--manifest", os.path.abspath(a.manifest),
               "--out", os.path.join(out, "results.parquet"), "--partitions", str(a.partitions),
               "--summary", summary, "--expect", plain,
               "--conf", f"spark.archives={os.path.abspath(a.dist)}#ktvdist",
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
               "--conf", "spark.task.maxFailures=4", "--conf", "spark.executor.memory=768m",
               "--conf", f"spark.local.dir={os.path.join(out, 'tmp')}"] + [x for kv in a.conf for x in ("--conf", kv)]
        t1 = time.monotonic()
        injector = threading.Thread(target=inject, daemon=True)
        injector.start()
        # 3. The job; its driver is one more process to stop.
        driver = start(cmd, "driver")
        with open(os.path.join(out, "driver.log")) as log:  # shown as it is written
            while True:
                line = log.readline()
                if line:
                    print(line, end="", flush=True)
                elif driver.poll() is not None:
                    rest = log.read()
                    print(rest, end="", flush=True)
                    break
                else:
                    time.sleep(0.1)
        status = driver.returncode
        done.set()
        injector.join(timeout=2)
        if demo.get("not_injected"):
            print(f"the job ended before these faults could be injected: {', '.join(demo['not_injected'])} "
                  f"(more takes, or more partitions, give them time)")
            status = status or 1
    finally:
        stop_all()
        with open(os.path.join(out, "demo.json"), "w") as f:
            json.dump(demo, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
