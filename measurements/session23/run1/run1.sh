#!/usr/bin/env bash
# Session 23, run 1: the norm forward's staged loop over a cluster (fwd_stage_cl). (1) the forced
# step (every forced loop layout, five of them cluster-staged), memcheck and racecheck of
# cluster-staged layouts on small and odd shapes; (2) var.sh, two rounds; (3) ci/pick-layouts
# (a layout's worse round >= 3 % over the entry's better) into the cache the gate then uses
# (comes back as cache-picked.txt); (4) the gate of both norm forwards with it.
set -u
KB_TAR=s23r1.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-590}))
D=measurements/session23/run1
OUT=$W/forced timeout 120 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
grep -h "passed,.*cannot run\|FAIL" $W/forced.log | tail -30
SC="--tuned-config c2:threads=32,rows=1,cluster=2,occ=32,db=0,reload=8,hint=0 --tuned-config c4o1:threads=64,rows=1,cluster=4,occ=1,db=0,reload=8,hint=0 --tuned-config c16:threads=32,rows=1,cluster=16,occ=32,db=0,reload=8,hint=0"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $SC --dtype bf16,fp32 --inputs randn,constant --shape 33x4095 --shape 300x20000 --shape 2x50257 --shape 5x4096 --shape 1x151936 --no-timing > $W/memcheck-stage-cl.log 2>&1; st memcheck-stage-cl $?
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $SC --dtype bf16 --shape 300x20000 --shape 33x4095 --no-timing > $W/racecheck-stage-cl.log 2>&1; st racecheck-stage-cl $?
tail -2 $W/memcheck-stage-cl.log $W/racecheck-stage-cl.log
. $D/var.sh
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1.csv $W/var2.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log
cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
(cd $W && tar czf $OUT/s23r1a.tgz .)
left=$((END - $(date +%s) - 10))
timeout $left ci/gate --no-build --labels "layernorm_forward|rmsnorm_forward" --out $W/gate > $W/gate.log 2>&1; st gate $?
tail -4 $W/gate.log
kb_run_done
