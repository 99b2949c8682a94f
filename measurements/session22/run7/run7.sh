#!/usr/bin/env bash
# Session 22, run 7: the backward heuristic (GPUs or buckets without a cache entry) takes db=2
# for a row split over a cluster where db=2 holds as many packs per thread as db=0
# (nt_bwd_heuristic_db). Accuracy of the new heuristic's picks on every input kind (cluster-split
# rows, three dtypes), memcheck, then the old heuristic (build/kbench-old, the previous commit,
# rebuilt from a zstd patch) against the new one on long rows, two rounds.
set -u
KB_TAR=s22r7.tgz; . ci/lib/device-run.sh "$0"
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -q -d --long=27 --patch-from=build/kbench .devbuild/old.zst -o build/kbench-old; st unpatch $?
B="layernorm_backward rmsnorm_backward" H="--backend tuned --compile-mode heuristic"
timeout 120 $K $B $H --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small \
  --shape 3x50257 --shape 9x50257 --shape 5x131072 --shape 3x262144 --shape 7x32768 --shape 2x151936 \
  --no-timing --csv $W/acc.csv > $W/acc.log 2>&1; st accuracy $?
tail -1 $W/acc.log
timeout 100 env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9 $K $B $H \
  --dtype bf16 --shape 3x50257 --shape 5x131072 --no-timing > $W/memcheck.log 2>&1; st memcheck $?
S="--shape 4096x50257 --shape 512x50257 --shape 32768x32768 --shape 32768x65536 --shape 16384x131072 --shape 8192x262144 --shape 1024x151936"
for r in 1 2; do
  timeout 100 build/kbench-old $B $H --dtype bf16 $S --budget-ms 300 --csv $W/old$r.csv > $W/old$r.log 2>&1; st "old $r" $?
  timeout 100 $K $B $H --dtype bf16 $S --budget-ms 300 --csv $W/new$r.csv > $W/new$r.log 2>&1; st "new $r" $?
done
kb_run_done
