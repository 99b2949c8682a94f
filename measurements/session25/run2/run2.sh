#!/usr/bin/env bash
# Session 25, device call 2: (1) the norm backward's forced accuracy on the build where the loop
# and bwd_reg share one sum of the R row slots' dw accumulators (the duplicate session 24 left:
# it changes bwd_reg kernels' SASS, so every forced backward layout runs again, every dtype and
# input kind); (2) ci/peers/peer-table on the norm forwards, softmax backward and the norm
# backwards: tuned, PyTorch eager and torch.compile, tuned again, same call, until the time runs
# out (the shapes where tuned trailed a peer in earlier sessions come first).
set -u
KB_TAR=s25r2.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-585}))
OUT=$W/dc timeout 200 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "cannot run" $W/forcedbwd.log | sed 's/.*forced-/forced-/' | awk '{p+=$2; f+=$7} END {print NR " layouts: " p " passed, " f " failed"}'
grep -h "cannot run" $W/forcedbwd.log | grep -v " 0 failed" | head
left=$((END - $(date +%s) - 20))
[ "$left" -ge 60 ] && { timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench \
  --benchmarks rmsnorm_forward,layernorm_forward,softmax_backward,rmsnorm_backward,layernorm_backward \
  --budget-s $left > $W/peer-table.log 2>&1; st peer-table $?; }
tail -3 $W/peer-table.log
kb_run_done
