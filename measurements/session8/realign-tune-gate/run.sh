#!/usr/bin/env bash
# Session 8, run 2: norm backward at 128-bit on odd N (realigned packs): accuracy on every registered
# shape and input kind, forced configurations over the layouts (threads < 32 with several rows per
# warp, clusters, NV 1..8, persistent slots with many groups), memcheck and racecheck; then the
# tuning cache keyed by M: re-tune the unaligned norm-backward buckets, tune the missing buckets,
# ci/gate on the whole suite.
set -u
T0=$(date +%s); END=$((T0 + 575))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
B="rmsnorm_backward layernorm_backward"
T acc-all 90 $K $B --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
C="occ=32,reload=0"
S1="--tuned-config s2:threads=2,rows=16,cluster=1,acc=0,$C --tuned-config s4:threads=4,rows=8,cluster=1,acc=1,$C --tuned-config s8:threads=8,rows=4,cluster=1,occ=1,acc=0,reload=0"
T acc-tiny 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 5x37 --shape 33x61 --shape 70x59 --shape 5000x37 $S1 --no-timing --csv $L/acc-tiny.csv
S2="--tuned-config a:threads=128,rows=2,cluster=1,acc=1,$C --tuned-config b:threads=512,rows=1,cluster=1,acc=0,$C --tuned-config c:threads=256,rows=1,cluster=2,acc=1,$C --tuned-config d:threads=128,rows=1,cluster=1,occ=1,acc=0,reload=0"
T acc-mid 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 17x4095 --shape 9x4097 --shape 33x2049 --shape 3000x4095 $S2 --no-timing --csv $L/acc-mid.csv
S3="--tuned-config e:threads=1024,rows=1,cluster=2,acc=1,$C --tuned-config f:threads=128,rows=1,cluster=16,acc=0,$C --tuned-config g:threads=1024,rows=1,cluster=8,acc=1,$C"
T acc-long 60 $K $B --backend tuned --dtype bf16,fp16,fp32 --shape 5x50257 --shape 2x40001 $S3 --no-timing --csv $L/acc-long.csv
T acc-long2 40 $K $B --backend tuned --dtype bf16,fp32 --shape 3x131071 --tuned-config g:threads=1024,rows=1,cluster=8,acc=1,$C --no-timing --csv $L/acc-long2.csv
T memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --dtype bf16,fp32 --shape 5x37 --shape 17x4095 --shape 2x40001 --tuned-config s4:threads=4,rows=8,cluster=1,acc=1,$C --tuned-config c:threads=256,rows=1,cluster=2,acc=0,$C --no-timing
T racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 9 $K rmsnorm_backward --backend tuned --dtype bf16 --shape 5x37 --shape 17x4095 --tuned-config s4:threads=4,rows=8,cluster=1,acc=1,$C --tuned-config a:threads=128,rows=2,cluster=1,acc=1,$C --no-timing
T tune-odd 90 python3 ci/tune --bench rmsnorm_backward,layernorm_backward --bucket unaligned --out $L/tune-odd
T tune-missing 150 python3 ci/tune --missing-only --budget-s 140 --out $L/tune-missing
cp baselines/tuning/NVIDIA_H200.txt $L/NVIDIA_H200.txt
T gate 200 ci/gate --no-build --out $L/gate
rm -f $L/gate/report/*.png
cd $O && tar czf r2.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log
python3 - $L <<'PY'
import csv,sys,collections
L=sys.argv[1]
for f in ('acc-all','acc-kinds','acc-tiny','acc-mid','acc-long','acc-long2'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS': print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['config'][:60],r['accuracy'],r.get('max_err'))
PY
grep -E "^selected|FAILED|passed" $L/gate.log | tail -3
