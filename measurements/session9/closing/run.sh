#!/usr/bin/env bash
# Session 9, run 3 (closing): ci/gate on the whole suite with the committed cache (run 2's
# tuning), accuracy of the six touched benchmarks on every input kind and with every hint forced,
# memcheck / racecheck on small shapes with forced hints, then PyTorch eager and torch.compile
# on softmax forward/backward and the norm backwards (same session as the gate's tuned numbers).
set -u
T0=$(date +%s); END=$((T0 + 560))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
B="softmax_forward softmax_backward rmsnorm_forward layernorm_forward rmsnorm_backward layernorm_backward"
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
T gate 200 ci/gate --no-build --out $L/gate
T acc-kinds 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
S="--shape 7x4096 --shape 33x1024 --shape 3x65536 --shape 1000x384 --shape 257x8192 --shape 2x262144 --shape 4096x512"
T acc-hint 90 $K $B --backend tuned --dtype bf16,fp16,fp32 $S --tuned-config h0:hint=0 --tuned-config h1:hint=1 --no-timing --csv $L/acc-hint.csv
T acc-hint2 60 $K rmsnorm_forward layernorm_forward --backend tuned --dtype bf16,fp16,fp32 $S --tuned-config h2:hint=2 --tuned-config l1:reload=1,threads=256,rows=1,cluster=1,hint=1 --tuned-config o0:occ=0,hint=2 --no-timing --csv $L/acc-hint2.csv
T memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 17x4096 --shape 3x1024 --tuned-config h1:hint=1 --no-timing
T racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned --dtype bf16 --shape 5x64 --shape 17x4096 --tuned-config h1:hint=1 --no-timing
T peers 600 python3 ci/peers/torch_peers.py --benchmarks softmax_backward,softmax_forward,rmsnorm_backward,layernorm_backward --backends torch_eager,torch_compile --out $L/peers.csv
rm -rf $L/gate/report/*.png $L/gate/prepare-*
cd $O && tar czf r3.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log
grep -E "^selected|FAILED|passed" $L/gate.log | tail -3
python3 - $L <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
rows=[]
for f in glob.glob(L+'/gate/results/*.csv'): rows+=list(csv.DictReader(open(f)))
print('gate',len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
for r in rows:
    if r['verdict'] in ('SLOWER','FUSION_CHANGED') or (r['accuracy'] not in ('PASS','SKIP','')): print(' ',r['verdict'],r['accuracy'],r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7],r['message'][:100])
for n in ('acc-kinds','acc-hint','acc-hint2'):
    try: rr=list(csv.DictReader(open(L+'/'+n+'.csv')))
    except Exception as e: print(n,e); continue
    print(n,len(rr),dict(collections.Counter(r['accuracy'] for r in rr)))
PY
wc -l $L/peers.csv
