#!/usr/bin/env bash
# Session 15, run 3: which L2 flush, measured inside kbench. An experiment build (main at 'flusher: the
# pass's sink is the buffer's last 16 bytes' plus an uncommitted KBENCH_FLUSH_EXP switch in kb_flush):
#   read     the read-only pass over the 2x L2 buffer (what main ships)
#   memset   the old flush: a memset of the buffer
#   discard  a memset, then discard.global.L2 over the buffer (dirty lines dropped unwritten)
# Cases: run 2's gate outliers (cuDNN RMSNorm backward 2048x128256 -7 %, tiny 4096x1 / 1x32768 cases
# 5-10 % slower) and the mid-sized calls the flush moved most. Three rounds, the modes' order rotated.
set -u
T0=$(date +%s); END=$((T0 + 400))
n=$(cat .devkb/name.txt); mkdir -p build-$n /work/main/build 2>/dev/null
LD_LIBRARY_PATH=.devkb/zbin .devkb/zbin/zstd -dc --long=27 .devkb/kbench.zst > build-$n/kbench && chmod +x build-$n/kbench
O=$OUT; L=$O/logs; mkdir -p $L; cp "$0" $L/run.sh; md5sum build-*/kbench > $L/binaries.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build-$n/kbench
T warm 60 $K rmsnorm_backward --backend cudnn --shape 2048x128256 --no-timing
for r in 1 2 3; do
  case $r in 1) order="memset read discard";; 2) order="read discard memset";; 3) order="discard memset read";; esac
  for m in $order; do
    T n-$m$r 60 env KBENCH_FLUSH_EXP=$m $K rmsnorm_backward layernorm_backward --backend cudnn,tuned,eager --shape 2048x128256 --shape 4096x1 --shape 1x32768 --budget-ms 400 --csv $L/n-$m$r.csv
    T p-$m$r 60 env KBENCH_FLUSH_EXP=$m $K geglu_forward swiglu_backward cross_entropy_forward rmsnorm_forward softmax_forward --backend tuned --shape 8192x3072 --shape 32768x1024 --shape 4096x1 --shape 32768x8192 --budget-ms 400 --csv $L/p-$m$r.csv
  done
done
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,glob,collections,statistics
L=sys.argv[1]; d=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f'{L}/[np]-*.csv')):
    m=f.split('/')[-1][2:-5].rstrip('0123456789')
    for r in csv.DictReader(open(f)):
        if r.get('median_ms') in (None,'','nan'): continue
        d[(r['benchmark'],r['backend'],r['dtype'],r['M']+'x'+r['N'])][m].append(float(r['median_ms'])*1000)
print('%-52s %22s %22s %22s  read/memset discard/memset'%('case','memset us','read us','discard us'))
for k in sorted(d):
    v=d[k]; med={m:statistics.median(v[m]) for m in v if v[m]}
    if 'memset' not in med: continue
    f=lambda m: ' '.join('%.2f'%x for x in v.get(m,[])).rjust(22)
    print('%-52s %s %s %s  %.3f %.3f'%(' '.join(k),f('memset'),f('read'),f('discard'),med['memset']/med.get('read',float('nan')),med['memset']/med.get('discard',float('nan'))))
PY
cd $O && tar czf r3.tgz logs
cat $L/status.txt | tail -4; cat $L/summary.txt
