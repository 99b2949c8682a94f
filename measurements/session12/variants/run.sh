#!/usr/bin/env bash
# Session 12, run 3: what the exact-mean cures cost. One kbench binary built here (two did not
# fit the device tool's 64 MiB), kbA = the candidate (register kernels: mean summed in double across warps/ranks, the cluster
# exchange as one 8-byte st.async; loop: extra round for near-constant rows only, its length
# bound hoisted out of the row loop; fused: tile sums of fp32 in double, the mean's CTA sum in
# double). LayerNorm forward, every registered shape, tuned / fused / eager (eager: unchanged,
# the control against session 11's closing run and this session's runs 1-2), twice; then the
# candidate's accuracy on constant rows, forced layouts and memcheck.
set -u
T0=$(date +%s); END=$((T0 + 560))
O=$OUT; L=$O/logs; mkdir -p $L; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
for v in A; do LD_LIBRARY_PATH=.var .var/zstd -q -d .var/kb$v.zst -o /tmp/kb$v && chmod +x /tmp/kb$v; done
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
F=layernorm_forward
for r in 1 2; do for v in A; do
  T time-$v-$r 90 /tmp/kb$v $F --backend tuned,fused,eager --dtype bf16,fp16,fp32 --sweep all --baseline baselines/NVIDIA_H200.csv --csv $L/time-$v-$r.csv
done; done
c4="c4:threads=512,rows=1,cluster=4,occ=1,db=1,reload=0,hint=2"; c16="c16:threads=256,rows=1,cluster=16,occ=1,db=1,reload=0,hint=0"
l1="l1:threads=256,rows=1,cluster=1,occ=0,db=0,reload=1,hint=0"; r8="r8:threads=32,rows=8,cluster=1,occ=0,db=1,reload=0,hint=1"
T acc-A 60 /tmp/kbA $F --backend tuned,fused --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-A.csv
T acc-A-kinds 60 /tmp/kbA $F --backend tuned,fused --dtype bf16,fp16,fp32 --inputs wide,constant,small --shape 4096x1000 --shape 512x50257 --shape 64x131072 --shape 8x262144 --shape 300x4095 --shape 4x1048576 --no-timing --csv $L/acc-A-kinds.csv
T acc-A-forced 60 /tmp/kbA $F --backend tuned --dtype bf16,fp16,fp32 --shape 5x64 --shape 17x4096 --shape 3x4095 --shape 9x32768 --shape 2x262144 --inputs randn,constant --tuned-config $c4 --tuned-config $c16 --tuned-config $l1 --tuned-config $r8 --no-timing --csv $L/acc-A-forced.csv
T memcheck-A 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kbA $F --backend tuned,fused --dtype bf16,fp32 --shape 5x64 --shape 3x4095 --shape 2x262144 --inputs constant --tuned-config $c4 --tuned-config $c16 --tuned-config $l1 --no-timing
T racecheck-A 60 compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/kbA $F --backend tuned --dtype bf16 --shape 2x65536 --shape 3x4095 --tuned-config $c4 --tuned-config $l1 --no-timing
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,statistics
L=sys.argv[1]
def load(n):
    try: return {(r['backend'],r['dtype'],r['M']+'x'+r['N']):float(r['gbps']) for r in csv.DictReader(open(f'{L}/{n}.csv')) if r['gbps']}
    except Exception as e: print(n,'missing',e); return {}
d={k:load(k) for k in ('time-A-1','time-A-2')}
keys=sorted(d['time-A-1'], key=lambda k:(k[0],k[1],int(k[2].split('x')[0]),int(k[2].split('x')[1])))
print('backend dtype shape | vA r1 r2')
for k in keys: print(*k,'|',round(d['time-A-1'][k]),round(d['time-A-2'].get(k,0)))
for n in ('acc-A','acc-A-kinds','acc-A-forced'):
    try: rows=list(csv.DictReader(open(f'{L}/{n}.csv')))
    except Exception as e: print(n,'missing',e); continue
    print(n,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        m=r.get('message','')
        if r['accuracy']!='PASS' and 'cannot run this shape' not in m: print('  ',r['backend'],r['dtype'],r['M'],r['N'],r['config'][:50],r['accuracy'],m[:100])
PY
cd $O && tar czf r3.tgz logs
cat $L/status.txt
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/*check*.log
cat $L/summary.txt | head -120
