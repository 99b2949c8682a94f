#!/usr/bin/env bash
# Session 22, run 5 (closing): the forced db layouts again on the final build; memcheck and
# racecheck of the new odd-N entry's layout (256 threads, cluster 8, db=2) on small odd
# shapes; ci/closing-check --steps gate,scratch,readme,memcheck with the committed cache
# (run 4's re-tune not taken); then PyTorch eager and torch.compile on the odd-N norm
# backward shapes (ci/peers/torch_peers.py) and kbench tuned on them again, same call.
set -u
KB_TAR=s22r5.tgz; . ci/lib/device-run.sh "$0"
B="layernorm_backward rmsnorm_backward"
OUT=$W/dc timeout 150 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "cannot run," $W/forcedbwd.log
nc="env KBENCH_CUPTI_LIB=none"
c=entry:threads=256,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=0,db=2
timeout 100 $nc compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned \
  --tuned-config $c --dtype bf16,fp16 --shape 3x20001 --shape 17x50257 --no-timing > $W/memcheck-entry.log 2>&1; st "memcheck entry" $?
timeout 100 $nc compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned \
  --tuned-config $c --dtype bf16 --shape 3x20001 --shape 17x50257 --no-timing > $W/racecheck-entry.log 2>&1; st "racecheck entry" $?
OUT=$W/cc timeout 420 ci/closing-check --steps gate,scratch,readme,memcheck --budget-s 410 > $W/closing.log 2>&1; st closing $?
S=4096x50257,512x50257,32768x4095
timeout 150 python3 ci/peers/torch_peers.py --benchmarks layernorm_backward,rmsnorm_backward --shapes $S --backends torch_eager,torch_compile --dtype bf16 --out $W/peers.csv > $W/peers.log 2>&1; st peers $?
timeout 60 $K $B --backend tuned --dtype bf16 --shape 4096x50257 --shape 512x50257 --shape 32768x4095 --csv $W/tuned-again.csv > $W/tuned-again.log 2>&1; st tuned-again $?
kb_run_done
