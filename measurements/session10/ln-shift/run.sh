#!/usr/bin/env bash
# Session 10, run 2: LayerNorm tuned forward with the shifted-data mean. Accuracy of every
# registered shape in three dtypes, every input kind (registered and extra shapes), forced
# hints / double buffer / reload loop; memcheck; ci/gate on the layernorm_forward cases
# against the committed baseline. Then racecheck of softmax / cross entropy (session 9's
# rescale fix had memcheck only) and ncu of RMSNorm forward 32768x32768, tuned against
# torch.compile's Triton kernel (where tuned trails most).
set -u
T0=$(date +%s); END=$((T0 + 560))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp measurements/session10/ln-shift/run.sh $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
X="--shape 7x4096 --shape 33x1024 --shape 3x65536 --shape 1000x384 --shape 257x8192 --shape 2x262144 --shape 4096x512 --shape 5x4095 --shape 3x50257 --shape 9x1 --shape 64x32768"
T acc-all 90 $K layernorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --no-timing --csv $L/acc-all.csv
T acc-kinds 60 $K layernorm_forward --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
T acc-kinds-x 60 $K layernorm_forward --backend tuned --dtype bf16,fp16,fp32 --inputs constant,shifted,randn $X --no-timing --csv $L/acc-kinds-x.csv
T acc-forced 90 $K layernorm_forward --backend tuned --dtype bf16,fp16,fp32 $X --tuned-config h0:hint=0 --tuned-config h2:hint=2 --tuned-config d1:db=1 --tuned-config l1:reload=1,threads=256,rows=1,cluster=1,hint=1 --tuned-config l0:reload=1,threads=128,rows=1,cluster=1,hint=0 --no-timing --csv $L/acc-forced.csv
T memcheck 60 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 17x4096 --shape 3x1024 --shape 3x4095 --tuned-config d1:db=1 --tuned-config l1:reload=1,threads=256,rows=1,cluster=1 --no-timing
T gate 150 ci/gate --no-build --labels layernorm_forward --out $L/gate
T racecheck 60 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool racecheck --error-exitcode 9 $K softmax_forward softmax_backward cross_entropy_forward cross_entropy_backward --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 17x4096 --shape 3x50257 --no-timing
T ncu-tuned 40 env KBENCH_CUPTI_LIB=none ncu --set full -k regex:fwd -c 1 $K rmsnorm_forward --backend tuned --shape 32768x32768 --no-timing
T ncu-triton 120 ncu --set full -k regex:triton -c 1 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_forward --shapes 32768x32768 --backends torch_compile --quick --out $L/ncu-peer.csv
rm -rf $L/gate/report/*.png $L/gate/prepare-*
cd $O && tar czf r2.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log | sort | uniq -c
grep -E "^selected|FAILED|passed|verdict" $L/gate.log | tail -4
python3 - $L <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
rows=[]
for f in glob.glob(L+'/gate/results/*.csv'): rows+=list(csv.DictReader(open(f)))
print('gate',len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
for r in rows:
    if r['backend']=='tuned' or r['verdict'] in ('SLOWER','FUSION_CHANGED') or (r['accuracy'] not in ('PASS','SKIP','')): print(' ',r['verdict'],r['accuracy'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7])
for n in ('acc-all','acc-kinds','acc-kinds-x','acc-forced'):
    try: rr=list(csv.DictReader(open(L+'/'+n+'.csv')))
    except Exception as e: print(n,e); continue
    print(n,len(rr),dict(collections.Counter(r['accuracy'] for r in rr)))
    for r in rr:
        if r['accuracy'] not in ('PASS',): print('   ',r['accuracy'],r['dtype'],r['M'],r['N'],r['config'][:90],r['message'][:120])
PY
grep -E "dram__throughput.avg.pct|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Duration|Block Size|Grid Size" $L/ncu-tuned.log $L/ncu-triton.log | head -30
