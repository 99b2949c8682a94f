#!/usr/bin/env bash
# Session 17, run 2: (1) the CE forward pick, now loading x[target] in the streaming step (run 1's
# register-select version spilled at U=8, so every tuned CE forward case was SKIPped: a heuristic
# that cannot run now FAILs); (2) the norm-backward entries ci/tune moved in run 1; (3) ci/tune over
# every bf16 bucket of the CE forward and both norm backwards (db is new to most of them).
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-300}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench O=$W
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $W/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $W/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
D=measurements/session17/run2
T ce 70 bash $D/ce.sh
T norm 80 bash $D/norm.sh
T tune 140 python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --bench cross_entropy_forward,layernorm_backward,rmsnorm_backward --dtype bf16 --budget-s 200 --out $W/tune
cp $KBENCH_TUNE_CACHE $W/cache-after.txt; cd $W && tar czf $OUT/r2.tgz . ; cat status.txt; grep exit ce.log norm.log | grep -v "exit 0"; grep -h -E "passed|SLOWER|FASTER" sweep*.log nsweep*.log | sort | uniq -c | head; grep -l SKIP *.csv | head
