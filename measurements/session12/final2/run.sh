#!/usr/bin/env bash
# Session 12, run 6 (closing, main as it lands, after run 5): LayerNorm forward with the exact mean on constant
# rows (tuned register kernels and loop: the mean summed exactly, fp32 within a CTA where exact,
# doubles across warps beyond that, ranks and
# (loop) slots, as run 1; fused: an extra round for near-constant rows, as run 2): accuracy of
# tuned and fused on every registered shape and input kind in three dtypes, constant rows at long
# N, forced layouts, every norm backend on the fp16/fp32 constant cases, memcheck/racecheck; then
# ci/closing-check (the whole-suite gate against the committed baseline, the README's test
# command, memcheck).
set -u
T0=$(date +%s); END=$((T0 + 575))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
F="layernorm_forward"
l1="l1:threads=256,rows=1,cluster=1,occ=0,db=0,reload=1,hint=0"; l2="l2:threads=1024,rows=1,cluster=1,occ=0,db=0,reload=1,hint=1"
c4="c4:threads=512,rows=1,cluster=4,occ=1,db=1,reload=0,hint=2"; c8="c8:threads=1024,rows=1,cluster=8,occ=1,db=0,reload=0,hint=0"
c16="c16:threads=256,rows=1,cluster=16,occ=1,db=1,reload=0,hint=0"
r8="r8:threads=32,rows=8,cluster=1,occ=0,db=1,reload=0,hint=1"; r2="r2:threads=128,rows=2,cluster=1,occ=4,db=0,reload=0,hint=2"
s8="s8:threads=8,rows=16,cluster=1,occ=32,db=1,reload=0,hint=0"
T ln-all 50 $K $F --backend tuned,fused --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/ln-all.csv
T ln-kinds 40 $K $F --backend tuned,fused --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/ln-kinds.csv
T ln-const 50 $K $F --backend tuned,fused --dtype bf16,fp16,fp32 --shape 4096x1000 --shape 512x50256 --shape 512x50257 --shape 64x131072 --shape 8x262144 --shape 300x4095 --shape 4x1048576 --shape 2x4194304 --inputs constant,shifted --no-timing --csv $L/ln-const.csv
T ln-forced 60 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 5x64 --shape 17x4096 --shape 3x4095 --shape 9x32768 --shape 2x262144 --shape 3x131071 --inputs randn,constant,wide,small --tuned-config $l1 --tuned-config $l2 --tuned-config $c4 --tuned-config $c8 --tuned-config $c16 --tuned-config $r8 --tuned-config $r2 --tuned-config $s8 --no-timing --csv $L/ln-forced.csv
T const-all 40 $K rmsnorm_forward rmsnorm_backward layernorm_forward layernorm_backward --backend eager,fused,tuned,cudnn --dtype fp16,fp32 --inputs constant --no-timing --csv $L/const-all.csv
MC="compute-sanitizer --tool memcheck --error-exitcode 9"
T ln-memcheck 40 $MC $K $F --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 3x4095 --shape 2x262144 --tuned-config $l1 --tuned-config $c4 --tuned-config $c16 --tuned-config $r8 --no-timing
T ln-memcheck-c 40 $MC $K $F --backend tuned,fused --dtype fp16,fp32 --shape 7x1000 --shape 3x50257 --inputs constant --no-timing
RC="compute-sanitizer --tool racecheck --error-exitcode 9"
T ln-racecheck 40 $RC $K $F --backend tuned,fused --dtype bf16 --shape 5x4096 --shape 2x65536 --inputs constant --no-timing
left=$((END - $(date +%s) - 15))
T closing $left ci/closing-check --steps gate,readme,memcheck --budget-s $left
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob,os
L=sys.argv[1]
for f in ('ln-all','ln-kinds','ln-const','ln-forced','const-all'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        m=r.get('message','')
        if r['accuracy']!='PASS' and 'cannot run this shape' not in m: print('  ',r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['config'][:60],r['accuracy'],r.get('max_err'),m[:100])
PY
cd $O && tar czf r6.tgz --exclude="*/report" --exclude="*/prepare-*" logs $(ls -d gate* readme* memcheck* status* 2>/dev/null)
cat $L/status.txt
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/*check*.log
cat $L/summary.txt | head -60
tail -30 $L/closing.log
