#!/usr/bin/env bash
# Session 15, run 4 (closing, main as it lands: the read-pass L2 flush, its sink inside the flush buffer, and
# the 357 baseline rows re-recorded faster from run 2): ci/closing-check --steps gate,readme,memcheck: the
# whole-suite gate against the re-recorded baseline, the README's test command, memcheck of every backend.
set -u
T0=$(date +%s)
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
OUT=$O/cc ci/closing-check --steps gate,readme,memcheck --budget-s 540 > $L/closing-check.log 2>&1; echo "closing-check exit $? t=$(( $(date +%s)-T0 ))" | tee $L/status.txt
cp build/sol-*.txt $L/ 2>/dev/null
cd $O && tar czf r4.tgz --exclude="*/report" --exclude="*/prepare-*" logs cc && cp cc/summary.txt summary.txt 2>/dev/null; cp logs/status.txt .; rm -rf logs cc
cat status.txt summary.txt
