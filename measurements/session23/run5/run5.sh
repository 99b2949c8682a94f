#!/usr/bin/env bash
# Session 23, run 5: class-crossing slots as their own db value (db=3, the tuner's choice; db=2
# keeps whole classes), the four 4096x50257 odd-N backward buckets moved to db=3. (1) forcedbwd
# (three db=3 layouts; 64x4095 and 64x50257 make shares end on class boundaries) and the forward
# forced step; memcheck and racecheck of the db=3 entry on small odd shapes; (2) A/B, this
# build and cache against run 2's build with the cache before db=3, same call, alternating, two
# rounds; (3) PyTorch eager and torch.compile on the shapes this session moved
# (ci/peers/torch_peers.py), tuned again beside them.
set -u
KB_TAR=s23r5.tgz; . ci/lib/device-run.sh "$0"
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -d -q --long=27 --patch-from=build/kbench .devbuild/old.zst -o build/kbench-old; chmod +x build/kbench-old
OUT=$W/dc timeout 100 ci/device-check --steps forcedbwd,forced --backends tuned > $W/forced.log 2>&1; st forced $?
grep -h "passed,.*cannot run" $W/forced.log | grep -E "bwd-d3|c[0-9]" 
grep -h "failed" $W/forced.log | grep -v " 0 failed" | head
B="layernorm_backward rmsnorm_backward"
nc="env KBENCH_CUPTI_LIB=none"
c=entry:threads=256,rows=1,cluster=8,occ=32,acc=0,reload=0,hint=0,db=3
timeout 100 $nc compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned \
  --tuned-config $c --dtype bf16,fp16 --inputs randn,constant --shape 3x20001 --shape 17x50257 --shape 64x50257 --shape 300x50257 --no-timing > $W/memcheck-entry.log 2>&1; st "memcheck entry" $?
timeout 100 $nc compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned \
  --tuned-config $c --dtype bf16 --shape 3x20001 --shape 64x50257 --no-timing > $W/racecheck-entry.log 2>&1; st "racecheck entry" $?
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed," $W/memcheck-entry.log $W/racecheck-entry.log
AB="--shape 4096x50257 --shape 512x50257"
for r in 1 2; do
  timeout 60 $K $B --backend tuned --budget-ms 150 --dtype bf16,fp16 $AB --csv $W/ab-new$r.csv > $W/ab-new$r.log 2>&1; st "ab new$r" $?
  KBENCH_TUNE_CACHE=$PWD/.devbuild/old-cache.txt timeout 60 build/kbench-old $B --backend tuned --budget-ms 150 --dtype bf16,fp16 $AB --csv $W/ab-old$r.csv > $W/ab-old$r.log 2>&1; st "ab old$r" $?
done
S=4096x50257,512x50257
timeout 150 python3 ci/peers/torch_peers.py --benchmarks layernorm_backward,rmsnorm_backward --shapes $S --backends torch_eager,torch_compile --dtype bf16 --out $W/peers.csv > $W/peers.log 2>&1; st peers $?
timeout 90 python3 ci/peers/torch_peers.py --benchmarks layernorm_forward --shapes 1024x151936 --backends torch_eager,torch_compile --dtype bf16 --out $W/peers-fwd.csv > $W/peers-fwd.log 2>&1; st peers-fwd $?
timeout 60 $K $B --backend tuned --dtype bf16 $AB --csv $W/tuned-again.csv > $W/tuned-again.log 2>&1; st tuned-again $?
timeout 30 $K layernorm_forward --backend tuned --dtype bf16 --shape 1024x151936 --csv $W/tuned-again-fwd.csv > $W/tuned-again-fwd.log 2>&1; st tuned-again-fwd $?
grep -h "GB/s" $W/tuned-again.log $W/tuned-again-fwd.log | cut -c1-110; cat $W/peers.csv $W/peers-fwd.csv 2>/dev/null | cut -c1-200 | head -12
kb_run_done
