#!/usr/bin/env bash
# Session 18, run 1: ci/tune over every bucket the cache holds that ci/tune had not searched yet
# (session 17 searched the bf16 CE forward and both norm backwards): bf16 softmax forward/backward,
# the norm forwards and CE backward; then fp16/fp32 of the eight row ops; then the four GLU ops.
# Then, with the cache as tuned: ci/closing-check --steps gate,scratch,memcheck (the whole-suite gate
# against the committed baseline, with accuracy of every registered case; a scratch run for
# ci/merge-faster; memcheck). Only a tarball under $OUT.
set -u
T0=$(date +%s)
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); L=$W/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; git rev-parse HEAD >> $L/commit.txt; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
cp $KBENCH_TUNE_CACHE $W/cache-before.txt
S() { echo "$1 exit $2 t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt; }
tune() { local n=$1 lim=$2; shift 2; timeout $lim python3 ci/tune --kbench build/kbench --cache $KBENCH_TUNE_CACHE --out $W/tune-$n "$@" > $L/tune-$n.log 2>&1; S tune-$n $?; cp $KBENCH_TUNE_CACHE $W/cache-after-$n.txt; }
tune bf16 150 --bench softmax_forward,softmax_backward,layernorm_forward,rmsnorm_forward,cross_entropy_backward --dtype bf16
tune f16f32 75 --bench softmax_forward,softmax_backward,layernorm_forward,rmsnorm_forward,cross_entropy_forward,cross_entropy_backward,layernorm_backward,rmsnorm_backward --dtype fp16,fp32
tune glu 90 --bench geglu_forward,geglu_backward,swiglu_forward,swiglu_backward
left=$(( 560 - ($(date +%s) - T0) ))
OUT=$W/cc ci/closing-check --steps gate,scratch,memcheck --budget-s $left > $L/closing-check.log 2>&1; S closing-check $?
cp build/sol-*.txt $L/ 2>/dev/null
cd $W && tar czf $OUT/r1.tgz --exclude="*/report" --exclude="*/prepare-*" .
cat logs/status.txt cc/summary.txt 2>/dev/null; for f in logs/tune-*.log; do tail -n 2 $f; done
