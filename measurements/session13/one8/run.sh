#!/usr/bin/env bash
# Session 13, run 5: fwd_reg_one extended to 6 and 8 packs per thread (56 / 64 registers; the general
# kernel's NV=8 takes 80): accuracy of every registered shape and input kind in three dtypes (the cache
# now holds occ=0 entries at 4096 and 8192), forced one-group layouts at NV 6 and 8 (clusters too),
# memcheck, racecheck; then launch variants against the cache entry on the norm-forward shapes where
# tuned trails torch.compile.
set -u
T0=$(date +%s); END=$((T0 + 330))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench; F="rmsnorm_forward layernorm_forward"
T acc-all 60 $K $F --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 40 $K $F --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
a="a:threads=64,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2"; b="b:threads=32,rows=4,cluster=1,occ=0,db=0,reload=0,hint=0"
c="c:threads=1024,rows=1,cluster=1,occ=0,db=0,reload=0,hint=1"; d="d:threads=1024,rows=1,cluster=2,occ=0,db=0,reload=0,hint=2"
e="e:threads=512,rows=1,cluster=4,occ=0,db=0,reload=0,hint=0"; f="f:threads=8,rows=16,cluster=1,occ=0,db=0,reload=0,hint=2"
T acc-forced 70 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 7x384 --shape 9x512 --shape 7x1536 --shape 300x2048 --shape 7x3072 --shape 5x4096 --shape 3x49152 --shape 3x65536 --shape 2x131072 --shape 2x262144 --inputs randn,constant,wide --tuned-config $a --tuned-config $b --tuned-config $c --tuned-config $d --tuned-config $e --tuned-config $f --no-timing --csv $L/acc-forced.csv
MC="env KBENCH_CUPTI_LIB=none compute-sanitizer --error-exitcode 9"
T memcheck 50 $MC --tool memcheck $K $F --backend tuned --dtype bf16,fp32 --shape 9x512 --shape 7x3072 --shape 5x4096 --shape 2x131072 --tuned-config $a --tuned-config $c --tuned-config $d --tuned-config $f --no-timing
T racecheck 40 $MC --tool racecheck $K $F --backend tuned --dtype bf16 --shape 5x4096 --shape 2x131072 --tuned-config $a --tuned-config $d --no-timing
v() { echo "--tuned-config $1:threads=$2,rows=$3,cluster=$4,occ=0,db=0,reload=0,hint=$5"; }
T v16k 40 $K $F --backend tuned --shape 32768x16384 $(v o256 256 1 1 2) $(v o256h0 256 1 1 0) $(v o256r2 256 2 1 2) $(v o128c2 128 1 2 2) $(v o512 512 1 1 2) --budget-ms 150 --csv $L/v16k.csv
T v32k 40 $K $F --backend tuned --shape 32768x32768 $(v o512 512 1 1 2) $(v o512h0 512 1 1 0) $(v o256c2 256 1 2 2) $(v o512c2 512 1 2 2) --budget-ms 150 --csv $L/v32k.csv
T v2k 40 $K $F --backend tuned --shape 32768x2048 $(v o32 32 1 1 2) $(v o32r4 32 4 1 2) $(v o64r2 64 2 1 2) $(v o64 64 1 1 0) --budget-ms 150 --csv $L/v2k.csv
T vtall 60 $K $F --backend tuned --shape 576000x384 --shape 576000x512 --shape 1152000x384 --shape 1152000x512 $(v t8r16 8 16 1 2) $(v t8r32 8 32 1 2) $(v t8r64 8 64 1 2) $(v t8r8 8 8 1 2) --budget-ms 150 --csv $L/vtall.csv
T vlong 60 $K $F --backend tuned --shape 32768x65536 --shape 16384x131072 --shape 8192x262144 $(v c2t1024 1024 1 2 2) $(v c2t512 512 1 2 2) $(v c4t512 512 1 4 2) $(v c8t512 512 1 8 2) $(v c4t1024 1024 1 4 2) $(v c8t256 256 1 8 2) --budget-ms 150 --csv $L/vlong.csv
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,glob
L=sys.argv[1]
def rd(f):
    try: return list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); return []
for f in ('acc-all','acc-kinds','acc-forced'):
    rows=rd(f); print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS' and 'cannot' not in r.get('message',''): print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['backend'],r['accuracy'],r.get('message','')[:120])
best=collections.defaultdict(list)
for f in ('v16k','v32k','v2k','vtall','vlong'):
    for r in rd(f):
        if r['accuracy']!='PASS' or not r['gbps']: continue
        best[(r['benchmark'],r['M'],r['N'])].append((round(float(r['gbps'])),r['backend'],r['config'][:66]))
for k,v in sorted(best.items()):
    v.sort(reverse=True); print(*k)
    for x in v: print('   ',x)
PY
cd $O && tar czf r5.tgz logs && cp logs/summary.txt logs/status.txt . && rm -rf logs
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" <(tar xzf r5.tgz -O logs/memcheck.log logs/racecheck.log)
cat status.txt summary.txt
