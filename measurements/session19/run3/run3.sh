#!/usr/bin/env bash
# Session 19, run 3: (1) the one moved entry (LayerNorm forward bf16 N<=131072,M<=2048, FASTER in
# run 2's gate): two kbench runs of its case for ci/merge-faster (one writing a scratch copy of the
# baseline); (2) ci/peers/peer-table on the peer shapes of the other six benchmarks (run 2 did the
# norm forwards). Only a tarball under $OUT; the peer-table folder comes back whole (it resumes).
set -u
T0=$(date +%s); END=$((T0 + ${RUN_S:-470}))
[ -d build ] || { LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -; cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig; }
W=$(mktemp -d); cp .devbuild/commit.txt $W/; git rev-parse HEAD >> $W/commit.txt; cp "$0" $W/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $W/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench
trap 'cd $W && tar czf $OUT/r3.tgz . ; exit 124' TERM
cp baselines/NVIDIA_H200.csv $W/scratch-baseline.csv
$K layernorm_forward --backend tuned --dtype bf16 --shape 2048x128256 --baseline $W/scratch-baseline.csv --update-baseline --csv $W/ln-a.csv > $W/ln-a.log 2>&1; echo "== ln a exit $?" | tee -a $W/status.txt
$K layernorm_forward --backend tuned --dtype bf16 --shape 2048x128256 --csv $W/ln-b.csv > $W/ln-b.log 2>&1; echo "== ln b exit $?" | tee -a $W/status.txt
left=$((END - $(date +%s) - 15))
[ $left -ge 60 ] && { timeout $((left + 10)) ci/peers/peer-table --out-dir $W/pt --kbench build/kbench --benchmarks cross_entropy_forward,cross_entropy_backward,softmax_forward,softmax_backward,rmsnorm_backward,layernorm_backward --budget-s $left > $W/peer-table.log 2>&1; echo "== peer-table exit $? (t=$(( $(date +%s)-T0 )))" | tee -a $W/status.txt; }
cp build/sol-*.txt $W/ 2>/dev/null
cd $W && tar czf $OUT/r3.tgz . ; cat status.txt; tail -2 peer-table.log
