#!/usr/bin/env bash
# Session 14, run 3 (C carried; A, B staged by runs 1-2): three kbench builds side by side on one machine, tuned backend, kbench's default
# sweep of every op, two rounds (A B C, then C B A), same cache (as run, its text adapted from run 4's):
#   A  main at the session's start (1cb6000)
#   B  A + weak plain stores where kernels used st.global.wb (ptxas: STG.E.128.STRONG.SM)
#   C  B + weak plain 16-byte loads where kernels used ld.global.nc (kb_ld128, KB_LD_KEEP)
# C is also checked: accuracy of every tuned case on every registered shape in three dtypes and
# every input kind; memcheck on small shapes.
set -u
T0=$(date +%s); END=$((T0 + 420))
n=$(cat .devkb/name.txt); mkdir -p build-$n
LD_LIBRARY_PATH=.devkb/zbin .devkb/zbin/zstd -dc --long=27 .devkb/kbench.zst > build-$n/kbench && chmod +x build-$n/kbench
O=$OUT; L=$O/logs; mkdir -p $L; cp "$0" $L/run.sh; md5sum build-*/kbench > $L/binaries.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > $L/head.txt
T() { local n=$1 lim=$2; shift 2; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s); timeout $lim "$@" > $L/$n.log 2>&1; echo "== $n exit $? $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
ALL="rmsnorm_forward layernorm_forward rmsnorm_backward layernorm_backward softmax_forward softmax_backward cross_entropy_forward cross_entropy_backward geglu_forward geglu_backward swiglu_forward swiglu_backward"
K=build-C/kbench; F="rmsnorm_forward layernorm_forward"
T acc-all 90 $K $ALL --backend tuned --dtype bf16,fp16,fp32 --sweep all --no-timing --csv $L/acc-all.csv
T acc-kinds 60 $K $ALL --backend tuned --dtype bf16,fp16,fp32 --inputs shifted,wide,masked,constant,small --no-timing --csv $L/acc-kinds.csv
V=""; i=0; for c in "8,16" "16,16" "32,4" "64,2" "128,1" "256,2" "1024,1" "32,8"; do i=$((i+1)); V="$V --tuned-config o$i:threads=${c%,*},rows=${c#*,},cluster=1,occ=0,db=0,reload=0,hint=$((i%3))"; done
MC="env KBENCH_CUPTI_LIB=none compute-sanitizer --error-exitcode 9"
T memcheck-all 60 $MC --tool memcheck $K $ALL --backend tuned --dtype bf16 --shape 3x1000 --shape 5x4096 --no-timing
for r in 1 2; do
  order="A B C"; [ $r = 2 ] && order="C B A"
  for x in $order; do [ -x build-$x/kbench ] || continue; T ab-$x$r 70 build-$x/kbench $ALL --backend tuned --budget-ms 150 --csv $L/ab-$x$r.csv; done
done
python3 - $L > $L/summary.txt 2>&1 <<'PY'
import csv,sys,collections,math,glob
L=sys.argv[1]
def rd(f):
    try: return list(csv.DictReader(open(f'{L}/{f}.csv')))
    except Exception as e: print(f,'missing',e); return []
for f in ('acc-all','acc-kinds','acc-forced'):
    rows=rd(f); print(f,len(rows),dict(collections.Counter(r['accuracy'] for r in rows)))
    for r in rows:
        if r['accuracy'] not in ('PASS',) and 'cannot' not in r.get('message','') and 'refused' not in r.get('message',''): print('  ',r['benchmark'],r['dtype'],r['M'],r['N'],r['config'][:50],r['accuracy'],r.get('message','')[:100])
for f in ('memcheck','memcheck-all'):
    try: print(f, [l.strip() for l in open(f'{L}/{f}.log') if 'ERROR SUMMARY' in l or ' passed,' in l])
    except Exception as e: print(f, 'missing', e)
G=collections.defaultdict(dict)
for x in 'ABC':
    for r in (1,2):
        for row in rd(f'ab-{x}{r}'):
            if row['gbps']: G[(row['benchmark'],row['dtype'],row['M'],row['N'])][f'{x}{r}']=float(row['gbps'])
P={}
for f in glob.glob(f'{L}/peers-*.csv'):
    for r in csv.DictReader(open(f)):
        if r.get('gbps'): P[(r['benchmark'],r['M'],r['N'])]=float(r['gbps'])
rat=collections.defaultdict(lambda: collections.defaultdict(list))
print('per case: GB/s summed over the two rounds /2; B,C,D over A; torch.compile and D/compile where measured')
for k,v in sorted(G.items()):
    if len(v)<6: continue
    s={x:(v[x+'1']+v[x+'2'])/2 for x in 'ABC'}
    for x in 'BC': rat[k[0]][x].append(s[x]/s['A'])
    p=P.get((k[0],k[2],k[3]))
    print(' %-24s %-4s %8sx%-7s A %6.0f B %.3f C %.3f  spread A %.3f C %.3f'%(k[0],k[1],k[2],k[3],s['A'],s['B']/s['A'],s['C']/s['A'],
          abs(v['A1']-v['A2'])/s['A'],abs(v['C1']-v['C2'])/s['C']))
print('geomean over A per benchmark (min, max):')
for b,d in sorted(rat.items()):
    print(' %-24s'%b, ' '.join('%s %.4f (%.3f %.3f)'%(x,math.exp(sum(map(math.log,d[x]))/len(d[x])),min(d[x]),max(d[x])) for x in 'BC'))
PY
cd $O && tar czf r3.tgz logs && cp logs/summary.txt logs/status.txt . && rm -rf logs
cat status.txt; head -c 9000 summary.txt
