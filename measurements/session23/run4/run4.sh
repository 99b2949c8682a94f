#!/usr/bin/env bash
# Session 23, run 4: class-crossing slots in the norm backward (shifted rows at a cluster with
# db=2: every cluster that fits is a slot). (1) forcedbwd (its cluster db=2 layouts now run
# class-crossing on odd rows), memcheck and racecheck of such layouts on small odd shapes;
# (2) A/B of the cache entries, this build against run 2's (kbench-old: whole classes), same
# call, alternating, two rounds; (3) class-crossing layouts beside the entries, two rounds, and
# ci/pick-layouts; (4) the gate of both norm backwards with the picked cache.
set -u
KB_TAR=s23r4.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-590}))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -d -q --long=27 --patch-from=build/kbench .devbuild/old.zst -o build/kbench-old; chmod +x build/kbench-old
OUT=$W/dc timeout 120 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "passed,.*cannot run" $W/forcedbwd.log | tail -9
XC="--tuned-config x8:threads=256,rows=1,cluster=8,occ=32,acc=0,reload=0,hint=0,db=2 --tuned-config x4a1:threads=32,rows=1,cluster=4,occ=32,acc=1,reload=0,hint=0,db=2 --tuned-config x2:threads=32,rows=1,cluster=2,occ=32,acc=0,reload=0,hint=0,db=2"
XS="--shape 300x50257 --shape 33x4095 --shape 17x4094 --shape 13x4092 --shape 1000x4095 --shape 5x50257 --shape 1x50257 --shape 40x333"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_backward rmsnorm_backward --backend tuned $XC --dtype bf16,fp16 --inputs randn,constant $XS --no-timing > $W/memcheck-xc.log 2>&1; st memcheck-xc $?
timeout 80 compute-sanitizer --tool racecheck --error-exitcode 9 $K layernorm_backward rmsnorm_backward --backend tuned $XC --dtype bf16 --shape 300x50257 --shape 33x4095 --shape 40x333 --no-timing > $W/racecheck-xc.log 2>&1; st racecheck-xc $?
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed," $W/memcheck-xc.log $W/racecheck-xc.log
AB="--shape 4096x50257 --shape 512x50257"
for r in 1 2; do
  for b in new old; do
    KB=$K; [ $b = old ] && KB=build/kbench-old
    timeout 60 $KB layernorm_backward rmsnorm_backward --backend tuned --budget-ms 150 --dtype bf16,fp16 $AB --csv $W/ab-$b$r.csv > $W/ab-$b$r.log 2>&1; st "ab $b$r" $?
  done
done
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=$3,occ=32,acc=$4,reload=0,hint=0,db=2"; }
V="$(cfg c16t128 128 16 0) $(cfg c4t512 512 4 0) $(cfg c8t128 128 8 0) $(cfg c8t256a1 256 8 1) $(cfg c16t256 256 16 0) $(cfg c4t256 256 4 0) $(cfg c8t512 512 8 0)"
for r in 1 2; do
  timeout 90 $K layernorm_backward rmsnorm_backward --backend tuned $V --budget-ms 120 --dtype bf16,fp16 $AB --csv $W/var$r.csv > $W/var$r.log 2>&1; st "var $r" $?
done
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1.csv $W/var2.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log | tail -12
cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
(cd $W && tar czf $OUT/s23r4a.tgz .)
left=$((END - $(date +%s) - 10))
timeout $left ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
grep -h "FASTER\|SLOWER" $W/gate.log | cut -c1-250 | head -20; tail -3 $W/gate.log
kb_run_done
