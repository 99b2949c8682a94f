#!/usr/bin/env bash
# Session 8, run 5: the tuned backend on every registered shape into a scratch baseline (for
# ci/merge-faster, with run 4's gate as the independent run), then PyTorch eager and
# torch.compile on the row ops' default sweep in the same session (cut by the time limit).
set -u
T0=$(date +%s); END=$((T0 + 420))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
cp baselines/NVIDIA_H200.csv $L/scratch-baseline.csv
T scratch 90 $K cross_entropy_forward cross_entropy_backward softmax_forward softmax_backward rmsnorm_forward rmsnorm_backward layernorm_forward layernorm_backward geglu_forward geglu_backward swiglu_forward swiglu_backward --backend tuned --sweep all --baseline $L/scratch-baseline.csv --update-baseline --csv $L/scratch-results.csv
T peers 400 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_forward,layernorm_forward,softmax_backward,rmsnorm_backward,layernorm_backward,softmax_forward,cross_entropy_forward,cross_entropy_backward --backends torch_eager,torch_compile --out $L/peers.csv
cd $O && tar czf r5.tgz logs
cat $L/status.txt; tail -2 $L/scratch.log; wc -l $L/peers.csv
