#!/usr/bin/env bash
# Session 16, run 1b: run 1 again with only a tarball under $OUT (run 1's files exceeded the count
# that comes back): the accuracy logs, the variants, the sanitizer logs.
set -u
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); export O=$W K=build/kbench KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
D=measurements/session16/db
t0=$(date +%s); bash $D/variants.sh > $W/variants.log 2>&1; echo "variants exit $? $(( $(date +%s)-t0 )) s" | tee $W/status.txt
cd $W && tar czf $OUT/r1b.tgz . ; cat status.txt; tail -5 variants.log
