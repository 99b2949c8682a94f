#!/usr/bin/env bash
# Session 16, run 5: (1) the db=2 NV fix (nvfix.sh: N whose packs per thread come to 3, 5 or 6 round up
# to NV 4 or 8): accuracy on every input kind, the cache path, memcheck; (2) kbench --tune (coordinate
# descent from the cache entry, db now in the space) on the three long-row norm-backward buckets still
# below 80 % of copy SOL (LayerNorm 8192x262144, 16384x131072; RMSNorm 8192x262144); (3) ci/gate on the
# norm-backward cases with the tuned cache. Only a tarball under $OUT; the cache copy comes back in it.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-250}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
cp baselines/tuning/NVIDIA_H200.txt $W/cache-before.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt KBENCH_TUNE_EVALS=60 KBENCH_TUNE_LOG=$W/tune-log.csv
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $W/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $W/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
export K=build/kbench O=$W
T nvfix 60 bash measurements/session16/tune/nvfix.sh
T tune-ln 100 build/kbench layernorm_backward --backend tuned --shape 8192x262144 --shape 16384x131072 --tune --csv $W/tune-ln.csv
T tune-rms 60 build/kbench rmsnorm_backward --backend tuned --shape 8192x262144 --tune --csv $W/tune-rms.csv
cp baselines/tuning/NVIDIA_H200.txt $W/cache-after.txt
T gate 80 ci/gate --no-build --labels 'rmsnorm_backward|layernorm_backward' --out $W/gate
cd $W && tar czf $OUT/r5.tgz --exclude="gate/report" . ; cat status.txt; grep exit nvfix.log; diff cache-before.txt cache-after.txt; tail -3 gate.log
