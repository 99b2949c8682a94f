#!/usr/bin/env bash
# Prepared in session 21 for a later call (not run): ci/tune over the norm forwards' odd-N
# buckets now that the search space has the staged loop (reload=8) and the loop's persistent
# grid (occ 1-16). Session 21 moved 12 of these buckets from same-run layout timings
# (ci/pick-layouts), not by the descent; the descent starts from those entries and also checks
# every direction after converging. Then the gate on both norm forwards with whatever moved
# (a SLOWER there means a move to undo; FASTER rows need ci/merge-faster's second run).
set -u
KB_TAR=tune.tgz; . ci/lib/device-run.sh "$0"
cp baselines/tuning/NVIDIA_H200.txt $W/cache-before.txt
timeout 420 ci/tune --bench layernorm_forward,rmsnorm_forward --bucket 'unaligned' --budget-s 400 --out $W/tune > $W/tune.log 2>&1; st tune $?
cp baselines/tuning/NVIDIA_H200.txt $W/cache-after.txt
diff $W/cache-before.txt $W/cache-after.txt > $W/cache-moves.txt; st moves $?
timeout 120 ci/gate --no-build --labels "layernorm_forward|rmsnorm_forward" --out $W/gate > $W/gate.log 2>&1; st gate $?
kb_run_done
