#!/usr/bin/env bash
# Session 16, run 3: the norm backward with the next row group staged in shared memory (db=2):
# accuracy of forced configurations on every input kind (acc.sh), compute-sanitizer (san.sh), then the
# bf16 default-sweep shapes' cache entries beside db=2 variants, two rounds (variants.sh). Only a
# tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-420}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); export O=$W K=build/kbench KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
cp .devbuild/commit.txt $W/; echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
D=measurements/session16/stage
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $W/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $W/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
T var1 120 env R=1 bash $D/variants.sh
T acc 90 bash $D/acc.sh
T var2 120 env R=2 bash $D/variants.sh
T san 120 bash $D/san.sh
cd $W && tar czf $OUT/r3.tgz . ; cat status.txt; grep exit acc.log; grep exit san.log
