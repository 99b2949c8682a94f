/* Softmax forward and backward, tuned backend: one HBM read of each input
 * and one write of the output, at the memory bandwidth of the GPU.
 *
 * Strategy (see kernels/common/kb_rows.cuh for slots, groups and clusters):
 * - A row is split over `threads` threads (a sub-warp for short rows, up to
 *   1024 threads) and, for long rows, over a thread-block cluster of
 *   `cluster` CTAs (sm_90), each holding a contiguous chunk. `rows` row
 *   groups share a CTA so that short rows still give a CTA enough bytes.
 * - hold=1 (registers): each thread loads its NV 16-byte slots at once
 *   (NV = the smallest instantiated value in {1,2,3,4,6,8,12,16} that covers
 *   the row; arrays are indexed by compile-time constants, so nothing goes
 *   to local memory). Forward keeps the row as fp32 exps; backward keeps y
 *   and dy in their storage dtype (half the registers) and converts on use.
 * - Forward: per-thread max, exp2 (ex2.approx) with a log2(e) factor, per-thread sum;
 *   then one reduction round of (max, sum) pairs (online-softmax combine):
 *   shuffles within the warp, shared memory across warps, distributed
 *   shared memory across the cluster. y = e * exp(m_thread - m) / sum.
 *   Backward: dot = sum(dy*y) by the same path, dx = y*(dy - dot).
 * - hold=0 (streaming): for rows beyond what registers of a cluster hold
 *   (bf16 forward: N > 16 CTAs x 256 threads x 16 slots x 8 = 524288), two
 *   passes; the first reads with default caching so the second, a CTA
 *   re-reading its own chunk, mostly hits L2.
 * - 128-bit loads/stores with streaming hints (__ldcs/__stcs: touched once).
 * Limits: rows longer than int64 slots of course; base pointers that are not
 *   16-byte aligned run the streaming kernels with scalar accesses (correct,
 *   slower). Any M >= 1, N >= 1. */
#include "kb_rows.cuh"
#include "tuner.h"

namespace {

enum { P_THREADS, P_ROWS, P_CLUSTER, P_HOLD };
constexpr int kNV[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr int kNumNV = sizeof kNV / sizeof kNV[0];
constexpr int kLoopUnroll = 4;

/* Thread coordinates shared by all four kernels. */
struct coords {
    int tpr, g, t, rank;
    int64_t row;
    bool live;
};

__device__ __forceinline__ coords coords_of(int64_t M, int tpr_shift, int rows, int cs)
{
    coords c;
    c.tpr = 1 << tpr_shift;
    c.g = threadIdx.x >> tpr_shift;
    c.t = threadIdx.x & (c.tpr - 1);
    c.rank = blockIdx.x % cs;
    c.row = (int64_t)(blockIdx.x / cs) * rows + c.g;
    c.live = c.row < M;
    return c;
}

/* ---- forward, row in registers ------------------------------------------- */
template <typename T, int NV>
__global__ void sm_fwd_reg(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N,
                           int tpr_shift, int rows, int cs)
{
    constexpr int V = 16 / sizeof(T), E = KB_EDGE_PER_THREAD;
    __shared__ kb_ms red[32];
    __shared__ kb_ms part[KB_MAX_PARTS];
    if (cs > 1) kb_cluster_arrive_relaxed();
    const coords c = coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const int64_t j0 = (int64_t)c.rank * c.tpr * NV + c.t;

    float v[NV][V], ev[E];
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int64_t jj = j0 + (int64_t)j * c.tpr;
        kb_slot_load<T, V, KB_LD_STREAM>(x, geo, jj, jj < geo.nfull, v[j], -INFINITY);
    }
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        ev[q] = kb_edge_load<T, KB_LD_STREAM>(x, geo, i, c.rank == 0 && i < geo.nedge, -INFINITY);
    }
    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < V; k++) m = fmaxf(m, v[j][k]);
#pragma unroll
    for (int q = 0; q < E; q++) m = fmaxf(m, ev[q]);
    const float mL = m == -INFINITY ? 0.f : m * KB_LOG2E;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < V; k++) {
            v[j][k] = kb_exp2(fmaf(v[j][k], KB_LOG2E, -mL));
            sum += v[j][k];
        }
#pragma unroll
    for (int q = 0; q < E; q++) {
        ev[q] = kb_exp2(fmaf(ev[q], KB_LOG2E, -mL));
        sum += ev[q];
    }
    kb_ms r = kb_group_reduce(kb_ms{m, sum}, c.tpr, c.g, red);
    if (cs > 1) r = kb_cluster_reduce(r, cs, c.rank, c.g, c.t, c.tpr, part);
    const float scale = kb_rescale(m, r.m) / r.s;
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int64_t jj = j0 + (int64_t)j * c.tpr;
        if (jj >= geo.nfull) continue;
#pragma unroll
        for (int k = 0; k < V; k++) v[j][k] *= scale;
        kb_slot_store<T, V>(y, geo, jj, v[j]);
    }
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        if (c.rank == 0 && i < geo.nedge) kb_edge_store(y, geo, i, ev[q] * scale);
    }
}

/* ---- backward, y and dy in registers (storage dtype) ----------------------- */
template <typename T, int NV>
__global__ void sm_bwd_reg(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                           int64_t M, int64_t N, int tpr_shift, int rows, int cs)
{
    constexpr int V = 16 / sizeof(T), E = KB_EDGE_PER_THREAD;
    __shared__ float red[32];
    __shared__ float part[KB_MAX_PARTS];
    if (cs > 1) kb_cluster_arrive_relaxed();
    const coords c = coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const int64_t j0 = (int64_t)c.rank * c.tpr * NV + c.t;

    kb_pack<T, V> py[NV], pd[NV];
    float ey[E], ed[E];
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int64_t jj = j0 + (int64_t)j * c.tpr;
        py[j] = kb_slot_load_raw<T, V, KB_LD_STREAM>(y, geo, jj, jj < geo.nfull);
        pd[j] = kb_slot_load_raw<T, V, KB_LD_STREAM>(dy, geo, jj, jj < geo.nfull);
    }
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        const bool ok = c.rank == 0 && i < geo.nedge;
        ey[q] = kb_edge_load<T, KB_LD_STREAM>(y, geo, i, ok, 0.f);
        ed[q] = kb_edge_load<T, KB_LD_STREAM>(dy, geo, i, ok, 0.f);
    }
    float dot = 0.f;
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < V; k++)
            dot = fmaf(kb_to_float(py[j].v[k]), kb_to_float(pd[j].v[k]), dot);
#pragma unroll
    for (int q = 0; q < E; q++) dot = fmaf(ey[q], ed[q], dot);
    dot = kb_group_reduce(dot, c.tpr, c.g, red);
    if (cs > 1) dot = kb_cluster_reduce(dot, cs, c.rank, c.g, c.t, c.tpr, part);
    /* Without this the compiler keeps the fp32 conversions of the dot loop
     * alive across the reduction: twice the registers. */
#pragma unroll
    for (int j = 0; j < NV; j++) {
        kb_opaque(py[j]);
        kb_opaque(pd[j]);
    }
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int64_t jj = j0 + (int64_t)j * c.tpr;
        if (jj >= geo.nfull) continue;
        float o[V];
#pragma unroll
        for (int k = 0; k < V; k++)
            o[k] = kb_to_float(py[j].v[k]) * (kb_to_float(pd[j].v[k]) - dot);
        kb_slot_store<T, V>(dx, geo, jj, o);
    }
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        if (c.rank == 0 && i < geo.nedge) kb_edge_store(dx, geo, i, ey[q] * (ed[q] - dot));
    }
}

/* ---- streaming (hold=0: very long rows, or unaligned base pointers) -------- */
template <typename T, int V>
__global__ void sm_fwd_loop(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N,
                            int tpr_shift, int rows, int cs)
{
    constexpr int U = kLoopUnroll;
    __shared__ kb_ms red[32];
    __shared__ kb_ms part[KB_MAX_PARTS];
    if (cs > 1) kb_cluster_arrive_relaxed();
    const coords c = coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const kb_chunk ch = kb_split(geo.nfull, cs, c.rank, c.tpr);
    const int64_t step = (int64_t)c.tpr * U;

    kb_ms acc = {-INFINITY, 0.f};
#pragma unroll 1
    for (int64_t j = ch.begin + c.t; j < ch.end; j += step) {
        float f[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
            kb_slot_load<T, V, KB_LD_KEEP>(x, geo, j + u * c.tpr, j + u * c.tpr < ch.end, f[u],
                                           -INFINITY);
        float m = acc.m;
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++) m = fmaxf(m, f[u][k]);
        const float mL = m == -INFINITY ? 0.f : m * KB_LOG2E;
        float sum = acc.s * kb_rescale(acc.m, m);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++) sum += kb_exp2(fmaf(f[u][k], KB_LOG2E, -mL));
        acc = kb_ms{m, sum};
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr)
            acc = kb_ms_add(acc, kb_edge_load<T, KB_LD_KEEP>(x, geo, i, true, 0.f));
    kb_ms r = kb_group_reduce(acc, c.tpr, c.g, red);
    if (cs > 1) r = kb_cluster_reduce(r, cs, c.rank, c.g, c.t, c.tpr, part);
    const float mL = r.m == -INFINITY ? 0.f : r.m * KB_LOG2E;
    const float inv = 1.f / r.s;
#pragma unroll 1
    for (int64_t j = ch.begin + c.t; j < ch.end; j += step) {
        float f[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
            kb_slot_load<T, V, KB_LD_STREAM>(x, geo, j + u * c.tpr, j + u * c.tpr < ch.end, f[u],
                                             0.f);
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (j + u * c.tpr >= ch.end) continue;
#pragma unroll
            for (int k = 0; k < V; k++) f[u][k] = kb_exp2(fmaf(f[u][k], KB_LOG2E, -mL)) * inv;
            kb_slot_store<T, V>(y, geo, j + u * c.tpr, f[u]);
        }
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr) {
            const float v = kb_edge_load<T, KB_LD_STREAM>(x, geo, i, true, 0.f);
            kb_edge_store(y, geo, i, kb_exp2(fmaf(v, KB_LOG2E, -mL)) * inv);
        }
}

template <typename T, int V>
__global__ void sm_bwd_loop(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                            int64_t M, int64_t N, int tpr_shift, int rows, int cs)
{
    constexpr int U = kLoopUnroll;
    __shared__ float red[32];
    __shared__ float part[KB_MAX_PARTS];
    if (cs > 1) kb_cluster_arrive_relaxed();
    const coords c = coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const kb_chunk ch = kb_split(geo.nfull, cs, c.rank, c.tpr);
    const int64_t step = (int64_t)c.tpr * U;

    float dot = 0.f;
#pragma unroll 1
    for (int64_t j = ch.begin + c.t; j < ch.end; j += step) {
        kb_pack<T, V> py[U], pd[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const bool ok = j + u * c.tpr < ch.end;
            py[u] = kb_slot_load_raw<T, V, KB_LD_KEEP>(y, geo, j + u * c.tpr, ok);
            pd[u] = kb_slot_load_raw<T, V, KB_LD_KEEP>(dy, geo, j + u * c.tpr, ok);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++)
                dot = fmaf(kb_to_float(py[u].v[k]), kb_to_float(pd[u].v[k]), dot);
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr)
            dot = fmaf(kb_edge_load<T, KB_LD_KEEP>(y, geo, i, true, 0.f),
                       kb_edge_load<T, KB_LD_KEEP>(dy, geo, i, true, 0.f), dot);
    dot = kb_group_reduce(dot, c.tpr, c.g, red);
    if (cs > 1) dot = kb_cluster_reduce(dot, cs, c.rank, c.g, c.t, c.tpr, part);
#pragma unroll 1
    for (int64_t j = ch.begin + c.t; j < ch.end; j += step) {
        kb_pack<T, V> py[U], pd[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const bool ok = j + u * c.tpr < ch.end;
            py[u] = kb_slot_load_raw<T, V, KB_LD_STREAM>(y, geo, j + u * c.tpr, ok);
            pd[u] = kb_slot_load_raw<T, V, KB_LD_STREAM>(dy, geo, j + u * c.tpr, ok);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (j + u * c.tpr >= ch.end) continue;
            float o[V];
#pragma unroll
            for (int k = 0; k < V; k++)
                o[k] = kb_to_float(py[u].v[k]) * (kb_to_float(pd[u].v[k]) - dot);
            kb_slot_store<T, V>(dx, geo, j + u * c.tpr, o);
        }
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr) {
            const float yv = kb_edge_load<T, KB_LD_STREAM>(y, geo, i, true, 0.f);
            const float dv = kb_edge_load<T, KB_LD_STREAM>(dy, geo, i, true, 0.f);
            kb_edge_store(dx, geo, i, yv * (dv - dot));
        }
}

/* ---- host: kernel tables ---------------------------------------------------- */
template <typename T>
using fwd_fn = void (*)(const T *, T *, int64_t, int64_t, int, int, int);
template <typename T>
using bwd_fn = void (*)(const T *, const T *, T *, int64_t, int64_t, int, int, int);

/* Largest NV instantiated: beyond it the backward kernel spills (y and dy
 * of 16 slots need 128 registers before any arithmetic). */
template <typename T> constexpr int max_nv(bool bwd) { return bwd && sizeof(T) == 2 ? 12 : 16; }

template <typename T, int NV> static fwd_fn<T> fwd_reg_kernel()
{
    return sm_fwd_reg<T, NV>;
}
template <typename T, int NV> static bwd_fn<T> bwd_reg_kernel()
{
    if constexpr (NV <= max_nv<T>(true))
        return sm_bwd_reg<T, NV>;
    else
        return nullptr;
}
template <typename T, int... I>
static fwd_fn<T> fwd_reg_at(int nv, std::integer_sequence<int, I...>)
{
    fwd_fn<T> f = nullptr;
    ((nv == kNV[I] ? (void)(f = fwd_reg_kernel<T, kNV[I]>()) : (void)0), ...);
    return f;
}
template <typename T, int... I>
static bwd_fn<T> bwd_reg_at(int nv, std::integer_sequence<int, I...>)
{
    bwd_fn<T> f = nullptr;
    ((nv == kNV[I] ? (void)(f = bwd_reg_kernel<T, kNV[I]>()) : (void)0), ...);
    return f;
}

/* Smallest instantiated NV covering a thread's share of the row; 0: none. */
static int pick_nv(int64_t N, int V, int tpr, int cs, int maxnv)
{
    const int64_t need = kb_cdiv(kb_max_slots(N, V), (int64_t)tpr * cs);
    for (int i = 0; i < kNumNV && kNV[i] <= maxnv; i++)
        if (kNV[i] >= need) return kNV[i];
    return 0;
}

struct launch_shape {
    int tpr, rows, cs, hold;
    int64_t grid;
};

static launch_shape shape_of(const kb_problem *p, const kb_tune_cfg *c)
{
    launch_shape ls;
    ls.tpr = c->v[P_THREADS];
    ls.rows = c->v[P_ROWS];
    ls.cs = c->v[P_CLUSTER];
    ls.hold = c->v[P_HOLD];
    ls.grid = kb_cdiv(p->M, ls.rows) * ls.cs;
    return ls;
}

template <typename T>
static int valid_t(const kb_problem *p, const launch_shape &ls, bool bwd)
{
    constexpr int V = 16 / sizeof(T);
    const int block = ls.tpr * ls.rows;
    /* The unaligned-pointer fallback must be able to run the same shape. */
    if (bwd ? !kb_launchable(sm_bwd_loop<T, 1>, block, ls.cs)
            : !kb_launchable(sm_fwd_loop<T, 1>, block, ls.cs))
        return 0;
    if (!ls.hold)
        return bwd ? kb_launchable(sm_bwd_loop<T, V>, block, ls.cs)
                   : kb_launchable(sm_fwd_loop<T, V>, block, ls.cs);
    const int nv = pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(bwd));
    if (!nv) return 0;
    const auto seq = std::make_integer_sequence<int, kNumNV>{};
    return bwd ? kb_launchable(bwd_reg_at<T>(nv, seq), block, ls.cs)
               : kb_launchable(fwd_reg_at<T>(nv, seq), block, ls.cs);
}

static int valid_dir(const kb_problem *p, const kb_tune_cfg *c, bool bwd)
{
    const launch_shape ls = shape_of(p, c);
    const int block = ls.tpr * ls.rows;
    if (block < 32 || block > KB_MAX_TPR || ls.rows > KB_MAX_ROWS || ls.cs > KB_MAX_CLUSTER ||
        (ls.cs > 1 && ls.rows * ls.cs > KB_MAX_PARTS))
        return 0;
    if (ls.grid > INT32_MAX) return 0;
    int ok = 0;
    KB_DISPATCH(p->dtype, T, ok = valid_t<T>(p, ls, bwd));
    return ok;
}

static int fwd_valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)
{
    return valid_dir(p, c, false);
}
static int bwd_valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)
{
    return valid_dir(p, c, true);
}

static kb_tune_cfg make_cfg(int tpr, int rows, int cs, int hold)
{
    kb_tune_cfg c = {};
    c.v[P_THREADS] = tpr;
    c.v[P_ROWS] = rows;
    c.v[P_CLUSTER] = cs;
    c.v[P_HOLD] = hold;
    return c;
}

/* QuACK's recipe in slot units: about 32 fp32 values per thread forward
 * (4 slots of y and of dy backward), a sub-warp per short row with >= 128
 * threads per CTA, up to 256 threads per row, then clusters until a thread
 * holds at most 64 fp32 values forward (4 slots of each backward, 8 for
 * fp32): under 128 registers, so two 256-thread CTAs share an SM. Small M
 * spreads a row over more CTAs so that more SMs pull its bytes. */
static void heuristic_dir(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out, bool bwd)
{
    const int V = (int)(16 / kb_dtype_size(p->dtype));
    const int64_t S = kb_max_slots(p->N, V);
    const int nvt = bwd ? 4 : 32 / V, nvmax = bwd ? (V == 8 ? 4 : 8) : 64 / V;
    const int sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 132;
    int tpr = (int)kb_pow2_ceil(kb_cdiv(S, nvt));
    tpr = tpr < 4 ? 4 : tpr > 256 ? 256 : tpr;
    const int rows = tpr >= 128 ? 1 : 128 / tpr;
    int64_t cs = S > (int64_t)tpr * nvmax ? kb_pow2_ceil(kb_cdiv(S, (int64_t)tpr * nvmax)) : 1;
    const int64_t blocks = kb_cdiv(p->M, rows);
    while (blocks * cs < sms && cs < 8 && S >= (int64_t)tpr * cs * 4) cs *= 2;

    /* Fallbacks, in order: fewer CTAs per cluster with more slots per thread
     * (a GPU that cannot schedule 16), then the streaming kernels. */
    kb_tune_cfg cand[6];
    int n = 0;
    cand[n++] = make_cfg(tpr, rows, (int)(cs < KB_MAX_CLUSTER ? cs : KB_MAX_CLUSTER), 1);
    if (cs > 8) cand[n++] = make_cfg(tpr, rows, 8, 1);
    const int cs_stream = blocks >= 2 * sms ? 1 : 8;
    cand[n++] = make_cfg(256, 1, cs_stream, 0);
    cand[n++] = make_cfg(256, 1, 1, 0);
    cand[n++] = make_cfg(32, 32, 1, 0); /* M beyond 2^31 one-row CTAs */
    for (int i = 0; i < n; i++)
        if (valid_dir(p, &cand[i], bwd)) {
            *out = cand[i];
            return;
        }
    *out = cand[n - 2]; /* kb_tuned_setup reports it as not runnable */
}

static void fwd_heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    heuristic_dir(p, ctx, out, false);
}
static void bwd_heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    heuristic_dir(p, ctx, out, true);
}

/* ---- host: launch ------------------------------------------------------------ */
template <typename T>
static cudaError_t launch_fwd(const kb_problem *p, const kb_tensors *t, const launch_shape &ls,
                              cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    const T *x = (const T *)t->x;
    T *y = (T *)t->out;
    const int sh = kb_log2i(ls.tpr), block = ls.tpr * ls.rows;
    if (!kb_aligned16(x) || !kb_aligned16(y))
        return kb_launch_rows(sm_fwd_loop<T, 1>, ls.grid, block, ls.cs, s, x, y, p->M, p->N, sh,
                              ls.rows, ls.cs);
    if (!ls.hold)
        return kb_launch_rows(sm_fwd_loop<T, V>, ls.grid, block, ls.cs, s, x, y, p->M, p->N, sh,
                              ls.rows, ls.cs);
    const fwd_fn<T> k = fwd_reg_at<T>(pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(false)),
                                      std::make_integer_sequence<int, kNumNV>{});
    if (!k) return cudaErrorInvalidConfiguration;
    return kb_launch_rows(k, ls.grid, block, ls.cs, s, x, y, p->M, p->N, sh, ls.rows, ls.cs);
}

template <typename T>
static cudaError_t launch_bwd(const kb_problem *p, const kb_tensors *t, const launch_shape &ls,
                              cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    const T *y = (const T *)t->y, *dy = (const T *)t->dy;
    T *dx = (T *)t->out;
    const int sh = kb_log2i(ls.tpr), block = ls.tpr * ls.rows;
    if (!kb_aligned16(y) || !kb_aligned16(dy) || !kb_aligned16(dx))
        return kb_launch_rows(sm_bwd_loop<T, 1>, ls.grid, block, ls.cs, s, y, dy, dx, p->M, p->N,
                              sh, ls.rows, ls.cs);
    if (!ls.hold)
        return kb_launch_rows(sm_bwd_loop<T, V>, ls.grid, block, ls.cs, s, y, dy, dx, p->M, p->N,
                              sh, ls.rows, ls.cs);
    const bwd_fn<T> k = bwd_reg_at<T>(pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(true)),
                                      std::make_integer_sequence<int, kNumNV>{});
    if (!k) return cudaErrorInvalidConfiguration;
    return kb_launch_rows(k, ls.grid, block, ls.cs, s, y, dy, dx, p->M, p->N, sh, ls.rows, ls.cs);
}

static kb_status launch_dir(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e, bool bwd)
{
    launch_shape ls = shape_of(p, c);
    if (p->M < 1 || p->N < 1 || ls.grid > INT32_MAX || ls.tpr < 4 || ls.tpr > KB_MAX_TPR ||
        ls.rows < 1 || ls.rows > KB_MAX_ROWS || ls.cs < 1 || ls.cs > KB_MAX_CLUSTER ||
        (ls.cs > 1 && ls.rows * ls.cs > KB_MAX_PARTS))
        return KB_FAIL(e, KB_ERR_ARG, "softmax_%s tuned %lldx%lld: bad launch shape",
                       bwd ? "backward" : "forward", (long long)p->M, (long long)p->N);
    cudaError_t rc = cudaErrorInvalidValue;
    KB_DISPATCH(p->dtype, T, rc = bwd ? launch_bwd<T>(p, t, ls, s) : launch_fwd<T>(p, t, ls, s));
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "softmax_%s tuned %s %lldx%lld threads=%d rows=%d "
                       "cluster=%d hold=%d: %s", bwd ? "backward" : "forward",
                       kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, ls.tpr, ls.rows,
                       ls.cs, ls.hold, cudaGetErrorString(rc));
    KB_LAUNCHED(e);
    return KB_OK;
}

static kb_status fwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e)
{
    return launch_dir(p, t, c, s, e, false);
}
static kb_status bwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e)
{
    return launch_dir(p, t, c, s, e, true);
}

/* threads: per row within a CTA; rows: row groups per CTA; cluster: CTAs per
 * row (sm_90 cluster, DSMEM reduction); hold: 1 row in registers, 0 two
 * streaming passes. */
#define SM_SPACE(op, heur, valid, launch)                                      \
    {op, 4, {"threads", "rows", "cluster", "hold"}, {9, 6, 5, 2},              \
     {{4, 8, 16, 32, 64, 128, 256, 512, 1024}, {1, 2, 4, 8, 16, 32}, {1, 2, 4, 8, 16}, {0, 1}}, \
     heur, valid, nullptr, launch}

const kb_tune_space fwd_space = SM_SPACE("softmax_forward", fwd_heuristic, fwd_valid, fwd_launch);
const kb_tune_space bwd_space = SM_SPACE("softmax_backward", bwd_heuristic, bwd_valid, bwd_launch);

} // namespace

KB_TUNED_IMPL(kb_softmax_tuned_fwd, KB_SOFTMAX_FWD, fwd_space)
KB_TUNED_IMPL(kb_softmax_tuned_bwd, KB_SOFTMAX_BWD, bwd_space)
