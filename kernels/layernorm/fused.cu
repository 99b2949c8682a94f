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
 *             y = (x - mean) * rstd * w.
 *   backward: Liger's layout: P programs (SMs x resident CTAs per SM, fewer
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "kb_cuda.cuh"

/* ---- launch shape (shared pattern of the fused backend) ---------------- */
#define FUSED_MAX_BLOCK 65536
#define FUSED_MAX_GRID 2147483647LL
/* Elements per thread per tile and stream: what a thread holds in registers
 * at once (x, dy, w and the dw partial all live together in the backward). */
#define FUSED_TILE_ELEMS 8
/* Backward, scalar path: four 64-bit addresses per element (x, dy, dx, the
 * partial) stay live too; more than 4 elements spills at 1024 threads. */
#define FUSED_TILE_ELEMS_BWD1 4

typedef struct {
    int64_t block; /* chunk length: next power of two of N, capped */
    int threads;
    int64_t programs, rows_per_cta; /* backward: dw partial rows */
} fused_cfg;

static fused_cfg fused_pick(int64_t N)
{
    fused_cfg c;
    c.block = 1;
    while (c.block < N && c.block < FUSED_MAX_BLOCK) c.block <<= 1;
    c.threads = c.block >= 32768 ? 1024 : c.block >= 8192 ? 512 : c.block >= 2048 ? 256 : 128;
    c.programs = c.rows_per_cta = 0;
    return c;
}

/* Vectors per thread per tile: the thread's share of a chunk (BLOCK /
 * threads elements), at most UMAX vectors of W. Powers of two throughout, so
 * a tile divides a chunk (or covers the whole row when N < threads * W). */
static int fused_vectors(const fused_cfg *c, int W, int UMAX)
{
    const int64_t v = c->block / c->threads / W;
    return v < 1 ? 1 : v > UMAX ? UMAX : (int)v;
}

/* Calls f(std::integral_constant<int, U>) with U = u, a power of two <= UMAX:
 * the tile is a compile-time size, so short rows get lean kernels. */
template <int UMAX, typename F> static void fused_with_u(int u, const F &f)
{
    if constexpr (UMAX > 1) {
        if (u < UMAX) {
            fused_with_u<UMAX / 2>(u, f);
            return;
        }
    }
    f(std::integral_constant<int, UMAX>{});
}

static int fused_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }

static unsigned fused_grid(int64_t M)
{
    return (unsigned)(M < FUSED_MAX_GRID ? M : FUSED_MAX_GRID);
}

/* ---- element access: W = 1 (scalar) or one 128-bit vector of T ---------- */
template <typename T, int W, bool LAST>
static __device__ __forceinline__ void ld(const T *p, float (&f)[W])
{
    if constexpr (W == 1) {
        f[0] = kb_to_float(*p);
    } else {
        static_assert(W * sizeof(T) == 16, "W is one 128-bit vector");
        /* The last read of a row streams (evict-first); earlier ones keep
         * the row in L2 for the next pass. */
        kb_vec<T> v;
        if constexpr (LAST)
            v = kb_load_vec_stream(p);
        else
            v = kb_load_vec(p);
#pragma unroll
        for (int i = 0; i < W; i++) f[i] = kb_to_float(v.v[i]);
    }
}

template <typename T, int W> static __device__ __forceinline__ void st(T *p, const float (&f)[W])
{
    if constexpr (W == 1) {
        *p = kb_from_float<T>(f[0]);
    } else {
        kb_vec<T> v;
#pragma unroll
        for (int i = 0; i < W; i++) v.v[i] = kb_from_float<T>(f[i]);
        kb_store_vec_stream(p, v);
    }
}

/* fp32 rows (w, dw partials): W floats as float4s. w is read-only for the
 * kernel (non-coherent cache); partials are written by the same kernel, so
 * they use plain loads. */
template <int W, bool RO> static __device__ __forceinline__ void ldf(const float *p, float (&f)[W])
{
    if constexpr (W == 1) {
        f[0] = RO ? __ldg(p) : *p;
    } else {
        static_assert(W % 4 == 0, "float4 pieces");
#pragma unroll
        for (int i = 0; i < W; i += 4) {
            const float4 q = RO ? __ldg(reinterpret_cast<const float4 *>(p + i))
                                : *reinterpret_cast<const float4 *>(p + i);
            f[i] = q.x, f[i + 1] = q.y, f[i + 2] = q.z, f[i + 3] = q.w;
        }
    }
}

template <int W> static __device__ __forceinline__ void stf(float *p, const float (&f)[W])
{
    if constexpr (W == 1) {
        *p = f[0];
    } else {
#pragma unroll
        for (int i = 0; i < W; i += 4)
            *reinterpret_cast<float4 *>(p + i) = make_float4(f[i], f[i + 1], f[i + 2], f[i + 3]);
    }
}

/* ---- kernels ------------------------------------------------------------- */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ln_fwd_kernel(const T *__restrict__ x, const float *__restrict__ w, T *__restrict__ y,
              int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = (int64_t)blockDim.x * W * U;
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
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                ok[k] = col < N;
                if (ok[k]) {
                    ld<T, W, false>(xr + col, v[k]);
                } else {
#pragma unroll
                    for (int i = 0; i < W; i++) v[k][i] = 0.f;
                }
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
        const float mean = kb_block_sum(n * mu, scratch) / (float)N;
        const float dm = mu - mean;
        const float var = kb_block_sum(m2 + n * dm * dm, scratch) / (float)N;
        const float rs = 1.f / sqrtf(var + KB_NORM_EPS);
        /* pass 2: y = (x - mean) * rstd * w */
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W], wv[U][W];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    ld<T, W, true>(xr + col, v[k]);
                    ldf<W, true>(w + col, wv[k]);
                }
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    float o[W];
#pragma unroll
                    for (int i = 0; i < W; i++) o[i] = (v[k][i] - mean) * rs * wv[k][i];
                    st<T, W>(yr + col, o);
                }
            }
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
    const int64_t tile = (int64_t)blockDim.x * W * U;
    const bool one_tile = N <= tile;
    const int64_t r0 = (int64_t)blockIdx.x * rows_per_cta;
    const int64_t r1 = r0 + rows_per_cta < M ? r0 + rows_per_cta : M;
    float *pr = part + (int64_t)blockIdx.x * N;
    float acc[U][W];
#pragma unroll
    for (int k = 0; k < U; k++)
#pragma unroll
        for (int i = 0; i < W; i++) acc[k][i] = 0.f;

    for (int64_t row = r0; row < r1; row++) {
        const T *xr = x + row * N, *gr = dy + row * N;
        T *dr = dx + row * N;
        const float mu = mean[row], rs = rstd[row];
        /* pass 1: sum(g) and sum(g * xh) */
        float sg = 0.f, sgx = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            float xv[U][W], gv[U][W], wv[U][W];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    ld<T, W, false>(xr + col, xv[k]);
                    ld<T, W, false>(gr + col, gv[k]);
                    ldf<W, true>(w + col, wv[k]);
                } else {
#pragma unroll
                    for (int i = 0; i < W; i++) xv[k][i] = mu, gv[k][i] = wv[k][i] = 0.f;
                }
            }
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) {
                    const float g = gv[k][i] * wv[k][i];
                    sg += g;
                    sgx += g * ((xv[k][i] - mu) * rs);
                }
        }
        const float mg = kb_block_sum(sg, scratch) / (float)N;
        const float c = kb_block_sum(sgx, scratch) / (float)N;
        /* pass 2: dx, and dy * xh into the dw partial */
        for (int64_t base = 0; base < N; base += tile) {
            float xv[U][W], gv[U][W], wv[U][W];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    ld<T, W, true>(xr + col, xv[k]);
                    ld<T, W, true>(gr + col, gv[k]);
                    ldf<W, true>(w + col, wv[k]);
                }
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    float o[W], d[W];
#pragma unroll
                    for (int i = 0; i < W; i++) {
                        const float xh = (xv[k][i] - mu) * rs, g = gv[k][i] * wv[k][i];
                        o[i] = rs * (g - mg - xh * c);
                        d[i] = gv[k][i] * xh;
                    }
                    st<T, W>(dr + col, o);
                    if (one_tile) {
#pragma unroll
                        for (int i = 0; i < W; i++) acc[k][i] += d[i];
                    } else {
                        if (row != r0) {
                            float pv[W];
                            ldf<W, false>(pr + col, pv);
#pragma unroll
                            for (int i = 0; i < W; i++) d[i] += pv[i];
                        }
                        stf<W>(pr + col, d);
                    }
                }
            }
        }
    }
    if (one_tile && r0 < r1) {
#pragma unroll
        for (int k = 0; k < U; k++) {
            const int64_t col = ((int64_t)k * blockDim.x + threadIdx.x) * W;
            if (col < N) stf<W>(pr + col, acc[k]);
        }
    }
}

/* dw[j] = sum over programs of part[p, j]: 32 columns per CTA, 32 lanes of
 * programs each summing a strided subset in order, then lane sums added in
 * order. Fixed order, so the same bits every run. */
static __global__ void __launch_bounds__(1024)
dw_reduce_kernel(const float *__restrict__ part, float *__restrict__ dw, int64_t P, int64_t N)
{
    __shared__ float sm[32][33];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const int64_t col = (int64_t)blockIdx.x * 32 + tx;
    float s = 0.f;
    if (col < N)
        for (int64_t p = ty; p < P; p += 32) s += part[p * N + col];
    sm[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && col < N) {
        float r = 0.f;
#pragma unroll
        for (int i = 0; i < 32; i++) r += sm[i][tx];
        dw[col] = r;
    }
}

/* ---- host ------------------------------------------------------------------ */
static kb_status fused_launched(const kb_problem *p, const char *what, kb_err *e)
{
    const cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "fused %s %s %lldx%lld: launch: %s", what,
                       kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N,
                       cudaGetErrorString(rc));
    return KB_OK;
}

static kb_status fused_new(const kb_problem *p, fused_cfg **out, kb_err *e)
{
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "fused layernorm: bad problem %lldx%lld dtype %d",
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    fused_cfg *c = (fused_cfg *)malloc(sizeof *c);
    if (!c) return KB_FAIL(e, KB_ERR_NOMEM, "fused layernorm: out of host memory");
    *c = fused_pick(p->N);
    *out = c;
    return KB_OK;
}

static void fused_describe(const void *state, char *buf, size_t len)
{
    const fused_cfg *c = (const fused_cfg *)state;
    if (c->programs)
        snprintf(buf, len, "block=%lld threads=%d programs=%lld", (long long)c->block,
                 c->threads, (long long)c->programs);
    else
        snprintf(buf, len, "block=%lld threads=%d", (long long)c->block, c->threads);
}

static void fused_teardown(void *state) { free(state); }

/* Programs of the backward: every SM filled with resident CTAs (occ per SM),
 * unless the [P, N] partials would then outgrow 3/4 of L2 (never fewer than
 * one per SM), and no more than M. Rows are then split evenly. */
static void fused_plan(fused_cfg *c, const kb_problem *p, const kb_setup_ctx *ctx, int occ)
{
    const int64_t sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 1;
    int64_t per_sm = occ > 0 ? occ : 1;
    if (ctx && ctx->l2_bytes > 0) {
        const int64_t fit = (int64_t)(ctx->l2_bytes / 4 * 3) / (sms * p->N * 4);
        if (per_sm > fit) per_sm = fit > 1 ? fit : 1;
    }
    int64_t P = sms * per_sm;
    if (P > p->M) P = p->M;
    c->rows_per_cta = kb_cdiv(p->M, P);
    c->programs = kb_cdiv(p->M, c->rows_per_cta);
}

static kb_status fused_fwd_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                                 size_t *workspace_bytes, kb_err *e)
{
    fused_cfg *c = NULL;
    KB_TRY(fused_new(p, &c, e));
    *state = c;
    *workspace_bytes = 0;
    return KB_OK;
}

template <typename T, int W>
static void ln_fwd_launch(const kb_problem *p, const kb_tensors *t, const fused_cfg *c,
                           cudaStream_t s)
{
    constexpr int UMAX = FUSED_TILE_ELEMS / W;
    fused_with_u<UMAX>(fused_vectors(c, W, UMAX), [&](auto uc) {
        ln_fwd_kernel<T, W, decltype(uc)::value><<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->x, t->w, (T *)t->out, p->M, p->N);
    });
}

static kb_status ln_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                             cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    KB_DISPATCH(p->dtype, T, {
        constexpr int VW = 16 / sizeof(T);
        if (p->N % VW == 0 && fused_aligned(t->x) && fused_aligned(t->w) &&
            fused_aligned(t->out))
            ln_fwd_launch<T, VW>(p, t, c, s);
        else
            ln_fwd_launch<T, 1>(p, t, c, s);
    });
    return fused_launched(p, "layernorm_forward", e);
}

/* Calls f(kernel) with the backward kernel the run will pick for an aligned
 * problem (or the scalar one for ragged N). */
template <typename T, int W, typename F>
static void ln_bwd_kernel_for(const fused_cfg *c, const F &f)
{
    constexpr int UMAX = (W == 1 ? FUSED_TILE_ELEMS_BWD1 : FUSED_TILE_ELEMS) / W;
    fused_with_u<UMAX>(fused_vectors(c, W, UMAX),
                       [&](auto uc) { f(ln_bwd_kernel<T, W, decltype(uc)::value>); });
}

static kb_status ln_bwd_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                               size_t *workspace_bytes, kb_err *e)
{
    fused_cfg *c = NULL;
    KB_TRY(fused_new(p, &c, e));
    int occ = 0;
    cudaError_t rc = cudaSuccess;
    const auto query = [&](auto kernel) {
        rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, c->threads, 0);
    };
    KB_DISPATCH(p->dtype, T, {
        constexpr int VW = 16 / sizeof(T);
        if (p->N % VW == 0)
            ln_bwd_kernel_for<T, VW>(c, query);
        else
            ln_bwd_kernel_for<T, 1>(c, query);
    });
    if (rc != cudaSuccess) {
        free(c);
        return KB_FAIL(e, KB_ERR_CUDA, "fused layernorm_backward %lldx%lld: occupancy: %s",
                       (long long)p->M, (long long)p->N, cudaGetErrorString(rc));
    }
    fused_plan(c, p, ctx, occ);
    *state = c;
    *workspace_bytes = (size_t)c->programs * (size_t)p->N * sizeof(float);
    return KB_OK;
}

template <typename T, int W>
static void ln_bwd_launch(const kb_problem *p, const kb_tensors *t, const fused_cfg *c,
                           cudaStream_t s)
{
    ln_bwd_kernel_for<T, W>(c, [&](auto kernel) {
        kernel<<<(unsigned)c->programs, c->threads, 0, s>>>(
            (const T *)t->x, (const T *)t->dy, t->w, t->mean, t->rstd, (T *)t->out,
            (float *)t->workspace, p->M, p->N, c->rows_per_cta);
    });
}

static kb_status ln_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                             cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    const size_t need = (size_t)c->programs * (size_t)p->N * sizeof(float);
    if (!t->workspace || t->workspace_bytes < need || !t->dw)
        return KB_FAIL(e, KB_ERR_ARG,
                       "fused layernorm_backward %lldx%lld: needs %zu workspace bytes and dw, "
                       "got %zu",
                       (long long)p->M, (long long)p->N, need, t->workspace_bytes);
    if (kb_cdiv(p->N, 32) > FUSED_MAX_GRID)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "fused layernorm_backward: N=%lld too long for "
                       "the dw reduction grid", (long long)p->N);
    KB_DISPATCH(p->dtype, T, {
        constexpr int VW = 16 / sizeof(T);
        if (p->N % VW == 0 && fused_aligned(t->x) && fused_aligned(t->dy) &&
            fused_aligned(t->w) && fused_aligned(t->out) && fused_aligned(t->workspace))
            ln_bwd_launch<T, VW>(p, t, c, s);
        else
            ln_bwd_launch<T, 1>(p, t, c, s);
    });
    KB_TRY(fused_launched(p, "layernorm_backward", e));
    dw_reduce_kernel<<<(unsigned)kb_cdiv(p->N, 32), 1024, 0, s>>>(
        (const float *)t->workspace, t->dw, c->programs, p->N);
    return fused_launched(p, "layernorm_backward (dw reduction)", e);
}

extern "C" const kb_impl kb_layernorm_fused_fwd = {
    "fused", KB_LAYERNORM_FWD, fused_fwd_setup, ln_fwd_run, fused_describe, fused_teardown};
extern "C" const kb_impl kb_layernorm_fused_bwd = {
    "fused", KB_LAYERNORM_BWD, ln_bwd_setup, ln_bwd_run, fused_describe, fused_teardown};
