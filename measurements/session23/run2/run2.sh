#!/usr/bin/env bash
# Session 23, run 2: run 1's steps (3)-(4) again, var.sh now two calls a round (kbench takes at
# most 8 named configurations; run 1's var calls stopped on that, exit 2). Run 1's forced step
# (0 failed), memcheck (0 errors; its 4 failures are fp32 151936 rows a 2-CTA cluster cannot
# stage, "cannot run") and racecheck (0 hazards) stand.
set -u
KB_TAR=s23r2.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-590}))
D=measurements/session23/run1
. $D/var.sh
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1a.csv,$W/var1b.csv $W/var2a.csv,$W/var2b.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log
cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
(cd $W && tar czf $OUT/s23r2a.tgz .)
left=$((END - $(date +%s) - 10))
timeout $left ci/gate --no-build --labels "layernorm_forward|rmsnorm_forward" --out $W/gate > $W/gate.log 2>&1; st gate $?
tail -4 $W/gate.log
kb_run_done
