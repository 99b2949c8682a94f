/* Machinery shared by the fused backend (kernels/<op>/fused.cu): the
 * Liger-Kernel / Unsloth design as hand-written CUDA C. Each op file keeps
 * its own math, its per-thread tile caps and its header comment (strategy,
 * limits); what every one of them walks the same way lives here:
 *   - launch shape: Liger's calculate_settings (BLOCK = next power of two of
 *     N capped at 65536, threads from BLOCK), the tile a thread holds in
 *     registers, the grid, and the dtype x vector-width x tile dispatch;
 *   - the chunked row walk: the columns a thread owns in a tile, loads and
 *     stores of T rows (one 128-bit vector or a scalar) and fp32 rows
 *     (float4s or a scalar), per-tile loops;
 *   - the online max / sum-of-exp pass of softmax and cross entropy;
 *   - the norms: loads of x, w and dy, the forward's run, and the
 *     backward's dw (a per-program partial row, the fixed-order reduction of
 *     the partials, the program plan, setup and run);
 *   - host boilerplate: setup, describe, teardown, launch check.
 * Tile loops take small lambdas; everything is force-inlined, and each kernel
 * compiles to the instructions and register counts it had when its loops
 * were written out in full (checked with ptxas -v and the SASS). That holds
 * because the arrays (tiles, outputs, acc, scratch) are the kernel's own,
 * declared in the kernel in the order it uses them and passed in by
 * reference: an array declared inside an inlined helper is hoisted ahead of
 * the kernel's, which reorders its registers and cost one or two more on
 * some paths. (fused_row_max_sumexp keeps its tile: it is the first array of
 * the kernels that call it.)
 * Functions are static or static inline and types are templates or plain
 * structs: each .cu gets its own copy, nothing is visible at link time. */
#ifndef KB_FUSED_ROWS_CUH
#define KB_FUSED_ROWS_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "kb_cuda.cuh"

/* ---- launch shape --------------------------------------------------------- */
#define FUSED_MAX_BLOCK 65536
#define FUSED_MAX_GRID 2147483647LL

typedef struct {
    int64_t block; /* chunk length: next power of two of N, capped */
    int threads;
    int64_t programs, rows_per_cta; /* norm backward: dw partial rows; else 0 */
} fused_cfg;

static inline fused_cfg fused_pick(int64_t N)
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
static inline int fused_vectors(const fused_cfg *c, int W, int UMAX)
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

static inline unsigned fused_grid(int64_t M)
{
    return (unsigned)(M < FUSED_MAX_GRID ? M : FUSED_MAX_GRID);
}

/* A kernel instance: storage type T, W elements per access (1 or one
 * 128-bit vector), U accesses per thread per tile. */
template <typename T_, int W_, int U_> struct fused_shape {
    typedef T_ T;
    static constexpr int W = W_, U = U_;
};

/* Calls f(fused_shape<T, W, U>{}) for p's storage type T. W is one 128-bit
 * vector when every row start is 16-byte aligned (N % W == 0 and `aligned`,
 * the caller's test of its base pointers), 1 otherwise. U caps a thread's
 * tile at ELEMS1 elements on the scalar path and ELEMSV on the vector path
 * (the op's register budget), and no more than its share of a chunk. */
template <int ELEMS1, int ELEMSV, typename F>
static void fused_dispatch(const kb_problem *p, const fused_cfg *c, bool aligned, const F &f)
{
    KB_DISPATCH(p->dtype, T, {
        constexpr int VW = 16 / sizeof(T);
        if (p->N % VW == 0 && aligned) {
            constexpr int UMAX = ELEMSV / VW;
            fused_with_u<UMAX>(fused_vectors(c, VW, UMAX),
                               [&](auto uc) { f(fused_shape<T, VW, decltype(uc)::value>{}); });
        } else {
            fused_with_u<ELEMS1>(fused_vectors(c, 1, ELEMS1),
                                 [&](auto uc) { f(fused_shape<T, 1, decltype(uc)::value>{}); });
        }
    });
}

/* ---- element access: W = 1 (scalar) or one 128-bit vector of T ---------- */
template <typename T, int W, bool LAST>
static __device__ __forceinline__ void fused_ld(const T *p, float (&f)[W])
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

/* Stores stream (evict-first) unless STREAM is false: the GLU kernels keep
 * their outputs in L2 with plain stores, as Liger's tl.store does. */
template <typename T, int W, bool STREAM = true>
static __device__ __forceinline__ void fused_st(T *p, const float (&f)[W])
{
    if constexpr (W == 1) {
        *p = kb_from_float<T>(f[0]);
    } else {
        kb_vec<T> v;
#pragma unroll
        for (int i = 0; i < W; i++) v.v[i] = kb_from_float<T>(f[i]);
        if constexpr (STREAM)
            kb_store_vec_stream(p, v);
        else
            kb_store_vec(p, v);
    }
}

/* fp32 rows (w, dw partials): W floats as float4s. w is read-only for the
 * kernel (non-coherent cache); partials are written by the same kernel, so
 * they use plain loads. */
template <int W, bool RO>
static __device__ __forceinline__ void fused_ldf(const float *p, float (&f)[W])
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

template <int W> static __device__ __forceinline__ void fused_stf(float *p, const float (&f)[W])
{
    if constexpr (W == 1) {
        *p = f[0];
    } else {
#pragma unroll
        for (int i = 0; i < W; i += 4)
            *reinterpret_cast<float4 *>(p + i) = make_float4(f[i], f[i + 1], f[i + 2], f[i + 3]);
    }
}

/* ---- the chunked row walk --------------------------------------------------
 * A tile is blockDim.x * W * U elements from column base: thread t owns U
 * accesses of W elements, access k at column base + (k * blockDim.x + t) * W
 * (consecutive threads, consecutive vectors: coalesced). Rows longer than a
 * tile are walked tile by tile. */
template <int W, int U> static __device__ __forceinline__ int64_t fused_tile_len()
{
    return (int64_t)blockDim.x * W * U;
}

template <int W> static __device__ __forceinline__ int64_t fused_col(int64_t base, int k)
{
    return base + ((int64_t)k * blockDim.x + threadIdx.x) * W;
}

/* For each of this thread's accesses of the tile at base: live(k, col) for
 * those inside the row, dead(k) for those past N. */
template <int W, int U, typename L, typename D>
static __device__ __forceinline__ void fused_tile_each(int64_t base, int64_t N, const L &live,
                                                       const D &dead)
{
#pragma unroll
    for (int k = 0; k < U; k++) {
        const int64_t col = fused_col<W>(base, k);
        if (col < N)
            live(k, col);
        else
            dead(k);
    }
}

template <int W, int U, typename L>
static __device__ __forceinline__ void fused_tile_each(int64_t base, int64_t N, const L &live)
{
#pragma unroll
    for (int k = 0; k < U; k++) {
        const int64_t col = fused_col<W>(base, k);
        if (col < N) live(k, col);
    }
}

template <int W> static __device__ __forceinline__ void fused_fill(float (&v)[W], float x)
{
#pragma unroll
    for (int i = 0; i < W; i++) v[i] = x;
}

/* This thread's share of the tile at base of row r into v; accesses past N
 * are set to pad (the reduction's identity) or, without pad, left unset for
 * passes that only touch live columns. */
template <typename T, int W, int U, bool LAST>
static __device__ __forceinline__ void fused_load_tile(const T *r, int64_t base, int64_t N,
                                                       float (&v)[U][W], float pad)
{
    fused_tile_each<W, U>(
        base, N, [&](int k, int64_t col) { fused_ld<T, W, LAST>(r + col, v[k]); },
        [&](int k) { fused_fill<W>(v[k], pad); });
}

template <typename T, int W, int U, bool LAST>
static __device__ __forceinline__ void fused_load_tile(const T *r, int64_t base, int64_t N,
                                                       float (&v)[U][W])
{
    fused_tile_each<W, U>(base, N,
                          [&](int k, int64_t col) { fused_ld<T, W, LAST>(r + col, v[k]); });
}

/* Elementwise end of a pass: for each access inside the row, element i of
 * the output is f(k, col, i) (access k at column col); o takes the W values
 * and is stored (streaming) to r + col. o is the caller's, declared after
 * its input tiles: an array declared in here would be hoisted ahead of the
 * kernel's own and change its register allocation. */
template <typename T, int W, int U, typename F>
static __device__ __forceinline__ void fused_store_tile(T *r, int64_t base, int64_t N,
                                                        float (&o)[W], const F &f)
{
    fused_tile_each<W, U>(base, N, [&](int k, int64_t col) {
#pragma unroll
        for (int i = 0; i < W; i++) o[i] = f(k, col, i);
        fused_st<T, W>(r + col, o);
    });
}

/* ---- softmax statistics (softmax forward, cross-entropy forward) ----------
 * One pass over row xr: per thread an online max / sum of exp, rescaled once
 * per tile (fast __expf, as Triton's tl.exp), then the CTA's max and the sum
 * rescaled to it (accurate expf). Every thread gets rmax and rsum. */
template <typename T, int W, int U>
static __device__ __forceinline__ void fused_row_max_sumexp(const T *xr, int64_t N, int64_t tile,
                                                            float *scratch, float &rmax,
                                                            float &rsum)
{
    float m = -INFINITY, s = 0.f;
    for (int64_t base = 0; base < N; base += tile) {
        float v[U][W];
        fused_load_tile<T, W, U, false>(xr, base, N, v, -INFINITY);
        float tmax = -INFINITY;
#pragma unroll
        for (int k = 0; k < U; k++)
#pragma unroll
            for (int i = 0; i < W; i++) tmax = fmaxf(tmax, v[k][i]);
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
    rmax = kb_block_max(m, scratch);
    rsum = kb_block_sum(m == -INFINITY ? 0.f : s * expf(m - rmax), scratch);
}

/* ---- norm rows: x (T) with w (fp32, read-only) and dy (T) ----------------- */
/* Norm forward, second pass: x and w of the tile (live accesses only). */
template <typename T, int W, int U>
static __device__ __forceinline__ void fused_load_xw(const T *xr, const float *w, int64_t base,
                                                     int64_t N, float (&xv)[U][W],
                                                     float (&wv)[U][W])
{
    fused_tile_each<W, U>(base, N, [&](int k, int64_t col) {
        fused_ld<T, W, true>(xr + col, xv[k]);
        fused_ldf<W, true>(w + col, wv[k]);
    });
}

/* Norm backward: x, dy and w of the tile. First pass (LAST false): accesses
 * past N get x = xpad (where x - mean is 0) and dy = w = 0. Second pass
 * (LAST true): live accesses only. */
template <typename T, int W, int U, bool LAST>
static __device__ __forceinline__ void fused_load_xgw(const T *xr, const T *gr, const float *w,
                                                      int64_t base, int64_t N, float (&xv)[U][W],
                                                      float (&gv)[U][W], float (&wv)[U][W],
                                                      float xpad = 0.f)
{
    const auto live = [&](int k, int64_t col) {
        fused_ld<T, W, LAST>(xr + col, xv[k]);
        fused_ld<T, W, LAST>(gr + col, gv[k]);
        fused_ldf<W, true>(w + col, wv[k]);
    };
    if constexpr (LAST) {
        fused_tile_each<W, U>(base, N, live);
    } else {
        fused_tile_each<W, U>(base, N, live, [&](int k) {
#pragma unroll
            for (int i = 0; i < W; i++) xv[k][i] = xpad, gv[k][i] = wv[k][i] = 0.f;
        });
    }
}

/* ---- norm backward: dw partials ----------------------------------------------
 * Liger's layout: program b (blockIdx.x) owns rows [r0, r1), a contiguous
 * block of rows_per_cta, and row b of the fp32 workspace [P, N], where it
 * accumulates dy * xh over its rows. A thread owns the same columns on every
 * row, so there are no races. When the row is one tile the sums stay in
 * registers (acc) and are written once by flush(); otherwise each tile is
 * read-modify-written in global memory (the first row just writes).
 * acc is the kernel's own array, passed in: as a member it kept the compiler
 * from splitting the tile loop on one_tile as it does for a plain local
 * (different code, more registers on the scalar path). */
template <int W, int U> struct fused_dw_part {
    int64_t tile;
    bool one_tile;
    int64_t r0, r1;
    float *pr;

    __device__ __forceinline__ fused_dw_part(float *part, int64_t M, int64_t N,
                                             int64_t rows_per_cta, float (&acc)[U][W])
    {
        tile = fused_tile_len<W, U>();
        one_tile = N <= tile;
        r0 = (int64_t)blockIdx.x * rows_per_cta;
        r1 = r0 + rows_per_cta < M ? r0 + rows_per_cta : M;
        pr = part + (int64_t)blockIdx.x * N;
#pragma unroll
        for (int k = 0; k < U; k++)
#pragma unroll
            for (int i = 0; i < W; i++) acc[k][i] = 0.f;
    }

    /* d: this row's dy * xh at access k, column col. */
    __device__ __forceinline__ void add(float (&acc)[U][W], int k, int64_t col, int64_t row,
                                        float (&d)[W], float (&pv)[W]) const
    {
        if (one_tile) {
#pragma unroll
            for (int i = 0; i < W; i++) acc[k][i] += d[i];
        } else {
            if (row != r0) {
                fused_ldf<W, false>(pr + col, pv);
#pragma unroll
                for (int i = 0; i < W; i++) d[i] += pv[i];
            }
            fused_stf<W>(pr + col, d);
        }
    }

    __device__ __forceinline__ void flush(const float (&acc)[U][W], int64_t N) const
    {
        if (one_tile && r0 < r1) {
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t col = fused_col<W>(0, k);
                if (col < N) fused_stf<W>(pr + col, acc[k]);
            }
        }
    }
};

/* dw[j] = sum over programs of part[p, j]: C columns per CTA of C x C
 * threads, C lanes of programs each summing a strided subset in order, then
 * lane sums added in order. Fixed order, so the same bits every run; no
 * atomics. (A template only so that files not using it do not compile it.) */
#define FUSED_DW_COLS 32
template <int C>
static __global__ void __launch_bounds__(C * C)
fused_dw_reduce_kernel(const float *__restrict__ part, float *__restrict__ dw, int64_t P, int64_t N)
{
    static_assert(C == 32, "C is a warp: tx and ty by mask and shift");
    __shared__ float sm[C][C + 1];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const int64_t col = (int64_t)blockIdx.x * C + tx;
    float s = 0.f;
    if (col < N)
        for (int64_t p = ty; p < P; p += C) s += part[p * N + col];
    sm[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && col < N) {
        float r = 0.f;
#pragma unroll
        for (int i = 0; i < C; i++) r += sm[i][tx];
        dw[col] = r;
    }
}

/* ---- host boilerplate ------------------------------------------------------- */
/* After a launch: "fused <op>_<pass> <dtype> MxN: launch: <CUDA's message>". */
static inline kb_status fused_check_launch(const kb_problem *p, const char *op, const char *pass,
                                           kb_err *e)
{
    const cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "fused %s_%s %s %lldx%lld: launch: %s", op, pass,
                       kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N,
                       cudaGetErrorString(rc));
    return KB_OK;
}

static inline kb_status fused_new(const kb_problem *p, const char *op, fused_cfg **out, kb_err *e)
{
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "fused %s: bad problem %lldx%lld dtype %d", op,
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    fused_cfg *c = (fused_cfg *)malloc(sizeof *c);
    if (!c) return KB_FAIL(e, KB_ERR_NOMEM, "fused %s: out of host memory", op);
    *c = fused_pick(p->N);
    *out = c;
    return KB_OK;
}

/* kb_impl.setup of every pass without a workspace; NAME is the op as errors
 * name it ("softmax"). */
template <const char *NAME>
static kb_status fused_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                             size_t *workspace_bytes, kb_err *e)
{
    fused_cfg *c = NULL;
    KB_TRY(fused_new(p, NAME, &c, e));
    *state = c;
    *workspace_bytes = 0;
    return KB_OK;
}

static inline void fused_describe(const void *state, char *buf, size_t len)
{
    const fused_cfg *c = (const fused_cfg *)state;
    if (c->programs)
        snprintf(buf, len, "block=%lld threads=%d programs=%lld", (long long)c->block,
                 c->threads, (long long)c->programs);
    else
        snprintf(buf, len, "block=%lld threads=%d", (long long)c->block, c->threads);
}

static inline void fused_teardown(void *state) { free(state); }

/* ---- norms: host side ----------------------------------------------------------
 * OP is the op file's traits: name, the op as errors name it; FWD_ELEMS, the
 * forward's tile cap (both paths); BWD_ELEMS1 / BWD_ELEMSV, the backward's
 * (scalar / vector path, see fused_dispatch); fwd_kernel<K>() and
 * bwd_kernel<K>(), the kernels of instance K (the forward's arguments are x,
 * w, y, M, N); bwd_launch<K>(p, t, c, s), which launches bwd_kernel<K>() on
 * c->programs CTAs with the op's arguments and the workspace as the
 * partials. */
template <typename OP>
static kb_status fused_norm_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                                    cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    const bool aligned = kb_aligned16(t->x) && kb_aligned16(t->w) && kb_aligned16(t->out);
    fused_dispatch<OP::FWD_ELEMS, OP::FWD_ELEMS>(p, c, aligned, [&](auto k) {
        typedef typename decltype(k)::T T;
        OP::template fwd_kernel<decltype(k)>()<<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->x, t->w, (T *)t->out, p->M, p->N);
    });
    return fused_check_launch(p, OP::name, "forward", e);
}

/* Programs of the backward: every SM filled with resident CTAs (occ per SM),
 * unless the [P, N] partials would then outgrow 3/4 of L2 (never fewer than
 * one per SM), and no more than M. Rows are then split evenly. */
static inline void fused_plan(fused_cfg *c, const kb_problem *p, const kb_setup_ctx *ctx, int occ)
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

/* Occupancy is that of the kernel the run picks for aligned pointers (the
 * scalar one for ragged N). */
template <typename OP>
static kb_status fused_norm_bwd_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                                      size_t *workspace_bytes, kb_err *e)
{
    fused_cfg *c = NULL;
    KB_TRY(fused_new(p, OP::name, &c, e));
    int occ = 0;
    cudaError_t rc = cudaSuccess;
    fused_dispatch<OP::BWD_ELEMS1, OP::BWD_ELEMSV>(p, c, true, [&](auto k) {
        rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &occ, OP::template bwd_kernel<decltype(k)>(), c->threads, 0);
    });
    if (rc != cudaSuccess) {
        free(c);
        return KB_FAIL(e, KB_ERR_CUDA, "fused %s_backward %lldx%lld: occupancy: %s", OP::name,
                       (long long)p->M, (long long)p->N, cudaGetErrorString(rc));
    }
    fused_plan(c, p, ctx, occ);
    *state = c;
    *workspace_bytes = (size_t)c->programs * (size_t)p->N * sizeof(float);
    return KB_OK;
}

template <typename OP>
static kb_status fused_norm_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                                    cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    const size_t need = (size_t)c->programs * (size_t)p->N * sizeof(float);
    if (!t->workspace || t->workspace_bytes < need || !t->dw)
        return KB_FAIL(e, KB_ERR_ARG,
                       "fused %s_backward %lldx%lld: needs %zu workspace bytes and dw, got %zu",
                       OP::name, (long long)p->M, (long long)p->N, need, t->workspace_bytes);
    if (kb_cdiv(p->N, FUSED_DW_COLS) > FUSED_MAX_GRID)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "fused %s_backward: N=%lld too long for the dw reduction grid", OP::name,
                       (long long)p->N);
    const bool aligned = kb_aligned16(t->x) && kb_aligned16(t->dy) && kb_aligned16(t->w) &&
                         kb_aligned16(t->out) && kb_aligned16(t->workspace);
    fused_dispatch<OP::BWD_ELEMS1, OP::BWD_ELEMSV>(
        p, c, aligned, [&](auto k) { OP::template bwd_launch<decltype(k)>(p, t, c, s); });
    KB_TRY(fused_check_launch(p, OP::name, "backward", e));
    fused_dw_reduce_kernel<FUSED_DW_COLS>
        <<<(unsigned)kb_cdiv(p->N, FUSED_DW_COLS), FUSED_DW_COLS * FUSED_DW_COLS, 0, s>>>(
            (const float *)t->workspace, t->dw, c->programs, p->N);
    return fused_check_launch(p, OP::name, "backward (dw reduction)", e);
}

#endif
