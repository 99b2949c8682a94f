#!/usr/bin/env bash
# Session 20, run 2: branch ln-hybrid (LayerNorm's two-pass loop, fwd_loop_long, for rows of >= 6
# steps; the three-pass loop elsewhere) plus run 1's RMSNorm forward cache moves (4 buckets).
# (1) ci/device-check --steps forced; every registered norm-forward case in every input kind, three
# dtypes; memcheck and racecheck on small shapes with configurations that run fwd_loop_long;
# (2) ln-var.sh: LayerNorm loop layouts beside the entries at the long odd-N / 128256-151936 shapes,
# pick.py (3 %) writes a candidate cache; (3) ci/gate on both norm forwards with the candidate cache
# (accuracy of every registered case and input kind, speed against the committed baseline).
set -u
T0=$(date +%s)
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
export KBENCH_TUNE_CACHE=$CACHE K=$PWD/build/kbench O=$W
trap 'cd $W && tar czf $OUT/r2.tgz --exclude="*/report" --exclude="*/prepare-*" . ; exit 124' TERM
D=measurements/session20/run2
st() { echo "== $1 exit $2 (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
OUT=$W/forced timeout 120 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
timeout 150 $K layernorm_forward rmsnorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/acc.csv > $W/acc.log 2>&1; st accuracy $?
M="--tuned-config a:threads=32,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 --tuned-config b:threads=64,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 --tuned-config c:threads=64,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 --dtype bf16,fp32 --inputs randn,constant --shape 3x37 --shape 7x1000 --shape 33x4095 --shape 4x4096 --shape 2x50257 --shape 3x20000 --no-timing"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward --backend tuned $M > $W/memcheck.log 2>&1; st memcheck $?
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $K layernorm_forward --backend tuned $M > $W/racecheck.log 2>&1; st racecheck $?
timeout 150 bash $D/ln-var.sh > $W/ln-var.log 2>&1; st ln-var $?
python3 measurements/session20/run1/pick.py $CACHE $W/cache-candidate.txt $W/var*-*.csv > $W/pick.log 2>&1; st pick $?
KBENCH_TUNE_CACHE=$W/cache-candidate.txt timeout 200 ci/gate --no-build --labels "layernorm_forward|rmsnorm_forward" --out $W/gate > $W/gate.log 2>&1; st gate $?
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r2.tgz --exclude='*/report' --exclude='*/prepare-*' . ; cat status.txt pick.log; grep -h "passed,.*cannot run" forced.log | tail -9; tail -4 gate.log; tail -2 acc.log memcheck.log racecheck.log
