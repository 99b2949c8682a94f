/* RMSNorm, tuned backend: y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps);
 * backward dx = rstd * (g - xh * mean(g*xh)), g = dy*w, xh = x*rstd,
 * dw = sum over rows of dy*xh.
 *
 * Strategy (kernels and search space in kernels/common/norm_tuned.cuh):
 *   forward : the row is read once with 128-bit streaming loads into fp32
 *             registers (NV vectors per thread), one sum-of-squares
 *             reduction (shuffles, then shared memory across warps, then
 *             distributed shared memory across a thread-block cluster for
 *             long rows), y streamed out with w from L1. Short rows: several
 *             rows per CTA, 1..32 threads per row; long rows: up to 16 CTAs
 *             of a cluster share a row, so x is never read twice.
 *   backward: persistent grid; per row x and dy stay in registers as raw
 *             16-byte packs, one reduction of sum(g*xh), dx streamed out;
 *             dy*xh accumulates per owned column in fp32 registers over all
 *             rows of the slot, then one partial row per slot goes to the
 *             workspace and a small kernel sums the partials in a fixed
 *             order (deterministic dw, no atomics).
 *   Launch parameters come from the tuner (heuristic, cache or search):
 *   threads, rows, cluster, reload (+ occ for the backward).
 * Limits: any M, N >= 1 (bf16/fp16/fp32); the row lives in registers up to
 * ~786K elements forward / ~262K-524K backward, beyond that (or reload=1)
 * the row is re-read from L2/HBM per pass. sm_90 only. */
#include "norm_tuned.cuh"

static const kb_tune_space rms_fwd_space = KB_NORM_FWD_SPACE("rmsnorm_forward", false);
static const kb_tune_space rms_bwd_space = KB_NORM_BWD_SPACE("rmsnorm_backward", false);

KB_TUNED_IMPL(kb_rmsnorm_tuned_fwd, KB_RMSNORM_FWD, rms_fwd_space)
KB_TUNED_IMPL(kb_rmsnorm_tuned_bwd, KB_RMSNORM_BWD, rms_bwd_space)
