#!/usr/bin/env bash
# Session 17, run 1: (1) session 16's db=2 NV fix check (nvfix.sh, never run); (2) the CE forward
# x[target] pick (ce.sh): accuracy, memcheck, sweeps against the baseline, short-row variants;
# (3) norm backward variants (norm.sh); (4) where ptxas put the CE forward's spills (SASS).
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-580}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench O=$W
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $W/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $W/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
D=measurements/session17/run1
T sass 30 bash -c "cuobjdump -sass build/kbench | awk '/Function : .*ce_fwd/{p=1} /Function : /&&!/ce_fwd/{p=0} p' > $W/ce_fwd.sass; grep -c 'STL\|LDL' $W/ce_fwd.sass"
T nvfix 80 bash measurements/session16/tune/nvfix.sh
T ce 220 bash $D/ce.sh
T norm 150 bash $D/norm.sh
T tune 150 python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --bench layernorm_backward,rmsnorm_backward,layernorm_forward --dtype bf16 --bucket 'N<=(131072|262144),M<=(1024|2048|8192|16384)$' --budget-s 140 --out $W/tune
cd $W && tar czf $OUT/r1.tgz . ; cat status.txt; grep exit nvfix.log ce.log norm.log | grep -v "exit 0" ; grep -h -E "FAIL|SLOWER|FASTER" sweep*.log acc-*.log 2>/dev/null | head -20
