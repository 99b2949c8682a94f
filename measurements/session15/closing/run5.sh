#!/usr/bin/env bash
# Session 15, run 5: the README's test command again, after ci.peer_table stopped using the GPU (run 4's
# README run had two cases 50 % SLOWER while that CTest timed PyTorch beside them); then, with what is
# left, ci/peers/peer-table on the LayerNorm peer shapes (kbench tuned, PyTorch eager/torch.compile, tuned
# again; the read-pass flush on both sides).
set -u
T0=$(date +%s); END=$((T0 + ${RUN5_S:-200}))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; git rev-parse HEAD >> $L/commit.txt; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
cmd=$(grep -o 'ctest --test-dir build --output-on-failure -j[0-9]*' README.md | head -n 1)
echo "README command: $cmd" > $L/readme-cmd.txt
T readme 220 $cmd
left=$((END - $(date +%s) - 25))
[ $left -ge 60 ] && T peer-table $((left + 20)) ci/peers/peer-table --out-dir $O/pt --kbench build/kbench --benchmarks layernorm_forward,layernorm_backward --budget-s $left
cd $O && tar czf r5.tgz logs pt 2>/dev/null
cat $L/status.txt; grep -E 'tests passed|tests failed|\*\*\*Failed|Not Run' $L/readme.log | head; tail -5 $L/peer-table.log
