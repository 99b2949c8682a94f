#!/usr/bin/env bash
# Prepared in session 19 for the next session's first call (not run): (1) ci/device-check
# --steps forced, the new step's first run as a step (its kbench lines ran in session 19 as
# run1/force.sh); (2) ci/peers/peer-table on the two norm backwards, the 15 peer shapes session 19
# did not reach (about 200 s), in a fresh folder so each shape's tuned rounds and PyTorch timings
# share one run. Only a tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-450}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
trap 'cd $W && tar czf $OUT/n1.tgz . ; exit 124' TERM
OUT=$W/forced timeout 120 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; echo "== forced exit $? (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt
left=$((END - $(date +%s) - 15))
[ $left -ge 60 ] && { timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks rmsnorm_backward,layernorm_backward --budget-s $left > $W/peer-table.log 2>&1; echo "== peer-table exit $? (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
cd $W && tar czf $OUT/n1.tgz . ; cat status.txt; grep -h "passed,.*cannot run" forced.log | tail -9; tail -2 peer-table.log
