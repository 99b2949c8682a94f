#!/usr/bin/env bash
# Session 13, run 1 (study, main at session start + ci/peers/torch_profile.py): where tuned trails
# torch.compile, both kernels profiled by ncu in the same run at full clocks (--clock-control none),
# Inductor's generated Triton source (TORCH_LOGS=output_code) and PTX (TRITON_CACHE_DIR), and
# torch.compile / kbench tuned GB/s on the same shapes.
set -u
T0=$(date +%s); END=$((T0 + 570))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt KBENCH_CUPTI_LIB=none
export TRITON_CACHE_DIR=$O/tcache TORCHINDUCTOR_CACHE_DIR=$O/icache
K=build/kbench
python3 -c "import torch; print(torch.__version__)" > $L/torch.txt 2>&1
T selftest 30 $K --self-test
SH=32768x2048,32768x4096,32768x8192,32768x16384,32768x32768,576000x384,576000x512,1152000x384,1152000x512
T peers-norm 150 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_forward,layernorm_forward --shapes $SH --backends torch_compile --out $L/peers-norm.csv
T peers-sm 60 python3 ci/peers/torch_peers.py --benchmarks softmax_backward --shapes 32768x1024,32768x2048,32768x4096,32768x16384,32768x32768 --backends torch_compile --out $L/peers-sm.csv
T peers-glu 40 python3 ci/peers/torch_peers.py --benchmarks geglu_forward,swiglu_forward --shapes 8192x3072,8192x2048 --backends torch_compile --out $L/peers-glu.csv
T kb-norm 60 $K rmsnorm_forward layernorm_forward --backend tuned $(for s in ${SH//,/ }; do echo --shape $s; done) --csv $L/kb-norm.csv
T kb-sm 40 $K softmax_backward --backend tuned --shape 32768x1024 --shape 32768x2048 --shape 32768x4096 --shape 32768x16384 --shape 32768x32768 --csv $L/kb-sm.csv
T kb-glu 30 $K geglu_forward swiglu_forward --backend tuned --shape 8192x3072 --shape 8192x2048 --csv $L/kb-glu.csv
NS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
NCU="ncu --clock-control none $NS"
# pairs: bench shape kbench-kernel-regex
while read b s kr; do
  n=${b%%_*}-${b##*_}-$s
  TORCH_LOGS=output_code T t-$n 60 $NCU --profile-from-start off -k regex:triton python3 ci/peers/torch_profile.py $b $s
  T k-$n 40 $NCU -k regex:"$kr" -c 1 $K $b --backend tuned --shape $s --no-timing
done <<'P'
rmsnorm_forward 32768x8192 fwd_reg|fwd_loop
rmsnorm_forward 32768x32768 fwd_reg|fwd_loop
rmsnorm_forward 576000x384 fwd_reg|fwd_loop
layernorm_forward 576000x512 fwd_reg|fwd_loop
softmax_backward 32768x16384 sm_bwd
softmax_backward 32768x2048 sm_bwd
geglu_forward 8192x3072 glu_
P
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys
L=sys.argv[1]
P={}
import glob
for f in glob.glob(f'{L}/peers-*.csv'):
    for r in csv.DictReader(open(f)): P[(r['benchmark'],r['M'],r['N'])]=float(r['gbps'])
for r in [r for f in sorted(glob.glob(f'{L}/kb-*.csv')) for r in csv.DictReader(open(f))]:
    k=(r['benchmark'],r['M'],r['N']); p=P.get(k)
    print(*k, r['gbps'], r['sol_pct'], p, '%.3f'%(float(r['gbps'])/p) if p else '-', r['config'][:70])
PY
mkdir -p $O/ptx; find $O/tcache -name "*.ptx" -size -400k -exec cp {} $O/ptx/ \; 2>/dev/null; find $O/tcache -name "triton_*.json" -exec cp {} $O/ptx/ \; 2>/dev/null
cd $O && tar czf r1.tgz logs ptx && rm -rf tcache icache
cat $L/status.txt; cat $L/summary.txt
