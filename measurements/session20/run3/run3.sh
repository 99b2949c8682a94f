#!/usr/bin/env bash
# Session 20, run 3 (closing): main with LayerNorm's two-pass loop (fwd_loop_long for rows of >= 32 KB
# and >= 6 steps), run 1's four RMSNorm forward moves and run 2's two LayerNorm moves. (1) the forced
# step, every registered norm-forward case in every input kind, memcheck with layouts that run the
# two-pass loop; (2) ci/closing-check --steps gate,scratch,readme,memcheck (the whole suite against
# the committed baseline; the scratch run for ci/merge-faster); (3) with the time left, glu-peers.sh
# (issue 16: GLU tuned, PyTorch eager and torch.compile, tuned again). Only a tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-575}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench O=$W
trap 'cd $W && tar czf $OUT/r3.tgz --exclude="*/report" --exclude="*/prepare-*" . ; exit 124' TERM
D=measurements/session20/run3
st() { echo "== $1 exit $2 (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
OUT=$W/forced timeout 60 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
timeout 60 $K layernorm_forward rmsnorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/acc.csv > $W/acc.log 2>&1; st accuracy $?
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward --backend tuned --tuned-config a:threads=32,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 --tuned-config b:threads=64,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 --dtype bf16,fp32 --inputs randn,constant --shape 33x4095 --shape 2x50257 --shape 3x20000 --no-timing > $W/memcheck-ln.log 2>&1; st memcheck-ln $?
left=$((END - $(date +%s) - 20)); OUT=$W/cc timeout $((left + 10)) ci/closing-check --steps gate,scratch,readme,memcheck --budget-s $left > $W/closing-check.log 2>&1; st closing-check $?
(cd $W && tar czf $OUT/r3a.tgz --exclude='*/report' --exclude='*/prepare-*' .)  # the closing check's evidence, in case the GLU step is cut hard
left=$((END - $(date +%s) - 10))
[ $left -ge 90 ] && { timeout $left bash $D/glu-peers.sh > $W/glu.log 2>&1; st glu-peers $?; }
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r3.tgz --exclude='*/report' --exclude='*/prepare-*' . ; cat status.txt; grep -h "passed,.*cannot run" forced.log | tail -3; grep -E "^ci/gate|^selected|tests passed|SUMMARY|to re-record" closing-check.log | head; cat glu.log 2>/dev/null
