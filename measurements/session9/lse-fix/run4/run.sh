#!/usr/bin/env bash
# Session 9, run 4: the tuned softmax / cross-entropy rescale fix (every exp and rescale
# relative to one rounded m*log2e; cross entropy's lse corrected for its residual). Accuracy
# of the tuned softmax and cross entropy on every registered shape and every input kind in
# three dtypes (fp32 shifted/wide failed in run 3), forced streaming/cluster/register configs,
# ci/gate on the softmax and cross-entropy cases, memcheck on small shapes.
set -u
T0=$(date +%s); END=$((T0 + 200))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
B="softmax_forward softmax_backward cross_entropy_forward cross_entropy_backward"
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
T acc-kinds 30 $K $B --backend tuned --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked --no-timing --csv $L/acc-kinds.csv
T acc-forced 30 $K softmax_forward cross_entropy_forward --backend tuned --dtype bf16,fp32 --inputs shifted,wide --tuned-config st:hold=0,threads=256,rows=1,cluster=4,unroll=8 --tuned-config s1:hold=0,threads=128,rows=1,cluster=1,unroll=4 --no-timing --csv $L/acc-forced.csv
T acc-all 40 $K $B --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T gate 110 ci/gate --no-build --labels "softmax|cross_entropy" --out $L/gate
T memcheck 20 compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 3x4097 --shape 2x1000 --no-timing
rm -rf $L/gate/report/*.png $L/gate/prepare-*
cd $O && tar czf r4.tgz logs
cat $L/status.txt; grep -h "ERROR SUMMARY" $L/memcheck.log; grep -E "^selected|passed|FAILED" $L/gate.log | tail -3
python3 - $L <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
rows=[]
for f in glob.glob(L+'/gate/results/*.csv'): rows+=list(csv.DictReader(open(f)))
print('gate',len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
for r in rows:
    if r['verdict'] in ('SLOWER','FUSION_CHANGED') or (r['accuracy'] not in ('PASS','SKIP','')): print(' ',r['verdict'],r['accuracy'],r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7])
for n in ('acc-kinds','acc-forced','acc-all'):
    try: rr=list(csv.DictReader(open(L+'/'+n+'.csv')))
    except Exception as e: print(n,e); continue
    print(n,len(rr),dict(collections.Counter(r['accuracy'] for r in rr)))
    for r in rr:
        if r['accuracy']!='PASS': print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['config'][:50],r['max_err'][:8])
PY
