#!/usr/bin/env bash
# Session 9, run 2: the `hint` parameter (cache operators) in the tuned softmax and norm
# backward kernels, and the norm forward's as templates (hint=0 kernels: the verified SASS).
# The six benchmarks timed with the committed cache (norm forward: run 1's entries, all others
# hint=0), ci/tune re-searching every bf16 bucket of them from its entry (200 candidates), named
# configurations for the norm forwards still behind torch.compile, the same sweep again.
set -u
T0=$(date +%s); END=$((T0 + 570))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
C=$L/NVIDIA_H200.txt; cp baselines/tuning/NVIDIA_H200.txt $C
B="softmax_forward softmax_backward rmsnorm_forward layernorm_forward rmsnorm_backward layernorm_backward"
T before 70 env KBENCH_TUNE_CACHE=baselines/tuning/NVIDIA_H200.txt $K $B --backend tuned --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/before.csv
T tune 330 python3 ci/tune --bench softmax_backward,softmax_forward,rmsnorm_forward,layernorm_forward,rmsnorm_backward,layernorm_backward --dtype bf16 --evals 200 --cache $C --out $L/tune
cp $C $L/tuned-cache.txt
P() { local b=$1 s=$2; shift 2; local a=(); for c in "$@"; do a+=(--tuned-config "$c"); done; timeout 25 $K $b --backend tuned --shape $s --baseline /nonexistent.csv --csv $L/probe-$b-$s.csv "${a[@]}" >> $L/probe.log 2>&1; }
probe() {
 for s in 32768x2048 32768x4096 32768x8192 32768x32768; do
  P rmsnorm_forward $s a:threads=256,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2 b:threads=512,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2 c:threads=128,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2 d:threads=1024,rows=1,cluster=1,occ=32,db=1,reload=0,hint=2 e:threads=1024,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2 f:threads=256,rows=1,cluster=1,occ=32,db=1,reload=0,hint=2
 done
 for s in 576000x384 1152000x384; do
  P rmsnorm_forward $s a:threads=16,rows=8,cluster=1,occ=0,db=0,reload=0,hint=2 b:threads=16,rows=32,cluster=1,occ=0,db=0,reload=0,hint=2 c:threads=16,rows=64,cluster=1,occ=0,db=0,reload=0,hint=2 d:threads=32,rows=4,cluster=1,occ=0,db=0,reload=0,hint=2 e:threads=16,rows=16,cluster=1,occ=32,db=1,reload=0,hint=2 f:threads=8,rows=32,cluster=1,occ=0,db=0,reload=0,hint=2
 done
}
left=$((END - $(date +%s))); [ $left -gt 150 ] && { probe; echo "== probe done t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt; }
T after 70 env KBENCH_TUNE_CACHE=$C $K $B --backend tuned --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/after.csv
cd $O && tar czf r2.tgz logs
cat $L/status.txt; grep -c ",FASTER," $L/after.csv; grep -c ",SLOWER," $L/after.csv; grep -c ",SLOWER," $L/before.csv
