#!/usr/bin/env bash
# Session 10, run 4 (final): main with session 9's kernels (the staged forward and the
# LayerNorm shifted mean both reverted; kernel sources identical to f6e4ec1): the README's
# test command, ci/gate on the whole suite (results kept, for ci/merge-faster with run 3's
# scratch baseline), memcheck of the norm forwards on small shapes.
set -u
T0=$(date +%s); END=$((T0 + 560))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp measurements/session10/final/run.sh $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
T gate 260 ci/gate --no-build --out $L/gate
T readme 200 ctest --test-dir build --output-on-failure -j2
T memcheck 50 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 build/kbench rmsnorm_forward layernorm_forward --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 17x4096 --shape 3x4095 --shape 2x262144 --no-timing
rm -rf $L/gate/report/*.png $L/gate/prepare-*
python3 - $L <<'PY'
import csv,sys,collections,glob,gzip
L=sys.argv[1]
rows=[];hdr=None
for f in sorted(glob.glob(L+'/gate/results/*.csv')):
    r=list(csv.reader(open(f)))
    if r: hdr=r[0]; rows+=r[1:]
if hdr:
    w=csv.writer(gzip.open(L+'/gate-results.csv.gz','wt')); w.writerow(hdr); w.writerows(rows)
    d=[dict(zip(hdr,r)) for r in rows]
    print('gate',len(d),dict(collections.Counter(x['verdict'] for x in d)))
    for x in d:
        if x['verdict'] in ('SLOWER','FUSION_CHANGED') or x['accuracy'] not in ('PASS','SKIP',''): print(' ',x['verdict'],x['accuracy'],x['benchmark'],x['backend'],x['dtype'],x['M'],x['N'],x['gbps'][:7],x['baseline_gbps'][:7],x['message'][:80])
PY
rm -rf $L/gate/results
cd $O && tar czf r4.tgz logs && rm -rf logs/gate
cat $L/status.txt
grep -E "^selected|ci/gate:" $L/gate.log | tail -3
grep -E "tests passed|Total Test" $L/readme.log
grep -h "ERROR SUMMARY" $L/memcheck.log | sort | uniq -c
