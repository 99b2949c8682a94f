/* LayerNorm (no bias), fused backend: the Liger-Kernel / Unsloth design as a
 * hand-written CUDA C kernel.
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
 *   forward : one CTA per row (grid-stride past the grid limit). Pass 1
 *             Welford: a thread takes each tile's count, mean and M2 from its
 *             registers (exact two-pass there) and merges them into its
 *             running (n, mean, M2) by Chan's formula; the CTA merges the
 *             threads the same way in two sum reductions (sum of n*mean gives
 *             the mean, then sum of M2 + n*(mean_t - mean)^2). Biased
 *             variance, rstd = 1/sqrt(var + eps); pass 2 writes
 *             y = (x - mean) * rstd * w. Departing from Liger, whose fp32
 *             mean is off on a constant row (y = d * rstd there instead of
 *             0, rstd up to 1/sqrt(eps)): a row whose variance is within
 *             the mean's rounding error re-reads itself once more for
 *             r = sum (x - mean) and takes mean + r / N, which is the value
 *             itself on a constant row (the tuned kernels' cure,
 *             common/norm_tuned_fwd.cuh).
 *   backward (its row loop shared by both norms: common/fused_norm_bwd.cuh):
 *             Liger's layout: P programs (SMs x resident CTAs per SM, fewer
 *             per SM if the partials would outgrow 3/4 of L2), each owning a
 *             contiguous block of rows. Per row, pass 1 reduces sum(g) and
 *             sum(g * xh) (g = dy * w, xh = (x - mean) * rstd, saved stats);
 *             pass 2 writes dx = rstd * (g - mean(g) - xh * mean(g * xh))
 *             and adds dy * xh into the program's dw partial row of the
 *             workspace [P, N] fp32: kept in registers when the row is one
 *             tile, read-modify-written in global memory per tile otherwise
 *             (a thread owns the same columns on every row: no races). A
 *             second kernel sums the P partials of each column in a fixed
 *             order: dw has the same bits on every run; no atomics.
 * Limits: any M >= 1, N >= 1 (no cap at 65536, unlike Liger), 64-bit
 * indexing. Backward workspace is P * N * 4 bytes; once even one program per
 * SM has partials larger than L2 (N above ~85K on an H200) their
 * read-modify-write goes to HBM: the cost of this design at long rows. */
#include "fused_norm_bwd.cuh"

/* ---- kernels ------------------------------------------------------------- */
/* Is var within what the mean's rounding error alone gives (relative error
 * bound eb)? A zero row (mean 0) is exact already. */
static __device__ __forceinline__ bool fused_near_constant(float var, float mean, float eb)
{
    const float e = fabsf(mean) * eb;
    return mean != 0.f && var <= e * e;
}

template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ln_fwd_kernel(const T *__restrict__ x, const float *__restrict__ w, T *__restrict__ y,
              int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = fused_tile_len<W, U>();
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        /* pass 1: Welford per thread, a tile at a time */
        float n = 0.f, mu = 0.f, m2 = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W];
            bool ok[U];
            float cnt = 0.f, ts = 0.f;
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = fused_col<W>(base, k);
                ok[k] = col < N;
                if (ok[k])
                    fused_ld<T, W, false>(xr + col, v[k]);
                else
                    fused_fill<W>(v[k], 0.f);
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                cnt += ok[k] ? (float)W : 0.f;
#pragma unroll
                for (int i = 0; i < W; i++) ts += v[k][i];
            }
            if (cnt == 0.f) continue; /* nothing of this thread here */
            const float tm = ts / cnt;
            float tm2 = 0.f;
#pragma unroll
            for (int k = 0; k < U; k++)
                if (ok[k])
#pragma unroll
                    for (int i = 0; i < W; i++) {
                        const float d = v[k][i] - tm;
                        tm2 += d * d;
                    }
            const float nn = n + cnt, delta = tm - mu;
            mu += delta * (cnt / nn);
            m2 += tm2 + delta * delta * (n * cnt / nn);
            n = nn;
        }
        float mean = kb_block_sum(n * mu, scratch) / (float)N;
        const float dm = mu - mean;
        float var = kb_block_sum(m2 + n * dm * dm, scratch) / (float)N;
        /* One CTA per row: every thread sees the same mean and var. A
         * thread adds at most a tile's elements in sequence, then merges. */
        if (fused_near_constant(var, mean, (float)(W * U + 32) * 0x1p-24f)) {
            float r = 0.f; /* element by element: rare, and few registers */
#pragma unroll 1
            for (int64_t c = threadIdx.x; c < N; c += blockDim.x) r += kb_to_float(xr[c]) - mean;
            /* On a constant row r is N d to a relative (N / threads) * 2^-24
             * (each thread adds its share in sequence): well below the 1/40
             * that mean + r / N needs to round to the value, and r / N to a
             * few ulps is as good. */
            const float m = mean + __fdividef(kb_block_sum(r, scratch), (float)N);
            var = fmaxf(0.f, var - (m - mean) * (m - mean));
            mean = m;
        }
        const float rs = 1.f / sqrtf(var + KB_NORM_EPS);
        /* pass 2: y = (x - mean) * rstd * w */
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W], wv[U][W], o[W];
            fused_load_xw<T, W, U>(xr, w, base, N, v, wv);
            fused_store_tile<T, W, U>(yr, base, N, o, [&](int k, int64_t, int i) {
                return (v[k][i] - mean) * rs * wv[k][i];
            });
        }
    }
}

/* Program blockIdx.x owns rows [b * rows_per_cta, ...) and partial row b. */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ln_bwd_kernel(const T *__restrict__ x, const T *__restrict__ dy, const float *__restrict__ w,
              const float *__restrict__ mean, const float *__restrict__ rstd,
              T *__restrict__ dx, float *part, int64_t M, int64_t N, int64_t rows_per_cta)
{
    __shared__ float scratch[32];
    fused_norm_bwd_rows<true, T, W, U>(x, dy, w, mean, rstd, dx, part, M, N, rows_per_cta,
                                        scratch);
}

/* ---- host ------------------------------------------------------------------ */
static constexpr char ln_name[] = "layernorm"; /* as errors name the op */

namespace {
/* What the shared run / setup of fused_rows.cuh need of this op. */
struct ln_op {
    FUSED_NORM_TRAITS(ln_name)
    template <typename K> static auto fwd_kernel()
    {
        return ln_fwd_kernel<typename K::T, K::W, K::U>;
    }
    template <typename K> static auto bwd_kernel()
    {
        return ln_bwd_kernel<typename K::T, K::W, K::U>;
    }
    template <typename K>
    static void bwd_launch(const kb_problem *p, const kb_tensors *t, const fused_cfg *c,
                           cudaStream_t s)
    {
        typedef typename K::T T;
        bwd_kernel<K>()<<<(unsigned)c->programs, c->threads, 0, s>>>(
            (const T *)t->x, (const T *)t->dy, t->w, t->mean, t->rstd, (T *)t->out,
            (float *)t->workspace, p->M, p->N, c->rows_per_cta);
    }
};
} // namespace

extern "C" const kb_impl kb_layernorm_fused_fwd = {
    "fused", KB_LAYERNORM_FWD, fused_setup<ln_name>, fused_norm_fwd_run<ln_op>,
    fused_describe, fused_teardown, kb_kernels_fixed<1>};
extern "C" const kb_impl kb_layernorm_fused_bwd = {
    "fused", KB_LAYERNORM_BWD, fused_norm_bwd_setup<ln_op>, fused_norm_bwd_run<ln_op>,
    fused_describe, fused_teardown, kb_kernels_fixed<2>}; /* rows, then the dw reduction */
