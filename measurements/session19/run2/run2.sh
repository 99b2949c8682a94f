#!/usr/bin/env bash
# Session 19, run 2: (1) variants.sh: register-kernel layouts at the long odd-N / 128256-151936
# column norm forward shapes, beside the cache entries, two rounds; (2) pick.py: an entry moves
# only if a variant's worst round beats the entry's best by >= 3 %; if any moved, ci/gate on both
# norm forwards with the candidate cache (accuracy of every registered case and input kind, speed
# against the committed baseline); (3) ci/peers/peer-table on the RMSNorm and LayerNorm forward
# peer shapes (kbench tuned, PyTorch eager and torch.compile, kbench again) with the cache the gate
# passed. Only a tarball under $OUT; the peer-table folder comes back whole (it resumes).
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-575}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
export KBENCH_TUNE_CACHE=$CACHE K=$PWD/build/kbench O=$W
trap 'cd $W && tar czf $OUT/r2.tgz --exclude="*/report" --exclude="*/prepare-*" . ; exit 124' TERM
D=measurements/session19/run2
t0=$(date +%s); timeout 120 bash $D/variants.sh > $W/variants.log 2>&1; echo "== variants exit $? $(( $(date +%s)-t0 )) s" | tee -a $W/status.txt
python3 $D/pick.py $CACHE $W/cache-candidate.txt $W/var*-*.csv > $W/pick.log 2>&1; echo "== pick exit $?" | tee -a $W/status.txt
if grep -q "MOVED" $W/pick.log; then
  t0=$(date +%s)
  KBENCH_TUNE_CACHE=$W/cache-candidate.txt timeout 150 ci/gate --no-build --labels "layernorm_forward|rmsnorm_forward" --out $W/gate > $W/gate.log 2>&1; g=$?
  echo "== gate (candidate cache) exit $g $(( $(date +%s)-t0 )) s" | tee -a $W/status.txt
  [ $g -eq 0 ] && export KBENCH_TUNE_CACHE=$W/cache-candidate.txt
fi
echo "peer-table cache: $KBENCH_TUNE_CACHE" >> $W/status.txt
left=$((END - $(date +%s) - 15))
[ $left -ge 60 ] && { timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks rmsnorm_forward,layernorm_forward --budget-s $left > $W/peer-table.log 2>&1; echo "== peer-table exit $? (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r2.tgz --exclude='*/report' --exclude='*/prepare-*' . ; cat status.txt pick.log; tail -3 peer-table.log gate.log 2>/dev/null
