#!/usr/bin/env bash
# Prepared in session 20 for the next session's first call (not run): ci/peers/peer-table on the
# LayerNorm backward peer shapes (13, none measured in sessions 19-20) and the RMSNorm backward ones
# (12; session 20's run 1 measured 10 with one tuned round), in a fresh folder so each shape's two
# tuned rounds and PyTorch timings share one run. PyTorch's backward peers are slow to time (eager
# 2-31 ms a call, torch.compile's autotuning): session 20's run 1 took ~500 s for 11 RMSNorm
# shapes, so this call is only that. Pack with `NOUNIT=1 device-pack` (measurements/README).
set -u
KB_TAR=n1.tgz; . ci/lib/device-run.sh "$0"
left=$(( ${RUN_S:-575} - ($(date +%s) - T0) - 20 ))
timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks layernorm_backward,rmsnorm_backward --budget-s $left > $W/peer-table.log 2>&1; st peer-table $?
kb_run_done; tail -3 $W/peer-table.log
