/* Softmax forward and backward, tuned backend: one HBM read of each input
 * and one write of the output, at the memory bandwidth of the GPU.
 *
 * What decides the speed here is the bytes of loads in flight per SM (see
 * docs/dev/kernels/softmax.md, H200 measurements): a CTA loads its share of a row in one burst, and the
 * SM has to keep enough such bursts going while others reduce and store.
 * So the row lives in registers as raw storage words (kernels/common/
 * kb_rows.cuh), converted to fp32 where used, every kernel's registers are
 * capped (__maxnreg__, spill-free), and each design is sized for about 1024
 * resident threads holding 64-128 bytes of loads each.
 *
 * Strategy (see kernels/common/kb_rows.cuh for slots, groups and clusters):
 * - A row is split over `threads` threads (a sub-warp for short rows, up to
 *   1024 threads) and optionally over a thread-block cluster of `cluster`
 *   CTAs (sm_90), each holding a contiguous chunk. `rows` row groups share a
 *   CTA so that short rows still give a CTA enough bytes.
 * - hold=1/2 (registers): each thread loads its NV 16-byte slots at once
 *   (NV = the smallest instantiated value in {1,2,3,4,6,8,12,16} that covers
 *   the row; arrays are indexed by compile-time constants, so nothing goes
 *   to local memory). Rows with N % V == 0 and aligned pointers run an
 *   instantiation without edge elements (fewer registers).
 *   Forward hold=1 keeps the exps as fp32 (one exp per element); hold=2
 *   keeps the raw input and computes the exp again for the output (half the
 *   registers for 16-bit types, two ex2 per element: the MUFU has the room).
 *   Backward (hold=1) keeps y and dy raw.
 * - Forward: per-thread max, exp2 (ex2.approx) with a log2(e) factor,
 *   per-thread sum; then one reduction round of (max, sum) pairs (online-
 *   softmax combine): shuffles within the warp, shared memory across warps,
 *   distributed shared memory across the cluster; y = exp(x - max) / sum.
 *   Backward: dot = sum(dy*y) by the same path, dx = y*(dy - dot).
 * - hold=0 (streaming, long rows): two passes over the row, `unroll` slots
 *   per thread per step; the first pass reads with an L2 evict-last policy,
 *   the second (a CTA re-reading its own chunk after the row's reduction)
 *   reads it back from L2 with evict-first loads. The L2 holds the chunks in
 *   flight when SMs x CTAs per SM x chunk bytes stays well under its size;
 *   the heuristic picks the cluster size (chunk = row / cluster) for that.
 * - 128-bit loads (evict-first where read once) and 128-bit stores,
 *   evict-first (.cs) or plain by the tuner's `hint`.
 * Limits: any M >= 1, N >= 1 (64-bit row offsets; the register kernels hold
 * at most 16 x 1024 x 16 slots, i.e. N < 2^21 x V; the vector streaming
 * kernels need a CTA's chunk under 2^31 elements, i.e. a cluster for
 * N >= 2^31). Base pointers that are not 16-byte aligned run the streaming
 * kernels with scalar accesses and 64-bit offsets (correct, slower). */
#include "tuned_kernels.cuh"
#include "tuner.h"

namespace {

enum { P_THREADS, P_ROWS, P_CLUSTER, P_HOLD, P_UNROLL, P_HINT, P_XCHG /* backward only */ };
enum { HOLD_STREAM = 0, HOLD_F32 = 1, HOLD_RAW = 2 };
constexpr int kNV[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr int kNumNV = sizeof kNV / sizeof kNV[0];
/* Unroll of the register configurations (not used by them) and of the
 * scalar fallback kernels. */
constexpr int kUnroll = 4;

/* ---- host: kernel tables ---------------------------------------------------- */
template <typename T>
using fwd_fn = void (*)(const T *, T *, int64_t, int64_t, int, int, int, int);
template <typename T>
using bwd_fn = void (*)(const T *, const T *, T *, int64_t, int64_t, int, int, int, int);

/* Largest NV instantiated. 16-bit backward stops at 12 (y and dy of 12
 * slots: 96 registers of data): longer rows are better streamed, and each
 * instantiation costs compile time. */
template <typename T> constexpr int max_nv(bool bwd) { return bwd && sizeof(T) == 2 ? 12 : 16; }

template <typename T, int NV, bool AL, bool RAW> static fwd_fn<T> fwd_reg_kernel()
{
    if constexpr (RAW && sizeof(T) == 4)
        return nullptr; /* fp32: the raw words are the fp32 values (hold=1) */
    else
        return sm_fwd_reg<T, NV, AL, RAW>;
}
template <typename T, int NV, bool AL> static bwd_fn<T> bwd_reg_kernel()
{
    if constexpr (NV <= max_nv<T>(true))
        return sm_bwd_reg<T, NV, AL>;
    else
        return nullptr;
}
template <typename T, bool AL, bool RAW, int... I>
static fwd_fn<T> fwd_reg_at(int nv, std::integer_sequence<int, I...>)
{
    fwd_fn<T> f = nullptr;
    ((nv == kNV[I] ? (void)(f = fwd_reg_kernel<T, kNV[I], AL, RAW>()) : (void)0), ...);
    return f;
}
template <typename T, bool AL, int... I>
static bwd_fn<T> bwd_reg_at(int nv, std::integer_sequence<int, I...>)
{
    bwd_fn<T> f = nullptr;
    ((nv == kNV[I] ? (void)(f = bwd_reg_kernel<T, kNV[I], AL>()) : (void)0), ...);
    return f;
}

template <typename T> static fwd_fn<T> fwd_reg(int nv, bool al, bool raw)
{
    const auto seq = std::make_integer_sequence<int, kNumNV>{};
    if (al) return raw ? fwd_reg_at<T, true, true>(nv, seq) : fwd_reg_at<T, true, false>(nv, seq);
    return raw ? fwd_reg_at<T, false, true>(nv, seq) : fwd_reg_at<T, false, false>(nv, seq);
}
template <typename T> static bwd_fn<T> bwd_reg(int nv, bool al)
{
    const auto seq = std::make_integer_sequence<int, kNumNV>{};
    return al ? bwd_reg_at<T, true>(nv, seq) : bwd_reg_at<T, false>(nv, seq);
}

/* Streaming kernels: 16-byte slots with `unroll` slots per step, or the
 * scalar fallback (vec = false: a base pointer is not 16-byte aligned). */
template <typename T> static fwd_fn<T> fwd_loop(int unroll, bool vec)
{
    constexpr int V = 16 / sizeof(T);
    if (!vec) return sm_fwd_loop<T, 1, kUnroll>;
    return kb_by_unroll<fwd_fn<T>>(unroll, sm_fwd_loop<T, V, 1>, sm_fwd_loop<T, V, 2>,
                                   sm_fwd_loop<T, V, 4>, sm_fwd_loop<T, V, 8>);
}
template <typename T, int X> static bwd_fn<T> bwd_loop_x(int unroll, bool vec)
{
    constexpr int V = 16 / sizeof(T);
    if (!vec) return sm_bwd_loop<T, 1, kUnroll, X>;
    return kb_by_unroll<bwd_fn<T>>(unroll, sm_bwd_loop<T, V, 1, X>, sm_bwd_loop<T, V, 2, X>,
                                   sm_bwd_loop<T, V, 4, X>, sm_bwd_loop<T, V, 8, X>);
}
/* xchg: the cluster reduction's protocol (kb_cluster.cuh), a tuning choice
 * of the backward streaming kernel only. */
template <typename T> static bwd_fn<T> bwd_loop(int unroll, bool vec, int xchg = KB_XCHG_PUSH)
{
    return xchg == KB_XCHG_BARRIER ? bwd_loop_x<T, KB_XCHG_BARRIER>(unroll, vec)
                                   : bwd_loop_x<T, KB_XCHG_PUSH>(unroll, vec);
}

/* Smallest instantiated NV covering a thread's share of the row; 0: none. */
static int pick_nv(int64_t N, int V, int tpr, int cs, int maxnv)
{
    const int64_t need = kb_cdiv(kb_max_slots(N, V), (int64_t)tpr * cs);
    for (int i = 0; i < kNumNV && kNV[i] <= maxnv; i++)
        if (kNV[i] >= need) return kNV[i];
    return 0;
}

/* The cluster exchange's protocol (xchg) matters only to a streaming
 * kernel with a cluster. */
static bool xchg_applies(int cs, int hold) { return cs > 1 && hold == HOLD_STREAM; }

struct launch_shape {
    int tpr, rows, cs, hold, unroll, hint, xchg;
    int64_t grid;
};

static launch_shape shape_of(const kb_problem *p, const kb_tune_cfg *c)
{
    launch_shape ls;
    ls.tpr = c->v[P_THREADS];
    ls.rows = c->v[P_ROWS];
    ls.cs = c->v[P_CLUSTER];
    ls.hold = c->v[P_HOLD];
    ls.unroll = c->v[P_UNROLL];
    ls.hint = c->v[P_HINT];
    /* bwd_canon resets xchg where it does not apply; validity is asked of
     * candidates before canon, so apply the rule here too. 0 (push) in the
     * forward space, which has no such parameter. */
    ls.xchg = xchg_applies(ls.cs, ls.hold) ? c->v[P_XCHG] : KB_XCHG_PUSH;
    ls.grid = kb_cdiv(p->M, ls.rows) * ls.cs;
    return ls;
}

/* The kernel a launch with 16-byte aligned pointers runs (the common case;
 * unaligned pointers run the scalar streaming kernel, checked separately). */
template <typename T> static fwd_fn<T> fwd_kernel_of(const kb_problem *p, const launch_shape &ls)
{
    constexpr int V = 16 / sizeof(T);
    if (ls.hold == HOLD_STREAM) return fwd_loop<T>(ls.unroll, true);
    const int nv = pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(false));
    return nv ? fwd_reg<T>(nv, p->N % V == 0, ls.hold == HOLD_RAW) : nullptr;
}
template <typename T> static bwd_fn<T> bwd_kernel_of(const kb_problem *p, const launch_shape &ls)
{
    constexpr int V = 16 / sizeof(T);
    if (ls.hold == HOLD_STREAM) return bwd_loop<T>(ls.unroll, true, ls.xchg);
    if (ls.hold != HOLD_F32) return nullptr; /* backward holds y, dy raw: hold=1 */
    const int nv = pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(true));
    return nv ? bwd_reg<T>(nv, p->N % V == 0) : nullptr;
}

/* The vector streaming kernels index a CTA's chunk with 32 bits. */
static bool stream_fits(const kb_problem *p, const launch_shape &ls)
{
    return kb_chunk_fits32(p->N, (int)(16 / kb_dtype_size(p->dtype)), ls.cs, ls.tpr * ls.unroll);
}

template <typename T>
static int valid_t(const kb_problem *p, const launch_shape &ls, bool bwd)
{
    const int block = ls.tpr * ls.rows;
    if (ls.hold == HOLD_STREAM && !stream_fits(p, ls)) return 0;
    if (bwd) {
        const bwd_fn<T> k = bwd_kernel_of<T>(p, ls);
        return k && kb_launchable(k, block, ls.cs) &&
               kb_launchable(bwd_loop<T>(kUnroll, false, ls.xchg), block, ls.cs);
    }
    const fwd_fn<T> k = fwd_kernel_of<T>(p, ls);
    return k && kb_launchable(k, block, ls.cs) &&
           kb_launchable(fwd_loop<T>(kUnroll, false), block, ls.cs);
}

static int shape_ok(const kb_problem *p, const launch_shape &ls)
{
    const int block = ls.tpr * ls.rows;
    return p->M >= 1 && p->N >= 1 && ls.tpr >= 4 && ls.tpr <= KB_MAX_TPR && ls.rows >= 1 &&
           ls.rows <= KB_MAX_ROWS && ls.cs >= 1 && ls.cs <= KB_MAX_CLUSTER &&
           (ls.cs == 1 || ls.rows * ls.cs <= KB_MAX_PARTS) && block >= 32 &&
           block <= KB_MAX_TPR && ls.grid <= INT32_MAX;
}

static int valid_dir(const kb_problem *p, const kb_tune_cfg *c, bool bwd)
{
    const launch_shape ls = shape_of(p, c);
    if (!shape_ok(p, ls)) return 0;
    /* unroll only matters to the streaming kernels: one value elsewhere, so
     * that the search does not time the same kernel twice. */
    if (ls.hold != HOLD_STREAM && ls.unroll != kUnroll) return 0;
    int ok = 0;
    KB_DISPATCH(p->dtype, T, ok = valid_t<T>(p, ls, bwd));
    return ok;
}

static kb_tune_cfg make_cfg(int tpr, int rows, int cs, int hold, int unroll)
{
    kb_tune_cfg c = {};
    c.v[P_THREADS] = tpr;
    c.v[P_ROWS] = rows;
    c.v[P_CLUSTER] = cs;
    c.v[P_HOLD] = hold;
    c.v[P_UNROLL] = unroll;
    return c;
}

/* Largest grid (CTAs) on which the backward streaming kernel's heuristic
 * picks the barrier exchange (xchg=1). */
constexpr int64_t kBarrierGrid = 16384;

/* Resident CTAs per SM of the streaming kernel for blocks of `block`. */
static int stream_occupancy(const kb_problem *p, int block, int unroll, bool bwd)
{
    int n = 0;
    KB_DISPATCH(p->dtype, T,
                n = bwd ? kb_blocks_per_sm(bwd_loop<T>(unroll, true), block)
                        : kb_blocks_per_sm(fwd_loop<T>(unroll, true), block));
    return n > 0 ? n : 1;
}

/* Sized by the bytes of loads a thread holds: 128 (forward: 8 raw slots of
 * x; backward: 4 slots of y and of dy), which keeps the register kernels at
 * <= 64 registers, i.e. ~1024 resident threads and ~128 KB in flight per SM.
 * A sub-warp per short row in 128-thread CTAs; up to 512 threads per row
 * forward (two CTAs per SM) and 1024 backward (Liger's one CTA of 1024
 * threads per row: docs/dev/kernels/softmax.md, H200 measurements). fp32 forward keeps
 * the exps (hold=1: its raw words are fp32 already).
 * Longer rows stream: 256 threads per row, 8 slots (forward) or 4 slots of
 * each tensor (backward) per step, and a cluster splitting the row so that
 * the chunks in flight, min(SMs x CTAs per SM, M x cluster) x chunk bytes,
 * take at most ~40 % of L2 counting that about half the CTAs are in their
 * first pass: the second pass must find its chunk in L2.
 * Small M spreads a row over a cluster so that more SMs pull its bytes. */
static void heuristic_dir(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out, bool bwd)
{
    const int esz = (int)kb_dtype_size(p->dtype), V = 16 / esz;
    const int64_t S = kb_max_slots(p->N, V);
    const int sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 132;
    const double l2 = ctx && ctx->l2_bytes > 0 ? (double)ctx->l2_bytes : 50e6;
    const int hold = bwd || esz == 4 ? HOLD_F32 : HOLD_RAW;
    const int nvt = bwd ? 4 : 8, tmax = bwd ? 1024 : 512;

    kb_tune_cfg cand[8];
    int n = 0;
    int64_t tpr = kb_pow2_ceil(kb_cdiv(S, nvt));
    tpr = tpr < 4 ? 4 : tpr;
    if (tpr <= tmax) {
        const int rows = tpr >= 128 ? 1 : (int)(128 / tpr);
        const int64_t blocks = kb_cdiv(p->M, rows);
        int cs = 1;
        while (blocks * cs < sms && cs < 8 && S >= tpr * cs * 4) cs *= 2;
        cand[n++] = make_cfg((int)tpr, rows, cs, hold, kUnroll);
    }
    const int ts = 256, U = bwd ? 4 : 8;
    const double per_sm = stream_occupancy(p, ts, U, bwd);
    const double row_bytes = (double)p->N * esz * (bwd ? 2 : 1);
    int cs = 1;
    for (;;) {
        const double ctas = fmin((double)sms * per_sm, (double)p->M * cs);
        if (cs >= KB_MAX_CLUSTER || ctas * row_bytes / cs / 2 <= 0.4 * l2 ||
            S < (int64_t)ts * U * cs * 2)
            break;
        cs *= 2;
    }
    while (p->M * cs < 2 * sms && cs < 8 && S >= (int64_t)ts * U * cs * 2) cs *= 2;
    while (!kb_chunk_fits32(p->N, V, cs, ts * U) && cs < KB_MAX_CLUSTER) cs *= 2;
    /* Fallbacks, in order: a portable cluster size (a GPU that cannot
     * schedule 16), one CTA per row, 32-row CTAs (M beyond 2^31 rows). */
    cand[n++] = make_cfg(ts, 1, cs, HOLD_STREAM, U);
    if (cs > 8) cand[n++] = make_cfg(ts, 1, 8, HOLD_STREAM, U);
    cand[n++] = make_cfg(ts, 1, 1, HOLD_STREAM, U);
    cand[n++] = make_cfg(32, 32, 1, HOLD_STREAM, U);
    /* Backward streaming on a grid of few clusters exchanges through the
     * cluster barrier: measured faster there, slower on larger grids
     * (docs/dev/device-layer.md, "One cluster reduction, two protocols"). */
    for (int i = 0; bwd && i < n; i++) {
        const int ccs = cand[i].v[P_CLUSTER];
        if (xchg_applies(ccs, cand[i].v[P_HOLD]) &&
            kb_cdiv(p->M, cand[i].v[P_ROWS]) * ccs <= kBarrierGrid)
            cand[i].v[P_XCHG] = KB_XCHG_BARRIER;
    }
    for (int i = 0; i < n; i++)
        if (valid_dir(p, &cand[i], bwd)) {
            *out = cand[i];
            return;
        }
    *out = cand[n - 2]; /* kb_tuned_setup reports it as not runnable */
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
    const bool vec = kb_aligned16(x) && kb_aligned16(y);
    fwd_fn<T> k = nullptr;
    if (!vec)
        k = fwd_loop<T>(kUnroll, false);
    else if (ls.hold == HOLD_STREAM)
        k = stream_fits(p, ls) ? fwd_loop<T>(ls.unroll, true) : nullptr;
    else
        k = fwd_reg<T>(pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(false)), p->N % V == 0,
                       ls.hold == HOLD_RAW);
    if (!k) return cudaErrorInvalidConfiguration;
    return kb_launch_rows(k, ls.grid, block, ls.cs, s, x, y, p->M, p->N, sh, ls.rows, ls.cs,
                          ls.hint);
}

template <typename T>
static cudaError_t launch_bwd(const kb_problem *p, const kb_tensors *t, const launch_shape &ls,
                              cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    const T *y = (const T *)t->y, *dy = (const T *)t->dy;
    T *dx = (T *)t->out;
    const int sh = kb_log2i(ls.tpr), block = ls.tpr * ls.rows;
    const bool vec = kb_aligned16(y) && kb_aligned16(dy) && kb_aligned16(dx);
    bwd_fn<T> k = nullptr;
    if (!vec)
        k = bwd_loop<T>(kUnroll, false, ls.xchg);
    else if (ls.hold == HOLD_STREAM)
        k = stream_fits(p, ls) ? bwd_loop<T>(ls.unroll, true, ls.xchg) : nullptr;
    else if (ls.hold == HOLD_F32)
        k = bwd_reg<T>(pick_nv(p->N, V, ls.tpr, ls.cs, max_nv<T>(true)), p->N % V == 0);
    if (!k) return cudaErrorInvalidConfiguration;
    return kb_launch_rows(k, ls.grid, block, ls.cs, s, y, dy, dx, p->M, p->N, sh, ls.rows,
                          ls.cs, ls.hint);
}

static kb_status launch_dir(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e, bool bwd)
{
    const launch_shape ls = shape_of(p, c);
    if (!shape_ok(p, ls))
        return KB_FAIL(e, KB_ERR_ARG, "softmax_%s tuned %lldx%lld: bad launch shape",
                       bwd ? "backward" : "forward", (long long)p->M, (long long)p->N);
    cudaError_t rc = cudaErrorInvalidValue;
    KB_DISPATCH(p->dtype, T, rc = bwd ? launch_bwd<T>(p, t, ls, s) : launch_fwd<T>(p, t, ls, s));
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "softmax_%s tuned %s %lldx%lld threads=%d rows=%d "
                       "cluster=%d hold=%d unroll=%d hint=%d%s: %s", bwd ? "backward" : "forward",
                       kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, ls.tpr, ls.rows,
                       ls.cs, ls.hold, ls.unroll, ls.hint, bwd ? (ls.xchg ? " xchg=1" : " xchg=0") : "",
                       cudaGetErrorString(rc));
    KB_LAUNCHED(e);
    return KB_OK;
}

KB_ROWS_DIRECTIONS

static void bwd_canon(kb_tune_cfg *c)
{
    if (!xchg_applies(c->v[P_CLUSTER], c->v[P_HOLD])) c->v[P_XCHG] = KB_XCHG_PUSH;
}

/* threads: per row within a CTA; rows: row groups per CTA; cluster: CTAs per
 * row (sm_90 cluster, DSMEM reduction); hold: 0 two streaming passes, 1 row
 * in registers (forward: fp32 exps; backward: raw y, dy), 2 (forward) raw x
 * in registers, exp computed twice; unroll: slots per thread and step of
 * the streaming kernels (4 with hold > 0); hint: the output's 16-byte
 * stores, 0 evict-first (.cs), 1 plain write-back (kb_st_raw_hint; the
 * streaming kernels' second pass wants its chunk kept in L2, a single-pass
 * register kernel need not); xchg (backward): the cluster reduction's
 * protocol, 0 st.async pushes on an mbarrier, 1 DSMEM stores and a cluster
 * barrier (streaming kernel with cluster > 1 only). */
const kb_tune_space fwd_space = {
    "softmax_forward",
    6,
    {"threads", "rows", "cluster", "hold", "unroll", "hint"},
    {9, 6, 5, 3, 4, 2},
    {{4, 8, 16, 32, 64, 128, 256, 512, 1024},
     {1, 2, 4, 8, 16, 32},
     {1, 2, 4, 8, 16},
     {0, 1, 2},
     {1, 2, 4, 8},
     {0, 1}},
    fwd_heuristic,
    fwd_valid,
    nullptr,
    fwd_launch,
    nullptr, /* kernels: one */
};

const kb_tune_space bwd_space = {
    "softmax_backward",
    7,
    {"threads", "rows", "cluster", "hold", "unroll", "hint", "xchg"},
    {9, 6, 5, 2, 4, 2, 2},
    {{4, 8, 16, 32, 64, 128, 256, 512, 1024},
     {1, 2, 4, 8, 16, 32},
     {1, 2, 4, 8, 16},
     {0, 1},
     {1, 2, 4, 8},
     {0, 1},
     {0, 1}},
    bwd_heuristic,
    bwd_valid,
    nullptr,
    bwd_launch,
    nullptr, /* kernels: one */
    bwd_canon,
};

} // namespace

KB_TUNED_IMPL(kb_softmax_tuned_fwd, KB_SOFTMAX_FWD, fwd_space)
KB_TUNED_IMPL(kb_softmax_tuned_bwd, KB_SOFTMAX_BWD, bwd_space)
