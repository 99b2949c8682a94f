#!/usr/bin/env bash
# Session 21, run 2: branch loop-occ with the staged loop (reload=8). (1) the forced step (now
# with reload=8 and occ=1 layouts), memcheck and racecheck of the staged loop; (2) stage-var.sh;
# (3) the pick (ci/pick-layouts) moves a bucket where a layout's worse round beats the entry's better by 3 %, into
# the cache every later step uses (baselines/tuning/NVIDIA_H200.txt on the machine; the picked
# file comes back as cache-picked.txt); (4) ci/closing-check --steps gate,scratch,readme,memcheck
# with it. Only tarballs under $OUT.
set -u
KB_TAR=s21r2.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-585}))
D=measurements/session21/run2
OUT=$W/forced timeout 150 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
ST="--tuned-config s:threads=128,rows=1,cluster=1,occ=32,db=0,reload=8,hint=0 --tuned-config so:threads=64,rows=1,cluster=1,occ=1,db=0,reload=8,hint=0"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $ST --dtype bf16,fp32 --inputs randn,constant --shape 3x37 --shape 33x4095 --shape 300x20000 --shape 2x50257 --shape 5x4096 --no-timing > $W/memcheck-stage.log 2>&1; st memcheck-stage $?
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $ST --dtype bf16 --shape 300x20000 --shape 33x4095 --no-timing > $W/racecheck-stage.log 2>&1; st racecheck-stage $?
. $D/stage-var.sh
# As run, this was $D/pick2.py (the same rule; since turned into ci/pick-layouts, which
# makes the same twelve moves and the same cache-picked.txt from this run's var CSVs):
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1-1.csv,$W/var1-2.csv $W/var2-1.csv,$W/var2-2.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log
cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
(cd $W && tar czf $OUT/s21r2a.tgz .)
left=$((END - $(date +%s) - 15)); OUT=$W/cc timeout $((left + 10)) ci/closing-check --steps gate,scratch,readme,memcheck --budget-s $left > $W/closing-check.log 2>&1; st closing-check $?
kb_run_done
grep -h "passed,.*cannot run" $W/forced.log | tail -20; grep -E "^ci/gate|^selected|tests passed|SUMMARY|to re-record" $W/closing-check.log | head
