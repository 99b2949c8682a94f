#!/usr/bin/env bash
# Session 13, run 4 (main e5a7cf2): launch variants where tuned trails torch.compile, against the cache
# entry (the plain `tuned` series) in the same kbench call: softmax backward 32768x1K-32K with
# Inductor's shape (one row per 1024-thread CTA, one slot of y and dy per thread and step) and
# neighbours; the norm forwards at 32768x4K-32K: the re-reading loop at 256-1024 threads and the
# one-group register kernel at 1, 2 and 4 packs per thread.
set -u
T0=$(date +%s); END=$((T0 + 300))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench
S=""; for c in 1024:1:1:0 1024:1:2:0 512:1:1:0 512:2:1:0 256:4:1:0 256:1:2:0 1024:1:1:1 512:2:2:0; do IFS=: read t r u h <<<"$c"; S="$S --tuned-config t${t}r${r}u${u}h${h}:threads=$t,rows=$r,cluster=1,hold=0,unroll=$u,hint=$h,xchg=0"; done
T sm-bwd 90 $K softmax_backward --backend tuned --shape 32768x1024 --shape 32768x2048 --shape 32768x4096 --shape 32768x16384 --shape 32768x32768 $S --budget-ms 150 --csv $L/sm-bwd.csv
for N in 4096 8192 16384 32768; do
  C=""; for t in 256 512 1024; do C="$C --tuned-config loop$t:threads=$t,rows=1,cluster=1,occ=0,db=0,reload=1,hint=0"; done
  for t in 512 1024; do C="$C --tuned-config loop${t}h1:threads=$t,rows=1,cluster=1,occ=0,db=0,reload=1,hint=1"; done
  for nv in 1 2 4; do t=$((N/8/nv)); [ $t -le 1024 ] && C="$C --tuned-config one$t:threads=$t,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2"; done
  T norm-$N 50 $K rmsnorm_forward layernorm_forward --backend tuned --shape 32768x$N $C --budget-ms 150 --csv $L/norm-$N.csv
done
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
best=collections.defaultdict(list)
for f in sorted(glob.glob(f'{L}/*.csv')):
    for r in csv.DictReader(open(f)):
        if r['accuracy']!='PASS' or not r['gbps']: continue
        best[(r['benchmark'],r['M'],r['N'])].append((round(float(r['gbps'])),r['backend'],r['config'][:66]))
for k,v in sorted(best.items()):
    v.sort(reverse=True); print(*k)
    for x in v: print('   ',x)
PY
cd $O && tar czf r4.tgz logs && cp logs/summary.txt logs/status.txt . && rm -rf logs
cat status.txt summary.txt
