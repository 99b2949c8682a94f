#!/usr/bin/env bash
# Session 9, run 1: norm forward with the cache-operator parameter `hint`. The tuned norm
# forwards timed with the committed cache (hint=0 everywhere, the kernels as before), ci/tune
# re-searching every norm-forward bucket from its entry, the same sweep with the new cache,
# then torch.compile on the same shapes (same session, for the peer comparison).
set -u
T0=$(date +%s); END=$((T0 + 565))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
C=$L/NVIDIA_H200.txt; cp baselines/tuning/NVIDIA_H200.txt $C
B="rmsnorm_forward layernorm_forward"
T before 80 env KBENCH_TUNE_CACHE=baselines/tuning/NVIDIA_H200.txt $K $B --backend tuned --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/before.csv
T tune 220 python3 ci/tune --bench rmsnorm_forward,layernorm_forward --cache $C --budget-s 200 --out $L/tune
T after 80 env KBENCH_TUNE_CACHE=$C $K $B --backend tuned --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/after.csv
T peers 300 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_forward,layernorm_forward --backends torch_compile --out $L/peers.csv
T after2 60 env KBENCH_TUNE_CACHE=$C $K $B --backend tuned --sweep default --baseline baselines/NVIDIA_H200.csv --csv $L/after2.csv
cd $O && tar czf r1.tgz logs
cat $L/status.txt; grep -cE ",FASTER," $L/after.csv; grep -cE ",SLOWER," $L/after.csv; wc -l $L/peers.csv
