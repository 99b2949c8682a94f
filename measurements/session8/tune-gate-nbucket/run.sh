#!/usr/bin/env bash
# Session 8, run 1: offline tuning of the buckets the committed cache lacks, then ci/gate on the
# whole suite with the new cache (rows that got faster go to ci/merge-faster).
set -u
T0=$(date +%s)
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
L=$OUT/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "pwd=$PWD" > $L/status.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
timeout 320 python3 ci/tune --missing-only --budget-s 290 --out $L/tune > $L/tune.log 2>&1; echo "== tune exit $? t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt
cp baselines/tuning/NVIDIA_H200.txt $L/NVIDIA_H200.txt
left=$((560 - ($(date +%s)-T0))); [ $left -gt 30 ] && { timeout $left ci/gate --no-build --out $L/gate > $L/gate.log 2>&1; echo "== gate exit $? t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt; }
rm -rf $L/gate/report/*.png 2>/dev/null
cd $OUT && tar czf r1.tgz logs && rm -rf logs/gate/results
tail -5 $L/tune.log; grep -E "selected|SAME|FASTER|SLOWER|passed|failed" $L/gate.log | tail -8
