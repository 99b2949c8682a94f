#!/usr/bin/env python3
"""What a ci/gate run verified, from the per-case result CSVs it collected:
  ci/lib/gate-verified.py RESULTS_DIR ALLOW_MISSING(0|1) MAX_NOISY CASE...
Prints one summary line, then one line per case that came back missing,
without a baseline row, skipped, or NOISY (passed, speed not judged), and a
"too noisy" line when more than MAX_NOISY of the timed cases were NOISY.
Exit 4 when a selected case's result is missing, when every case skipped
(nothing verified), when the NOISY share of the timed cases outside the MLP
block is over MAX_NOISY (a throttled or shared GPU: the gate judged too little
speed to pass), or when a case had no baseline row and ALLOW_MISSING is 0;
else 0.
Input-kind cases (config "inputs=...") are accuracy-only and need no row.
A file of ci/gate's rather than a heredoc so that CTest (ci.gate_verified)
checks it without a GPU."""
import csv, os, sys
d, allow, max_noisy, names = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3]), sys.argv[4:]
missing, ungated, skipped, noisy = [], [], [], []
timed = checked = 0
# The share of NOISY leaves out the MLP block: compute-bound GEMMs whose SM
# clock the H200's power cap lowers, NOISY on every run whatever the machine's
# state (6-11 of them in a whole-suite ci/gate, H200, 2026-12-02 to
# 2026-12-04); a selection of only them would always read as noisy.
noisy_counted = 0
for n in names:
    p = os.path.join(d, n + ".csv")
    if not os.path.exists(p):
        missing.append(n)
        continue
    with open(p, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        missing.append(n)
    for r in rows:
        gemm = r.get("benchmark", "").startswith("mlp")
        if r.get("verdict") in ("SAME", "FASTER", "SLOWER", "NOISY") and not gemm:
            timed += 1
            noisy_counted += r.get("verdict") == "NOISY"
        checked += r.get("accuracy") in ("PASS", "FAIL")
        if r.get("accuracy") == "SKIP":
            skipped.append(n)
        elif r.get("verdict") == "NOISY":  # passed, but its speed was not judged
            why = r.get("message") or ""
            why = (why[len("NOISY:"):] if why.startswith("NOISY:") else why).strip()
            noisy.append(f"{n}: {why}" if why else n)
        elif (r.get("accuracy") == "PASS" and r.get("verdict") in ("NO_BASELINE", "")
              and not r.get("config", "").startswith("inputs=")):  # input kinds: accuracy only
            ungated.append(n)
too_noisy = timed > 0 and noisy_counted > max_noisy * timed
nothing = bool(names) and not missing and checked == 0
print(f"selected {len(names)}, results missing {len(missing)}, without a baseline row "
      f"{len(ungated)}, skipped {len(skipped)}, NOISY (passed, speed not judged) {len(noisy)}"
      f" ({noisy_counted} of {timed} timed outside the MLP block)")
if nothing:
    print("nothing verified: every case that came back skipped (no accuracy checked, no "
          "speed judged)")
if too_noisy:
    print(f"too noisy: {noisy_counted} of {timed} timed cases NOISY, over --max-noisy "
          f"{max_noisy:g}: the gate judged too little speed to pass")
for n in missing: print("missing result:", n)
for n in ungated: print("no baseline row:", n)
for n in skipped: print("skipped:", n)
for n in noisy: print("noisy, not judged:", n)
sys.exit(4 if missing or too_noisy or nothing or (ungated and not allow) else 0)
