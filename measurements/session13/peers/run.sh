#!/usr/bin/env bash
# Session 13, run 7 (main as landed): torch.compile and kbench tuned on the norm-forward and softmax-backward shapes whose cache entries changed, same run.
set -u
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt "$0" $L/
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
SH=32768x1024,32768x2048,32768x4096,32768x8192,32768x16384,32768x32768,576000x384,576000x512,1152000x384,1152000x512
build/kbench rmsnorm_forward layernorm_forward --backend tuned $(for s in ${SH//,/ }; do echo --shape $s; done) --csv $L/kb-norm.csv > $L/kb-norm.log 2>&1
build/kbench softmax_backward --backend tuned --shape 32768x16384 --csv $L/kb-sm.csv > $L/kb-sm.log 2>&1
timeout 170 python3 ci/peers/torch_peers.py --benchmarks rmsnorm_forward,layernorm_forward --shapes $SH --backends torch_compile --out $L/peers-norm.csv > $L/peers-norm.log 2>&1
timeout 30 python3 ci/peers/torch_peers.py --benchmarks softmax_backward --shapes 32768x16384 --backends torch_compile --out $L/peers-sm.csv > $L/peers-sm.log 2>&1
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,glob
L=sys.argv[1]; P={}
for f in glob.glob(f'{L}/peers-*.csv'):
    for r in csv.DictReader(open(f)): P[(r['benchmark'],r['M'],r['N'])]=float(r['gbps'])
for f in sorted(glob.glob(f'{L}/kb-*.csv')):
    for r in csv.DictReader(open(f)):
        k=(r['benchmark'],r['M'],r['N']); p=P.get(k)
        print(*k, r['gbps'][:6], '%.1f'%float(r['sol_pct']), p, '%.3f'%(float(r['gbps'])/p) if p else '-', r['config'][:70])
PY
cd $O && tar czf r7.tgz logs && cp logs/summary.txt . && rm -rf logs; cat summary.txt
