#!/usr/bin/env bash
# Session 10, run 5 (branch l2-policy): the norm forward's re-reading loop with L2 cache
# policies (hint=2: passes before the last evict-last, the last evict-first, as Inductor's
# looped reduction) against hint 1 (read-only-path loads) and the committed cache entry, bf16,
# 32768 x 2K-64K; torch.compile on the RMSNorm shapes in the same session; accuracy of the
# hint-2 loop in three dtypes and memcheck.
set -u
T0=$(date +%s); END=$((T0 + 480))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp measurements/session10/l2-policy/run.sh $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
C=""
for t in 256 512 1024; do for h in 1 2; do C="$C --tuned-config t${t}h$h:reload=1,threads=$t,rows=1,cluster=1,hint=$h"; done; done
S="--shape 32768x2048 --shape 32768x4096 --shape 32768x8192 --shape 32768x16384 --shape 32768x32768 --shape 32768x65536"
T acc 40 $K rmsnorm_forward layernorm_forward --backend tuned --dtype bf16,fp16,fp32 --shape 7x4096 --shape 33x1024 --shape 3x65536 --shape 257x8192 --shape 64x32768 --tuned-config l2:reload=1,threads=256,rows=1,cluster=1,hint=2 --tuned-config l2b:reload=1,threads=1024,rows=1,cluster=1,hint=2 --no-timing --csv $L/acc.csv
T memcheck 30 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 $K rmsnorm_forward layernorm_forward --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 17x4096 --tuned-config l2:reload=1,threads=256,rows=1,cluster=1,hint=2 --no-timing
T grid 200 $K rmsnorm_forward layernorm_forward --backend tuned $S $C --budget-ms 300 --csv $L/grid.csv
T peers 150 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_forward,layernorm_forward --shapes 32768x2048,32768x4096,32768x8192,32768x16384,32768x32768 --backends torch_compile --out $L/peers.csv
cd $O && tar czf r5.tgz logs
cat $L/status.txt
grep -h "ERROR SUMMARY" $L/memcheck.log | sort | uniq -c
python3 - $L <<'PY'
import csv,sys,collections
L=sys.argv[1]
a=list(csv.DictReader(open(L+'/acc.csv'))); print('acc',len(a),dict(collections.Counter(r['accuracy'] for r in a)))
g=list(csv.DictReader(open(L+'/grid.csv')))
t=collections.defaultdict(dict)
for r in g: t[(r['benchmark'],r['N'])][r['config'].split(' ')[0][:40]]=float(r['gbps'] or 'nan')
try:
    for r in csv.DictReader(open(L+'/peers.csv')): t[(r['benchmark'],r['N'])]['torch_compile']=float(r['gbps'] or 'nan')
except Exception as e: print('peers',e)
for k,v in sorted(t.items()): print(k, ' '.join(f'{c}={x:.0f}' for c,x in sorted(v.items())))
PY
