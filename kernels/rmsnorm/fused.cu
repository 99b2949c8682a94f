/* RMSNorm, fused backend: the Liger-Kernel / Unsloth design as a hand-written
 * CUDA C kernel.
 *
 * Strategy: the row is walked in chunks of BLOCK = next power of two of N,
 * capped at 65536 (Liger's MAX_FUSED_SIZE); threads scale with BLOCK as in
 * Liger's calculate_settings (4 warps, 8 from 2048, 16 from 8192, 32 from
 * 32768). A thread's share of a chunk is loaded into registers before it is
 * used: one 128-bit vector of x (and float4s of w) per load when every row
 * start is 16-byte aligned (N * sizeof(T) % 16 == 0 and aligned base
 * pointers), scalars otherwise; at most 8 elements per thread and stream at
 * once, so a larger share is walked as several tiles. fp32 math, two passes
 * over the row, the second re-reading from global memory (mostly L2 hits):
 *   forward : one CTA per row (grid-stride past the grid limit). Pass 1 sum
 *             of squares by a CTA sum reduction, rstd = 1/sqrt(ss/N + eps);
 *             pass 2 writes y = x * rstd * w.
 *   backward (its row loop shared by both norms: common/fused_norm_bwd.cuh):
 *             Liger's layout: P programs (SMs x resident CTAs per SM, fewer
 *             per SM if the partials would outgrow 3/4 of L2), each owning a
 *             contiguous block of rows. Per row, pass 1 reduces sum(g * xh)
 *             (g = dy * w, xh = x * rstd, saved rstd); pass 2 writes
 *             dx = rstd * (g - xh * mean(g * xh)) and adds dy * xh into the
 *             program's dw partial row of the workspace [P, N] fp32: kept in
 *             registers when the row is one tile, read-modify-written in
 *             global memory per tile otherwise (a thread owns the same
 *             columns on every row: no races). A second kernel sums the P
 *             partials of each column in a fixed order: dw has the same bits
 *             on every run; no atomics.
 * Limits: any M >= 1, N >= 1 (no cap at 65536, unlike Liger), 64-bit
 * indexing. Backward workspace is P * N * 4 bytes; once even one program per
 * SM has partials larger than L2 (N above ~85K on an H200) their
 * read-modify-write goes to HBM: the cost of this design at long rows. */
#include "fused_norm_bwd.cuh"

/* ---- kernels ------------------------------------------------------------- */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
rms_fwd_kernel(const T *__restrict__ x, const float *__restrict__ w, T *__restrict__ y,
               int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = fused_tile_len<W, U>();
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        /* pass 1: sum of squares */
        float ss = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W];
            fused_load_tile<T, W, U, false>(xr, base, N, v, 0.f);
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) ss += v[k][i] * v[k][i];
        }
        ss = kb_block_sum(ss, scratch);
        const float rs = 1.f / sqrtf(ss / (float)N + KB_NORM_EPS);
        /* pass 2: y = x * rstd * w */
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W], wv[U][W], o[W];
            fused_load_xw<T, W, U>(xr, w, base, N, v, wv);
            fused_store_tile<T, W, U>(yr, base, N, o, [&](int k, int64_t, int i) {
                return v[k][i] * rs * wv[k][i];
            });
        }
    }
}

/* Program blockIdx.x owns rows [b * rows_per_cta, ...) and partial row b. */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
rms_bwd_kernel(const T *__restrict__ x, const T *__restrict__ dy, const float *__restrict__ w,
               const float *__restrict__ rstd, T *__restrict__ dx, float *part, int64_t M,
               int64_t N, int64_t rows_per_cta)
{
    __shared__ float scratch[32];
    fused_norm_bwd_rows<false, T, W, U>(x, dy, w, nullptr, rstd, dx, part, M, N, rows_per_cta,
                                         scratch);
}

/* ---- host ------------------------------------------------------------------ */
static constexpr char rms_name[] = "rmsnorm"; /* as errors name the op */

namespace {
/* What the shared run / setup of fused_rows.cuh need of this op. */
struct rms_op {
    FUSED_NORM_TRAITS(rms_name)
    template <typename K> static auto fwd_kernel()
    {
        return rms_fwd_kernel<typename K::T, K::W, K::U>;
    }
    template <typename K> static auto bwd_kernel()
    {
        return rms_bwd_kernel<typename K::T, K::W, K::U>;
    }
    template <typename K>
    static void bwd_launch(const kb_problem *p, const kb_tensors *t, const fused_cfg *c,
                           cudaStream_t s)
    {
        typedef typename K::T T;
        bwd_kernel<K>()<<<(unsigned)c->programs, c->threads, 0, s>>>(
            (const T *)t->x, (const T *)t->dy, t->w, t->rstd, (T *)t->out,
            (float *)t->workspace, p->M, p->N, c->rows_per_cta);
    }
};
} // namespace

extern "C" const kb_impl kb_rmsnorm_fused_fwd = {
    "fused", KB_RMSNORM_FWD, fused_setup<rms_name>, fused_norm_fwd_run<rms_op>,
    fused_describe, fused_teardown, kb_kernels_fixed<1>};
extern "C" const kb_impl kb_rmsnorm_fused_bwd = {
    "fused", KB_RMSNORM_BWD, fused_norm_bwd_setup<rms_op>, fused_norm_bwd_run<rms_op>,
    fused_describe, fused_teardown, kb_kernels_fixed<2>}; /* rows, then the dw reduction */
