#!/usr/bin/env bash
# Session 22, run 6 (closing for the last host change): the norm backward's workspace bound no
# longer cut by occ at clusters, occ folded at clusters in the search, and the search timing each
# candidate with the workspace a real run gives it. forcedbwd; the gate of both norm backwards;
# then ci/tune on the bucket run 4 misjudged (LayerNorm bf16 N<=262144,M<=1024, searched on
# 1024x151936) and a plain kbench run of that shape, to compare the search's GB/s with the case's.
set -u
KB_TAR=s22r6.tgz; . ci/lib/device-run.sh "$0"
OUT=$W/dc timeout 150 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "cannot run," $W/forcedbwd.log
timeout 200 ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
tail -3 $W/gate.log
cp baselines/tuning/NVIDIA_H200.txt $W/cache-before.txt
timeout 90 ci/tune --bench layernorm_backward --dtype bf16 --bucket 'N<=262144,M<=1024' --out $W/tune > $W/tune.log 2>&1; st tune $?
diff $W/cache-before.txt baselines/tuning/NVIDIA_H200.txt > $W/cache-moves.txt; st moves $?
timeout 60 $K layernorm_backward --backend tuned --dtype bf16 --shape 1024x151936 --csv $W/after-tune.csv > $W/after-tune.log 2>&1; st after-tune $?
grep -h "1024x151936" $W/after-tune.log $W/tune/tune-log.csv | cut -c1-300
kb_run_done
