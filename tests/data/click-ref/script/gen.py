#!/usr/bin/env python3
"""Record Click 2.1's output for each Script body in cases.txt into cases.jsonl.

Run from this folder with the userlevel driver: `python3 gen.py /path/to/click/userlevel/click`.
Each body runs as `Idle -> c :: Counter -> Discard; s :: Script(TYPE ACTIVE, BODY, stop)`;
the record keeps Click's stdout, its stderr and its exit status. The recorded file is data
(Click's output), checked by crates/elements/src/elements/click/script.rs's tests.
"""
import json
import subprocess
import sys

click = sys.argv[1]
out = []
for line in open("cases.txt"):
    body = line.rstrip("\n")
    if not body or body.startswith("#"):
        continue
    conf = f"Idle -> c :: Counter -> Discard; s :: Script(TYPE ACTIVE, {body}, stop)\n"
    try:
        r = subprocess.run([click, "-e", conf], capture_output=True, timeout=3)
        rec = {
            "script": body,
            "stdout": r.stdout.decode("latin-1"),
            "stderr": r.stderr.decode("latin-1"),
            "status": r.returncode,
        }
    except subprocess.TimeoutExpired as e:
        # The script ended without stopping the router (Click then runs forever): what it
        # printed until it was killed.
        rec = {
            "script": body,
            "timeout": True,
            "stdout": (e.stdout or b"").decode("latin-1"),
            "stderr": (e.stderr or b"").decode("latin-1"),
        }
    out.append(rec)
with open("cases.jsonl", "w") as f:
    for rec in out:
        f.write(json.dumps(rec) + "\n")
print(len(out), "cases")
