#!/usr/bin/env bash
# Session 21, run 3 (closing): main with the staged loop, the persistent loop grid, the twelve
# cache moves, the seven re-recorded rows and the heuristic's staged rule. (1) the forced step;
# every registered norm-forward case in every input kind on the heuristic alone
# (--compile-mode heuristic: the new rule runs wherever it applies) and the heuristic's timing at
# 4096x50257; (2) ci/closing-check --steps gate,readme,memcheck; (3) with the time left,
# ci/peers/peer-table on the LayerNorm backward peer shapes (none measured in sessions 19-21).
set -u
KB_TAR=s21r3.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-585}))
OUT=$W/forced timeout 150 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
timeout 90 $K layernorm_forward rmsnorm_forward --backend tuned --compile-mode heuristic --sweep all --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/acc-heur.csv > $W/acc-heur.log 2>&1; st accuracy-heuristic $?
timeout 60 $K layernorm_forward rmsnorm_forward --backend tuned --compile-mode heuristic --dtype bf16,fp16,fp32 --shape 4096x50257 --csv $W/heur-time.csv > $W/heur-time.log 2>&1; st heuristic-timing $?
(cd $W && tar czf $OUT/s21r3a.tgz .)
left=$((END - $(date +%s) - 15)); [ $left -gt 420 ] && left=420
OUT=$W/cc timeout $((left + 10)) ci/closing-check --steps gate,readme,memcheck --budget-s $left > $W/closing-check.log 2>&1; st closing-check $?
(cd $W && tar czf $OUT/s21r3a.tgz --exclude='*/report' --exclude='*/prepare-*' .)
left=$((END - $(date +%s) - 20))
[ $left -ge 60 ] && { timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks layernorm_backward --budget-s $left > $W/peer-table.log 2>&1; st peer-table $?; }
kb_run_done
grep -h "passed,.*cannot run" $W/forced.log | sed 's|.*/forced/||' | tail -16; tail -1 $W/acc-heur.log; grep -E "tuned .* 4096x50257:" $W/heur-time.log | cut -c1-200; grep -E "^ci/gate|^selected|tests passed|SUMMARY" $W/closing-check.log | head; tail -3 $W/peer-table.log 2>/dev/null
