#!/usr/bin/env bash
# Session 23, run 10: the committed cache's two new fp16 entries (LayerNorm and RMSNorm backward,
# N<=262144,M<=1024) as a user gets them: fp16 1024x151936 from the cache, every input kind
# (accuracy), then timed; memcheck of the layout at fp16 on small long rows.
set -u
KB_TAR=s23r10.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
timeout 60 $K $B --backend tuned --dtype fp16 --shape 1024x151936 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/kinds.csv > $W/kinds.log 2>&1; st kinds $?
timeout 30 $K $B --backend tuned --dtype fp16 --shape 1024x151936 --csv $W/timed.csv > $W/timed.log 2>&1; st timed $?
timeout 60 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --tuned-config e3:threads=256,rows=1,cluster=16,occ=3,acc=1,reload=0,hint=0,db=0 --dtype fp16 --inputs randn,constant --shape 3x151936 --shape 40x151936 --no-timing > $W/memcheck.log 2>&1; st memcheck $?
grep -h "passed,\|ERROR SUMMARY" $W/kinds.log $W/memcheck.log; grep -h "GB/s" $W/timed.log | cut -c1-200
kb_run_done
