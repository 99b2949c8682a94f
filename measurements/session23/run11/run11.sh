#!/usr/bin/env bash
# Session 23, run 11: the backward heuristic with 6-pack 256-thread CTAs before 512-thread ones
# (rows that 4 packs would split over more than 16 CTAs): --compile-mode heuristic at
# 1024x151936, bf16 and fp16, beside the cache entries' layout (e3) and the heuristic's old
# pick (16 x 512 threads, NV=3), same call, two rounds.
set -u
KB_TAR=s23r11.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
V="--tuned-config e3:threads=256,rows=1,cluster=16,occ=3,acc=1,reload=0,hint=0,db=0 --tuned-config old:threads=512,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=0"
for r in 1 2; do
  timeout 60 $K $B --backend tuned --compile-mode heuristic $V --budget-ms 150 --dtype bf16,fp16 --shape 1024x151936 --csv $W/heur$r.csv > $W/heur$r.log 2>&1; st "heur $r" $?
done
grep -h "GB/s" $W/heur1.log $W/heur2.log | cut -c1-130
python3 - $W/heur1.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r['backend'] == 'tuned': print(r['benchmark'], r['dtype'], r['accuracy'], r['config'])
PY
kb_run_done
