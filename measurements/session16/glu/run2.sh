#!/usr/bin/env bash
# Session 16, run 2: (a) the GLU shapes where tuned trailed torch.compile in session 15: the cache entry
# beside launch variants, round 1; torch.compile on the same shapes; round 2. (b) rmsnorm_backward: the
# four buckets given double-buffered entries, new beside old, two rounds. Only a tarball under $OUT.
set -u
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); export O=$W K=build/kbench KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
cp .devbuild/commit.txt $W/; echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
T0=$(date +%s)
S() { local n=$1; shift; local t0=$(date +%s); "$@" > $W/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
S confirm1 env R=1 bash measurements/session16/db/confirm.sh
S glu1 env R=1 bash measurements/session16/glu/variants.sh
S peers bash measurements/session16/glu/peers.sh
S glu2 env R=2 bash measurements/session16/glu/variants.sh
S confirm2 env R=2 bash measurements/session16/db/confirm.sh
cd $W && tar czf $OUT/r2.tgz . ; cat status.txt; tail -3 peers.log
