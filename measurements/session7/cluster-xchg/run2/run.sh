#!/usr/bin/env bash
# Session 7, run 2: cluster exchange A/B round two: x0 = HEAD (try_wait), x2 = generic DSMEM
# stores + cluster barrier, x3 = mbarrier.test_wait spin, x4 = try_wait with a 64 ns suspend
# hint; plus more backward configs on x0 (would a re-tune recover the loss?).
set -u
T0=$(date +%s); END=$((T0 + 560))
tar xzf .devbuild/build.tgz
O=$OUT; L=$O/logs; mkdir -p $L/ab; cp .devbuild/commit.txt $L/
mkdir -p /tmp/ab && cp build/kbench /tmp/ab/x0
for v in 2 3 4; do .devbuild/zbin/zstd -q -d --long=27 --patch-from=build/kbench .devbuild/ab/x$v.patch -o /tmp/ab/x$v -f && chmod +x /tmp/ab/x$v; done
md5sum /tmp/ab/* > $L/bins.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
empty=/tmp/empty.csv; echo "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,version" > $empty
SH="--shape 1024x151936 --shape 2048x128256 --shape 8192x262144 --shape 4096x50257 --shape 32768x65536"
CB="--tuned-config c8:threads=256,rows=1,cluster=8,hold=0,unroll=4"
CF="--tuned-config c8:threads=256,rows=1,cluster=8,hold=0,unroll=8"
T warm 60 /tmp/ab/x0 softmax_backward --backend tuned --shape 1024x1024 --baseline $empty
for r in 1 2 3; do
  case $r in 1) ord="x0 x2 x3 x4";; 2) ord="x4 x3 x0 x2";; 3) ord="x3 x4 x2 x0";; esac
  for v in $ord; do T ab-bwd-$v-r$r 90 /tmp/ab/$v softmax_backward --backend tuned --dtype bf16 $SH $CB --budget-ms 200 --baseline $empty --csv $L/ab/bwd-$v-r$r.csv; done
  for v in $ord; do [ $v = x2 ] && continue; T ab-fwd-$v-r$r 60 /tmp/ab/$v softmax_forward --backend tuned --dtype bf16 $SH $CF --budget-ms 200 --baseline $empty --csv $L/ab/fwd-$v-r$r.csv; T ab-ce-$v-r$r 60 /tmp/ab/$v cross_entropy_forward --backend tuned --dtype bf16 $SH --budget-ms 200 --baseline $empty --csv $L/ab/ce-$v-r$r.csv; done
done
# x0: other backward configs at the regressed shapes
X="--tuned-config t512:threads=512,rows=1,cluster=8,hold=0,unroll=4 --tuned-config u8:threads=256,rows=1,cluster=8,hold=0,unroll=8 --tuned-config u2:threads=256,rows=1,cluster=8,hold=0,unroll=2 --tuned-config c16:threads=256,rows=1,cluster=16,hold=0,unroll=4 --tuned-config t128:threads=128,rows=1,cluster=8,hold=0,unroll=4 --tuned-config t1k:threads=1024,rows=1,cluster=8,hold=0,unroll=4 --tuned-config h1:threads=1024,rows=1,cluster=8,hold=1,unroll=4"
for r in 1 2; do T cfg-x0-r$r 120 /tmp/ab/x0 softmax_backward --backend tuned --dtype bf16 --shape 1024x151936 --shape 2048x128256 $X --budget-ms 200 --baseline $empty --csv $L/ab/cfg-x0-r$r.csv; done
cd $O && tar czf r2.tgz logs
cat $L/status.txt | tail -4
python3 - $L/ab <<'PY'
import csv,glob,statistics,sys,collections
d=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.csv'):
    kind,v,_=f.rsplit('/',1)[1].split('-')
    for r in csv.DictReader(open(f)):
        d[(r['benchmark'],r['backend'],r['M']+'x'+r['N'],v)].append(float(r['gbps']))
keys=sorted({k[:3] for k in d})
for k in keys:
    m={v:statistics.median(d[k+(v,)]) for v in ('x0','x2','x3','x4') if d.get(k+(v,))}
    print(k[0][:12],k[1],k[2],' '.join(f'{v}={m[v]:.0f}' for v in m),' '.join(f'{v}/x0={m[v]/m["x0"]:.3f}' for v in m if v!='x0' and 'x0' in m))
PY
