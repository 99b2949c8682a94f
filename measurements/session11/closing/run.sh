#!/usr/bin/env bash
# Session 11, run 3 (closing): main with the shifted-slot norm backward for 16-bit odd N (fp32 back
# on element accesses) and the re-tuned unaligned cache entries: ci/closing-check gate (whole
# suite), the README's test command, memcheck, and the scratch baseline for ci/merge-faster;
# fp32 odd-N accuracy and memcheck (its element kernel was rebuilt from the new body); PyTorch
# eager and torch.compile on the odd-N norm backward shapes in the same session.
set -u
T0=$(date +%s); END=$((T0 + 575))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
B="rmsnorm_backward layernorm_backward"
T acc-fp32 40 $K $B --backend tuned --dtype fp32 --shape 5x37 --shape 17x4095 --shape 3000x4095 --shape 700x50257 --shape 4096x50257 --inputs randn,constant,shifted,wide --no-timing --csv $L/acc-fp32.csv
T memcheck-fp32 40 compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --dtype fp32,bf16 --shape 5x37 --shape 17x4095 --shape 3x50257 --no-timing
T closing 400 env OUT=$L/cc ci/closing-check --steps gate,readme,memcheck,scratch --budget-s 400
T peers 150 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_backward,layernorm_backward --shapes 32768x4095,4096x50257 --backends torch_eager,torch_compile --out $L/peers.csv
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob,gzip
L=sys.argv[1]
rows=list(csv.DictReader(open(L+'/acc-fp32.csv'))) if glob.glob(L+'/acc-fp32.csv') else []
print('acc-fp32',len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
rows=[];hdr=None
for f in sorted(glob.glob(L+'/cc/gate/results/*.csv')):
    r=list(csv.reader(open(f)))
    if r: hdr=r[0]; rows+=r[1:]
if hdr:
    w=csv.writer(gzip.open(L+'/gate-results.csv.gz','wt')); w.writerow(hdr); w.writerows(rows)
    d=[dict(zip(hdr,r)) for r in rows]
    print('gate',len(d),dict(collections.Counter(x['verdict'] for x in d)))
    for x in d:
        odd = x['N'].isdigit() and int(x['N']) % 8 != 0 and 'norm_backward' in x['benchmark'] and x['backend']=='tuned'
        if odd or x['verdict'] in ('SLOWER','FASTER','FUSION_CHANGED','NOISY') or x['accuracy'] not in ('PASS','SKIP',''):
            print(' ',x['verdict'],x['accuracy'],x['benchmark'],x['backend'],x['dtype'],x['M'],x['N'],x['gbps'][:7],x['baseline_gbps'][:7],x['config'][:60],x['message'][:60])
for f in glob.glob(L+'/peers.csv'):
    for r in csv.DictReader(open(f)): print('peer',r['benchmark'],r['backend'],r['dtype'],r['M'],r['N'],r['gbps'][:7])
PY
rm -rf $L/cc/gate/report/*.png $L/cc/gate/prepare-* $L/cc/gate/results
cd $O && tar czf r3.tgz logs && rm -rf logs/cc
cat $L/status.txt
cat $L/cc/summary.txt 2>/dev/null
grep -h "ERROR SUMMARY" $L/memcheck-fp32.log
head -80 $L/summary.txt
