#!/usr/bin/env bash
# Session 12, run 5: the LayerNorm forward's exact mean with the CTA's share added in fp32 where
# that is exact (16-bit, tpr x NV x VEC within 2^(24-p)) and the cluster round's double butterfly
# over the next power of two of cl lanes instead of 32: does it take back the 2-4 % the clustered
# rows lost? One kbench binary (kbG); LayerNorm forward timed twice on every registered shape
# (eager: the control), accuracy on every shape, kind, constant rows and forced cluster layouts
# (2, 3, 4, 8, 16 CTAs), memcheck and racecheck on clustered layouts.
set -u
T0=$(date +%s); END=$((T0 + 230))
O=$OUT; L=$O/logs; mkdir -p $L; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
LD_LIBRARY_PATH=.var .var/zstd -q -d .var/kbG.zst -o /tmp/kbG && chmod +x /tmp/kbG
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
F=layernorm_forward K=/tmp/kbG
T time-1 40 $K $F --backend tuned,eager --dtype bf16,fp16,fp32 --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/time-1.csv
T time-2 40 $K $F --backend tuned,eager --dtype bf16,fp16,fp32 --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/time-2.csv
c2="c2:threads=1024,rows=1,cluster=2,occ=1,db=1,reload=0,hint=2"; c3="c3:threads=512,rows=1,cluster=3,occ=1,db=1,reload=0,hint=0"
c4="c4:threads=512,rows=1,cluster=4,occ=1,db=1,reload=0,hint=2"; c8="c8:threads=1024,rows=1,cluster=8,occ=1,db=0,reload=0,hint=0"
c16="c16:threads=256,rows=1,cluster=16,occ=1,db=1,reload=0,hint=0"
T acc-all 30 $K $F --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 30 $K $F --backend tuned --dtype bf16,fp16,fp32 --inputs wide,constant,small --shape 4096x1000 --shape 512x50257 --shape 64x131072 --shape 8x262144 --shape 300x4095 --shape 4x1048576 --no-timing --csv $L/acc-kinds.csv
T acc-forced 30 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 9x32768 --shape 2x262144 --shape 3x131071 --shape 5x65536 --shape 7x100000 --inputs randn,constant --tuned-config $c2 --tuned-config $c3 --tuned-config $c4 --tuned-config $c8 --tuned-config $c16 --no-timing --csv $L/acc-forced.csv
T memcheck 30 compute-sanitizer --tool memcheck --error-exitcode 9 $K $F --backend tuned --dtype bf16,fp16 --shape 2x262144 --shape 3x131071 --inputs constant --tuned-config $c2 --tuned-config $c3 --tuned-config $c16 --no-timing
T racecheck 30 compute-sanitizer --tool racecheck --error-exitcode 9 $K $F --backend tuned --dtype bf16 --shape 2x65536 --tuned-config $c4 --tuned-config $c8 --no-timing
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections
L=sys.argv[1]
def load(n):
    try: return {(r['backend'],r['dtype'],r['M']+'x'+r['N']):float(r['gbps']) for r in csv.DictReader(open(f'{L}/{n}.csv')) if r['gbps']}
    except Exception as e: print(n,'missing',e); return {}
a=load('time-1'); b=load('time-2')
for k in sorted(a, key=lambda k:(k[0],k[1],int(k[2].split('x')[0]),int(k[2].split('x')[1]))): print(*k,'|',round(a[k]),round(b.get(k,0)))
for n in ('acc-all','acc-kinds','acc-forced'):
    try: rows=list(csv.DictReader(open(f'{L}/{n}.csv')))
    except Exception as e: print(n,'missing',e); continue
    print(n,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        m=r.get('message','')
        if r['accuracy']!='PASS' and 'cannot run this shape' not in m: print('  ',r['backend'],r['dtype'],r['M'],r['N'],r['config'][:50],r['accuracy'],m[:100])
PY
cd $O && tar czf r5.tgz logs
cat $L/status.txt
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/*check*.log
grep -v "^eager" $L/summary.txt | head -80
