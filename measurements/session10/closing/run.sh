#!/usr/bin/env bash
# Session 10, run 3 (closing): LayerNorm forward with k0 prefetched: accuracy (every
# registered shape in three dtypes, every input kind, extra shapes, forced hints / db /
# reload), memcheck with valid configurations, ci/gate on layernorm_forward first (the
# cases run 2 found SLOWER), then ci/closing-check: the whole-suite gate, the scratch run
# for ci/merge-faster, the README command, two concurrent softmax ctests.
set -u
T0=$(date +%s); END=$((T0 + 575))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp measurements/session10/closing/run.sh $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
X="--shape 7x4096 --shape 33x1024 --shape 3x65536 --shape 1000x384 --shape 257x8192 --shape 2x262144 --shape 4096x512 --shape 5x4095 --shape 3x50257 --shape 9x1 --shape 64x32768"
T acc-all 60 $K layernorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --no-timing --csv $L/acc-all.csv
T acc-kinds 40 $K layernorm_forward --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
T acc-kinds-x 40 $K layernorm_forward --backend tuned --dtype bf16,fp16,fp32 --inputs constant,shifted,randn $X --no-timing --csv $L/acc-kinds-x.csv
T acc-forced 60 $K layernorm_forward --backend tuned --dtype bf16,fp16,fp32 $X --tuned-config h0:hint=0 --tuned-config h2:hint=2 --tuned-config d1:db=1 --tuned-config l1:reload=1,threads=256,rows=1,cluster=1,hint=1 --tuned-config l0:reload=1,threads=128,rows=1,cluster=1,hint=0 --no-timing --csv $L/acc-forced.csv
T memcheck 60 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 17x4096 --shape 3x1024 --shape 3x4095 --shape 2x262144 --tuned-config l1:reload=1,threads=256,rows=1,cluster=1 --no-timing
T gate-ln 60 ci/gate --no-build --labels layernorm_forward --out $L/gate-ln
left=$((END - $(date +%s) - 15))
T closing $left ci/closing-check --steps gate,scratch,readme,concurrent --budget-s $left
rm -rf closing-out/gate/report/*.png closing-out/gate/prepare-* $L/gate-ln/report/*.png $L/gate-ln/prepare-*
cp -r closing-out $L/ 2>/dev/null
cd $O && tar czf r3.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY" $L/memcheck.log | sort | uniq -c
cat $L/closing-out/summary.txt 2>/dev/null | head -30
python3 - $L <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
for g in ('gate-ln','closing-out/gate'):
    rows=[]
    for f in glob.glob(L+'/'+g+'/results/*.csv'): rows+=list(csv.DictReader(open(f)))
    print(g,len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
    for r in rows:
        if r['verdict'] in ('SLOWER','FUSION_CHANGED') or (r['accuracy'] not in ('PASS','SKIP','')): print(' ',r['verdict'],r['accuracy'],r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7],r['message'][:90])
for n in ('acc-all','acc-kinds','acc-kinds-x','acc-forced'):
    try: rr=list(csv.DictReader(open(L+'/'+n+'.csv')))
    except Exception as e: print(n,e); continue
    print(n,len(rr),dict(collections.Counter(r['accuracy'] for r in rr)), 'non-config FAIL:', sum(1 for r in rr if r['accuracy']!='PASS' and 'cannot run' not in r['message']))
PY
