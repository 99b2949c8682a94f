#!/usr/bin/env bash
# Session 24, run 1: (a) session 23's prepared run 11, the backward heuristic's 6-pack step at
# 1024x151936 (--compile-mode heuristic beside the cache entries' layout and the old pick, two
# rounds); (b) ncu of the aligned norm backward (register kernel, 86-90 % of copy SOL) beside
# softmax backward's loop at the same shape (103 %), the same 2:1 read:write traffic, at the
# card's own clocks: where the norm backward's last 12 % goes.
set -u
KB_TAR=s24r1.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
V="--tuned-config e3:threads=256,rows=1,cluster=16,occ=3,acc=1,reload=0,hint=0,db=0 --tuned-config old:threads=512,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=0"
for r in 1 2; do
  timeout 60 $K $B --backend tuned --compile-mode heuristic $V --budget-ms 150 --dtype bf16,fp16 --shape 1024x151936 --csv $W/heur$r.csv > $W/heur$r.log 2>&1; st "heur $r" $?
done
S="--clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for c in "rmsnorm_backward 32768x8192" "layernorm_backward 32768x8192" "rmsnorm_backward 32768x2048" "layernorm_backward 32768x1024"; do
  set -- $c
  timeout 100 env KBENCH_CUPTI_LIB=none ncu --kernel-name regex:'bwd_reg|dw_reduce' --launch-count 2 $S \
    $K $1 --backend tuned --dtype bf16 --shape $2 --no-timing > $W/ncu-$1-$2.log 2>&1; st "ncu $1 $2" $?
done
for sh in 32768x8192 32768x2048; do
  timeout 100 env KBENCH_CUPTI_LIB=none ncu --kernel-name regex:'sm_bwd' --launch-count 1 $S \
    $K softmax_backward --backend tuned --dtype bf16 --shape $sh --no-timing > $W/ncu-softmax_backward-$sh.log 2>&1; st "ncu softmax $sh" $?
done
kb_run_done
