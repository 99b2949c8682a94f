/* Softmax over the last dimension, fused backend: the Liger-Kernel / Unsloth
 * design as a hand-written CUDA C kernel.
 *
 * Strategy: one CTA per row (grid-stride over rows past the grid limit). The
 * row is walked in chunks of BLOCK = next power of two of N, capped at 65536
 * (Liger's MAX_FUSED_SIZE); threads scale with BLOCK as in Liger's
 * calculate_settings (4 warps, 8 from 2048, 16 from 8192, 32 from 32768).
 * A thread's share of a chunk is loaded into registers before it is used: one
 * 128-bit vector per load when every row start is 16-byte aligned
 * (N * sizeof(T) % 16 == 0 and aligned base pointers), scalars otherwise. At
 * most 16 elements per thread and stream are in registers at once (8 for
 * scalar read-and-write passes), so a chunk whose share is larger is walked
 * as several tiles. All math is fp32. Two passes over the row, the second
 * re-reading its inputs from global memory (mostly L2 hits):
 *   forward : pass 1 online max/sum-of-exp per thread (rescaled once per
 *             tile), combined across the CTA by a max then a sum reduction;
 *             pass 2 writes y = exp(x - max) / sum.
 *   backward: pass 1 dot = sum(dy * y) by a CTA sum reduction; pass 2 writes
 *             dx = y * (dy - dot).
 * Limits: any M >= 1, N >= 1 (no cap at 65536, unlike Liger), 64-bit
 * indexing. exp is the fast __expf (ex2.approx), as Triton's tl.exp; the
 * per-row rescale uses the accurate expf. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "kb_cuda.cuh"

/* ---- launch shape (shared pattern of the fused backend) ---------------- */
#define FUSED_MAX_BLOCK 65536
#define FUSED_MAX_GRID 2147483647LL
/* Elements per thread per tile and stream: what a thread holds in registers
 * at once. 16 for one input stream; 8 with two input streams, and on the
 * scalar path of a pass that also writes (the 64-bit addresses of its loads
 * and stores stay live); more spills at 1024 threads (64 registers). */
#define FUSED_TILE_ELEMS 16
#define FUSED_TILE_ELEMS_SCALAR_RW 8
#define FUSED_TILE_ELEMS_TWO_IN 8

typedef struct {
    int64_t block; /* chunk length: next power of two of N, capped */
    int threads;
} fused_cfg;

static fused_cfg fused_pick(int64_t N)
{
    fused_cfg c;
    c.block = 1;
    while (c.block < N && c.block < FUSED_MAX_BLOCK) c.block <<= 1;
    c.threads = c.block >= 32768 ? 1024 : c.block >= 8192 ? 512 : c.block >= 2048 ? 256 : 128;
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

/* ---- element access: W = 1 (scalar) or one 128-bit vector --------------- */
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

/* ---- kernels ------------------------------------------------------------- */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
softmax_fwd_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = (int64_t)blockDim.x * W * U;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        /* pass 1: online max and sum of exp */
        float m = -INFINITY, s = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W];
            float tmax = -INFINITY;
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    ld<T, W, false>(xr + col, v[k]);
                } else {
#pragma unroll
                    for (int i = 0; i < W; i++) v[k][i] = -INFINITY;
                }
#pragma unroll
                for (int i = 0; i < W; i++) tmax = fmaxf(tmax, v[k][i]);
            }
            if (tmax == -INFINITY) continue; /* nothing of this thread here */
            const float mn = fmaxf(m, tmax);
            float ts = 0.f;
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) ts += __expf(v[k][i] - mn);
            s = s * __expf(m - mn) + ts;
            m = mn;
        }
        const float rmax = kb_block_max(m, scratch);
        const float rsum = kb_block_sum(m == -INFINITY ? 0.f : s * expf(m - rmax), scratch);
        const float inv = 1.f / rsum;
        /* pass 2: normalise */
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) ld<T, W, true>(xr + col, v[k]);
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    float o[W];
#pragma unroll
                    for (int i = 0; i < W; i++) o[i] = __expf(v[k][i] - rmax) * inv;
                    st<T, W>(yr + col, o);
                }
            }
        }
    }
}

template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
softmax_bwd_kernel(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                   int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = (int64_t)blockDim.x * W * U;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *yr = y + row * N, *gr = dy + row * N;
        T *dr = dx + row * N;
        /* pass 1: dot = sum(dy * y) */
        float dot = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            float a[U][W], b[U][W];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    ld<T, W, false>(yr + col, a[k]);
                    ld<T, W, false>(gr + col, b[k]);
                } else {
#pragma unroll
                    for (int i = 0; i < W; i++) a[k][i] = b[k][i] = 0.f;
                }
            }
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) dot += a[k][i] * b[k][i];
        }
        dot = kb_block_sum(dot, scratch);
        /* pass 2: dx = y * (dy - dot) */
        for (int64_t base = 0; base < N; base += tile) {
            float a[U][W], b[U][W];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    ld<T, W, true>(yr + col, a[k]);
                    ld<T, W, true>(gr + col, b[k]);
                }
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
                if (col < N) {
                    float o[W];
#pragma unroll
                    for (int i = 0; i < W; i++) o[i] = a[k][i] * (b[k][i] - dot);
                    st<T, W>(dr + col, o);
                }
            }
        }
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

static kb_status fused_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                             size_t *workspace_bytes, kb_err *e)
{
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "fused softmax: bad problem %lldx%lld dtype %d",
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    fused_cfg *c = (fused_cfg *)malloc(sizeof *c);
    if (!c) return KB_FAIL(e, KB_ERR_NOMEM, "fused softmax: out of host memory");
    *c = fused_pick(p->N);
    *state = c;
    *workspace_bytes = 0;
    return KB_OK;
}

static void fused_describe(const void *state, char *buf, size_t len)
{
    const fused_cfg *c = (const fused_cfg *)state;
    snprintf(buf, len, "block=%lld threads=%d", (long long)c->block, c->threads);
}

static void fused_teardown(void *state) { free(state); }

template <typename T, int W>
static void softmax_fwd_launch(const kb_problem *p, const kb_tensors *t, const fused_cfg *c,
                               cudaStream_t s)
{
    constexpr int UMAX = (W == 1 ? FUSED_TILE_ELEMS_SCALAR_RW : FUSED_TILE_ELEMS) / W;
    fused_with_u<UMAX>(fused_vectors(c, W, UMAX), [&](auto uc) {
        softmax_fwd_kernel<T, W, decltype(uc)::value><<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->x, (T *)t->out, p->M, p->N);
    });
}

static kb_status softmax_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                                 cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    KB_DISPATCH(p->dtype, T, {
        constexpr int VW = 16 / sizeof(T);
        if (p->N % VW == 0 && fused_aligned(t->x) && fused_aligned(t->out))
            softmax_fwd_launch<T, VW>(p, t, c, s);
        else
            softmax_fwd_launch<T, 1>(p, t, c, s);
    });
    return fused_launched(p, "softmax_forward", e);
}

template <typename T, int W>
static void softmax_bwd_launch(const kb_problem *p, const kb_tensors *t, const fused_cfg *c,
                               cudaStream_t s)
{
    constexpr int UMAX = FUSED_TILE_ELEMS_TWO_IN / W; /* two input streams */
    fused_with_u<UMAX>(fused_vectors(c, W, UMAX), [&](auto uc) {
        softmax_bwd_kernel<T, W, decltype(uc)::value><<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->y, (const T *)t->dy, (T *)t->out, p->M, p->N);
    });
}

static kb_status softmax_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                                 cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    KB_DISPATCH(p->dtype, T, {
        constexpr int VW = 16 / sizeof(T);
        if (p->N % VW == 0 && fused_aligned(t->y) && fused_aligned(t->dy) &&
            fused_aligned(t->out))
            softmax_bwd_launch<T, VW>(p, t, c, s);
        else
            softmax_bwd_launch<T, 1>(p, t, c, s);
    });
    return fused_launched(p, "softmax_backward", e);
}

extern "C" const kb_impl kb_softmax_fused_fwd = {
    "fused", KB_SOFTMAX_FWD, fused_setup, softmax_fwd_run, fused_describe, fused_teardown};
extern "C" const kb_impl kb_softmax_fused_bwd = {
    "fused", KB_SOFTMAX_BWD, fused_setup, softmax_bwd_run, fused_describe, fused_teardown};
