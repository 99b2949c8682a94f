#!/usr/bin/env bash
# Session 7, run 4: forced xchg=1 configurations (accuracy, memcheck, racecheck), xchg 0 vs 1
# alternating at the cluster shapes, cuDNN accuracy (device-check), then GLU: kbench tuned and
# PyTorch eager / torch.compile in the same session.
set -u
T0=$(date +%s); END=$((T0 + 500))
tar xzf .devbuild/build.tgz
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L/ab $L/glu; cp .devbuild/commit.txt $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
F="--tuned-config b2:threads=32,rows=4,cluster=2,hold=0,unroll=1,xchg=1 --tuned-config b8:threads=256,rows=1,cluster=8,hold=0,unroll=4,xchg=1 --tuned-config b16:threads=64,rows=1,cluster=16,hold=0,unroll=2,xchg=1 --tuned-config r8:threads=4,rows=8,cluster=8,hold=0,unroll=1,xchg=1 --tuned-config p8:threads=256,rows=1,cluster=8,hold=0,unroll=4,xchg=0 --tuned-config c1:cluster=1,hold=0"
T acc-forced 120 $K softmax_backward --backend tuned --dtype bf16,fp16,fp32 --shape 3x5000 --shape 17x40001 --shape 7x131071 --shape 1x32768 --shape 1024x151936 --shape 33x4095 $F --no-timing --csv $L/acc-forced.csv
T acc-forced-kinds 60 $K softmax_backward --backend tuned --dtype bf16 --inputs shifted,wide,masked,constant,small --shape 17x40001 $F --no-timing --csv $L/acc-forced-kinds.csv
S="--tuned-config b2:threads=32,rows=4,cluster=2,hold=0,unroll=1,xchg=1 --tuned-config b16:threads=64,rows=1,cluster=16,hold=0,unroll=2,xchg=1 --tuned-config r8:threads=4,rows=8,cluster=8,hold=0,unroll=1,xchg=1"
T memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K softmax_backward --backend tuned --dtype bf16,fp32 --shape 3x5000 --shape 9x20001 $S --no-timing
T racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 9 $K softmax_backward --backend tuned --dtype bf16 --shape 3x5000 --shape 9x20001 $S --no-timing
empty=/tmp/empty.csv; echo "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,version" > $empty
X="--tuned-config x0:xchg=0 --tuned-config x1:xchg=1"
for r in 1 2 3; do T ab-r$r 60 $K softmax_backward --backend tuned --dtype bf16,fp32 --shape 1024x151936 --shape 2048x128256 --shape 4096x50257 --shape 8192x262144 --shape 32768x65536 $X --budget-ms 200 --baseline $empty --csv $L/ab/ab-r$r.csv; done
OUT=$L/dc-cudnn STEP_TIMEOUT=80 T cudnn-accuracy 90 ci/device-check --backends cudnn --steps accuracy
T glu-kbench 90 $K geglu_forward geglu_backward swiglu_forward swiglu_backward --backend tuned,fused --budget-ms 300 --csv $L/glu/kbench.csv
T glu-torch 300 python3 ci/peers/torch_peers.py --benchmarks geglu_forward,geglu_backward,swiglu_forward,swiglu_backward --backends torch_eager,torch_compile --out $L/glu/peers.csv
cd $O && tar czf r4.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log
python3 - $L <<'PY'
import csv,glob,statistics,sys,collections
L=sys.argv[1]
for f in ('acc-forced','acc-forced-kinds'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)),dict(collections.Counter(r['backend'] for r in rows)))
d=collections.defaultdict(list)
for f in glob.glob(L+'/ab/*.csv'):
    for r in csv.DictReader(open(f)):
        if r['gbps']: d[(r['dtype'],r['M']+'x'+r['N'],r['backend'])].append(float(r['gbps']))
for k in sorted(d): print('ab',*k,round(statistics.median(d[k])))
try:
    t={(r['benchmark'],r['M']+'x'+r['N']):float(r['gbps']) for r in csv.DictReader(open(L+'/glu/kbench.csv')) if r['backend']=='tuned' and r['dtype']=='bf16' and r['gbps']}
    for r in csv.DictReader(open(L+'/glu/peers.csv')):
        k=(r['benchmark'],r['M']+'x'+r['N'])
        if r['backend']=='torch_compile' and k in t and r['gbps']: print('glu',*k,round(t[k]),round(float(r['gbps'])),round(t[k]/float(r['gbps']),3))
except Exception as e: print('glu',e)
PY
tail -3 $L/cudnn-accuracy.log
