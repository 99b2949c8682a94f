/* Tuned RMSNorm / LayerNorm kernels, shared by kernels/rmsnorm/tuned.cu and
 * kernels/layernorm/tuned.cu (LN = true adds the centring: mean, mean(g)).
 * Each .cu file instantiates these templates for its op and defines its
 * kb_tune_space with the initialisers below. Kernels and their strategy:
 *   norm_tuned_dev.cuh  packs, conversions, row reduction (warp, CTA, and a
 *                       cluster through st.async + mbarrier), lane map
 *   norm_tuned_fwd.cuh  fwd_reg (row in registers, next rows prefetched),
 *                       fwd_reg_one (the same, one row group per CTA, fewer
 *                       registers), fwd_loop (the row re-read per
 *                       pass, U slots in flight per thread; fwd_loop_long:
 *                       its twin for long shares per thread; fwd_stage: the
 *                       row staged in shared memory, every pass from there)
 *   norm_tuned_bwd.cuh  bwd_reg + dw_reduce (persistent, dw partials)
 *   norm_tuned_bwd_loop.cuh
 *                       bwd_loop (persistent, the row re-read per pass,
 *                       the same partials), bwd_dx_loop + dw_cols (fallback)
 * Host side, in three files this one includes:
 *   norm_tuned_space.cuh      the search space's parameters and the kernel
 *                             a configuration runs (the kernel tables)
 *   norm_tuned_heuristic.cuh  canonical forms and the heuristic default
 *   norm_tuned_launch.cuh     validity, workspace and launches
 *
 * Search space (kb_tune_space parameters):
 *   threads  tpr, threads per row in a CTA (power of two, 1..1024)
 *   rows     R, rows per CTA side by side (blockDim = (tpr, R)); tpr*R is
 *            a multiple of 32 and at most 1024
 *   cluster  CL, CTAs sharing a row (sm_90 thread-block cluster, 1..16;
 *            16 is a non-portable size); CL > 1 needs R == 1
 *   occ      CTAs per SM of the persistent grid (capped by the occupancy
 *            calculator; with a cluster, any value > 0 means all the
 *            clusters that fit); forward only: 0 = one CTA per row group
 *            (with db = 0, aligned packs and pointers, NV <= 8 and at most
 *            2^30 / CL groups: fwd_reg_one, no prefetch, 32-64 registers);
 *            forward reload loop: 0 and 32 one CTA per row, 1-16 a
 *            persistent grid of at most occ CTAs per SM (fewer rows in
 *            flight, so the passes after the first find the row in L2)
 *   db       next row group double-buffered in registers (1) or rolled in
 *            pack by pack behind the stores (0); backward (8th parameter,
 *            after hint; 16-byte packs, aligned or shifted slots): 1 in
 *            registers (NV <= 2), 2 in shared memory by cp.async (NV 1,
 *            2, 4, 8), 3 as 2 with class-crossing slots (shifted rows at
 *            a cluster only: every cluster that fits a slot, not whole
 *            shift classes; norm_tuned_bwd.cuh)
 *   acc      backward: dw accumulators in registers (0) or shared memory (1:
 *            fewer registers, more CTAs per SM); the loop (reload 2-8)
 *            always has them in shared memory (canon: 1)
 *   reload   0: row held in registers; else a loop re-reading the row
 *            (forward and the backward's fallback: one CTA of `threads` per
 *            row, rows == cluster == 1, except below); forward:
 *            1, 2 or 4 slots per thread in flight per step (fwd_loop's U),
 *            8 the row staged in shared memory first (fwd_stage: 16-byte
 *            aligned tensors, rows that fit the opt-in shared memory; with
 *            cluster > 1 fwd_stage_cl, each CTA staging its share, rows up
 *            to cluster x that; occ 1-16 then all clusters that fit);
 *            backward: 1 the fallback (any N: dx in two passes a row, dw by a
 *            column-tiled kernel), 2, 4, 8 bwd_loop (a persistent grid of
 *            `occ` CTAs per SM of `rows` row slots, each row read twice,
 *            U = reload packs per thread in flight per step, dw in shared
 *            memory; aligned tensors, 16-bit types or N % VEC == 0 (odd
 *            16-bit rows on bwd_reg's shifted slots, U = 4, 8 only);
 *            a cluster (rows 1) splits each row, so rows beyond one CTA's
 *            shared memory go; its register caps bound a CTA: 1024
 *            threads at U = 2, 512 at U = 4 and 8)
 *   hint     forward: cache operators of x's loads and y's stores, as the
 *            tuned GLU's (0: evict-first both, 1: evict-first loads, plain
 *            stores, 2: plain both; the reload loop's loads ignore it (their
 *            cache operators follow U), so there 2 is 1);
 *            backward: dx's stores in the aligned register kernel and the
 *            loop, 0 evict-first, 1 plain (the others keep evict-first)
 * NV, the 16-byte packs a thread holds per tensor, is derived, not tuned:
 * the smallest compiled value >= ceil(S / (tpr*CL*VEC)), VEC = 16/sizeof(T),
 * S the row's span: N, or for shifted slots N + VEC - 1 (nt_fwd_span).
 * Compiled: forward 1,2,3,4,6,8,12,16 (db and fwd_reg_one: up to 8);
 * backward 1,2,3,4,6,8 (db=1: 1, 2; db=2 and 3: 1, 2, 4, 8).
 *
 * Layout: a row is cut into packs of VEC elements; thread t of CTA rank r
 * owns packs i*(tpr*CL) + r*tpr + t, i < NV: a warp touches consecutive
 * 16-byte packs (coalesced) and, with aligned rows, a thread owns the same
 * columns on every row (the backward's dw accumulators rely on it; shifted
 * rows give it only within a shift class, below). Packs sit in registers raw
 * (one uint4: half the registers of fp32 for 16-bit types) and are converted
 * to fp32 where used. AL (N % VEC == 0 and 16-byte aligned base pointers):
 * one 128-bit access per pack. Forward with N % VEC != 0: shifted slots
 * (norm_tuned_dev.cuh), still 128-bit for x and y, w read at a per-row
 * column shift. Backward with N % VEC != 0, 16-bit types: the same slots,
 * with the rows dealt out by shift class so that a thread still owns the
 * same columns on every row it sees (norm_tuned_bwd.cuh); fp32: element
 * accesses (nt_bwd_am). Base pointers not 16-byte aligned: element accesses
 * (the loop kernels forward; backward, the register kernel one element at a
 * time).
 *
 * Limits: registers hold up to tpr*CL*NV*VEC elements (bf16: ~1M forward,
 * CL=16 x 512 threads x NV=16; ~512K backward); valid() asks the
 * runtime that the block fits the kernel's registers, nothing spills
 * (localSizeBytes == 0) and the cluster is schedulable. Any M, N >= 1;
 * 64-bit row offsets; N < 2^30 in the register kernels. sm_90 only. */
#ifndef KB_NORM_TUNED_CUH
#define KB_NORM_TUNED_CUH

#include "norm_tuned_space.cuh"
#include "norm_tuned_heuristic.cuh"
#include "norm_tuned_launch.cuh"

#endif
