#!/usr/bin/env bash
# Session 16, run 1: the norm backward with the next row group double-buffered (db=1).
# Accuracy of forced db configurations on every input kind (acc.sh), compute-sanitizer on small shapes
# (san.sh), then each bf16 default-sweep shape's cache entry timed beside db variants (variants.sh).
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-480}))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; git rev-parse HEAD >> $L/commit.txt
D=measurements/session16/db
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
export K=build/kbench O
T acc 90 bash $D/acc.sh
T variants 240 bash $D/variants.sh
T san 100 bash $D/san.sh
cd $O && tar czf r1.tgz logs *.csv *.err 2>/dev/null
cat $L/status.txt; cat $L/acc.log | grep exit; grep exit $L/san.log
