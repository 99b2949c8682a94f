#!/usr/bin/env python3
"""forced_verdict.py CSV: the verdict on one forced-configuration accuracy run
(tools/device-check --steps forced). kbench marks a case its forced
configuration cannot run as an accuracy FAIL whose message says "cannot run";
that is a fact about the configuration, not a wrong result. Every other FAIL
is one. Prints the counts; exit 0 when no case failed and at least one passed
(a run in which nothing ran verified nothing), 1 otherwise, 2 when the CSV
cannot be read."""
import csv
import sys

if len(sys.argv) != 2:
    sys.exit("usage: forced_verdict.py RESULTS.csv")
try:
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
except OSError as ex:
    print(f"forced_verdict: {sys.argv[1]}: {ex.strerror}", file=sys.stderr)
    sys.exit(2)
passed = refused = 0
failed = []
for r in rows:
    acc, msg = r.get("accuracy", ""), r.get("message", "")
    if acc == "PASS":
        passed += 1
    elif "cannot run" in msg:
        refused += 1
    else:
        failed.append(f"{r.get('benchmark')} {r.get('backend')} {r.get('dtype')} "
                      f"{r.get('M')}x{r.get('N')}: {acc or 'no result'} {msg}".rstrip())
print(f"{sys.argv[1]}: {passed} passed, {refused} cannot run, {len(failed)} failed")
for line in failed[:20]:
    print("  FAIL " + line)
sys.exit(0 if passed and not failed else 1)
