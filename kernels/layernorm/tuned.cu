/* LayerNorm (no bias), tuned backend: y = (x - mean) * rstd * w,
 * rstd = 1/sqrt(var + eps) with the biased variance; backward
 * dx = rstd * (g - mean(g) - xh * mean(g*xh)), g = dy*w,
 * xh = (x - mean)*rstd, dw = sum over rows of dy*xh.
 *
 * Strategy (kernels and search space in kernels/common/norm_tuned*.cuh):
 *   forward : persistent CTAs (or clusters) over groups of rows; the row is
 *             read once with 128-bit loads into registers; mean
 *             by one reduction, then the centred sum of squares from the
 *             same registers (exact two-pass variance, no E[x^2]-E[x]^2
 *             cancellation); reductions by shuffles, shared memory across
 *             warps and, across a thread-block cluster, st.async pushes
 *             into the peers' shared memory counted on an mbarrier (no
 *             cluster barrier per round); y written out. The next rows'
 *             loads are issued before both reductions (db=1) or behind the
 *             stores (db=0).
 *   backward: persistent grid; x and dy held in registers as raw 16-byte
 *             packs, one reduction round carrying both sum(g*xh) and
 *             sum(g), dx written out, the next rows loaded behind the dx
 *             stores (db=0) or before the reduction (db=1 registers, db=2
 *             shared memory by cp.async); dw as per-slot fp32 partial rows in the workspace,
 *             summed by a small fixed-order kernel (deterministic, no
 *             atomics). Saved mean/rstd are read, not recomputed.
 *   Launch parameters: threads, rows, cluster, occ, db, acc (backward),
 *   reload, hint (cache operators of the 128-bit loads and
 *   stores), from the tuner.
 * Limits: as RMSNorm (norm_tuned.cuh): any M, N >= 1; rows beyond the
 * register kernels' reach (~1M forward, ~512K backward, bf16) use the reload
 * fallback, 3 passes forward. sm_90 only. */
#include "norm_tuned.cuh"

static const kb_tune_space ln_fwd_space = KB_NORM_FWD_SPACE("layernorm_forward", true);
static const kb_tune_space ln_bwd_space = KB_NORM_BWD_SPACE("layernorm_backward", true);

KB_TUNED_IMPL(kb_layernorm_tuned_fwd, KB_LAYERNORM_FWD, ln_fwd_space)
KB_TUNED_IMPL(kb_layernorm_tuned_bwd, KB_LAYERNORM_BWD, ln_bwd_space)
