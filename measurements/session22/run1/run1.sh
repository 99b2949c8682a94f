#!/usr/bin/env bash
# Session 22, run 1: the norm backward's double buffer (db=1 registers, db=2 shared memory by
# cp.async) opened to shifted slots (16-bit types, N % 8 != 0).
#  1. ci/device-check --steps forcedbwd: nine forced db layouts on odd/aligned/tiny rows,
#     every dtype and input kind (accuracy; "cannot run" is not a failure);
#  2. memcheck and racecheck of shifted db=1/db=2 layouts at small shapes;
#  3. eight db layouts beside the cache entries at 4096x50257 and 32768x4095 (bf16, fp16),
#     two rounds (var<r>-<k>.csv);
#  4. ci/tune over the unaligned norm-backward buckets (the search now reaches db on them);
#  5. ci/gate on both norm backwards with the tuned cache.
set -u
KB_TAR=s22r1.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
OUT=$W/dc timeout 240 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "passed," $W/forcedbwd.log | head -20
nc="env KBENCH_CUPTI_LIB=none"
for c in d2t128c4a0:threads=128,rows=1,cluster=4,occ=32,acc=0,reload=0,hint=0,db=2 \
         d1t32r4a1:threads=32,rows=4,cluster=1,occ=1,acc=1,reload=0,hint=0,db=1; do
  timeout 100 $nc compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned \
    --tuned-config $c --dtype bf16 --shape 33x4095 --shape 9x37 --shape 3x50257 --no-timing \
    > $W/memcheck-${c%%:*}.log 2>&1; st "memcheck ${c%%:*}" $?
  timeout 100 $nc compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned \
    --tuned-config $c --dtype bf16 --shape 33x4095 --shape 9x37 --no-timing \
    > $W/racecheck-${c%%:*}.log 2>&1; st "racecheck ${c%%:*}" $?
done
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=$3,occ=$4,acc=$5,reload=0,hint=0,db=$6"; }
V1="$(cfg t128c8a1d2 128 8 16 1 2) $(cfg t256c8a1d2 256 8 16 1 2) $(cfg t256c8a0d2 256 8 16 0 2) $(cfg t512c4a1d2 512 4 16 1 2) $(cfg t128c16a1d2 128 16 16 1 2) $(cfg t512c8a0d2 512 8 16 0 2) $(cfg t1024c4a1d2 1024 4 16 1 2) $(cfg t512c8a1d1 512 8 16 1 1)"
V2="$(cfg t128a1d2 128 1 32 1 2) $(cfg t128a0d2 128 1 32 0 2) $(cfg t256a1d2 256 1 32 1 2) $(cfg t256a0d1 256 1 32 0 1) $(cfg t256a1d1 256 1 32 1 1) $(cfg t512a0d2 512 1 32 0 2) $(cfg t512a1d1 512 1 32 1 1) $(cfg t128a1d0o16 128 1 16 1 0)"
for r in 1 2; do
  timeout 120 $K $B --backend tuned $V1 --budget-ms 150 --dtype bf16,fp16 --shape 4096x50257 --csv $O/var$r-1.csv > $O/var$r-1.log 2>&1; st "var $r.1" $?
  timeout 120 $K $B --backend tuned $V2 --budget-ms 150 --dtype bf16,fp16 --shape 32768x4095 --csv $O/var$r-2.csv > $O/var$r-2.log 2>&1; st "var $r.2" $?
done
cp baselines/tuning/NVIDIA_H200.txt $W/cache-before.txt
timeout 150 ci/tune --bench layernorm_backward,rmsnorm_backward --bucket unaligned --budget-s 130 --out $W/tune > $W/tune.log 2>&1; st tune $?
cp baselines/tuning/NVIDIA_H200.txt $W/cache-after.txt
diff $W/cache-before.txt $W/cache-after.txt > $W/cache-moves.txt; st moves $?
timeout 150 ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
kb_run_done
