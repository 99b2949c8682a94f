#!/usr/bin/env bash
# Session 12, run 1: LayerNorm forward (tuned) with the mean summed exactly on constant rows
# (row_reducer::sum_d, norm_tuned_fwd.cuh): accuracy on every registered shape and input kind in
# three dtypes, constant rows at long N, forced layouts (loops, clusters 4/8/16, multi-row, double
# buffer), memcheck and racecheck; every norm backend on the newly registered fp16/fp32 constant
# cases; ci/tune of the 8 buckets those cases added; the registered input-kind cases (ctest -L
# inputs); ci/gate on layernorm_forward against the committed baseline; ncu of the tuned RMSNorm
# forward at 32768x32768 (the kernel the cache picks), for comparison with session 10's Triton profile.
set -u
T0=$(date +%s); END=$((T0 + 560))
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
T ln-all 70 $K $F --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/ln-all.csv
T ln-kinds 60 $K $F --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/ln-kinds.csv
T ln-const 60 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 4096x1000 --shape 512x50256 --shape 512x50257 --shape 64x131072 --shape 8x262144 --shape 300x4095 --shape 4x1048576 --shape 2x4194304 --inputs constant,shifted --no-timing --csv $L/ln-const.csv
T ln-forced 90 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 5x64 --shape 17x4096 --shape 3x4095 --shape 9x32768 --shape 2x262144 --shape 3x131071 --inputs randn,constant,wide,small --tuned-config $l1 --tuned-config $l2 --tuned-config $c4 --tuned-config $c8 --tuned-config $c16 --tuned-config $r8 --tuned-config $r2 --tuned-config $s8 --no-timing --csv $L/ln-forced.csv
T const-all 60 $K rmsnorm_forward rmsnorm_backward layernorm_forward layernorm_backward --backend eager,fused,tuned,cudnn --dtype fp16,fp32 --inputs constant --no-timing --csv $L/const-all.csv
MC="compute-sanitizer --tool memcheck --error-exitcode 9"
T ln-memcheck 60 $MC $K $F --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 3x4095 --shape 2x262144 --tuned-config $l1 --tuned-config $c4 --tuned-config $c16 --tuned-config $r8 --no-timing
T ln-memcheck16 40 $MC $K $F --backend tuned --dtype fp16 --shape 7x1000 --shape 3x50257 --tuned-config $l2 --tuned-config $c8 --tuned-config $s8 --no-timing
RC="compute-sanitizer --tool racecheck --error-exitcode 9"
T ln-racecheck 60 $RC $K $F --backend tuned --dtype bf16,fp32 --shape 5x4096 --shape 2x65536 --tuned-config $l2 --tuned-config $c4 --tuned-config $r8 --no-timing
T tune-missing 90 python3 ci/tune --missing-only --out $L/tune-missing
cp baselines/tuning/NVIDIA_H200.txt $L/NVIDIA_H200.txt
T ctest-inputs 90 ctest --test-dir build -L inputs -j2 --output-on-failure
T gate-ln 150 ci/gate --no-build --labels "layernorm_forward" --out $L/gate-ln
T ncu-rms 60 env KBENCH_CUPTI_LIB=none ncu --set full -k regex:"fwd_reg|fwd_loop" -c 1 $K rmsnorm_forward --backend tuned --shape 32768x32768 --no-timing
rm -rf $L/gate-*/report $L/gate-*/prepare-*
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
for f in ('ln-all','ln-kinds','ln-const','ln-forced','const-all'):
    try: rows=list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); continue
    print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS': print('  ',r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['config'][:70],r['accuracy'],r.get('max_err'),r.get('message','')[:100])
for g in ('gate-ln',):
    rows=[]
    for f in glob.glob(f'{L}/{g}/results/*.csv'): rows+=list(csv.DictReader(open(f)))
    print(g,len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
    for r in sorted(rows,key=lambda r:(r['benchmark'],r['dtype'],int(r['M']),int(r['N']))):
        if r['backend']=='tuned' and r['gbps']:
            print(' ',r['verdict'],r['benchmark'],r['dtype'],r['M'],r['N'],round(float(r['gbps'])),r['baseline_gbps'][:6],r['config'][:80])
        elif r['verdict']=='SLOWER' or r['accuracy'] not in ('PASS','SKIP',''): print(' !',r['verdict'],r['accuracy'],r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7])
PY
cd $O && tar czf r1.tgz logs && rm -rf logs/gate-*/results
cat $L/status.txt
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/*memcheck*.log $L/*racecheck*.log
tail -5 $L/ctest-inputs.log
grep -E "dram__throughput.avg.pct|DRAM Throughput|Achieved Occupancy|Registers Per|Duration|Block Size|Grid Size|fwd_" $L/ncu-rms.log | head -12
cat $L/summary.txt | head -150
