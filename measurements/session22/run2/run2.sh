#!/usr/bin/env bash
# Session 22, run 2: db=3 (the norm backward's x and dy held only in shared memory, two
# cp.async buffers: this row group's and the next one's).
#  1. ci/device-check --steps forcedbwd (db=1..3 forced, every dtype and input kind);
#  2. memcheck and racecheck of db=3 layouts (shifted and aligned rows, a cluster);
#  3. db=3 layouts beside the cache entries (and run 1's best db=2 layout), two rounds:
#     4096x50257 and 512x50257 (bf16, fp16), 32768x4095 (bf16, fp16), 1024x151936 and
#     16384x131072 (bf16).
set -u
KB_TAR=s22r2.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
OUT=$W/dc timeout 300 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "cannot run," $W/forcedbwd.log
nc="env KBENCH_CUPTI_LIB=none"
for c in d3t128a0:threads=128,rows=1,cluster=1,occ=32,acc=0,reload=0,hint=0,db=3 \
         d3t64c4a1:threads=64,rows=1,cluster=4,occ=32,acc=1,reload=0,hint=0,db=3 \
         d3t32r4o1:threads=32,rows=4,cluster=1,occ=1,acc=0,reload=0,hint=0,db=3; do
  timeout 100 $nc compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned \
    --tuned-config $c --dtype bf16,fp32 --shape 33x4095 --shape 9x37 --shape 40x1000 --shape 7x4096 --no-timing \
    > $W/memcheck-${c%%:*}.log 2>&1; st "memcheck ${c%%:*}" $?
  timeout 100 $nc compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned \
    --tuned-config $c --dtype bf16 --shape 33x4095 --shape 40x1000 --shape 7x4096 --no-timing \
    > $W/racecheck-${c%%:*}.log 2>&1; st "racecheck ${c%%:*}" $?
done
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=$3,occ=$4,acc=$5,reload=0,hint=0,db=$6"; }
V1="$(cfg t256c8a0d3 256 8 16 0 3) $(cfg t128c16a0d3 128 16 16 0 3) $(cfg t256c16a0d3 256 16 16 0 3) $(cfg t512c8a0d3 512 8 16 0 3) $(cfg t128c8a0d3 128 8 16 0 3) $(cfg t256c16a1d3 256 16 16 1 3) $(cfg t128c16a1d3 128 16 16 1 3) $(cfg t256c8a0d2 256 8 16 0 2)"
V2="$(cfg t128a0d3 128 1 32 0 3) $(cfg t128a1d3 128 1 32 1 3) $(cfg t256a0d3 256 1 32 0 3) $(cfg t256a1d3 256 1 32 1 3) $(cfg t512a0d3 512 1 32 0 3) $(cfg t512a1d3 512 1 32 1 3) $(cfg t1024a0d3 1024 1 32 0 3) $(cfg t1024a1d3 1024 1 32 1 3)"
V3="$(cfg t512c16a0d3 512 16 16 0 3) $(cfg t1024c16a0d3 1024 16 16 0 3) $(cfg t1024c8a0d3 1024 8 16 0 3) $(cfg t256c16a0d3 256 16 16 0 3) $(cfg t512c8a0d3 512 8 16 0 3) $(cfg t512c16a1d3 512 16 16 1 3) $(cfg t1024c8a1d3 1024 8 16 1 3) $(cfg t1024c16a1d3 1024 16 16 1 3)"
for r in 1 2; do
  timeout 120 $K $B --backend tuned $V1 --budget-ms 150 --dtype bf16,fp16 --shape 4096x50257 --shape 512x50257 --csv $O/var$r-1.csv > $O/var$r-1.log 2>&1; st "var $r.1" $?
  timeout 120 $K $B --backend tuned $V2 --budget-ms 150 --dtype bf16,fp16 --shape 32768x4095 --csv $O/var$r-2.csv > $O/var$r-2.log 2>&1; st "var $r.2" $?
  timeout 120 $K $B --backend tuned $V3 --budget-ms 150 --dtype bf16 --shape 1024x151936 --shape 16384x131072 --csv $O/var$r-3.csv > $O/var$r-3.log 2>&1; st "var $r.3" $?
done
kb_run_done
