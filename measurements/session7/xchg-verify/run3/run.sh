#!/usr/bin/env bash
# Session 7, run 3: softmax backward with the tunable cluster exchange (xchg): accuracy of every
# registered shape, dtype and input kind; forced xchg=1 configurations on odd shapes;
# memcheck/racecheck; ci/gate on softmax and cross entropy against the committed baseline;
# xchg=0 vs 1 at the cluster shapes, same binary, alternating.
set -u
T0=$(date +%s); END=$((T0 + 540))
tar xzf .devbuild/build.tgz
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L/ab; cp .devbuild/commit.txt $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
T acc-all 120 $K softmax_backward --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 120 $K softmax_backward --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
F="--tuned-config b2:threads=32,rows=4,cluster=2,hold=0,unroll=1,xchg=1 --tuned-config b8:threads=256,rows=1,cluster=8,hold=0,unroll=4,xchg=1 --tuned-config b16:threads=64,rows=1,cluster=16,hold=0,unroll=2,xchg=1 --tuned-config r8:threads=4,rows=8,cluster=8,hold=0,unroll=1,xchg=1 --tuned-config p8:threads=256,rows=1,cluster=8,hold=0,unroll=4,xchg=0"
T acc-forced 120 $K softmax_backward --backend tuned --dtype bf16,fp16,fp32 --shape 3x5000 --shape 17x40001 --shape 7x131071 --shape 1x32768 --shape 1024x151936 --shape 33x4095 $F --no-timing --csv $L/acc-forced.csv
S="--tuned-config b2:threads=32,rows=4,cluster=2,hold=0,unroll=1,xchg=1 --tuned-config b16:threads=64,rows=1,cluster=16,hold=0,unroll=2,xchg=1 --tuned-config r8:threads=4,rows=8,cluster=8,hold=0,unroll=1,xchg=1"
T memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K softmax_backward --backend tuned --dtype bf16,fp32 --shape 3x5000 --shape 9x20001 $S --no-timing
T racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 9 $K softmax_backward --backend tuned --dtype bf16 --shape 3x5000 --shape 9x20001 $S --no-timing
T gate 150 ci/gate --no-build --labels "softmax|cross_entropy" --out $L/gate
empty=/tmp/empty.csv; echo "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,version" > $empty
X="--tuned-config x0:xchg=0 --tuned-config x1:xchg=1"
for r in 1 2 3; do T ab-r$r 60 $K softmax_backward --backend tuned --dtype bf16 --shape 1024x151936 --shape 2048x128256 --shape 4096x50257 --shape 8192x262144 --shape 32768x65536 $X --budget-ms 200 --baseline $empty --csv $L/ab/ab-r$r.csv; done
cd $O && tar czf r3.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log
python3 - $L <<'PY'
import csv,glob,statistics,sys,collections
L=sys.argv[1]
for f in ('acc-all','acc-kinds','acc-forced'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    c=collections.Counter(r['accuracy'] for r in rows); x=collections.Counter(r['config'].split('xchg=')[-1][:1] for r in rows)
    print(f,len(rows),dict(c),'xchg',dict(x))
d=collections.defaultdict(list)
for f in glob.glob(L+'/ab/*.csv'):
    for r in csv.DictReader(open(f)): d[(r['backend'],r['M']+'x'+r['N'])].append(float(r['gbps']))
for k in sorted(d): print('ab',k,round(statistics.median(d[k])),r'' )
PY
grep -h -E "SAME|FASTER|SLOWER|NOISY|passed|selected" $L/gate.log | tail -8
python3 - $L/gate <<'PY'
import csv,glob,sys
for f in glob.glob(sys.argv[1]+'/results/*.csv'):
    for r in csv.DictReader(open(f)):
        if r['benchmark']=='softmax_backward' and r['backend']=='tuned' and int(r['N'])>16384: print(r['dtype'],r['M']+'x'+r['N'],round(float(r['gbps'])),r.get('baseline_gbps','')[:6],r['verdict'],r['config'][:70])
PY
