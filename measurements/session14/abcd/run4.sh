#!/usr/bin/env bash
# Session 14, run 4: D = main + the norm forward's aligned store phase without a branch around w's
# loads, w prefetched into L1 when the row's packs are issued (carried), against A = main (staged by
# the call before). Accuracy of D's norm forwards: every registered shape in three dtypes, every input
# kind, forced one-group layouts (short rows, partial groups, threads past M); memcheck. A/D on the
# norm-forward default sweep, two rounds (A D D A). Softmax backward N<=16384 launch variants, two
# rounds (the cache entry moved in session 13 read 4043 and 4109 in runs 1 and 3 of this session).
set -u
T0=$(date +%s); END=$((T0 + 560))
n=$(cat .devkb/name.txt); mkdir -p build-$n
LD_LIBRARY_PATH=.devkb/zbin .devkb/zbin/zstd -dc --long=27 .devkb/kbench.zst > build-$n/kbench && chmod +x build-$n/kbench
O=$OUT; L=$O/logs; mkdir -p $L; cp "$0" $L/run.sh; md5sum build-*/kbench > $L/binaries.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
K=build-D/kbench; F="rmsnorm_forward layernorm_forward"
T acc-all 60 $K $F --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 40 $K $F --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
V=""; i=0; for c in "8,16" "16,16" "32,4" "64,2" "128,1" "256,2" "1024,1" "32,8"; do i=$((i+1)); V="$V --tuned-config o$i:threads=${c%,*},rows=${c#*,},cluster=1,occ=0,db=0,reload=0,hint=$((i%3))"; done
P=""; i=0; for c in "16,16,1" "64,2,1" "256,1,2" "512,1,1"; do i=$((i+1)); IFS=, read t r o <<< "$c"; P="$P --tuned-config p$i:threads=$t,rows=$r,cluster=1,occ=$o,db=$((i%2)),reload=0,hint=$((i%3))"; done
T acc-forced 80 $K $F --backend tuned --dtype bf16,fp16,fp32 --shape 1x8 --shape 5x64 --shape 7x264 --shape 1000x384 --shape 33x520 --shape 300x1024 --shape 9x2056 --shape 3x4096 --shape 3x8200 --inputs randn,constant,wide $V --no-timing --csv $L/acc-forced.csv
T acc-persist 50 $K $F --backend tuned --dtype bf16,fp32 --shape 1000x384 --shape 33x520 --shape 300x1024 --shape 9x2056 --shape 3x8200 --shape 2000x4096 --inputs randn,constant $P --no-timing --csv $L/acc-persist.csv
MC="env KBENCH_CUPTI_LIB=none compute-sanitizer --error-exitcode 9"
T memcheck 60 $MC --tool memcheck $K $F --backend tuned --dtype bf16,fp32 --shape 5x64 --shape 33x520 --shape 3x2056 --shape 7x8200 $V --no-timing
T memcheck-p 40 $MC --tool memcheck $K $F --backend tuned --dtype bf16 --shape 33x520 --shape 300x1024 --shape 9x2056 $P --no-timing
for x in A D D A; do r=1; [ -f $L/ab-${x}1.csv ] && r=2; T ab-$x$r 40 build-$x/kbench $F --backend tuned --budget-ms 200 --csv $L/ab-$x$r.csv; done
SV=""; for c in "256,2,0,4,0" "512,1,0,1,0" "512,1,0,2,0" "512,1,0,4,0" "1024,1,0,1,0" "1024,1,0,2,0" "256,1,0,4,0" "512,1,0,2,1"; do IFS=, read t r h u hi <<< "$c"; SV="$SV --tuned-config t${t}r${r}h${h}u${u}i${hi}:threads=$t,rows=$r,cluster=1,hold=$h,unroll=$u,hint=$hi,xchg=0"; done
for r in 1 2; do T smb$r 60 $K softmax_backward --backend tuned --shape 32768x16384 --shape 16384x16384 --shape 65536x16384 $SV --budget-ms 200 --csv $L/smb$r.csv; done
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,math
L=sys.argv[1]
def rd(f):
    try: return list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); return []
for f in ('acc-all','acc-kinds','acc-forced','acc-persist'):
    rows=rd(f); print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy']!='PASS' and 'cannot' not in r.get('message',''): print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['config'][:50],r['accuracy'],r.get('message','')[:100])
for f in ('memcheck','memcheck-p'):
    try: print(f, [l.strip() for l in open(f'{L}/{f}.log') if 'ERROR SUMMARY' in l or ' passed,' in l])
    except Exception as e: print(f,'missing',e)
G=collections.defaultdict(dict)
for t in ('A1','D1','D2','A2'):
    for r in rd('ab-'+t):
        if r['gbps']: G[(r['benchmark'],r['dtype'],r['M'],r['N'])][t]=float(r['gbps'])
rat=collections.defaultdict(list)
for k,v in sorted(G.items()):
    if len(v)<4: continue
    a=(v['A1']+v['A2'])/2; d=(v['D1']+v['D2'])/2; rat[k[0]].append(d/a)
    print(' %-18s %-4s %8sx%-7s A %6.0f %6.0f D %6.0f %6.0f D/A %.3f'%(*k,v['A1'],v['A2'],v['D1'],v['D2'],d/a))
for b,x in rat.items(): print('geomean',b,'%.4f'%math.exp(sum(map(math.log,x))/len(x)),'min %.3f max %.3f'%(min(x),max(x)))
S=collections.defaultdict(list)
for t in ('smb1','smb2'):
    for r in rd(t):
        if r['gbps'] and r['accuracy']=='PASS': S[(r['M'],r['N'],r['config'][:75])].append(float(r['gbps']))
for k,v in sorted(S.items()): print('smb',*k,' '.join('%.0f'%x for x in v))
PY
cd $O && tar czf r4.tgz logs && cp logs/summary.txt logs/status.txt . && rm -rf logs
cat status.txt; cat summary.txt
