#!/usr/bin/env bash
# Session 23, run 7: the backward heuristic (a GPU or bucket without a cache entry) with db=3 for
# shifted cluster rows from kBwdXcRows = 2048 rows: --compile-mode heuristic beside the same
# layout with db=2 (whole classes, the heuristic before), same call, two rounds, bf16 and fp16,
# at 4096x50257 (db=3 applies) and 512x50257 (it does not).
set -u
KB_TAR=s23r7.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
V="--tuned-config h2:threads=256,rows=1,cluster=8,occ=32,acc=1,reload=0,hint=0,db=2 --tuned-config h3:threads=256,rows=1,cluster=8,occ=32,acc=1,reload=0,hint=0,db=3"
for r in 1 2; do
  timeout 60 $K $B --backend tuned --compile-mode heuristic $V --budget-ms 150 --dtype bf16,fp16 --shape 4096x50257 --shape 512x50257 --csv $W/heur$r.csv > $W/heur$r.log 2>&1; st "heur $r" $?
done
grep -h "GB/s" $W/heur1.log $W/heur2.log | cut -c1-150
python3 - $W/heur1.csv $W/heur2.csv <<'PY'
import csv, sys
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        if r['backend'] == 'tuned': print(f.split('/')[-1], r['benchmark'], r['dtype'], r['M'], r['N'], r['config'])
PY
kb_run_done
