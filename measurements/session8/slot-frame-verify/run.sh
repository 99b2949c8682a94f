#!/usr/bin/env bash
# Session 8, run 3: norm backward on odd N through bwd_shift (memory slots, dw in shared-memory
# windows): accuracy on every registered shape and input kind, forced configurations over the
# layouts, memcheck and racecheck; re-tune the unaligned norm-backward buckets; ci/gate on the norms.
set -u
T0=$(date +%s); END=$((T0 + 500))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
B="rmsnorm_backward layernorm_backward"
C="occ=32,reload=0"
s2="s2:threads=2,rows=16,cluster=1,acc=0,$C"; s4="s4:threads=4,rows=8,cluster=1,acc=1,$C"; s8="s8:threads=8,rows=4,cluster=1,occ=1,acc=0,reload=0"
a="a:threads=256,rows=2,cluster=1,acc=1,$C"; b="b:threads=512,rows=1,cluster=1,acc=0,$C"; c="c:threads=256,rows=1,cluster=2,acc=1,$C"; d="d:threads=256,rows=1,cluster=1,occ=1,acc=0,reload=0"
e="e:threads=512,rows=1,cluster=4,acc=1,$C"; f="f:threads=128,rows=1,cluster=16,acc=0,$C"; g="g:threads=1024,rows=1,cluster=8,acc=1,$C"; h="h:threads=512,rows=1,cluster=16,acc=1,$C"
T acc-all 90 $K $B --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
T acc-tiny 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 5x37 --shape 33x61 --shape 70x59 --shape 5000x37 --tuned-config $s2 --tuned-config $s4 --tuned-config $s8 --no-timing --csv $L/acc-tiny.csv
T acc-mid 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 17x4095 --shape 9x4097 --shape 33x2049 --shape 3000x4095 --tuned-config $a --tuned-config $b --tuned-config $c --tuned-config $d --no-timing --csv $L/acc-mid.csv
T acc-long 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 5x50257 --shape 2x40001 --shape 700x50257 --tuned-config $e --tuned-config $f --tuned-config $g --no-timing --csv $L/acc-long.csv
T acc-long2 40 $K $B --backend tuned --dtype bf16,fp32 --shape 3x131071 --tuned-config $h --no-timing --csv $L/acc-long2.csv
MC="compute-sanitizer --tool memcheck --error-exitcode 9"
T memcheck1 60 $MC $K $B --backend tuned --dtype bf16,fp32 --shape 5x37 --shape 70x59 --tuned-config $s2 --tuned-config $s4 --no-timing
T memcheck2 60 $MC $K $B --backend tuned --dtype bf16,fp32 --shape 17x4095 --shape 9x4097 --tuned-config $a --tuned-config $c --no-timing
T memcheck3 60 $MC $K $B --backend tuned --dtype bf16,fp32 --shape 2x40001 --shape 3x50257 --tuned-config $f --tuned-config $g --no-timing
RC="compute-sanitizer --tool racecheck --error-exitcode 9"
T racecheck1 60 $RC $K rmsnorm_backward --backend tuned --dtype bf16 --shape 5x37 --shape 17x4095 --tuned-config $s4 --tuned-config $a --no-timing
T racecheck2 60 $RC $K layernorm_backward --backend tuned --dtype fp32 --shape 70x59 --shape 9x4097 --tuned-config $s2 --tuned-config $b --no-timing
T tune-odd 90 python3 ci/tune --bench rmsnorm_backward,layernorm_backward --bucket unaligned --out $L/tune-odd
cp baselines/tuning/NVIDIA_H200.txt $L/NVIDIA_H200.txt
T gate 150 ci/gate --no-build --labels "rmsnorm|layernorm" --out $L/gate
rm -rf $L/gate/report $L/gate/prepare-*
cd $O && tar czf r3.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck*.log $L/racecheck*.log
python3 - $L <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
for f in ('acc-all','acc-kinds','acc-tiny','acc-mid','acc-long','acc-long2'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS': print('  ',r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['accuracy'],r.get('max_err'),r.get('message','')[:120])
rows=[]
for f in glob.glob(L+'/gate/results/*.csv'): rows+=list(csv.DictReader(open(f)))
print('gate',len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
for r in rows:
    if r['backend']=='tuned' and r['N'] in ('4095','50257') and r['gbps']: print(' ',r['verdict'],r['benchmark'],r['dtype'],r['M'],r['N'],round(float(r['gbps'])),r['baseline_gbps'][:6],r['config'][:70])
    if r['verdict']=='SLOWER': print(' SLOWER',r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7])
PY
grep -E "^selected|FAILED|passed" $L/gate.log | tail -3
