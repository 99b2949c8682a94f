#!/usr/bin/env bash
# Session 13, run 3: occ=0 launch variants of the tuned RMSNorm / LayerNorm forward with fwd_reg_one
# (the build of run 2b) on the tall 384/512-column shapes and 32768x1024/2048, 8 named configurations per
# kbench call (its limit), plus the cache's own entry (the plain tuned series) in each call.
set -u
T0=$(date +%s); END=$((T0 + 420))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench; F="rmsnorm_forward layernorm_forward"
batch() { # name shapes... -- configs...
  local n=$1; shift; local S="" C=() i=0 b=0
  while [ "$1" != "--" ]; do S="$S --shape $1"; shift; done; shift
  for c in "$@"; do C+=(--tuned-config "$c"); i=$((i+1)); if [ $i -eq 8 ]; then T $n-$b 60 $K $F --backend tuned $S "${C[@]}" --budget-ms 120 --csv $L/$n-$b.csv; C=(); i=0; b=$((b+1)); fi; done
  [ $i -gt 0 ] && T $n-$b 60 $K $F --backend tuned $S "${C[@]}" --budget-ms 120 --csv $L/$n-$b.csv
}
V=(); for t in 16 32 64; do for b in 128 256 512; do for h in 0 2; do V+=("t${t}b${b}h${h}:threads=$t,rows=$((b/t)),cluster=1,occ=0,db=0,reload=0,hint=$h"); done; done; done
batch tall 576000x384 576000x512 1152000x384 1152000x512 -- "${V[@]}"
V=(); for t in 32 64 128 256; do for b in 128 256 512 1024; do [ $b -lt $t ] && continue; for h in 0 2; do V+=("t${t}b${b}h${h}:threads=$t,rows=$((b/t)),cluster=1,occ=0,db=0,reload=0,hint=$h"); done; done; done
batch short 32768x1024 32768x2048 -- "${V[@]}"
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
best=collections.defaultdict(list)
for f in sorted(glob.glob(f'{L}/*.csv')):
    for r in csv.DictReader(open(f)):
        if r['accuracy']!='PASS' or not r['gbps']: continue
        best[(r['benchmark'],r['M'],r['N'])].append((round(float(r['gbps'])),r['backend'],r['config'][:62]))
for k,v in sorted(best.items()):
    v.sort(reverse=True); print(*k); [print('   ',x) for x in v[:6]]
    c=[x for x in v if x[1]=='tuned']; print('    cache entry:',c[:3])
PY
cd $O && tar czf r3.tgz logs && cp logs/summary.txt logs/status.txt . && rm -rf logs
cat status.txt summary.txt
