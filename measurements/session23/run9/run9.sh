#!/usr/bin/env bash
# Session 23, run 9: fp16 1024x151936 (no cache entry: the heuristic ran 1658/1778 GB/s in run 8,
# and run 8's pick added its bucket at db=2 NV=6, 256 threads, cluster 16, dw in registers): the
# bf16 entries' layouts (db=0, dw in shared memory) beside that pick, two rounds, and
# ci/pick-layouts against the cache run 8 picked (cache-picked8.txt, as the run's cache).
set -u
KB_TAR=s23r9.tgz; . ci/lib/device-run.sh "$0"
cp measurements/session23/run9/cache-picked8.txt baselines/tuning/NVIDIA_H200.txt
B="layernorm_backward rmsnorm_backward"
V="--tuned-config e3:threads=256,rows=1,cluster=16,occ=3,acc=1,reload=0,hint=0,db=0 --tuned-config t512c8:threads=512,rows=1,cluster=8,occ=32,acc=1,reload=0,hint=0,db=0 --tuned-config a1:threads=256,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=2 --tuned-config t512:threads=512,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=0"
for r in 1 2; do
  timeout 60 $K $B --backend tuned $V --budget-ms 150 --dtype fp16 --shape 1024x151936 --csv $W/var$r.csv > $W/var$r.log 2>&1; st "var $r" $?
done
grep -h "GB/s" $W/var1.log $W/var2.log | cut -c1-120
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1.csv $W/var2.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log
kb_run_done
