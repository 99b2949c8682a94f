#!/usr/bin/env bash
# Session 15, run 2: the read-pass L2 flush (main after 'L2 flush by a read-only pass').
# 1. ci/gate, the whole suite against the committed (memset-flush era) baseline: every row should
#    read SAME or FASTER, none SLOWER; 2. PyTorch eager / torch.compile on the GLU sweep with the
#    same flush (issue 16's table; kbench's side is the gate's GLU rows); 3. every backend on every
#    registered shape into a scratch copy of the baseline: the second run ci/merge-faster needs.
set -u
T0=$(date +%s); END=$((T0 + 585))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
T gate 240 ci/gate --no-build --out $O/gate
cp build/sol-*.txt $L/ 2>/dev/null
T glu-torch 150 python3 ci/peers/torch_peers.py --benchmarks geglu_forward,geglu_backward,swiglu_forward,swiglu_backward --backends torch_eager,torch_compile --out $O/glu-peers.csv --resume
cp baselines/NVIDIA_H200.csv $O/scratch-baseline.csv
left=$((END - $(date +%s) - 20))
T scratch $left $K --all --sweep all --backend eager,fused,tuned,cudnn,cublaslt_epilogue --baseline $O/scratch-baseline.csv --update-baseline --csv $O/scratch-results.csv
cd $O && tar czf r2.tgz --exclude="*/report" --exclude="*/prepare-*" logs gate glu-peers.csv scratch-baseline.csv scratch-results.csv 2>/dev/null
cat $L/status.txt; tail -15 $L/gate.log
