#!/usr/bin/env bash
# Session 16, run 4 (closing, main as it lands: db=1/db=2 in the norm backward, eight long-row bf16 buckets
# on db=2 entries and one on db=1): ci/closing-check --steps gate,scratch,readme,memcheck (the whole-suite
# gate against the committed baseline, a scratch run of the tuned backend for ci/merge-faster, the README's
# test command, memcheck of every backend); then ci/peers/peer-table on the LayerNorm peer shapes with
# what is left. Only a tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-560}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); L=$W/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; git rev-parse HEAD >> $L/commit.txt; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
OUT=$W/cc ci/closing-check --steps gate,scratch,readme,memcheck --budget-s 430 > $L/closing-check.log 2>&1; echo "closing-check exit $? t=$(( $(date +%s)-T0 ))" | tee $L/status.txt
grep -o 'ctest --test-dir build --output-on-failure -j[0-9]*' README.md | head -n 1 > $L/readme-cmd.txt
left=$((END - $(date +%s) - 20))
if [ $left -ge 60 ]; then timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks layernorm_forward,layernorm_backward --budget-s $left > $L/peer-table.log 2>&1; echo "peer-table exit $? t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt; fi
cp build/sol-*.txt $L/ 2>/dev/null
cd $W && tar czf $OUT/r4.tgz --exclude="*/report" --exclude="*/prepare-*" . 
cat logs/status.txt cc/summary.txt 2>/dev/null; tail -3 logs/peer-table.log 2>/dev/null
