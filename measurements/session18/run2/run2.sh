#!/usr/bin/env bash
# Session 18, run 2: (1) loop.sh: the norm forward's re-reading loop with U slots in flight
# (accuracy, forced layouts, memcheck, variants); (2) ci/tune over the norm forwards' buckets
# (U is new to the search), softmax forward bf16 and softmax backward bf16 (run 1's time limit cut
# them); (3) with the cache as tuned, ci/closing-check --steps gate,scratch,memcheck (the whole
# suite against the committed baseline, accuracy of every registered case; a scratch run for
# ci/merge-faster). Two refused starts left too little device time for a separate closing run.
# Only a tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-560}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench O=$W
cp $KBENCH_TUNE_CACHE $W/cache-before.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - ${RESERVE:-0} - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $W/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $W/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
D=measurements/session18/run2
# If the call's limit strikes first, what has been written still comes back.
trap 'cd $W && tar czf $OUT/r2.tgz --exclude="*/report" --exclude="*/prepare-*" . ; exit 124' TERM
RESERVE=230  # what the gate, scratch and memcheck take (run 1: 136 + 16 + 55 s)
T loop 130 bash $D/loop.sh
T tune-odd 40 python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --bench layernorm_forward,rmsnorm_forward --bucket unaligned --out $W/tune-odd
cp $KBENCH_TUNE_CACHE $W/cache-after-odd.txt
T tune-sm 60 python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --bench softmax_forward --dtype bf16 --out $W/tune-sm
T tune-smb 25 python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --bench softmax_backward --dtype bf16 --bucket 'N<=262144,M<=8192' --out $W/tune-smb
cp $KBENCH_TUNE_CACHE $W/cache-after-sm.txt
T tune-norm 100 python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --bench layernorm_forward,rmsnorm_forward --out $W/tune-norm
cp $KBENCH_TUNE_CACHE $W/cache-after-norm.txt
left=$((END - $(date +%s) - 10))
OUT=$W/cc ci/closing-check --steps gate,scratch,memcheck --budget-s $left > $W/closing-check.log 2>&1; echo "== closing-check exit $? (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r2.tgz --exclude='*/report' --exclude='*/prepare-*' . ; cat status.txt; grep "exit" loop.log | grep -v "exit 0"; cat cc/summary.txt; tail -n 2 tune-odd.log tune-sm.log tune-smb.log tune-norm.log
