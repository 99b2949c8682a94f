#!/usr/bin/env bash
# Session 8, run 4 (closing): ci/gate on the whole suite against the committed baseline with the
# committed cache, the README's test command, memcheck/racecheck of the realigned odd-N norm
# backward (16-bit) and the element kernel (fp32), a scratch baseline of the tuned backend for
# ci/merge-faster, two concurrent ctest -L softmax.
set -u
T0=$(date +%s); END=$((T0 + 585))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
K=build/kbench
T gate 200 ci/gate --no-build --out $L/gate
T readme 160 ctest --test-dir build --output-on-failure -j2
C="occ=32,reload=0"
T memcheck 60 compute-sanitizer --tool memcheck --error-exitcode 9 $K rmsnorm_backward layernorm_backward --backend tuned --dtype bf16,fp16,fp32 --shape 5x37 --shape 17x4095 --shape 3x50257 --shape 70x4097 --no-timing
T memcheck-forced 60 compute-sanitizer --tool memcheck --error-exitcode 9 $K rmsnorm_backward layernorm_backward --backend tuned --dtype bf16 --shape 70x59 --shape 5000x37 --tuned-config s4:threads=4,rows=8,cluster=1,acc=1,$C --tuned-config s2:threads=2,rows=16,cluster=1,acc=0,$C --no-timing
T racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 9 $K rmsnorm_backward layernorm_backward --backend tuned --dtype bf16,fp32 --shape 5x37 --shape 17x4095 --shape 3x50257 --no-timing
cp baselines/NVIDIA_H200.csv $L/scratch-baseline.csv
T scratch 120 $K cross_entropy_forward cross_entropy_backward softmax_forward softmax_backward rmsnorm_forward rmsnorm_backward layernorm_forward layernorm_backward geglu_forward geglu_backward swiglu_forward swiglu_backward --backend tuned --baseline $L/scratch-baseline.csv --update-baseline --csv $L/scratch-results.csv
left=$((END - $(date +%s) - 5)); [ $left -gt 90 ] && left=90
if [ $left -gt 20 ]; then
  timeout $left ctest --test-dir build -L softmax -j4 -V > $L/concurrent-1.log 2>&1 & p1=$!
  timeout $left ctest --test-dir build -L softmax -j4 -V > $L/concurrent-2.log 2>&1 & p2=$!
  wait $p1; r1=$?; wait $p2; r2=$?; echo "== concurrent exit $r1 $r2 (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt
else echo "== concurrent skipped (no time)" | tee -a $L/status.txt; fi
rm -rf $L/gate/report/*.png $L/gate/prepare-*
cd $O && tar czf r4.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck*.log $L/racecheck.log
grep -h "tests passed" $L/readme.log $L/concurrent-*.log
grep -E "^selected|FAILED|passed" $L/gate.log | tail -3
python3 - $L <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
rows=[]
for f in glob.glob(L+'/gate/results/*.csv'): rows+=list(csv.DictReader(open(f)))
print('gate',len(rows),dict(collections.Counter(r['verdict'] for r in rows)))
for r in rows:
    if r['verdict'] in ('SLOWER','FUSION_CHANGED') or (r['accuracy'] not in ('PASS','SKIP','')): print(' ',r['verdict'],r['accuracy'],r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7],r['baseline_gbps'][:7],r['message'][:100])
    if r['backend']=='tuned' and 'norm_backward' in r['benchmark'] and r['N'] in ('4095','50257') and r['gbps']: print(' ',r['verdict'],r['benchmark'],r['dtype'],r['M'],r['N'],round(float(r['gbps'])),r['baseline_gbps'][:6])
PY
