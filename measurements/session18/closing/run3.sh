#!/usr/bin/env bash
# Session 18, run 3 (closing, main as it lands): ci/closing-check --steps gate,scratch,readme,memcheck
# (the whole-suite gate against the committed baseline, a scratch run of the tuned backend for
# ci/merge-faster, the README's test command, memcheck of every backend). Only a tarball under $OUT.
set -u
T0=$(date +%s)
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); L=$W/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; git rev-parse HEAD >> $L/commit.txt; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
OUT=$W/cc ci/closing-check --steps gate,scratch,readme,memcheck --budget-s ${RUN_S:-380} > $L/closing-check.log 2>&1; echo "closing-check exit $? t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt
grep -o 'ctest --test-dir build --output-on-failure -j[0-9]*' README.md | head -n 1 > $L/readme-cmd.txt
cp build/sol-*.txt $L/ 2>/dev/null
cd $W && tar czf $OUT/r3.tgz --exclude="*/report" --exclude="*/prepare-*" .
cat logs/status.txt cc/summary.txt 2>/dev/null
