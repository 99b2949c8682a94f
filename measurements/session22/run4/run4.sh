#!/usr/bin/env bash
# Session 22, run 4: ci/tune over every norm-backward bucket (58, three dtypes) with the
# tuner's diagonals now walking past invalid middle choices (db=1 on long rows), from the
# committed cache (which has run 3's eight odd-N entries); then ci/gate on both norm
# backwards with whatever moved (SLOWER there means a move to undo).
set -u
KB_TAR=s22r4.tgz; . ci/lib/device-run.sh "$0"
cp baselines/tuning/NVIDIA_H200.txt $W/cache-before.txt
timeout 300 ci/tune --bench layernorm_backward,rmsnorm_backward --budget-s 260 --out $W/tune > $W/tune.log 2>&1; st tune $?
cp baselines/tuning/NVIDIA_H200.txt $W/cache-after.txt
diff $W/cache-before.txt $W/cache-after.txt > $W/cache-moves.txt; st moves $?
timeout 200 ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
tail -15 $W/gate.log
kb_run_done
