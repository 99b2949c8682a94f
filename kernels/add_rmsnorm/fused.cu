/* Add + RMSNorm (vLLM's fused_add_rms_norm, Liger's fused_add_rms_norm),
 * fused backend: the Liger design as a hand-written CUDA C kernel.
 *   forward : h = x + r (rounded to T), y = h_T * rstd * w,
 *             rstd = 1/sqrt(mean(h_T^2) + eps); out = [h; y].
 *   backward: xh = h * rstd, g = dy * w,
 *             dx = rstd * (g - xh * mean(g * xh)) + dres, dw = sum_rows dy * xh.
 *
 * Strategy: the launch shape of the fused norms (common/fused_rows.cuh:
 * BLOCK = next power of two of N capped at 65536, threads from BLOCK, a
 * thread's tile in registers, 128-bit vectors when every row start and base
 * pointer is 16-byte aligned, scalars otherwise).
 *   forward : one CTA per row (grid-stride past the grid limit). Pass 1
 *             reads x and r once (streaming), writes h_T and sums h_T^2;
 *             the vector path's tile cap is twice the plain norm's (16
 *             elements a thread) so that rows up to threads * 16 stay in
 *             registers and pass 2 only reads w: every N <= 8192, and no
 *             longer row (512 threads hold 8192; the 1024 threads of N >
 *             16384 hold 16384).
 *             Longer rows re-read h from the out rows this CTA just wrote
 *             (coherent loads by the thread that stored them: mostly L2
 *             hits) and write y = h_T * rstd * w.
 *   backward: Liger's layout, the plain norm's row loop plus dres: P
 *             programs each owning a contiguous block of rows; per row pass
 *             1 reduces sum(g * xh), pass 2 re-reads h, dy, w (L2), reads
 *             dres once and writes dx, adding dy * xh into the program's dw
 *             partial row (registers when the row is one tile, else a
 *             read-modify-write of the workspace row). A second kernel sums
 *             the P partials per column in a fixed order: deterministic dw,
 *             no atomics. dx is the gradient of both x and r, written once.
 * Launches: forward 1 kernel; backward 2 (rows, dw reduction).
 * Limits: any M >= 1, N >= 1, 64-bit offsets. Backward workspace is P * N * 4
 * bytes (fused_plan: at most 3/4 of L2 unless one program per SM needs more). */
#include "fused_norm_bwd.cuh"

/* Forward tile caps (elements a thread holds per stream), vector path: the
 * row is held as h in registers across the reduction, x and r are dead once
 * h is formed. Scalar path: half of it, since each element also keeps 64-bit
 * addresses live; 16 spills at 1024 threads. */
#define AR_FWD_ELEMSV 16
#define AR_FWD_ELEMS1 8

/* ---- device helpers --------------------------------------------------------- */
/* A coherent (not .nc) load of W elements of T: h re-read by the thread that
 * stored it within the same kernel, which the read-only path may not serve. */
template <typename T, int W>
static __device__ __forceinline__ void ar_ld_coherent(const T *p, float (&f)[W])
{
    if constexpr (W == 1) {
        f[0] = kb_to_float(*p);
    } else {
        const uint4 u = *reinterpret_cast<const uint4 *>(p);
        kb_unpack<T>(u, f);
    }
}

/* ---- kernels ------------------------------------------------------------------ */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ar_fwd_kernel(const T *__restrict__ x, const T *__restrict__ r, const float *__restrict__ w,
              T *__restrict__ out, int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = fused_tile_len<W, U>();
    const bool one_tile = N <= tile;
    T *const y = out + M * N;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N, *rr = r + row * N;
        T *hr = out + row * N, *yr = y + row * N;
        /* pass 1: h = x + r rounded to T, stored; sum of h_T^2. h keeps the
         * last tile, which is the whole row when one_tile. */
        float h[U][W], v[U][W];
        float ss = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            fused_load_tile<T, W, U, true>(xr, base, N, h, 0.f);
            fused_load_tile<T, W, U, true>(rr, base, N, v, 0.f);
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) {
                    /* what the stored h reads as; padding stays 0 */
                    h[k][i] = kb_to_float(kb_from_float<T>(h[k][i] + v[k][i]));
                    ss += h[k][i] * h[k][i];
                }
            /* plain stores: a long row re-reads them from L2 in pass 2 */
            fused_tile_each<W, U>(base, N,
                                  [&](int k, int64_t col) { fused_st<T, W, false>(hr + col, h[k]); });
        }
        ss = kb_block_sum(ss, scratch);
        const float rs = 1.f / sqrtf(ss / (float)N + KB_NORM_EPS);
        /* pass 2: y = h_T * rstd * w */
        for (int64_t base = 0; base < N; base += tile) {
            float o[W];
            if (!one_tile)
                fused_tile_each<W, U>(base, N,
                                      [&](int k, int64_t col) { ar_ld_coherent<T, W>(hr + col, h[k]); });
            fused_tile_each<W, U>(base, N, [&](int k, int64_t col) {
                fused_ldf<W, true>(w + col, v[k]);
#pragma unroll
                for (int i = 0; i < W; i++) o[i] = h[k][i] * rs * v[k][i];
                fused_st<T, W>(yr + col, o);
            });
        }
    }
}

/* The RMSNorm backward row loop (common/fused_norm_bwd.cuh) with dres added
 * to dx; program blockIdx.x owns rows [b * rows_per_cta, ...) and partial
 * row b. */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ar_bwd_kernel(const T *__restrict__ h, const T *__restrict__ dy, const T *__restrict__ dres,
              const float *__restrict__ w, const float *__restrict__ rstd, T *__restrict__ dx,
              float *part, int64_t M, int64_t N, int64_t rows_per_cta)
{
    __shared__ float scratch[32];
    fused_norm_bwd_rows<false, T, W, U, true>(h, dy, w, nullptr, rstd, dx, part, M, N,
                                              rows_per_cta, scratch, dres);
}

/* ---- host ------------------------------------------------------------------------ */
static constexpr char ar_name[] = "add_rmsnorm"; /* as errors name the op */

namespace {
/* What fused_norm_bwd_setup (fused_rows.cuh) needs of this op. */
struct ar_op {
    static constexpr const char *name = ar_name;
    static constexpr int BWD_ELEMS1 = FUSED_NORM_TILE_ELEMS_BWD1, BWD_ELEMSV = FUSED_NORM_TILE_ELEMS;
    template <typename K> static auto bwd_kernel()
    {
        return ar_bwd_kernel<typename K::T, K::W, K::U>;
    }
};
} // namespace

static kb_status ar_fwd_run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                            kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    if (!t->x || !t->res || !t->w || !t->out)
        return KB_FAIL(e, KB_ERR_ARG, "fused add_rmsnorm_forward %lldx%lld: x, res, w or out is NULL",
                       (long long)p->M, (long long)p->N);
    /* h and y rows start at multiples of N elements from out: aligned with it */
    const bool aligned = kb_aligned16(t->x) && kb_aligned16(t->res) && kb_aligned16(t->w) &&
                         kb_aligned16(t->out);
    fused_dispatch<AR_FWD_ELEMS1, AR_FWD_ELEMSV>(p, c, aligned, [&](auto k) {
        typedef typename decltype(k)::T T;
        ar_fwd_kernel<T, decltype(k)::W, decltype(k)::U><<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->x, (const T *)t->res, t->w, (T *)t->out, p->M, p->N);
    });
    return fused_check_launch(p, ar_name, "forward", e);
}

/* fused_norm_bwd_run with dres among the pointers the vector path needs
 * aligned and passed to the kernel. */
static kb_status ar_bwd_run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                            kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    const size_t need = (size_t)c->programs * (size_t)p->N * sizeof(float);
    if (!t->workspace || t->workspace_bytes < need || !t->dw)
        return KB_FAIL(e, KB_ERR_ARG,
                       "fused add_rmsnorm_backward %lldx%lld: needs %zu workspace bytes and dw, got %zu",
                       (long long)p->M, (long long)p->N, need, t->workspace_bytes);
    if (!t->x || !t->dy || !t->dres || !t->w || !t->rstd || !t->out)
        return KB_FAIL(e, KB_ERR_ARG,
                       "fused add_rmsnorm_backward %lldx%lld: x, dy, dres, w, rstd or out is NULL",
                       (long long)p->M, (long long)p->N);
    if (kb_cdiv(p->N, FUSED_DW_COLS) > FUSED_MAX_GRID)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "fused add_rmsnorm_backward: N=%lld too long for the dw reduction grid",
                       (long long)p->N);
    const bool aligned = kb_aligned16(t->x) && kb_aligned16(t->dy) && kb_aligned16(t->dres) &&
                         kb_aligned16(t->w) && kb_aligned16(t->out) && kb_aligned16(t->workspace);
    fused_dispatch<ar_op::BWD_ELEMS1, ar_op::BWD_ELEMSV>(p, c, aligned, [&](auto k) {
        typedef typename decltype(k)::T T;
        ar_op::bwd_kernel<decltype(k)>()<<<(unsigned)c->programs, c->threads, 0, s>>>(
            (const T *)t->x, (const T *)t->dy, (const T *)t->dres, t->w, t->rstd, (T *)t->out,
            (float *)t->workspace, p->M, p->N, c->rows_per_cta);
    });
    KB_TRY(fused_check_launch(p, ar_name, "backward", e));
    fused_dw_reduce_kernel<FUSED_DW_COLS>
        <<<(unsigned)kb_cdiv(p->N, FUSED_DW_COLS), FUSED_DW_COLS * FUSED_DW_COLS, 0, s>>>(
            (const float *)t->workspace, t->dw, c->programs, p->N);
    return fused_check_launch(p, ar_name, "backward (dw reduction)", e);
}

extern "C" const kb_impl kb_add_rmsnorm_fused_fwd = {
    "fused", KB_ADD_RMSNORM_FWD, fused_setup<ar_name>, ar_fwd_run,
    fused_describe, fused_teardown, kb_kernels_fixed<1>};
extern "C" const kb_impl kb_add_rmsnorm_fused_bwd = {
    "fused", KB_ADD_RMSNORM_BWD, fused_norm_bwd_setup<ar_op>, ar_bwd_run,
    fused_describe, fused_teardown, kb_kernels_fixed<2>}; /* rows, then the dw reduction */
