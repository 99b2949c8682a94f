#!/usr/bin/env bash
# Session 14, run 1 (main at the session's start, 1cb6000, staged as build-A/kbench for run 4):
# torch.compile and kbench tuned on the shapes where tuned trailed it in session 13, same run;
# ncu at full clocks of the tuned kernels on the odd-N shapes furthest below 80 % of copy SOL.
set -u
T0=$(date +%s); END=$((T0 + 580))
bash measurements/session14/abcd/stage.sh
O=$OUT; L=$O/logs; mkdir -p $L; cp "$0" $L/run.sh; md5sum build-*/kbench > $L/binaries.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build-A/kbench
SN=32768x1024,32768x2048,32768x4096,32768x8192,32768x16384,32768x32768,576000x384,576000x512,1152000x384,1152000x512
SS=32768x512,32768x1024,32768x2048,32768x4096,32768x8192,32768x16384,32768x32768
T peers-norm 170 python3 ci/peers/torch_peers.py --kbench $K --benchmarks rmsnorm_forward,layernorm_forward --shapes $SN --backends torch_compile --out $L/peers-norm.csv
T peers-sm 100 python3 ci/peers/torch_peers.py --kbench $K --benchmarks softmax_backward --shapes $SS --backends torch_compile --out $L/peers-sm.csv
T kb-norm 40 $K rmsnorm_forward layernorm_forward --backend tuned $(for s in ${SN//,/ }; do echo --shape $s; done) --csv $L/kb-norm.csv
T kb-sm 30 $K softmax_backward --backend tuned $(for s in ${SS//,/ }; do echo --shape $s; done) --csv $L/kb-sm.csv
NS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
NCU="env KBENCH_CUPTI_LIB=none ncu --clock-control none $NS"
while read b s kr; do
  T ncu-$b-$s 45 $NCU -k regex:"$kr" -c 1 $K $b --backend tuned --shape $s --no-timing
done <<'P'
rmsnorm_forward 4096x50257 fwd_loop|fwd_reg
layernorm_forward 4096x50257 fwd_loop|fwd_reg
rmsnorm_forward 32768x4095 fwd_loop|fwd_reg
layernorm_backward 4096x50257 bwd_reg|bwd_dx_loop
rmsnorm_backward 32768x4095 bwd_reg|bwd_dx_loop
cross_entropy_forward 32768x1024 ^ce_fwd
P
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,glob,re
L=sys.argv[1]; P={}
for f in glob.glob(f'{L}/peers-*.csv'):
    for r in csv.DictReader(open(f)):
        if r.get('gbps'): P[(r['benchmark'],r['M'],r['N'])]=float(r['gbps'])
for f in sorted(glob.glob(f'{L}/kb-*.csv')):
    for r in csv.DictReader(open(f)):
        k=(r['benchmark'],r['M'],r['N']); p=P.get(k)
        print(*k, r['gbps'][:6], '%.1f'%float(r['sol_pct']), p, '%.3f'%(float(r['gbps'])/p) if p else '-', r['config'][:70])
for f in sorted(glob.glob(f'{L}/ncu-*.log')):
    t=open(f).read(); keep=[]
    for key in ('Duration','DRAM Throughput','Memory Throughput','Registers Per Thread','Achieved Occupancy','Theoretical Occupancy','L2 Hit Rate','L1/TEX Hit Rate','Block Size','Grid Size','Issue Slots Busy','No Eligible','Warp Cycles Per Issued Instruction'):
        m=re.search(r'\n\s*'+re.escape(key)+r'\s+(\S+)\s+([\d.,]+)',t)
        if m: keep.append(f'{key}={m.group(2)}{m.group(1) if m.group(1)!="%" else "%"}')
    k=re.search(r'\n\s+(\S+?)\(|\n\s+(void \S+)',t)
    print(f.split('/')[-1], ' '.join(keep))
PY
cd $O && tar czf r1.tgz logs && cp logs/summary.txt logs/status.txt . && rm -rf logs
cat status.txt; cat summary.txt
