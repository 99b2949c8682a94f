#!/usr/bin/env bash
# Session 22, run 3: more layouts beside the cache entries, two rounds, before the pick:
# V5, db=2 on shifted slots around run 1's best (256 threads, cluster 8, dw in registers) at
# 4096x50257 and 512x50257; V6, cluster splits and wider CTAs at 32768x4095 (db=0), where
# every db layout lost in runs 1 and 2. bf16 and fp16.
set -u
KB_TAR=s22r3.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=$3,occ=$4,acc=$5,reload=0,hint=0,db=$6"; }
V5="$(cfg t256c16a0d2 256 16 16 0 2) $(cfg t128c16a0d2 128 16 16 0 2) $(cfg t256c16a1d2 256 16 16 1 2) $(cfg t512c16a0d2 512 16 16 0 2) $(cfg t1024c8a0d2 1024 8 16 0 2) $(cfg t1024c16a0d2 1024 16 16 0 2) $(cfg t128c8a0d2 128 8 16 0 2) $(cfg t256c8a0d2 256 8 16 0 2)"
V6="$(cfg t256a1d0 256 1 32 1 0) $(cfg t512a1d0 512 1 32 1 0) $(cfg t128c2a1d0 128 2 32 1 0) $(cfg t128c4a1d0 128 4 32 1 0) $(cfg t256c2a1d0 256 2 32 1 0) $(cfg t64c4a1d0 64 4 32 1 0) $(cfg t1024a1d0 1024 1 32 1 0) $(cfg t128c2a0d0 128 2 32 0 0)"
for r in 1 2; do
  timeout 120 $K $B --backend tuned $V5 --budget-ms 150 --dtype bf16,fp16 --shape 4096x50257 --shape 512x50257 --csv $O/var$r-5.csv > $O/var$r-5.log 2>&1; st "var $r.5" $?
  timeout 120 $K $B --backend tuned $V6 --budget-ms 150 --dtype bf16,fp16 --shape 32768x4095 --csv $O/var$r-6.csv > $O/var$r-6.log 2>&1; st "var $r.6" $?
done
kb_run_done
