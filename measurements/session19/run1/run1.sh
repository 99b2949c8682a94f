#!/usr/bin/env bash
# Session 19, run 1: (1) force.sh: the norm forward loop's forced layouts (the fp32 RMSNorm
# accumulation fix, the kb_cache move); (2) ci/closing-check --steps gate,scratch,readme,memcheck:
# the whole suite against the committed baseline (accuracy of every registered case and input
# kind), a scratch run of the tuned backend for ci/merge-faster, the README's test command and
# memcheck/racecheck of every backend; between them, variants.sh (register-kernel layouts at
# long odd-N / 151936-column norm forward shapes). Session 18 never gated its landed state as a whole; this
# is that check plus this session's two kernel-source changes. Only a tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-570}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench O=$W
trap 'cd $W && tar czf $OUT/r1.tgz --exclude="*/report" --exclude="*/prepare-*" . ; exit 124' TERM
D=measurements/session19/run1
t0=$(date +%s); timeout 90 bash $D/force.sh > $W/force.log 2>&1; echo "== force exit $? $(( $(date +%s)-t0 )) s" | tee -a $W/status.txt
RESERVE=400; left=$((END - RESERVE - $(date +%s))); [ $left -gt 110 ] && left=110
[ $left -gt 10 ] && { t0=$(date +%s); timeout $left bash $D/variants.sh > $W/variants.log 2>&1; echo "== variants exit $? $(( $(date +%s)-t0 )) s" | tee -a $W/status.txt; }
grep -o 'ctest --test-dir build --output-on-failure -j[0-9]*' README.md | head -n 1 > $W/readme-cmd.txt
left=$((END - $(date +%s) - 10))
OUT=$W/cc ci/closing-check --steps gate,scratch,readme,memcheck --budget-s $left > $W/closing-check.log 2>&1; echo "== closing-check exit $? (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r1.tgz --exclude='*/report' --exclude='*/prepare-*' . ; cat status.txt; grep "exit" force.log | grep -v "exit 0"; cat cc/summary.txt 2>/dev/null | tail -30
