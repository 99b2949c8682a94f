#!/usr/bin/env bash
# Session 7, run 8: softmax backward heuristic takes xchg=1 also with 16-CTA clusters: accuracy,
# xchg 0 vs 1 at 8192x262144 (the shape that uses 16) in three dtypes, ci/gate on softmax_backward.
set -u
T0=$(date +%s); END=$((T0 + 170))
tar xzf .devbuild/build.tgz
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L/ab; cp .devbuild/commit.txt $L/
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
T acc 60 $K softmax_backward --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc.csv
empty=/tmp/empty.csv; echo "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,version" > $empty
for r in 1 2 3; do T ab-r$r 30 $K softmax_backward --backend tuned --dtype bf16,fp16,fp32 --shape 8192x262144 --tuned-config x0:xchg=0 --tuned-config x1:xchg=1 --budget-ms 200 --baseline $empty --csv $L/ab/ab-r$r.csv; done
T gate 90 ci/gate --no-build --labels softmax_backward --out $L/gate
cd $O && tar czf r8.tgz logs
cat $L/status.txt
python3 - $L <<'PY'
import csv,glob,statistics,sys,collections
L=sys.argv[1]
rows=list(csv.DictReader(open(L+'/acc.csv'))); print('acc',len(rows),collections.Counter(r['accuracy'] for r in rows))
d=collections.defaultdict(list)
for f in glob.glob(L+'/ab/*.csv'):
    for r in csv.DictReader(open(f)):
        if r['gbps']: d[(r['dtype'],r['backend'])].append(float(r['gbps']))
for k in sorted(d): print('ab',*k,round(statistics.median(d[k])),[round(x) for x in d[k]])
for f in glob.glob(L+'/gate/results/*.csv'):
    for r in csv.DictReader(open(f)):
        if r['backend']=='tuned' and r['gbps'] and int(r['N'])>16384: print('gate',r['dtype'],r['M']+'x'+r['N'],round(float(r['gbps'])),r['baseline_gbps'][:6],r['verdict'],r['config'][-30:])
PY
grep -E "selected|passed|SLOWER" $L/gate.log | tail -4
