#!/usr/bin/env bash
# Session 7, run 1: softmax backward cluster exchange A/B (x0 = HEAD's st.async+mbarrier, all
# threads wait; x1 = one warp waits, the CTA parked on bar.sync; x2 = session-4's generic
# DSMEM stores + cluster barrier), GLU 8192x3072 forward probe, cuDNN plan-cache format 2.
set -u
T0=$(date +%s); END=$((T0 + 560))
tar xzf .devbuild/build.tgz
O=$OUT; L=$O/logs; mkdir -p $L/ab $L/glu $L/plans; cp .devbuild/commit.txt $L/
export LD_LIBRARY_PATH=$PWD/.devbuild/zbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/ab && cp build/kbench /tmp/ab/x0
for v in 1 2; do .devbuild/zbin/zstd -q -d --long=27 --patch-from=build/kbench .devbuild/ab/x$v.patch -o /tmp/ab/x$v -f && chmod +x /tmp/ab/x$v; done
ls -la /tmp/ab > $L/bins.txt; md5sum /tmp/ab/* >> $L/bins.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
empty=/tmp/empty.csv; echo "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,version" > $empty
SH="--shape 1024x151936 --shape 2048x128256 --shape 8192x262144"
CB="--tuned-config c4:threads=256,rows=1,cluster=4,hold=0,unroll=4 --tuned-config c8:threads=256,rows=1,cluster=8,hold=0,unroll=4"
CF="--tuned-config c4:threads=256,rows=1,cluster=4,hold=0,unroll=8 --tuned-config c8:threads=256,rows=1,cluster=8,hold=0,unroll=8"
# warm the SOL cache once (not timed against anything)
T warm 60 /tmp/ab/x0 softmax_backward --backend tuned --shape 1024x1024 --baseline $empty
for r in 1 2 3; do
  case $r in 1) ord="x0 x1 x2";; 2) ord="x2 x0 x1";; 3) ord="x1 x2 x0";; esac
  for v in $ord; do
    T ab-bwd-$v-r$r 90 /tmp/ab/$v softmax_backward --backend tuned --dtype bf16 $SH $CB --budget-ms 200 --baseline $empty --csv $L/ab/bwd-$v-r$r.csv
  done
  for v in $ord; do
    [ $v = x1 ] && continue
    T ab-fwd-$v-r$r 60 /tmp/ab/$v softmax_forward --backend tuned --dtype bf16 --shape 1024x151936 --shape 8192x262144 --shape 2048x128256 $CF --budget-ms 200 --baseline $empty --csv $L/ab/fwd-$v-r$r.csv
  done
done
# GLU forward 8192x3072: named configs, twice each (spread), results carry kernel_us (CUPTI)
G="--tuned-config a:threads=128,unroll=1,occ=0,hint=2 --tuned-config b:threads=256,unroll=1,occ=0,hint=2 --tuned-config c:threads=128,unroll=2,occ=0,hint=2 --tuned-config d:threads=256,unroll=2,occ=4,hint=2 --tuned-config e:threads=512,unroll=1,occ=0,hint=1 --tuned-config f:threads=128,unroll=1,occ=0,hint=0"
for r in 1 2; do T glu-r$r 70 build/kbench geglu_forward swiglu_forward --backend tuned,fused --shape 8192x3072 --shape 8192x4096 $G --budget-ms 300 --baseline $empty --csv $L/glu/glu-r$r.csv; done
# cuDNN plan cache, format 2: built, then loaded
for r in 1 2; do KBENCH_CACHE_DIR=$L/plans T plans-r$r 80 build/kbench rmsnorm_forward rmsnorm_backward layernorm_forward --backend cudnn --shape 4096x4096 --shape 2048x128256 --print-benchmark-result --baseline $empty; done
ls -laR $L/plans > $L/plans-ls.txt
cd $O && tar czf r1.tgz logs
cat $L/status.txt
python3 - $L/ab <<'PY'
import csv,glob,statistics,sys,collections
d=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.csv'):
    kind,v,_=f.rsplit('/',1)[1].split('-')
    for r in csv.DictReader(open(f)):
        d[(r['benchmark'],r['backend'],r['M']+'x'+r['N'],v)].append(float(r['gbps']))
keys=sorted({k[:3] for k in d})
for k in keys:
    m={v:statistics.median(d[k+(v,)]) for v in ('x0','x1','x2') if d.get(k+(v,))}
    print(k[0][8:12],k[1],k[2],' '.join(f'{v}={m[v]:.0f}' for v in m),' '.join(f'{v}/x0={m[v]/m["x0"]:.3f}' for v in m if v!='x0'))
PY
grep -h "GB/s" $L/plans-r*.log | cut -c1-160 | head; grep -h -o "plan [a-z, ]*" $L/plans-r*.log | sort | uniq -c
python3 - $L/glu <<'PY'
import csv,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*.csv')):
    for r in csv.DictReader(open(f)):
        print(f[-6:-4],r['benchmark'][:6],r['backend'],r['M']+'x'+r['N'],round(float(r['gbps'])),round(float(r['sol_pct']),1),r['kernel_us'],round(float(r['median_ms'])*1000,2),r['config'][:50])
PY
