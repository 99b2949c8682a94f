#!/usr/bin/env bash
# Session 21, run 1. (1) Branch reg-prologue (kbench carried as a zstd patch against main's,
# .devbuild/rp-kbench.zst): the forced step, every norm-forward case in every input kind,
# memcheck; then both kbench, alternating, two rounds, the norm forwards in three dtypes
# (new/old per case). (2) Branch loop-occ (the carried build): the re-reading loop with occ 1-16
# as a persistent grid: the forced step with its new occ=1 layouts, racecheck and memcheck of the
# LayerNorm two-pass loop striding rows, then occ-var.sh (layouts beside the cache entries).
set -u
KB_TAR=s21r1.tgz; . ci/lib/device-run.sh "$0"
D=measurements/session21/run1
mkdir -p rpb && LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -qdf --long=27 --patch-from=build/kbench .devbuild/rp-kbench.zst -o rpb/kbench && chmod +x rpb/kbench; st unpatch $?
K2=$PWD/rpb/kbench
OUT=$W/forced timeout 90 ci/device-check --steps forced --backends tuned > $W/forced.log 2>&1; st forced-loop-occ $?
OUT=$W/forced-rp timeout 90 ci/device-check --build rpb --steps forced --backends tuned > $W/forced-rp.log 2>&1; st forced-rp $?
timeout 90 $K2 layernorm_forward rmsnorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/acc-rp.csv > $W/acc-rp.log 2>&1; st accuracy-rp $?
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K2 layernorm_forward rmsnorm_forward --backend tuned --dtype bf16,fp32 --inputs randn,constant --shape 3x37 --shape 33x4095 --shape 64x1000 --shape 2x50257 --shape 300x384 --no-timing > $W/memcheck-rp.log 2>&1; st memcheck-rp $?
O1="--tuned-config a:threads=64,rows=1,cluster=1,occ=1,db=0,reload=2,hint=0 --tuned-config b:threads=32,rows=1,cluster=1,occ=2,db=0,reload=1,hint=0"
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $K layernorm_forward --backend tuned $O1 --dtype bf16 --shape 300x20000 --no-timing > $W/racecheck-occ.log 2>&1; st racecheck-occ $?
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K layernorm_forward rmsnorm_forward --backend tuned $O1 --dtype bf16,fp32 --inputs randn,constant --shape 300x20000 --shape 270x37 --shape 2x50257 --no-timing > $W/memcheck-occ.log 2>&1; st memcheck-occ $?
# DRAM bytes and L2 hit rate of the cache entry (one CTA per row) against occ=1 at 512 threads
timeout 90 ncu --kernel-name regex:fwd_loop --launch-count 4 --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active $K layernorm_forward rmsnorm_forward --backend tuned --tuned-config o1u2t512:threads=512,rows=1,cluster=1,occ=1,db=0,reload=2,hint=0 --shape 4096x50257 --no-timing > $W/ncu-l2.log 2>&1; st ncu-l2 $?
# the odd-N norm backward (52-69 % of copy SOL): where its time goes
timeout 60 ncu --kernel-name regex:"bwd|dw_" --launch-count 4 --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed $K layernorm_backward rmsnorm_backward --backend tuned --shape 4096x50257 --no-timing > $W/ncu-bwd.log 2>&1; st ncu-bwd $?
(cd $W && tar czf $OUT/s21r1a.tgz .)
for r in 1 2; do for side in old new; do
  b=$K; [ $side = new ] && b=$K2
  timeout 100 $b layernorm_forward rmsnorm_forward --backend tuned --dtype bf16,fp16,fp32 --budget-ms 300 --csv $W/ab-$side$r.csv > $W/ab-$side$r.log 2>&1; st "ab $side $r" $?
done; done
(cd $W && tar czf $OUT/s21r1a.tgz .)
. $D/occ-var.sh
kb_run_done
grep -h "passed,.*cannot run\|FAIL" $W/forced.log $W/forced-rp.log | tail -6
