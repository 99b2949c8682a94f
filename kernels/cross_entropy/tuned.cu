/* Cross entropy forward and backward (reduction none), tuned backend.
 *
 * Forward: loss[i] = lse_i - x[i, target_i] needs no copy of the row, so it
 *   is a single streaming pass (kernels/common/kb_rows.cuh for slots and
 *   groups): each thread walks its 16-byte slots `unroll` at a time (that
 *   many 128-bit loads in flight before any math, held raw), keeping a
 *   running (max, sum of exp) pair (online softmax, exp2 (ex2.approx) with a
 *   log2(e) factor). x[target] is one scalar load by the thread that writes
 *   the loss, issued before the row streams in. `threads` threads share a
 *   row, `rows` rows share a CTA (short rows), and when there are too few
 *   rows to fill the GPU a thread-block cluster of `cluster` CTAs splits each
 *   row, combining (max, sum) through distributed shared memory.
 * Backward: dx = dloss * (exp(x - lse) - onehot(target)) is elementwise given
 *   the saved lse: one pass, 128-bit loads and plain (write-back) stores
 *   (nothing is re-read, so evict-first stores only cost), per-row scalars read
 *   once per thread, the onehot term applied in the one slot that holds the
 *   target (its index computed once per row). Rows (not the flat M*N range)
 *   are walked so that the row of an element is known without a division;
 *   `split` CTAs share a row when M is small. fp32 uses expf(x - lse)
 *   (fp32's tolerance is tight for probabilities near 1); 16-bit dtypes use
 *   exp2.
 * Registers are capped per instantiation (__maxnreg__, spill-free): the
 *   bytes of loads in flight per SM, i.e. occupancy, set the speed.
 * Limits: any M >= 1, N >= 1; a target outside [0, N) gives loss NaN (and
 *   no onehot term backward). Base pointers that are not 16-byte aligned run
 *   the same kernels with scalar accesses (correct, slower). */
#include "kb_rows.cuh"
#include "tuner.h"

namespace {

enum { P_THREADS, P_ROWS, P_CLUSTER, P_UNROLL }; /* P_CLUSTER is "split" backward */

/* ---- forward ---------------------------------------------------------------- */
template <typename T, int V, int U>
__global__ void __maxnreg__(kb_reg_cap(U * 4, 32))
ce_fwd(const T *__restrict__ x, const int64_t *__restrict__ target, T *__restrict__ loss,
       int64_t M, int64_t N, int tpr_shift, int rows, int cs)
{
    __shared__ kb_ms red[32];
    __shared__ kb_rows_buf<kb_ms> part;
    if (cs > 1) kb_cluster_begin(part);
    const kb_coords c = kb_coords_of(M, tpr_shift, rows, cs);
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, c.live);
    const kb_chunk ch = kb_split(geo.nfull, cs, c.rank, c.tpr);
    typedef kb_chunk_index<V> I; /* see ce_bwd */
    const T *xb = x + geo.first + ch.begin * V;
    const I n = (I)(ch.end - ch.begin), step = (I)c.tpr * U;
    /* x[target] by one load of the thread that writes the loss, issued
     * before the row streams in: no per-element select on the hot path. */
    const bool writer = c.live && c.t == 0 && c.rank == 0;
    const int64_t tgt = writer ? __ldg(target + c.row) : -1;
    const bool tgt_ok = tgt >= 0 && tgt < N;
    const float xt = tgt_ok ? kb_to_float(__ldg(x + geo.start + tgt)) : 0.f;

    const kb_ms acc =
        kb_max_sumexp<T, V, U, KB_LD_STREAM, KB_LD_STREAM>(x, geo, c, xb, n, step, 0);
    kb_ms r = kb_group_reduce(acc, c.tpr, c.g, red);
    if (cs > 1) r = kb_cluster_reduce(r, cs, rows, c.rank, c.g, c.t, c.tpr, part);
    /* loss = (max - x[target]) + log(sum exp(x - max)): the difference of two
     * logits first (exact when they are close), never lse - x[target], whose
     * rounded lse (fp32 logits near 1000: ulp 6e-5) swamps a loss of ~5. r.s
     * sums exps relative to kb_mlog2e(r.m), not r.m: that offset removed. */
    const float lsm = fmaf(-kb_mlog2e_err(r.m), KB_LN2, logf(r.s));
    if (writer) loss[c.row] = kb_from_float<T>(tgt_ok ? (r.m - xt) + lsm : NAN);
}

/* ---- backward ---------------------------------------------------------------- */
template <typename T>
__device__ __forceinline__ float ce_prob(float x, float lse, float lseL)
{
    if constexpr (sizeof(T) == 4)
        return expf(x - lse);
    else
        return kb_exp2(fmaf(x, KB_LOG2E, -lseL));
}

template <typename T, int V, int U>
__global__ void __maxnreg__(kb_reg_cap(U * 4, sizeof(T) == 4 ? 48 : 32))
ce_bwd(const T *__restrict__ x, const int64_t *__restrict__ target,
       const float *__restrict__ dloss, const float *__restrict__ lse, T *__restrict__ dx,
       int64_t M, int64_t N, int tpr_shift, int rows, int split)
{
    const kb_coords c = kb_coords_of(M, tpr_shift, rows, split);
    if (!c.live) return; /* no barriers below */
    const kb_rowgeo geo = kb_row_geo<V>(c.row, N, true);
    const kb_chunk ch = kb_split(geo.nfull, split, c.rank, c.tpr);
    const int64_t tgt = __ldg(target + c.row);
    /* Offsets within this CTA's chunk: 32-bit for the vector kernels (valid()
     * keeps their chunks under 2^31 slots; fewer registers, more CTAs per
     * SM), 64-bit for the scalar fallback. */
    typedef kb_chunk_index<V> I;
    const T *xb = x + geo.first + ch.begin * V;
    T *db = dx + geo.first + ch.begin * V;
    const I n = (I)(ch.end - ch.begin), step = (I)c.tpr * U;
    /* The target's slot in the chunk and its lane (-1: elsewhere). */
    const int64_t tj = tgt >= 0 && tgt < N ? tgt - geo.e0 - ch.begin * V : -1;
    const I ts = tj >= 0 && tj < (int64_t)n * V ? (I)(tj / V) : -1;
    const int tk = ts >= 0 ? (int)(tj - (int64_t)ts * V) : -1;
    const float dl = __ldg(dloss + c.row), l = __ldg(lse + c.row), lL = l * KB_LOG2E;

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
            const int dd = ju == ts ? tk : -1;
            float f[V];
#pragma unroll
            for (int k = 0; k < V; k++) {
                float p = ce_prob<T>(kb_get(r[u], k), l, lL);
                if (k == dd) p -= 1.f;
                f[k] = p * dl;
            }
            kb_st_raw<T, V, false>(db + ju * V, kb_raw_of<T, V>(f));
        }
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr) {
            float p = ce_prob<T>(kb_edge_load<T, KB_LD_STREAM>(x, geo, i, true, 0.f), l, lL);
            if (kb_edge_elem(geo, i) == tgt) p -= 1.f;
            kb_edge_store<T, false>(dx, geo, i, p * dl);
        }
}

/* ---- host: kernel tables ------------------------------------------------------- */
template <typename T>
using fwd_fn = void (*)(const T *, const int64_t *, T *, int64_t, int64_t, int, int, int);
template <typename T>
using bwd_fn = void (*)(const T *, const int64_t *, const float *, const float *, T *, int64_t,
                        int64_t, int, int, int);

template <typename T, int V> static fwd_fn<T> fwd_kernel(int unroll)
{
    return kb_by_unroll<fwd_fn<T>>(unroll, ce_fwd<T, V, 1>, ce_fwd<T, V, 2>, ce_fwd<T, V, 4>,
                                   ce_fwd<T, V, 8>);
}

template <typename T, int V> static bwd_fn<T> bwd_kernel(int unroll)
{
    return kb_by_unroll<bwd_fn<T>>(unroll, ce_bwd<T, V, 1>, ce_bwd<T, V, 2>, ce_bwd<T, V, 4>,
                                   ce_bwd<T, V, 8>);
}

struct launch_shape {
    int tpr, rows, parts, unroll;
    int64_t grid;
};

static launch_shape shape_of(const kb_problem *p, const kb_tune_cfg *c)
{
    launch_shape ls;
    ls.tpr = c->v[P_THREADS];
    ls.rows = c->v[P_ROWS];
    ls.parts = c->v[P_CLUSTER];
    ls.unroll = c->v[P_UNROLL];
    ls.grid = kb_cdiv(p->M, ls.rows) * ls.parts;
    return ls;
}

/* The vector kernels index a CTA's chunk of a row with 32 bits. */
static bool chunk_fits(const kb_problem *p, const launch_shape &ls)
{
    return kb_chunk_fits32(p->N, (int)(16 / kb_dtype_size(p->dtype)), ls.parts,
                           ls.tpr * ls.unroll);
}

template <typename T> static int valid_t(const launch_shape &ls, bool bwd)
{
    constexpr int V = 16 / sizeof(T);
    const int block = ls.tpr * ls.rows;
    if (bwd) {
        const bwd_fn<T> a = bwd_kernel<T, V>(ls.unroll), b = bwd_kernel<T, 1>(ls.unroll);
        return a && b && kb_launchable(a, block, 1) && kb_launchable(b, block, 1);
    }
    const fwd_fn<T> a = fwd_kernel<T, V>(ls.unroll), b = fwd_kernel<T, 1>(ls.unroll);
    return a && b && kb_launchable(a, block, ls.parts) && kb_launchable(b, block, ls.parts);
}

static int valid_dir(const kb_problem *p, const kb_tune_cfg *c, bool bwd)
{
    const launch_shape ls = shape_of(p, c);
    const int block = ls.tpr * ls.rows;
    if (block < 32 || block > KB_MAX_TPR || ls.rows > KB_MAX_ROWS || ls.grid > INT32_MAX)
        return 0;
    if (!bwd && (ls.parts > KB_MAX_CLUSTER || (ls.parts > 1 && ls.rows * ls.parts > KB_MAX_PARTS)))
        return 0;
    if (!chunk_fits(p, ls)) return 0;
    int ok = 0;
    KB_DISPATCH(p->dtype, T, ok = valid_t<T>(ls, bwd));
    return ok;
}

static kb_tune_cfg make_cfg(int tpr, int rows, int parts, int unroll)
{
    kb_tune_cfg c = {};
    c.v[P_THREADS] = tpr;
    c.v[P_ROWS] = rows;
    c.v[P_CLUSTER] = parts;
    c.v[P_UNROLL] = unroll;
    return c;
}

/* Loads in flight are what these kernels live on (kernels/softmax/tuned.cu):
 * 8 slots per thread and step, 64 registers: 1024 threads and 128 KB in
 * flight per SM. A sub-warp per short row with 128-thread CTAs, up to 256
 * threads per row forward and 128 backward (no reduction there: smaller
 * CTAs pack the SM as finely). When the rows alone give fewer than two CTAs
 * per SM, split rows (cluster forward, plain CTAs backward) while each CTA
 * keeps at least two full steps of its threads; and so that a CTA's chunk
 * has fewer than 2^31 slots. */
static void heuristic_dir(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out, bool bwd)
{
    const int V = (int)(16 / kb_dtype_size(p->dtype)), U = 8;
    const int64_t S = kb_max_slots(p->N, V);
    const int sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 132;
    const int tmax = bwd ? 128 : 256;
    int tpr = (int)kb_pow2_ceil(kb_cdiv(S, U));
    tpr = tpr < 4 ? 4 : tpr > tmax ? tmax : tpr;
    const int rows = tpr >= 128 ? 1 : 128 / tpr;
    const int64_t blocks = kb_cdiv(p->M, rows);
    const int max_parts = bwd ? 128 : 8;
    int parts = 1;
    while (blocks * parts < 2 * sms && parts < max_parts && S >= (int64_t)tpr * U * parts * 2)
        parts *= 2;
    while (!kb_chunk_fits32(p->N, V, parts, tpr * U) && parts < max_parts) parts *= 2;
    const kb_tune_cfg cand[] = {make_cfg(tpr, rows, parts, U), make_cfg(tpr, rows, 1, U),
                                make_cfg(256, 1, 1, U), make_cfg(32, 32, 1, U)};
    for (const kb_tune_cfg &c : cand)
        if (valid_dir(p, &c, bwd)) {
            *out = c;
            return;
        }
    *out = cand[2]; /* kb_tuned_setup reports it as not runnable */
}

/* ---- host: launch ---------------------------------------------------------------- */
template <typename T>
static cudaError_t launch_fwd(const kb_problem *p, const kb_tensors *t, const launch_shape &ls,
                              cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    const T *x = (const T *)t->x;
    const bool vec = kb_aligned16(x);
    const fwd_fn<T> k = !vec ? fwd_kernel<T, 1>(ls.unroll)
                        : chunk_fits(p, ls) ? fwd_kernel<T, V>(ls.unroll) : nullptr;
    if (!k) return cudaErrorInvalidConfiguration;
    return kb_launch_rows(k, ls.grid, ls.tpr * ls.rows, ls.parts, s, x, t->target, (T *)t->out,
                          p->M, p->N, kb_log2i(ls.tpr), ls.rows, ls.parts);
}

template <typename T>
static cudaError_t launch_bwd(const kb_problem *p, const kb_tensors *t, const launch_shape &ls,
                              cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    const T *x = (const T *)t->x;
    T *dx = (T *)t->out;
    const bool vec = kb_aligned16(x) && kb_aligned16(dx);
    const bwd_fn<T> k = !vec ? bwd_kernel<T, 1>(ls.unroll)
                        : chunk_fits(p, ls) ? bwd_kernel<T, V>(ls.unroll) : nullptr;
    if (!k) return cudaErrorInvalidConfiguration;
    return kb_launch_rows(k, ls.grid, ls.tpr * ls.rows, 1, s, x, t->target, t->dloss, t->lse, dx,
                          p->M, p->N, kb_log2i(ls.tpr), ls.rows, ls.parts);
}

static kb_status launch_dir(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e, bool bwd)
{
    const launch_shape ls = shape_of(p, c);
    const char *dir = bwd ? "backward" : "forward";
    if (p->M < 1 || p->N < 1 || ls.grid > INT32_MAX || ls.tpr < 4 || ls.tpr > KB_MAX_TPR ||
        ls.rows < 1 || ls.rows > KB_MAX_ROWS || ls.parts < 1 ||
        (!bwd && (ls.parts > KB_MAX_CLUSTER || (ls.parts > 1 && ls.rows * ls.parts > KB_MAX_PARTS))))
        return KB_FAIL(e, KB_ERR_ARG, "cross_entropy_%s tuned %lldx%lld: bad launch shape", dir,
                       (long long)p->M, (long long)p->N);
    cudaError_t rc = cudaErrorInvalidValue;
    KB_DISPATCH(p->dtype, T, rc = bwd ? launch_bwd<T>(p, t, ls, s) : launch_fwd<T>(p, t, ls, s));
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "cross_entropy_%s tuned %s %lldx%lld threads=%d rows=%d "
                       "%s=%d unroll=%d: %s", dir, kb_dtype_name(p->dtype), (long long)p->M,
                       (long long)p->N, ls.tpr, ls.rows, bwd ? "split" : "cluster", ls.parts,
                       ls.unroll, cudaGetErrorString(rc));
    KB_LAUNCHED(e);
    return KB_OK;
}

KB_ROWS_DIRECTIONS

/* threads: per row within a CTA; rows: rows per CTA; cluster (forward): CTAs
 * of a cluster splitting each row, reduced through DSMEM; split (backward):
 * independent CTAs per row; unroll: 16-byte slots loaded per thread before
 * any math. */
const kb_tune_space fwd_space = {
    "cross_entropy_forward",
    4,
    {"threads", "rows", "cluster", "unroll"},
    {9, 6, 5, 4},
    {{4, 8, 16, 32, 64, 128, 256, 512, 1024}, {1, 2, 4, 8, 16, 32}, {1, 2, 4, 8, 16}, {1, 2, 4, 8}},
    fwd_heuristic,
    fwd_valid,
    nullptr,
    fwd_launch,
    nullptr, /* kernels: one */
};

const kb_tune_space bwd_space = {
    "cross_entropy_backward",
    4,
    {"threads", "rows", "split", "unroll"},
    {9, 6, 8, 4},
    {{4, 8, 16, 32, 64, 128, 256, 512, 1024},
     {1, 2, 4, 8, 16, 32},
     {1, 2, 4, 8, 16, 32, 64, 128},
     {1, 2, 4, 8}},
    bwd_heuristic,
    bwd_valid,
    nullptr,
    bwd_launch,
    nullptr, /* kernels: one */
};

} // namespace

KB_TUNED_IMPL(kb_cross_entropy_tuned_fwd, KB_CE_FWD, fwd_space)
KB_TUNED_IMPL(kb_cross_entropy_tuned_bwd, KB_CE_BWD, bwd_space)
