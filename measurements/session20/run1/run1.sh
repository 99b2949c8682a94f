#!/usr/bin/env bash
# Session 20, run 1. (1) Branch ln-two-pass's kbench (ln2b/kbench): ci/device-check --steps
# forced (the step's first run as a step; every dtype and input kind of the norm loop forced to
# U = 1, 2, 4 at 32, 128, 1024 threads), every registered LayerNorm forward case in every input
# kind, memcheck on small shapes, then ab.sh (branch against main, alternating). (2) rms-var.sh:
# RMSNorm forward loop layouts beside the cache entries at the shapes behind torch.compile; pick.py
# with PICK_GAIN=0.015 writes a candidate cache (not used here: a moved entry needs the gate).
# (3) ci/peers/peer-table on the two norm backwards (the 15 peer shapes session 19 did not reach),
# main's kbench and committed cache, a fresh folder. Only a tarball under $OUT.
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-560}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
mkdir -p ln2b && LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -qdf --long=27 --patch-from=build/kbench .devbuild/ln2-kbench.zst -o ln2b/kbench && chmod +x ln2b/kbench
W=$(mktemp -d); cp .devbuild/commit.txt .devbuild/ln2-commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
export KBENCH_TUNE_CACHE=$CACHE K=$PWD/build/kbench K2=$PWD/ln2b/kbench O=$W
trap 'cd $W && tar czf $OUT/r1.tgz --exclude="*/report" --exclude="*/prepare-*" . ; exit 124' TERM
D=measurements/session20/run1
st() { echo "== $1 exit $2 (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
OUT=$W/forced timeout 120 ci/device-check --build ln2b --steps forced --backends tuned > $W/forced.log 2>&1; st forced-ln2 $?
timeout 150 $K2 layernorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/ln2-acc.csv > $W/ln2-acc.log 2>&1; st ln2-accuracy $?
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $K2 layernorm_forward --backend tuned --tuned-config a:threads=128,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 --tuned-config b:threads=64,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 --tuned-config c:threads=32,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 --dtype bf16,fp32 --inputs randn,constant --shape 3x37 --shape 7x1000 --shape 33x4095 --shape 4x4096 --shape 2x50257 --no-timing > $W/ln2-memcheck.log 2>&1; st ln2-memcheck $?
timeout 150 bash $D/ab.sh > $W/ab.log 2>&1; st ab $?
timeout 120 bash $D/rms-var.sh > $W/rms-var.log 2>&1; st rms-var $?
PICK_GAIN=0.015 python3 $D/pick.py $CACHE $W/cache-candidate.txt $W/var*-*.csv > $W/pick.log 2>&1; st pick $?
left=$((END - $(date +%s) - 15))
[ $left -ge 60 ] && { timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks rmsnorm_backward,layernorm_backward --budget-s $left > $W/peer-table.log 2>&1; st peer-table $?; }
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r1.tgz --exclude='*/report' --exclude='*/prepare-*' . ; cat status.txt pick.log; grep -h "passed,.*cannot run" forced.log | tail -9; tail -3 peer-table.log
