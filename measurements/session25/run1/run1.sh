#!/usr/bin/env bash
# Session 25, device call 1: session 24's prepared run (measurements/session24/next/run1.sh), unchanged
# but for this line. Prepared in session 24 (no GPU then):
#  (bwd_loop: reload 2, 4, 8; norm_tuned_bwd.cuh), never run yet:
#  (1) accuracy: ci/device-check's forcedbwd step (twelve loop layouts, four at clusters, beside
#      the db layouts, every dtype and input kind, aligned and odd rows; fp32 odd rows and U = 2
#      on odd rows report "cannot run");
#  (2) memcheck and racecheck of four loop layouts on small shapes (M not a multiple of the
#      rows per CTA, the shared-memory limit, one CTA per SM striding over groups, odd rows, a
#      4-CTA cluster);
#  (3) 24 loop layouts (8 at 2-4 CTA clusters) beside the cache entries on every aligned bf16
#      norm-backward shape of the default sweep and 32768x4095, two rounds (kbench takes 8 named
#      layouts a call: three calls a round);
#  (3b) 8 cluster layouts of the loop beside the entries on the long and odd rows (4096x50257,
#      1024x151936, 2048x128256, 16384x131072, 8192x262144, 32768x65536), two rounds;
#  (4) ci/pick-layouts on them into a copy of the cache, then ci/gate on both norm backwards
#      with that copy in place (the committed file is the device copy's: nothing lands unless
#      the session commits it from the tarball);
#  (5) session 23's run 11: the backward heuristic's 6-pack step at 1024x151936 (run after (2),
#      it is short).
set -u
KB_TAR=s25r1.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-580}))
OUT=$W/dc timeout 200 ci/device-check --steps forcedbwd > $W/forcedbwd.log 2>&1; st forcedbwd $?
grep -h "passed," $W/forcedbwd.log | grep -i "norm-bwd-l" 
B="layernorm_backward rmsnorm_backward"
L="--tuned-config l4:threads=128,rows=2,cluster=1,occ=32,acc=1,reload=4,hint=0,db=0
   --tuned-config l8:threads=32,rows=4,cluster=1,occ=1,acc=1,reload=8,hint=1,db=0
   --tuned-config l2:threads=128,rows=1,cluster=1,occ=1,acc=1,reload=2,hint=0,db=0
   --tuned-config lc:threads=128,rows=1,cluster=4,occ=32,acc=1,reload=4,hint=0,db=0"
SM="--shape 64x1000 --shape 3x4096 --shape 130x2048 --shape 2x57344 --shape 1000x4096
    --shape 33x4095 --shape 13x4092 --shape 300x4095 --shape 5x50257"
nocupti="env KBENCH_CUPTI_LIB=none"
timeout 60 $nocupti compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned $L --dtype bf16,fp32 $SM --no-timing > $W/memcheck-loop.log 2>&1; st memcheck-loop $?
timeout 90 $nocupti compute-sanitizer --tool racecheck --error-exitcode 9 $K $B --backend tuned $L --dtype bf16 $SM --no-timing > $W/racecheck-loop.log 2>&1; st racecheck-loop $?
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $W/memcheck-loop.log $W/racecheck-loop.log
V2="--tuned-config e3:threads=256,rows=1,cluster=16,occ=3,acc=1,reload=0,hint=0,db=0 --tuned-config old:threads=512,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=0"
timeout 30 $K $B --backend tuned --compile-mode heuristic $V2 --budget-ms 150 --dtype bf16,fp16 --shape 1024x151936 --csv $W/heur.csv > $W/heur.log 2>&1; st heur $?
grep -h "GB/s" $W/heur.log | cut -c1-130
# (3) name:threads:rows:U:occ. Softmax backward's loop entries guided the set: about N/64
# threads at U = 8 (one step a row) from 2K to 8K columns, 512 threads at U = 1-4 beyond.
lcfg() { IFS=: read -r n t r u o <<< "$1"; echo "--tuned-config $n:threads=$t,rows=$r,cluster=1,occ=$o,acc=1,reload=$u,hint=0,db=0"; }
Va=""; for v in a1:32:8:8:32 a2:64:4:8:32 a3:128:2:8:32 a4:256:1:8:32 a5:512:1:8:32 a6:128:1:4:32 \
    a7:256:1:4:32 a8:512:1:4:32; do Va="$Va $(lcfg $v)"; done
Vb=""; for v in b1:16:16:4:32 b2:32:8:4:32 b3:64:4:4:32 b4:1024:1:2:32 b5:128:2:8:4 b6:256:1:2:32 \
    b7:8:32:4:32 b8:64:4:8:2; do Vb="$Vb $(lcfg $v)"; done
S="--shape 32768x256 --shape 32768x512 --shape 32768x1024 --shape 32768x2048 --shape 32768x4096
   --shape 32768x8192 --shape 32768x16384 --shape 32768x32768 --shape 576000x384 --shape 576000x512
   --shape 1152000x384 --shape 1152000x512 --shape 32768x4095"
# 2-4 CTA clusters on the mid-length rows: a cluster writes one partial row where its CTAs
# alone would write one each (every CTA's partial row is N floats that dw_reduce reads again:
# about 4 % more traffic at 1056 slots of 32768 rows), at the price of a DSMEM exchange a row.
ccfg() { IFS=: read -r n t c u <<< "$1"; echo "--tuned-config $n:threads=$t,rows=1,cluster=$c,occ=32,acc=1,reload=$u,hint=0,db=0"; }
Vd=""; for v in d1:64:2:8 d2:128:2:8 d3:256:2:4 d4:256:2:8 d5:32:4:8 d6:64:4:8 d7:128:4:4 \
    d8:512:2:4; do Vd="$Vd $(ccfg $v)"; done
for r in 1 2; do
  for h in a b d; do
    eval V=\$V$h
    timeout 150 $K $B --backend tuned $V --budget-ms 100 --dtype bf16 $S \
      --csv $W/var$r$h.csv > $W/var$r$h.log 2>&1; st "var $r$h" $?
  done
done
# (3b) the loop at a cluster on the long and odd rows (name:threads:cluster:U), same rounds
Vc=""; for v in c1:256:2:8 c2:512:2:8 c3:256:4:8 c4:512:4:4 c5:256:8:4 c6:512:8:4 c7:256:16:4 \
    c8:512:16:2; do Vc="$Vc $(ccfg $v)"; done
SL="--shape 4096x50257 --shape 1024x151936 --shape 2048x128256 --shape 16384x131072
    --shape 8192x262144 --shape 32768x65536"
for r in 1 2; do
  timeout 100 $K $B --backend tuned $Vc --budget-ms 100 --dtype bf16 $SL \
    --csv $W/var${r}c.csv > $W/var${r}c.log 2>&1; st "var ${r}c" $?
done
ci/pick-layouts --cache baselines/tuning/NVIDIA_H200.txt --out $W/cache-picked.txt \
  $W/var1a.csv,$W/var1b.csv,$W/var1d.csv,$W/var1c.csv \
  $W/var2a.csv,$W/var2b.csv,$W/var2d.csv,$W/var2c.csv > $W/pick.log 2>&1; st pick $?
cat $W/pick.log
(cd $W && tar czf $OUT/s25r1a.tgz .)
[ -s $W/cache-picked.txt ] && cp $W/cache-picked.txt baselines/tuning/NVIDIA_H200.txt
left=$((END - $(date +%s) - 40))
[ "$left" -gt 20 ] && timeout $left ci/gate --no-build --labels "layernorm_backward|rmsnorm_backward" --out $W/gate > $W/gate.log 2>&1; st gate $?
tail -4 $W/gate.log
kb_run_done
