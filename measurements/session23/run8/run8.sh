#!/usr/bin/env bash
# Session 23, run 8: db=2 with NV=6 (the norm backward's staged double buffer held 1, 2, 4, 8
# packs; 1024x151936 at 4096 threads a row needs 6, so db=2 there rounded up to 8 and lost).
# (1) forcedbwd (d2t256c16a1 at 3x151936 runs NV=6), memcheck of NV=6 db=2 layouts; (2) db=2
# NV=6 layouts beside the entries at 1024x151936, bf16 and fp16, two rounds, and
# ci/pick-layouts; (3) the gate of both norm backwards with the picked cache.
set -u
KB_TAR=s23r8.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-330}))
OUT=$W/dc timeout 100 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "passed,.*cannot run" $W/forcedbwd.log | grep -E "d2t256c16a1|d3t"
grep -h "failed" $W/forcedbwd.log | grep -v " 0 failed" | grep forced | head
B="layernorm_backward rmsnorm_backward"
V="--tuned-config a1:threads=256,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=2 --tuned-config a0:threads=256,rows=1,cluster=16,occ=32,acc=0,reload=0,hint=0,db=2"
timeout 80 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned $V --dtype bf16,fp32 --inputs randn,constant --shape 3x151936 --shape 40x151936 --no-timing > $W/memcheck-nv6.log 2>&1; st memcheck-nv6 $?
grep -h "ERROR SUMMARY\|passed," $W/memcheck-nv6.log
for r in 1 2; do
  timeout 60 $K $B --backend tuned $V --budget-ms 150 --dtype bf16,fp16 --shape 1024x151936 --csv $W/var$r.csv > $W/var$r.log 2>&1; st "var $r" $?
done
grep -h "GB/s" $W/var1.log $W/var2.log | cut -c1-120
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1.csv $W/var2.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log
cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
(cd $W && tar czf $OUT/s23r8a.tgz .)
left=$((END - $(date +%s) - 10))
timeout $left ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
grep -h "FASTER\|SLOWER" $W/gate.log | cut -c1-200 | head; tail -3 $W/gate.log
kb_run_done
