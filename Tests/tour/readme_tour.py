#!/usr/bin/env python3
"""Runs the README's five-minute tour as written (`make tour-test`): every ```sh block after the
first (which is `make setup`), line by line, from the repository's root, with the release binary on
the path. A command may find faults (exit 1) or name unreadable input (65) as the README says; a
usage error (64), an I/O error (74) or a crash fails the tour."""
import os, re, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
env = dict(os.environ, PATH=os.path.join(root, ".build", "release") + os.pathsep + os.environ["PATH"])
commands = []
for block in re.findall(r"```sh\n(.*?)```", text, re.S)[1:]:
    for line in block.replace("\\\n", " ").splitlines():
        line = line.split("  #")[0].strip()
        if line and not line.startswith("export PATH"):
            commands.append(line)
start, failed = time.time(), 0
for c in commands:
    r = subprocess.run(c, shell=True, cwd=root, env=env, capture_output=True, text=True)
    ok = r.returncode in (0, 1, 65)
    failed += not ok
    print(("ok  " if ok else "FAIL") + f" exit {r.returncode}: {c}" + ("" if ok else "\n" + r.stderr[-800:]))
print(f"tour: {len(commands)} commands, {failed} failed, {time.time() - start:.1f} s")
sys.exit(1 if failed else 0)
