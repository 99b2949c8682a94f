/* The tuned softmax's kernels (kernels/softmax/tuned.cu states the
 * strategy and limits and holds the host side: kernel tables, heuristic,
 * validity, launches):
 *   sm_fwd_reg   forward, the row in registers (raw packs or fp32)
 *   sm_bwd_reg   backward, y and dy in registers (raw packs)
 *   sm_fwd_loop / sm_bwd_loop
 *                streaming: long rows, or unaligned base pointers
 * All through kb_rows.cuh's coordinates, row geometry, edges and the row /
 * cluster reduction. */
#ifndef KB_SOFTMAX_TUNED_KERNELS_CUH
#define KB_SOFTMAX_TUNED_KERNELS_CUH

#include "kb_rows.cuh"

namespace {

/* AL rows (N % V == 0, aligned base) start on a slot boundary: no edges. */
template <int V, bool AL> __device__ __forceinline__ kb_rowgeo reg_geo(const kb_coords &c, int64_t N)
{
    if constexpr (AL) {
        kb_rowgeo g;
        g.start = g.first = c.live ? c.row * N : 0;
        g.n = c.live ? N : 0;
        g.nfull = g.n / V;
        g.e1 = g.n;
        g.e0 = 0;
        g.nedge = 0;
        return g;
    } else {
        return kb_row_geo<V>(c.row, N, c.live);
    }
}

/* ---- forward, row in registers ------------------------------------------- */
template <typename T> constexpr int slot_words() { return 4; }
template <typename T> constexpr int slot_floats() { return 16 / sizeof(T); }

template <typename T, int NV, bool AL, bool RAW>
__global__ void __maxnreg__(kb_reg_cap(NV * (RAW ? slot_words<T>() : slot_floats<T>()), 32))
sm_fwd_reg(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N,
                           int tpr_shift, int rows, int cs, int hint)
{
    constexpr int V = 16 / sizeof(T), E = AL ? 0 : KB_EDGE_PER_THREAD;
    __shared__ kb_ms red[32];
    __shared__ kb_rows_buf<kb_ms> part;
    if (cs > 1) kb_cluster_begin(part);
    const kb_coords c = kb_coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = reg_geo<V, AL>(c, N);
    /* Slot j of this thread: row slot j0 + j * tpr, j0 = rank*tpr*NV + t;
     * one 64-bit offset for all of them, and nrem = slots from j0 on. */
    const int j0 = c.rank * c.tpr * NV + c.t, nrem = (int)geo.nfull - j0;
    const int64_t off = geo.first + (int64_t)j0 * V;
    const int step = c.tpr * V;

    kb_raw<T, V> r[NV];
    float ev[E > 0 ? E : 1];
#pragma unroll
    for (int j = 0; j < NV; j++)
        r[j] = j * c.tpr < nrem ? kb_ld_raw<T, V, KB_LD_STREAM>(x + off + j * step, 0)
                                : kb_raw_splat<T, V>(-INFINITY);
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        ev[q] = kb_edge_load<T, KB_LD_STREAM>(x, geo, i, c.rank == 0 && i < geo.nedge, -INFINITY);
    }
    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < V; k++) m = fmaxf(m, kb_get(r[j], k));
#pragma unroll
    for (int q = 0; q < E; q++) m = fmaxf(m, ev[q]);
    const float mL = kb_mlog2e(m);
    float sum = 0.f;
    float v[RAW ? 1 : NV][V]; /* the exps, when not recomputed */
    if constexpr (RAW) {
        /* Convert again rather than keep fp32 copies from the max loop. */
#pragma unroll
        for (int j = 0; j < NV; j++) kb_tie(r[j], m);
    }
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < V; k++) {
            const float e = kb_exp2(fmaf(kb_get(r[j], k), KB_LOG2E, -mL));
            if constexpr (!RAW) v[j][k] = e;
            sum += e;
        }
#pragma unroll
    for (int q = 0; q < E; q++) {
        ev[q] = kb_exp2(fmaf(ev[q], KB_LOG2E, -mL));
        sum += ev[q];
    }
    kb_ms rs = kb_group_reduce(kb_ms{m, sum}, c.tpr, c.g, red);
    if (cs > 1) rs = kb_cluster_reduce(rs, cs, rows, c.rank, c.g, c.t, c.tpr, part);
    const float inv = 1.f / rs.s;
    const float scale = kb_rescale(m, rs.m) * inv; /* for exps relative to m */
    const float ML = kb_mlog2e(rs.m);
#pragma unroll
    for (int j = 0; j < NV; j++) {
        if constexpr (RAW) {
            kb_tie(r[j], inv);
        } else {
#pragma unroll
            for (int k = 0; k < V; k++) kb_tie(v[j][k], inv);
        }
    }
#pragma unroll
    for (int j = 0; j < NV; j++) {
        if (j * c.tpr >= nrem) continue;
        float o[V];
#pragma unroll
        for (int k = 0; k < V; k++) {
            if constexpr (RAW)
                o[k] = kb_exp2(fmaf(kb_get(r[j], k), KB_LOG2E, -ML)) * inv;
            else
                o[k] = v[j][k] * scale;
        }
        kb_st_raw_hint<T, V>(y + off + j * step, kb_raw_of<T, V>(o), hint);
    }
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        if (c.rank == 0 && i < geo.nedge) kb_edge_store(y, geo, i, ev[q] * scale);
    }
}

/* ---- backward, y and dy in registers (raw) --------------------------------- */
template <typename T, int NV, bool AL>
__global__ void __maxnreg__(kb_reg_cap(2 * NV * slot_words<T>(), AL ? 24 : 48))
sm_bwd_reg(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                           int64_t M, int64_t N, int tpr_shift, int rows, int cs, int hint)
{
    constexpr int V = 16 / sizeof(T), E = AL ? 0 : KB_EDGE_PER_THREAD;
    __shared__ float red[32];
    __shared__ kb_rows_buf<float> part;
    if (cs > 1) kb_cluster_begin(part);
    const kb_coords c = kb_coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = reg_geo<V, AL>(c, N);
    const int j0 = c.rank * c.tpr * NV + c.t, nrem = (int)geo.nfull - j0;
    const int64_t off = geo.first + (int64_t)j0 * V;
    const int step = c.tpr * V;

    kb_raw<T, V> py[NV], pd[NV];
    float ey[E > 0 ? E : 1], ed[E > 0 ? E : 1];
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const bool ok = j * c.tpr < nrem;
        py[j] = ok ? kb_ld_raw<T, V, KB_LD_STREAM>(y + off + j * step, 0) : kb_raw_splat<T, V>(0.f);
        pd[j] = ok ? kb_ld_raw<T, V, KB_LD_STREAM>(dy + off + j * step, 0) : kb_raw_splat<T, V>(0.f);
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
        for (int k = 0; k < V; k++) dot = fmaf(kb_get(py[j], k), kb_get(pd[j], k), dot);
#pragma unroll
    for (int q = 0; q < E; q++) dot = fmaf(ey[q], ed[q], dot);
    dot = kb_group_reduce(dot, c.tpr, c.g, red);
    if (cs > 1) dot = kb_cluster_reduce(dot, cs, rows, c.rank, c.g, c.t, c.tpr, part);
#pragma unroll
    for (int j = 0; j < NV; j++) {
        kb_tie(py[j], dot);
        kb_tie(pd[j], dot);
    }
#pragma unroll
    for (int j = 0; j < NV; j++) {
        if (j * c.tpr >= nrem) continue;
        float o[V];
#pragma unroll
        for (int k = 0; k < V; k++) o[k] = kb_get(py[j], k) * (kb_get(pd[j], k) - dot);
        kb_st_raw_hint<T, V>(dx + off + j * step, kb_raw_of<T, V>(o), hint);
    }
#pragma unroll
    for (int q = 0; q < E; q++) {
        const int i = c.t + q * c.tpr;
        if (c.rank == 0 && i < geo.nedge) kb_edge_store(dx, geo, i, ey[q] * (ed[q] - dot));
    }
}

/* ---- streaming (hold=0: long rows, or unaligned base pointers) ------------- */
template <typename T, int V> constexpr kb_cache first_pass()
{
    return V * sizeof(T) == 16 ? KB_LD_LAST : KB_LD_KEEP;
}

template <typename T, int V, int U>
__global__ void __maxnreg__(kb_reg_cap(U * slot_words<T>(), 32))
sm_fwd_loop(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N,
                            int tpr_shift, int rows, int cs, int hint)
{
    constexpr kb_cache FIRST = first_pass<T, V>();
    __shared__ kb_ms red[32];
    __shared__ kb_rows_buf<kb_ms> part;
    if (cs > 1) kb_cluster_begin(part);
    const kb_coords c = kb_coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const kb_chunk ch = kb_split(geo.nfull, cs, c.rank, c.tpr);
    /* Offsets within the CTA's chunk: 32-bit for the vector kernels (valid()
     * keeps chunks under 2^31 slots: fewer registers), 64-bit for V = 1. */
    typedef kb_chunk_index<V> I;
    const T *xb = x + geo.first + ch.begin * V;
    T *yb = y + geo.first + ch.begin * V;
    const I n = (I)(ch.end - ch.begin), step = (I)c.tpr * U;
    const uint64_t pol = FIRST == KB_LD_LAST ? kb_policy_evict_last() : 0;

    const kb_ms acc = kb_max_sumexp<T, V, U, FIRST, KB_LD_KEEP>(x, geo, c, xb, n, step, pol);
    kb_ms rs = kb_group_reduce(acc, c.tpr, c.g, red);
    if (cs > 1) rs = kb_cluster_reduce(rs, cs, rows, c.rank, c.g, c.t, c.tpr, part);
    const float ML = kb_mlog2e(rs.m);
    const float inv = 1.f / rs.s;
#pragma unroll 1
    for (I j = c.t; j < n; j += step) {
        kb_raw<T, V> r[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            r[u] = j + u * c.tpr < n ? kb_ld_raw<T, V, KB_LD_STREAM>(xb + (j + u * c.tpr) * V, 0)
                                     : kb_raw_splat<T, V>(0.f);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const I ju = j + u * c.tpr;
            if (ju >= n) continue;
            float o[V];
#pragma unroll
            for (int k = 0; k < V; k++) o[k] = kb_exp2(fmaf(kb_get(r[u], k), KB_LOG2E, -ML)) * inv;
            kb_st_raw_hint<T, V>(yb + ju * V, kb_raw_of<T, V>(o), hint);
            /* One slot at a time (a NaN here makes the row's sum NaN anyway). */
            if (u + 1 < U) kb_tie(r[u + 1 < U ? u + 1 : u], o[V - 1]);
        }
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr) {
            const float v = kb_edge_load<T, KB_LD_STREAM>(x, geo, i, true, 0.f);
            kb_edge_store(y, geo, i, kb_exp2(fmaf(v, KB_LOG2E, -ML)) * inv);
        }
}

template <typename T, int V, int U, int XCHG>
__global__ void __maxnreg__(kb_reg_cap(2 * U * slot_words<T>(), 24))
sm_bwd_loop(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                            int64_t M, int64_t N, int tpr_shift, int rows, int cs, int hint)
{
    constexpr kb_cache FIRST = first_pass<T, V>();
    __shared__ float red[32];
    __shared__ kb_rows_buf<float> part;
    if (cs > 1) kb_cluster_begin<XCHG>(part);
    const kb_coords c = kb_coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const kb_chunk ch = kb_split(geo.nfull, cs, c.rank, c.tpr);
    typedef kb_chunk_index<V> I; /* see sm_fwd_loop */
    const int64_t base = geo.first + ch.begin * V;
    const T *yb = y + base, *gb = dy + base;
    T *xb = dx + base;
    const I n = (I)(ch.end - ch.begin), step = (I)c.tpr * U;
    const uint64_t pol = FIRST == KB_LD_LAST ? kb_policy_evict_last() : 0;

    float dot = 0.f;
#pragma unroll 1
    for (I j = c.t; j < n; j += step) {
        kb_raw<T, V> py[U], pd[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const I ju = j + u * c.tpr;
            const bool ok = ju < n;
            py[u] = ok ? kb_ld_raw<T, V, FIRST>(yb + ju * V, pol) : kb_raw_splat<T, V>(0.f);
            pd[u] = ok ? kb_ld_raw<T, V, FIRST>(gb + ju * V, pol) : kb_raw_splat<T, V>(0.f);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            /* Slot by slot: dot is a serial chain anyway. */
            kb_tie(py[u], dot);
            kb_tie(pd[u], dot);
#pragma unroll
            for (int k = 0; k < V; k++) dot = fmaf(kb_get(py[u], k), kb_get(pd[u], k), dot);
        }
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr)
            dot = fmaf(kb_edge_load<T, KB_LD_KEEP>(y, geo, i, true, 0.f),
                       kb_edge_load<T, KB_LD_KEEP>(dy, geo, i, true, 0.f), dot);
    dot = kb_group_reduce(dot, c.tpr, c.g, red);
    if (cs > 1) dot = kb_cluster_reduce<XCHG>(dot, cs, rows, c.rank, c.g, c.t, c.tpr, part);
#pragma unroll 1
    for (I j = c.t; j < n; j += step) {
        kb_raw<T, V> py[U], pd[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const I ju = j + u * c.tpr;
            const bool ok = ju < n;
            py[u] = ok ? kb_ld_raw<T, V, KB_LD_STREAM>(yb + ju * V, 0) : kb_raw_splat<T, V>(0.f);
            pd[u] = ok ? kb_ld_raw<T, V, KB_LD_STREAM>(gb + ju * V, 0) : kb_raw_splat<T, V>(0.f);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const I ju = j + u * c.tpr;
            if (ju >= n) continue;
            float out[V];
#pragma unroll
            for (int k = 0; k < V; k++) out[k] = kb_get(py[u], k) * (kb_get(pd[u], k) - dot);
            kb_st_raw_hint<T, V>(xb + ju * V, kb_raw_of<T, V>(out), hint);
            /* One slot at a time (a NaN here makes dot NaN anyway). */
            if (u + 1 < U) {
                kb_tie(py[u + 1 < U ? u + 1 : u], out[V - 1]);
                kb_tie(pd[u + 1 < U ? u + 1 : u], out[V - 1]);
            }
        }
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr) {
            const float yv = kb_edge_load<T, KB_LD_STREAM>(y, geo, i, true, 0.f);
            const float dv = kb_edge_load<T, KB_LD_STREAM>(dy, geo, i, true, 0.f);
            kb_edge_store(dx, geo, i, yv * (dv - dot));
        }
}

} // namespace
#endif
