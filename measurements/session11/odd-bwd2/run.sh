#!/usr/bin/env bash
# Session 11, run 2 (run 1 measured a rewrite whose 16-bit shifted-slot kernels spilled, so valid()
# refused them all and every odd-N case fell back; this is the first version, which does not spill): norm backward on odd N through shifted slots with the rows dealt out by
# shift class (rows r, r+P, ... share one slot's columns; norm_tuned_bwd.cuh): accuracy on every
# registered shape and input kind, class edge cases (M < P, P = 2/4/8, N = 1, 3), forced
# configurations over the layouts, memcheck and racecheck; ci/gate on the norm backwards with the
# committed cache (tuned for the realigned packs), the unaligned buckets re-tuned, the gate again.
set -u
T0=$(date +%s); END=$((T0 + 570))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
B="rmsnorm_backward layernorm_backward"
C="occ=32,reload=0"
s2="s2:threads=2,rows=16,cluster=1,acc=0,$C"; s4="s4:threads=4,rows=8,cluster=1,acc=1,$C"; s8="s8:threads=8,rows=4,cluster=1,occ=1,acc=0,reload=0"
a="a:threads=256,rows=2,cluster=1,acc=1,$C"; b="b:threads=512,rows=1,cluster=1,acc=0,$C"; c="c:threads=256,rows=1,cluster=2,acc=1,$C"; d="d:threads=256,rows=1,cluster=1,occ=1,acc=0,reload=0"
a0="a0:threads=128,rows=4,cluster=1,acc=0,$C"; d2="d2:threads=64,rows=2,cluster=1,occ=2,acc=1,reload=0"
e="e:threads=512,rows=1,cluster=4,acc=1,$C"; f="f:threads=128,rows=1,cluster=16,acc=0,$C"; g="g:threads=1024,rows=1,cluster=8,acc=1,$C"; h="h:threads=512,rows=1,cluster=16,acc=1,$C"
T acc-all 90 $K $B --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
EDGE="--shape 1x37 --shape 3x37 --shape 7x3 --shape 11x1 --shape 9x4094 --shape 17x4092 --shape 257x4094 --shape 3x4095 --shape 1x50257 --shape 13x129"
T acc-edge 60 $K $B --backend tuned --dtype bf16,fp16,fp32 $EDGE --no-timing --csv $L/acc-edge.csv
T acc-tiny 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 5x37 --shape 33x61 --shape 70x59 --shape 5000x37 --shape 3x37 --tuned-config $s2 --tuned-config $s4 --tuned-config $s8 --no-timing --csv $L/acc-tiny.csv
T acc-mid 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 17x4095 --shape 9x4097 --shape 33x2049 --shape 3000x4095 --shape 19x4094 --shape 21x4092 --tuned-config $a --tuned-config $b --tuned-config $c --tuned-config $d --tuned-config $a0 --tuned-config $d2 --no-timing --csv $L/acc-mid.csv
T acc-long 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 5x50257 --shape 2x40001 --shape 700x50257 --tuned-config $e --tuned-config $f --tuned-config $g --no-timing --csv $L/acc-long.csv
T acc-long2 40 $K $B --backend tuned --dtype bf16,fp32 --shape 3x131071 --tuned-config $h --no-timing --csv $L/acc-long2.csv
MC="compute-sanitizer --tool memcheck --error-exitcode 9"
T memcheck1 60 $MC $K $B --backend tuned --dtype bf16,fp32 --shape 5x37 --shape 70x59 --shape 3x37 --tuned-config $s2 --tuned-config $s4 --no-timing
T memcheck2 60 $MC $K $B --backend tuned --dtype bf16,fp32 --shape 17x4095 --shape 9x4097 --shape 19x4094 --tuned-config $a --tuned-config $c --tuned-config $a0 --no-timing
T memcheck3 60 $MC $K $B --backend tuned --dtype bf16,fp32 --shape 2x40001 --shape 3x50257 --tuned-config $f --tuned-config $g --no-timing
RC="compute-sanitizer --tool racecheck --error-exitcode 9"
T racecheck1 60 $RC $K rmsnorm_backward --backend tuned --dtype bf16 --shape 5x37 --shape 17x4095 --tuned-config $s4 --tuned-config $a --tuned-config $a0 --no-timing
T racecheck2 60 $RC $K layernorm_backward --backend tuned --dtype fp32 --shape 70x59 --shape 9x4097 --tuned-config $s2 --tuned-config $b --no-timing
T gate-before 130 ci/gate --no-build --labels "rmsnorm_backward|layernorm_backward" --out $L/gate-before
T tune-odd 120 python3 ci/tune --bench rmsnorm_backward,layernorm_backward --bucket unaligned --out $L/tune-odd
cp baselines/tuning/NVIDIA_H200.txt $L/NVIDIA_H200.txt
T gate-after 100 ci/gate --no-build --labels "rmsnorm_backward|layernorm_backward" --out $L/gate-after
rm -rf $L/gate-*/report $L/gate-*/prepare-*
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
for f in ('acc-all','acc-kinds','acc-edge','acc-tiny','acc-mid','acc-long','acc-long2'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS': print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['config'][:60],r['accuracy'],r.get('max_err'),r.get('message','')[:100])
for g in ('gate-before','gate-after'):
    rows=[]
    for f in glob.glob(f'{L}/{g}/results/*.csv'): rows+=list(csv.DictReader(open(f)))
    print(g,len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
    for r in sorted(rows,key=lambda r:(r['benchmark'],r['dtype'],int(r['M']),int(r['N']))):
        odd = int(r['N']) % 8 != 0
        if r['backend']=='tuned' and r['gbps'] and (odd or r['verdict'] in ('SLOWER','FASTER')):
            print(' ',r['verdict'],r['benchmark'],r['dtype'],r['M'],r['N'],round(float(r['gbps'])),r['baseline_gbps'][:6],r['config'][:80])
        elif r['verdict']=='SLOWER' or r['accuracy'] not in ('PASS','SKIP',''): print(' !',r['verdict'],r['accuracy'],r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7])
PY
cd $O && tar czf r2.tgz logs && rm -rf logs/gate-*/results
cat $L/status.txt
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/*memcheck*.log $L/racecheck*.log
cat $L/summary.txt | head -150
