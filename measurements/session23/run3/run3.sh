#!/usr/bin/env bash
# Session 23, run 3: the staged loops (fwd_stage, fwd_stage_cl) roll a persistent CTA's next row
# in during the last pass (each slot copied over right after its last read). (1) the forced step
# (its occ=1 staged layouts run several rows a CTA), memcheck and racecheck of persistent staged
# layouts (one CTA and clusters; odd rows whose next row has one slot more or fewer); (2) A/B of
# the cache entries, this build against run 2's (kbench-old), alternating, two rounds each, on the
# shapes whose entries are staged; (3) persistent staged layouts beside the entries, two rounds,
# and ci/pick-layouts; (4) the gate of both norm forwards with the picked cache.
set -u
KB_TAR=s23r3.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-590}))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -d -q --long=27 --patch-from=build/kbench .devbuild/old.zst -o build/kbench-old; chmod +x build/kbench-old
OUT=$W/forced timeout 120 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
grep -h "passed,.*cannot run" $W/forced.log | grep -E "u8|o1" | tail -12
SC="--tuned-config s128o1:threads=128,rows=1,cluster=1,occ=1,db=0,reload=8,hint=0 --tuned-config s32o2:threads=32,rows=1,cluster=1,occ=2,db=0,reload=8,hint=0 --tuned-config c4o1:threads=64,rows=1,cluster=4,occ=1,db=0,reload=8,hint=0 --tuned-config c2o1:threads=32,rows=1,cluster=2,occ=1,db=0,reload=8,hint=0"
SS="--shape 300x20000 --shape 400x4095 --shape 270x37 --shape 1000x333 --shape 40x50257"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $SC --dtype bf16,fp32 --inputs randn,constant $SS --no-timing > $W/memcheck-roll.log 2>&1; st memcheck-roll $?
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $SC --dtype bf16,fp16 $SS --no-timing > $W/racecheck-roll.log 2>&1; st racecheck-roll $?
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed," $W/memcheck-roll.log $W/racecheck-roll.log
AB="--shape 4096x50257 --shape 512x50257 --shape 32768x4095"
for r in 1 2; do
  for b in new old; do
    KB=$K; [ $b = old ] && KB=build/kbench-old
    timeout 60 $KB layernorm_forward rmsnorm_forward --backend tuned --budget-ms 150 --dtype bf16,fp16,fp32 $AB --csv $W/ab-$b$r.csv > $W/ab-$b$r.log 2>&1; st "ab $b$r" $?
    timeout 30 $KB layernorm_forward rmsnorm_forward --backend tuned --budget-ms 150 --dtype bf16 --shape 1024x151936 --csv $W/ab-long-$b$r.csv > $W/ab-long-$b$r.log 2>&1; st "ab-long $b$r" $?
  done
done
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=$3,occ=$4,db=0,reload=8,hint=0"; }
VA="$(cfg s512o1 512 1 1) $(cfg s512o2 512 1 2) $(cfg s1024o1 1024 1 1) $(cfg s256o2 256 1 2) $(cfg s256o4 256 1 4) $(cfg s128o4 128 1 4) $(cfg s128o8 128 1 8)"
VB="$(cfg c8t256o1 256 8 1) $(cfg c8t512o1 512 8 1) $(cfg c4t512o1 512 4 1) $(cfg c4t1024o1 1024 4 1) $(cfg c16t256o1 256 16 1) $(cfg c16t128o1 128 16 1) $(cfg c2t1024o1 1024 2 1) $(cfg c8t128o1 128 8 1)"
SB="--shape 1024x151936 --shape 2048x128256 --shape 16384x131072 --shape 8192x262144 --shape 32768x65536"
for r in 1 2; do
  timeout 90 $K layernorm_forward rmsnorm_forward --backend tuned $VA --budget-ms 120 --dtype bf16,fp16,fp32 $AB --csv $W/var$r-a.csv > $W/var$r-a.log 2>&1; st "var $r-a" $?
  timeout 90 $K layernorm_forward rmsnorm_forward --backend tuned $VB --budget-ms 120 --dtype bf16 $SB --csv $W/var$r-b.csv > $W/var$r-b.log 2>&1; st "var $r-b" $?
done
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt $W/var1-a.csv,$W/var1-b.csv $W/var2-a.csv,$W/var2-b.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log | tail -40
cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
(cd $W && tar czf $OUT/s23r3a.tgz .)
left=$((END - $(date +%s) - 10))
timeout $left ci/gate --no-build --labels "layernorm_forward|rmsnorm_forward" --out $W/gate > $W/gate.log 2>&1; st gate $?
grep -h "FASTER\|SLOWER" $W/gate.log | head -20; tail -3 $W/gate.log
kb_run_done
