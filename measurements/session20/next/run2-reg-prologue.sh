#!/usr/bin/env bash
# Prepared in session 20 for a later call (not run): branch reg-prologue (643f691) against main,
# every norm forward kernel. The branch (1) takes rstd as rsqrtf(__fdividef(ss, n) + eps) (as
# PyTorch's and Inductor's kernels take rsqrt) instead of an IEEE division, square root and
# reciprocal on every row's serial path; (2) splits the register kernel's packs per thread on the
# host (fwd_args share_q/share_r) and skips the row-group division without a cluster, so no
# runtime integer division runs before the first load. The SASS study
# (measurements/session20/sass-study/) counted ~145 executed instructions before the first load
# against Triton's 26-34. ci/sass-diff (next/reg-prologue-sass-diff.txt on the branch): backward
# identical; forward median -233 static instructions; 11 capped kernels now spill 8 bytes (the
# RMSNorm 16-bit fwd_reg_cap NV=4 DB and fwd_reg_one bf16 NV=3: the 384-column tall-row entries),
# so read those rows first. Carry main's build as
# .devbuild/build.tar.zst and the branch's kbench as a zstd patch against it:
#   zstd -19 --long=27 --patch-from=build/kbench <branch build>/kbench -o .devbuild/rp-kbench.zst
# Steps: forced step and every norm-forward case in every input kind with the branch's kbench
# (the rsqrtf's 2 ulp), memcheck; then both kbench, alternating, two rounds, the norm forwards'
# default sweeps (bf16) and the fp16/fp32 shapes: new/old per case (rows with the same cache entry).
set -u
KB_TAR=rp.tgz; . ci/lib/device-run.sh "$0"
mkdir -p rpb && LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -qdf --long=27 --patch-from=build/kbench .devbuild/rp-kbench.zst -o rpb/kbench && chmod +x rpb/kbench
K2=$PWD/rpb/kbench
OUT=$W/forced timeout 60 ci/device-check --build rpb --steps forced --backends tuned > $W/forced.log 2>&1; st forced $?
timeout 90 $K2 layernorm_forward rmsnorm_forward --backend tuned --sweep all --dtype bf16,fp16,fp32 --inputs randn,shifted,wide,masked,constant,small --no-timing --csv $W/acc.csv > $W/acc.log 2>&1; st accuracy $?
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $K2 layernorm_forward rmsnorm_forward --backend tuned --dtype bf16,fp32 --inputs randn,constant --shape 3x37 --shape 33x4095 --shape 64x1000 --shape 2x50257 --no-timing > $W/memcheck.log 2>&1; st memcheck $?
for r in 1 2; do for side in old new; do
  b=$K; [ $side = new ] && b=$K2
  timeout 120 $b layernorm_forward rmsnorm_forward --backend tuned --dtype bf16,fp16,fp32 --csv $W/ab-$side$r.csv > $W/ab-$side$r.log 2>&1; st "ab $side $r" $?
done; done
kb_run_done
