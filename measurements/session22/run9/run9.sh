#!/usr/bin/env bash
# Session 22, run 9: virtual slots for shifted rows at a cluster (lcm(S, 8) of them over every
# cluster that fits, instead of the grid rounded down to whole shift classes: 24 of 30 at
# 4096x50257). forcedbwd (with 300x50257, which takes virtual slots at cluster 8); memcheck and
# racecheck of the entry's layout at 40x50257 (20 clusters, 40 virtual slots); the previous
# build (kbench-old, zstd patch) against this one at 4096x50257 and 512x50257, two rounds; the
# gate of both norm backwards.
set -u
KB_TAR=s22r9.tgz; . ci/lib/device-run.sh "$0"
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -q -d --long=27 --patch-from=build/kbench .devbuild/old.zst -o build/kbench-old; st unpatch $?
B="layernorm_backward rmsnorm_backward"
OUT=$W/dc timeout 150 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "cannot run," $W/forcedbwd.log
c=entry:threads=256,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=0,db=2
nc="env KBENCH_CUPTI_LIB=none"
timeout 60 $nc compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --tuned-config $c --dtype bf16,fp16 --shape 40x50257 --no-timing > $W/memcheck.log 2>&1; st memcheck $?
timeout 60 $nc compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned --tuned-config $c --dtype bf16 --shape 40x50257 --no-timing > $W/racecheck.log 2>&1; st racecheck $?
for r in 1 2; do
  timeout 60 build/kbench-old $B --backend tuned --dtype bf16,fp16 --shape 4096x50257 --shape 512x50257 --budget-ms 300 --csv $W/old$r.csv > $W/old$r.log 2>&1; st "old $r" $?
  timeout 60 $K $B --backend tuned --dtype bf16,fp16 --shape 4096x50257 --shape 512x50257 --budget-ms 300 --csv $W/new$r.csv > $W/new$r.log 2>&1; st "new $r" $?
done
timeout 150 ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
tail -2 $W/gate.log
kb_run_done
