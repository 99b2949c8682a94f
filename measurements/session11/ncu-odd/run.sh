#!/usr/bin/env bash
# Session 11, run 4: ncu of the tuned norm backward's register kernel (cache configurations) on the
# odd-N shapes beside the aligned 32768x4096: what bounds the shifted-slot kernel (occupancy,
# registers, DRAM throughput); then ci/gate on the norm backwards and fp32 odd-N accuracy for the
# last host change (the workspace bound of fp32 odd N back to one class).
set -u
T0=$(date +%s); END=$((T0 + 400))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt KBENCH_CUPTI_LIB=none
NCU="ncu -k regex:bwd_reg -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
T rms-4095 90 $NCU build/kbench rmsnorm_backward --backend tuned --dtype bf16 --shape 32768x4095 --no-timing
T rms-4096 90 $NCU build/kbench rmsnorm_backward --backend tuned --dtype bf16 --shape 32768x4096 --no-timing
T rms-50257 90 $NCU build/kbench rmsnorm_backward --backend tuned --dtype bf16 --shape 4096x50257 --no-timing
T ln-50257 90 $NCU build/kbench layernorm_backward --backend tuned --dtype bf16 --shape 4096x50257 --no-timing
T acc-fp32 40 build/kbench rmsnorm_backward layernorm_backward --backend tuned --dtype fp32,bf16 --shape 5x37 --shape 3x4095 --shape 700x50257 --shape 4096x50257 --no-timing --csv $L/acc.csv
T gate 120 ci/gate --no-build --labels "rmsnorm_backward|layernorm_backward" --out $L/gate
rm -rf $L/gate/report $L/gate/prepare-* $L/gate/results
cd $O && tar czf r4.tgz logs
cat $L/status.txt
grep -E "^selected|ci/gate:" $L/gate.log | tail -2; grep -c PASS $L/acc.csv
for f in $L/*-4*.log $L/*-5*.log; do echo "### $f"; grep -E "bwd_reg|Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Memory Throughput|Duration|Block Limit Reg|Grid Size|Block Size|Cluster Size|Dynamic Shared" $f | head -20; done
