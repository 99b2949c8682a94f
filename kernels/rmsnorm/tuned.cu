/* RMSNorm, tuned backend: y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps);
 * backward dx = rstd * (g - xh * mean(g*xh)), g = dy*w, xh = x*rstd,
 * dw = sum over rows of dy*xh.
 *
 * Strategy (kernels and search space in kernels/common/norm_tuned*.cuh):
 *   forward : persistent CTAs (or clusters) loop over groups of rows; a
 *             row is read once with 128-bit loads and held raw in
 *             registers (NV packs per thread), one sum-of-squares reduction
 *             (shuffles; shared memory when a row spans warps; across a
 *             thread-block cluster, partials pushed into the peers' shared
 *             memory with st.async and counted on an mbarrier: no cluster
 *             barrier per row), y written out with w from L1. The next
 *             rows' loads are issued before this row is reduced (db=1:
 *             second register set) or behind its stores (db=0), so loads are
 *             always in flight. Short rows: several rows per CTA, a warp or
 *             less per row; N = 32768 (bf16): one 1024-thread CTA; longer
 *             rows: up to 16 CTAs of a cluster share a row, x read once.
 *   backward: persistent grid; per row x and dy stay in registers as raw
 *             16-byte packs, one reduction of sum(g*xh), dx written out,
 *             the next rows' x and dy loaded behind the dx stores (db=0),
 *             or before the reduction into a second register set (db=1)
 *             or shared memory by cp.async (db=2); dy*xh
 *             accumulates per owned column in fp32 over all rows of the
 *             slot, then one partial row per slot goes to the workspace and
 *             a small kernel sums the partials in a fixed order
 *             (deterministic dw, no atomics).
 *   Launch parameters come from the tuner (heuristic, cache or search):
 *   threads, rows, cluster, occ, db, acc (backward), reload, hint (the
 *   cache operators of the 128-bit loads and stores).
 * Limits: any M, N >= 1 (bf16/fp16/fp32); the row lives in registers up to
 * ~1M elements forward / ~512K backward (bf16), beyond that (or reload >= 1)
 * the row is re-read from L2/HBM per pass. sm_90 only. */
#include "norm_tuned.cuh"

static const kb_tune_space rms_fwd_space = KB_NORM_FWD_SPACE("rmsnorm_forward", false);
static const kb_tune_space rms_bwd_space = KB_NORM_BWD_SPACE("rmsnorm_backward", false);

KB_TUNED_IMPL(kb_rmsnorm_tuned_fwd, KB_RMSNORM_FWD, rms_fwd_space)
KB_TUNED_IMPL(kb_rmsnorm_tuned_bwd, KB_RMSNORM_BWD, rms_bwd_space)
