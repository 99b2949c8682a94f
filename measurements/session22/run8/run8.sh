#!/usr/bin/env bash
# Session 22, run 8: ncu of the norm backward's register kernel, to guide the next step on odd N:
# RMSNorm bf16 4096x50257 on its new entry (db=2 on shifted slots, 60 % of copy SOL) beside the
# aligned 32768x65536 entry (86 %): throughput, occupancy, warp stall reasons, scheduler.
set -u
KB_TAR=s22r8.tgz; . ci/lib/device-run.sh "$0"
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for sh in 4096x50257 32768x65536; do
  timeout 100 env KBENCH_CUPTI_LIB=none ncu --kernel-name regex:bwd_reg --launch-count 1 $S \
    $K rmsnorm_backward --backend tuned --dtype bf16 --shape $sh --no-timing > $W/ncu-$sh.log 2>&1; st "ncu $sh" $?
done
kb_run_done
