#!/usr/bin/env bash
# Session 13, run 2b: the one-group forward kernel (fwd_reg_one: occ = 0, AL, NV <= 4, 32-48 registers)
# for the tuned RMSNorm / LayerNorm forward. Accuracy of every registered shape and input kind in three
# dtypes and of forced occ=0 layouts, memcheck and racecheck; A/B against main's kbench (build-old/, staged
# by run 2a on this machine) on the bf16 default sweep, two alternating rounds; occ=0 launch variants on
# the tall and short-row shapes.
set -u
T0=$(date +%s); END=$((T0 + 575))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp "$0" $L/run.sh
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build/kbench; KO=build-old/kbench; F="rmsnorm_forward layernorm_forward"
ls -la $KO > $L/old.txt 2>&1 || echo "no build-old/kbench" >> $L/status.txt
o1="o1:threads=16,rows=16,cluster=1,occ=0,db=0,reload=0,hint=2"; o2="o2:threads=32,rows=8,cluster=1,occ=0,db=0,reload=0,hint=0"
o3="o3:threads=64,rows=2,cluster=1,occ=0,db=0,reload=0,hint=1"; o4="o4:threads=8,rows=32,cluster=1,occ=0,db=0,reload=0,hint=2"
o5="o5:threads=1024,rows=1,cluster=2,occ=0,db=0,reload=0,hint=2"; o6="o6:threads=256,rows=1,cluster=4,occ=0,db=0,reload=0,hint=0"
o7="o7:threads=128,rows=1,cluster=1,occ=0,db=0,reload=0,hint=2"
T acc-all 60 $K $F --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 40 $K $F --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
T acc-forced 70 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 1x8 --shape 5x64 --shape 7x256 --shape 1000x384 --shape 33x512 --shape 300x1024 --shape 9x2048 --shape 3x4096 --shape 3x65536 --shape 2x131072 --inputs randn,constant,wide --tuned-config $o1 --tuned-config $o2 --tuned-config $o3 --tuned-config $o4 --tuned-config $o5 --tuned-config $o6 --tuned-config $o7 --no-timing --csv $L/acc-forced.csv
MC="env KBENCH_CUPTI_LIB=none compute-sanitizer --error-exitcode 9"
T memcheck 50 $MC --tool memcheck $K $F --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 33x512 --shape 3x2048 --shape 3x65536 --tuned-config $o1 --tuned-config $o3 --tuned-config $o5 --tuned-config $o7 --no-timing
T racecheck 40 $MC --tool racecheck $K $F --backend tuned --dtype bf16 --shape 33x512 --shape 5x2048 --shape 2x65536 --tuned-config $o1 --tuned-config $o5 --no-timing
for r in 1 2; do
  T ab-old$r 50 $KO $F --backend tuned --budget-ms 250 --csv $L/ab-old$r.csv
  T ab-new$r 50 $K $F --backend tuned --budget-ms 250 --csv $L/ab-new$r.csv
done
V=""; for t in 16 32 64; do for b in 128 256 512; do for h in 0 2; do V="$V --tuned-config t${t}b${b}h${h}:threads=$t,rows=$((b/t)),cluster=1,occ=0,db=0,reload=0,hint=$h"; done; done; done
T var-tall 100 $K $F --backend tuned --shape 576000x384 --shape 576000x512 --shape 1152000x384 --shape 1152000x512 $V --budget-ms 100 --csv $L/var-tall.csv
V=""; for t in 32 64 128 256; do for b in 128 256 512 1024; do [ $b -lt $t ] && continue; for h in 0 2; do V="$V --tuned-config t${t}b${b}h${h}:threads=$t,rows=$((b/t)),cluster=1,occ=0,db=0,reload=0,hint=$h"; done; done; done
T var-short 80 $K rmsnorm_forward layernorm_forward --backend tuned --shape 32768x1024 --shape 32768x2048 $V --budget-ms 100 --csv $L/var-short.csv
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,math
L=sys.argv[1]
def rd(f):
    try: return list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); return []
for f in ('acc-all','acc-kinds','acc-forced'):
    rows=rd(f); print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS' and 'cannot' not in r.get('message',''): print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['config'][:50],r['accuracy'],r.get('message','')[:90])
G=collections.defaultdict(dict)
for tag in ('old1','new1','old2','new2'):
    for r in rd('ab-'+tag): G[(r['benchmark'],r['backend'],r['M'],r['N'])][tag]=float(r['gbps'] or 'nan')
print('A/B (GB/s summed over the two rounds, new/old):')
rat=collections.defaultdict(list)
for k,v in sorted(G.items()):
    if len(v)<4: continue
    o=v['old1']+v['old2']; n=v['new1']+v['new2']; rat[k[1]].append(n/o)
    print(' ',*k,'old %.0f %.0f new %.0f %.0f ratio %.3f'%(v['old1'],v['old2'],v['new1'],v['new2'],n/o))
for b,x in rat.items(): print('geomean',b,'%.4f'%math.exp(sum(map(math.log,x))/len(x)),'min %.3f max %.3f'%(min(x),max(x)))
for f in ('var-tall','var-short'):
    best=collections.defaultdict(list)
    for r in rd(f):
        if r['accuracy']!='PASS' or not r['gbps']: continue
        best[(r['benchmark'],r['M'],r['N'])].append((float(r['gbps']),r['config'][:60]))
    for k,v in sorted(best.items()):
        v.sort(reverse=True); print(f,*k,v[:4])
PY
cd $O && tar czf r2.tgz logs && rm -rf logs
tar xzf r2.tgz -O logs/status.txt logs/summary.txt
