/* Tuned RMSNorm / LayerNorm kernels, shared by kernels/rmsnorm/tuned.cu and
 * kernels/layernorm/tuned.cu (LN = true adds the centring: mean, mean(g)).
 * Each .cu file instantiates these templates for its op and defines its
 * kb_tune_space with the initialisers below. Kernels and their strategy:
 *   norm_tuned_dev.cuh  packs, conversions, row reduction (warp, CTA, and a
 *                       cluster through st.async + mbarrier), lane map
 *   norm_tuned_fwd.cuh  fwd_reg (row in registers, next rows prefetched),
 *                       fwd_reg_one (the same, one row group per CTA, fewer
 *                       registers), fwd_loop (the row re-read per
 *                       pass, U slots in flight per thread; fwd_loop_long:
 *                       its twin for long shares per thread; fwd_stage: the
 *                       row staged in shared memory, every pass from there)
 *   norm_tuned_bwd.cuh  bwd_reg + dw_reduce (persistent, dw partials),
 *                       bwd_loop (persistent, the row re-read per pass,
 *                       the same partials), bwd_dx_loop + dw_cols (fallback)
 * This file: the search space, the heuristic, validity and launches.
 *
 * Search space (kb_tune_space parameters):
 *   threads  tpr, threads per row in a CTA (power of two, 1..1024)
 *   rows     R, rows per CTA side by side (blockDim = (tpr, R)); tpr*R is
 *            a multiple of 32 and at most 1024
 *   cluster  CL, CTAs sharing a row (sm_90 thread-block cluster, 1..16;
 *            16 is a non-portable size); CL > 1 needs R == 1
 *   occ      CTAs per SM of the persistent grid (capped by the occupancy
 *            calculator; with a cluster, any value > 0 means all the
 *            clusters that fit); forward only: 0 = one CTA per row group
 *            (with db = 0, aligned packs and pointers, NV <= 8 and at most
 *            2^30 / CL groups: fwd_reg_one, no prefetch, 32-64 registers);
 *            forward reload loop: 0 and 32 one CTA per row, 1-16 a
 *            persistent grid of at most occ CTAs per SM (fewer rows in
 *            flight, so the passes after the first find the row in L2)
 *   db       next row group double-buffered in registers (1) or rolled in
 *            pack by pack behind the stores (0); backward (8th parameter,
 *            after hint; 16-byte packs, aligned or shifted slots): 1 in
 *            registers (NV <= 2), 2 in shared memory by cp.async (NV 1,
 *            2, 4, 8), 3 as 2 with class-crossing slots (shifted rows at
 *            a cluster only: every cluster that fits a slot, not whole
 *            shift classes; norm_tuned_bwd.cuh)
 *   acc      backward: dw accumulators in registers (0) or shared memory (1:
 *            fewer registers, more CTAs per SM); the loop (reload 2-8)
 *            always has them in shared memory (canon: 1)
 *   reload   0: row held in registers; else a loop re-reading the row
 *            (forward and the backward's fallback: one CTA of `threads` per
 *            row, rows == cluster == 1, except below); forward:
 *            1, 2 or 4 slots per thread in flight per step (fwd_loop's U),
 *            8 the row staged in shared memory first (fwd_stage: 16-byte
 *            aligned tensors, rows that fit the opt-in shared memory; with
 *            cluster > 1 fwd_stage_cl, each CTA staging its share, rows up
 *            to cluster x that; occ 1-16 then all clusters that fit);
 *            backward: 1 the fallback (any N: dx in two passes a row, dw by a
 *            column-tiled kernel), 2, 4, 8 bwd_loop (a persistent grid of
 *            `occ` CTAs per SM of `rows` row slots, each row read twice,
 *            U = reload packs per thread in flight per step, dw in shared
 *            memory; aligned tensors, 16-bit types or N % VEC == 0 (odd
 *            16-bit rows on bwd_reg's shifted slots, U = 4, 8 only);
 *            a cluster (rows 1) splits each row, so rows beyond one CTA's
 *            shared memory go; its register caps bound a CTA: 1024
 *            threads at U = 2, 512 at U = 4 and 8)
 *   hint     forward: cache operators of x's loads and y's stores, as the
 *            tuned GLU's (0: evict-first both, 1: evict-first loads, plain
 *            stores, 2: plain both; the reload loop's loads ignore it (their
 *            cache operators follow U), so there 2 is 1);
 *            backward: dx's stores in the aligned register kernel and the
 *            loop, 0 evict-first, 1 plain (the others keep evict-first)
 * NV, the 16-byte packs a thread holds per tensor, is derived, not tuned:
 * the smallest compiled value >= ceil(S / (tpr*CL*VEC)), VEC = 16/sizeof(T),
 * S the row's span: N, or for shifted slots N + VEC - 1 (nt_fwd_span).
 * Compiled: forward 1,2,3,4,6,8,12,16 (db and fwd_reg_one: up to 8);
 * backward 1,2,3,4,6,8 (db=1: 1, 2; db=2 and 3: 1, 2, 4, 8).
 *
 * Layout: a row is cut into packs of VEC elements; thread t of CTA rank r
 * owns packs i*(tpr*CL) + r*tpr + t, i < NV: a warp touches consecutive
 * 16-byte packs (coalesced) and, with aligned rows, a thread owns the same
 * columns on every row (the backward's dw accumulators rely on it; shifted
 * rows give it only within a shift class, below). Packs sit in registers raw
 * (one uint4: half the registers of fp32 for 16-bit types) and are converted
 * to fp32 where used. AL (N % VEC == 0 and 16-byte aligned base pointers):
 * one 128-bit access per pack. Forward with N % VEC != 0: shifted slots
 * (norm_tuned_dev.cuh), still 128-bit for x and y, w read at a per-row
 * column shift. Backward with N % VEC != 0, 16-bit types: the same slots,
 * with the rows dealt out by shift class so that a thread still owns the
 * same columns on every row it sees (norm_tuned_bwd.cuh); fp32: element
 * accesses (nt_bwd_am). Base pointers not 16-byte aligned: element accesses
 * (the loop kernels forward; backward, the register kernel one element at a
 * time).
 *
 * Limits: registers hold up to tpr*CL*NV*VEC elements (bf16: ~1M forward,
 * CL=16 x 512 threads x NV=16; ~512K backward); valid() asks the
 * runtime that the block fits the kernel's registers, nothing spills
 * (localSizeBytes == 0) and the cluster is schedulable. Any M, N >= 1;
 * 64-bit row offsets; N < 2^30 in the register kernels. sm_90 only. */
#ifndef KB_NORM_TUNED_CUH
#define KB_NORM_TUNED_CUH

#include "norm_tuned_bwd.cuh"
#include "norm_tuned_fwd.cuh"
#include "hwfit.h"
#include "kb_launch.cuh"
#include "tuner.h"

namespace {

/* ---- parameters ------------------------------------------------------------ */
enum { P_THREADS = 0, P_ROWS, P_CLUSTER, P_OCC, P_FWD_DB = 4, P_BWD_ACC = 4, P_RELOAD, P_FWD_HINT = 6, P_BWD_HINT = 6, P_BWD_DB = 7 };

#define NT_THREADS_CHOICES {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
#define NT_ROWS_CHOICES {1, 2, 4, 8, 16, 32, 64, 128}
#define NT_CLUSTER_CHOICES {1, 2, 4, 8, 16}
#define NT_OCC_CHOICES {1, 2, 3, 4, 6, 8, 12, 16, 32}
#define NT_FWD_OCC_CHOICES {0, 1, 2, 3, 4, 6, 8, 12, 16, 32}
constexpr int kOccAll = 32; /* occ value meaning "as many CTAs as fit" */

/* kb_tune_space initialisers for the .cu files. */
#define KB_NORM_FWD_SPACE(opname, ln)                                                      \
    {opname, 7, {"threads", "rows", "cluster", "occ", "db", "reload", "hint"},               \
     {11, 8, 5, 10, 2, 5, 3},                                                              \
     {NT_THREADS_CHOICES, NT_ROWS_CHOICES, NT_CLUSTER_CHOICES, NT_FWD_OCC_CHOICES, {0, 1},   \
      {0, 1, 2, 4, 8}, {0, 1, 2}},                                                            \
     nt_heuristic<ln, false>, nt_fwd_valid<ln>, nullptr, nt_fwd_launch<ln>, nullptr,        \
     nt_fwd_canon}
#define KB_NORM_BWD_SPACE(opname, ln)                                                    \
    {opname, 8, {"threads", "rows", "cluster", "occ", "acc", "reload", "hint", "db"},       \
     {11, 8, 5, 9, 2, 5, 2, 4},                                                            \
     {NT_THREADS_CHOICES, NT_ROWS_CHOICES, NT_CLUSTER_CHOICES, NT_OCC_CHOICES, {0, 1},       \
      {0, 1, 2, 4, 8}, {0, 1}, {0, 1, 2, 3}},                                               \
     nt_heuristic<ln, true>, nt_bwd_valid<ln>, nt_bwd_workspace<ln>, nt_bwd_launch<ln>,   \
     nt_bwd_kernels, nt_bwd_canon}

constexpr int kFwdNV[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr int kFwdDbNV[] = {1, 2, 3, 4, 6, 8};
constexpr int kBwdNV[] = {1, 2, 3, 4, 6, 8};
constexpr int kBwdDbRegNV[] = {1, 2};      /* db=1: registers       */
constexpr int kBwdDbSmemNV[] = {1, 2, 4, 8}; /* db=2 and 3: shared memory */

/* ---- kernel tables ------------------------------------------------------------------ */

/* NT_EACH_NV(X): X(NV) for the NVs of kFwdDbNV and kBwdNV, the register
 * kernels every table instantiates (the single-buffered forward adds 12, 16). */
#define NT_EACH_NV(X) X(1) X(2) X(3) X(4) X(6) X(8)

template <typename T, bool LN, bool AL, int H> fwd_fn fwd_reg_for(int nv, bool db, bool one)
{
#define NT_FWD_DB(NV)                                                                      \
    case NV: return fwd_reg<T, LN, NV, AL, true, H>();
#define NT_FWD(NV)                                                                         \
    case NV: return fwd_reg<T, LN, NV, AL, false, H>();
#define NT_FWD_ONE(NV)                                                                     \
    case NV: return fwd_reg_one<T, LN, NV, H>;
    if constexpr (AL)
        if (one && !db) switch (nv) {
            NT_EACH_NV(NT_FWD_ONE)
            default: break; /* more packs: the general kernel, run once */
            }
    if (db) switch (nv) {
        NT_EACH_NV(NT_FWD_DB)
        default: return nullptr;
        }
    switch (nv) {
    NT_EACH_NV(NT_FWD)
    NT_FWD(12)
    NT_FWD(16)
    default: return nullptr;
    }
#undef NT_FWD_DB
#undef NT_FWD
#undef NT_FWD_ONE
}

template <typename T, bool LN, int AM, bool SACC, int H> bwd_fn bwd_reg_for(int nv, int db)
{
#define NT_BWD(NV)                                                                         \
    case NV: return bwd_reg<T, LN, NV, AM, SACC, H>();
#define NT_BWD_DB(NV, DB)                                                                  \
    case NV: return bwd_reg<T, LN, NV, AM, SACC, H, DB>();
#define NT_BWD_XC(NV)                                                                      \
    case NV: return bwd_reg<T, LN, NV, AM, SACC, H, 2, true>();
    if constexpr (AM == AM_SHIFT) { /* db=3: db=2's kernel on class-crossing slots */
        if (db == 3) switch (nv) {
            NT_BWD_XC(1)
            NT_BWD_XC(2)
            NT_BWD_XC(4)
            NT_BWD_XC(8)
            default: return nullptr;
            }
    }
    if constexpr (AM != AM_ELEM) {
        if (db == 1) switch (nv) {
            NT_BWD_DB(1, 1)
            NT_BWD_DB(2, 1)
            default: return nullptr;
            }
        if (db == 2) switch (nv) {
            NT_BWD_DB(1, 2)
            NT_BWD_DB(2, 2)
            NT_BWD_DB(4, 2)
            NT_BWD_DB(8, 2)
            default: return nullptr;
            }
    }
    if (db) return nullptr;
    switch (nv) {
    NT_EACH_NV(NT_BWD)
    default: return nullptr;
    }
#undef NT_BWD
#undef NT_BWD_XC
#undef NT_BWD_DB
}

/* vec: N % VEC == 0 (aligned packs), else shifted slots; hint: the cache
 * operators (0, 1, 2; shifted slots only 0). nullptr: not instantiated. */
template <bool LN> fwd_fn fwd_reg_kernel(kb_dtype d, int nv, bool vec, bool db, int hint, bool one)
{
    fwd_fn f = nullptr;
    KB_DISPATCH(d, T, {
        if (!vec) f = hint == 0 ? fwd_reg_for<T, LN, false, 0>(nv, db, one) : nullptr;
        else if (hint == 0) f = fwd_reg_for<T, LN, true, 0>(nv, db, one);
        else if (hint == 1) f = fwd_reg_for<T, LN, true, 1>(nv, db, one);
        else if (hint == 2) f = fwd_reg_for<T, LN, true, 2>(nv, db, one);
    });
    return f;
}
/* db=3, class-crossing slots (norm_tuned_bwd.cuh): shifted rows split over
 * a cluster, where whole classes round the grid down (30 clusters that fit
 * over 8 classes run 24: session 22's ncu). Elsewhere there is one class, or
 * one CTA per slot and the grid a multiple of P, so db=3 is not valid. */
inline bool nt_bwd_xc_ok(int am, int cl) { return am == AM_SHIFT && cl > 1; }

/* am: nt_bwd_am's choice; hint: dx's stores (0, 1; AM_AL only 1); db: the
 * next group double-buffered (AM_AL and AM_SHIFT): 1 in registers (NV <= 2),
 * 2 in shared memory (NV 1, 2, 4, 8), 3 the same on class-crossing slots
 * (AM_SHIFT). */
template <bool LN> bwd_fn bwd_reg_kernel(kb_dtype d, int nv, int am, bool sacc, int hint, int db)
{
    bwd_fn f = nullptr;
    if (hint != 0 && (hint != 1 || am != AM_AL)) return nullptr;
#define NT_BWD_AM(AM, H)                                                                   \
    f = sacc ? bwd_reg_for<T, LN, AM, true, H>(nv, db) : bwd_reg_for<T, LN, AM, false, H>(nv, db)
    KB_DISPATCH(d, T, {
        if (am == AM_AL) {
            if (hint) NT_BWD_AM(AM_AL, 1);
            else NT_BWD_AM(AM_AL, 0);
        } else if constexpr (sizeof(T) == 2) { /* nt_bwd_am: 16-bit types only */
            if (am == AM_SHIFT) NT_BWD_AM(AM_SHIFT, 0);
            else NT_BWD_AM(AM_ELEM, 0);
        } else if (am == AM_ELEM) {
            NT_BWD_AM(AM_ELEM, 0);
        }
    });
#undef NT_BWD_AM
    return f;
}

/* ptr16: 16-byte aligned base pointers; al: and N % VEC == 0.
 * hint: the forward's (0, 1, 2); the loop's loads ignore it, so 2 runs
 * hint 1's kernel (plain stores), AM_AL only. u: slots per thread per step
 * (the `reload` value: 1, 2, 4); element accesses (!ptr16) run 1.
 * N, tpr: the row length and threads per row (fwd_loop_fn: long shares
 * per thread take the fwd_loop_long kernels). cl: CTAs per row, > 1 only
 * for the staged loop (u = 8: fwd_stage_cl); nullptr otherwise. */
template <bool LN>
fwd_fn fwd_loop_kernel(kb_dtype d, bool ptr16, bool al, int hint, int u, int64_t N, int tpr,
                       int cl = 1)
{
    fwd_fn f = nullptr;
    if (hint < 0 || hint > 2 || (hint && !al) || (u != 1 && u != 2 && u != 4 && u != 8))
        return nullptr;
    if (cl < 1 || cl > kMaxCluster || (cl > 1 && u != 8)) return nullptr;
    if (u == 8) { /* staged: 128-bit slots only */
        KB_DISPATCH(d, T, {
            f = al ? (hint ? fwd_stage_fn<T, LN, AM_AL, 1>(N, tpr, cl)
                           : fwd_stage_fn<T, LN, AM_AL, 0>(N, tpr, cl))
               : ptr16 ? fwd_stage_fn<T, LN, AM_SHIFT, 0>(N, tpr, cl) : nullptr;
        });
        return f;
    }
#define NT_LOOP_U(MODE, H)                                                                 \
    (u == 4   ? fwd_loop_fn<T, LN, MODE, H, 4>(N, tpr)                                    \
     : u == 2 ? fwd_loop_fn<T, LN, MODE, H, 2>(N, tpr)                                    \
              : fwd_loop_fn<T, LN, MODE, H, 1>(N, tpr))
    KB_DISPATCH(d, T, {
        f = al ? (hint ? NT_LOOP_U(AM_AL, 1) : NT_LOOP_U(AM_AL, 0))
               : ptr16 ? NT_LOOP_U(AM_SHIFT, 0) : fwd_loop_fn<T, LN, AM_ELEM, 0, 1>(N, tpr);
    });
#undef NT_LOOP_U
    return f;
}

template <bool LN> bwd_fn bwd_dx_loop_kernel(kb_dtype d, bool vec)
{
    bwd_fn f = nullptr;
    KB_DISPATCH(d, T, { f = vec ? bwd_dx_loop<T, LN, true> : bwd_dx_loop<T, LN, false>; });
    return f;
}

/* The backward's persistent loop (reload = u: 2, 4, 8) in access mode am
 * (nt_bwd_am): aligned packs, or shifted slots (16-bit types, u = 4 and 8:
 * at u = 2 ptxas spilled 128-208 bytes even at 96 registers, where u = 4
 * does not); hint: dx's stores, 0 evict-first, 1 plain (aligned packs
 * only). nullptr: not instantiated (element accesses included). */
template <bool LN> bwd_fn bwd_loop_kernel(kb_dtype d, int u, int hint, int am)
{
    bwd_fn f = nullptr;
    if (hint < 0 || hint > 1 || (hint && am != AM_AL) || (am != AM_AL && am != AM_SHIFT))
        return nullptr;
#define NT_BWD_LOOP(H)                                                                     \
    (u == 2   ? bwd_loop<T, LN, 2, H>                                                      \
     : u == 4 ? bwd_loop<T, LN, 4, H>                                                      \
     : u == 8 ? bwd_loop<T, LN, 8, H> : nullptr)
    KB_DISPATCH(d, T, {
        if (am == AM_AL) f = hint ? NT_BWD_LOOP(1) : NT_BWD_LOOP(0);
        else if constexpr (sizeof(T) == 2)
            f = u == 4 ? bwd_loop<T, LN, 4, 0, true> : u == 8 ? bwd_loop<T, LN, 8, 0, true> : nullptr;
    });
#undef NT_BWD_LOOP
    return f;
}

/* ---- host helpers ---------------------------------------------------------------- */
inline int nt_vec(kb_dtype d) { return d == KB_FP32 ? 4 : 8; }

/* Elements the slots of a row may cover: a shifted row (N % vec != 0)
 * spans up to vec - 1 more than N. */
inline int64_t nt_fwd_span(int64_t N, int vec) { return N % vec ? N + vec - 1 : N; }

/* Dynamic shared memory of the loop with `reload` = u: a staged row's
 * slots, 16 bytes each; over a cluster of cl CTAs of tpr threads, one CTA's
 * share, a whole number of slots per thread (fwd_stage_cl's layout). */
inline size_t nt_fwd_loop_smem(const kb_problem *p, int u, int tpr = 1, int cl = 1)
{
    const int vec = nt_vec(p->dtype);
    if (u != 8) return 0;
    const int64_t slots = kb_cdiv(nt_fwd_span(p->N, vec), (int64_t)vec);
    if (cl <= 1) return (size_t)slots * 16;
    return (size_t)kb_cdiv(slots, (int64_t)tpr * cl) * (size_t)tpr * 16;
}

inline int64_t nt_pow2ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

/* Smallest instantiated NV holding ceil(N / (tpr*cl)) elements (N: the
 * row's span); 0 if none. list: kFwdNV, kFwdDbNV, kBwdNV or the
 * backward's db lists (nt_bwd_nv). */
template <size_t K>
inline int nt_pick_nv(int64_t N, int tpr, int cl, int vec, const int (&list)[K])
{
    const int64_t need = kb_cdiv(kb_cdiv(N, (int64_t)tpr * cl), vec);
    for (size_t i = 0; i < K; i++)
        if (list[i] >= need) return list[i];
    return 0;
}


/* Block shape that makes sense for the row-in-registers kernels. */
inline bool nt_shape_ok(const kb_problem *p, int tpr, int rows, int cl)
{
    const int block = tpr * rows;
    if (tpr < 1 || rows < 1 || cl < 1 || cl > kMaxCluster) return false;
    if (block > 1024 || block % 32 != 0) return false;
    if (cl > 1 && rows != 1) return false;
    /* Threads of a row beyond its vector count would only idle. */
    if ((int64_t)tpr * cl > nt_pow2ceil(kb_cdiv(p->N, nt_vec(p->dtype)))) return false;
    if (p->N > INT32_MAX / 2) return false;
    return true;
}

/* The runtime's view of the compiled kernel: block within its register
 * budget, no local memory (spills), shared memory within the opt-in limit.
 * A failed query clears the error so it cannot surface at a later launch. */
inline bool nt_kernel_fits(const void *fn, int block, size_t dyn_smem, size_t smem_optin)
{
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, fn) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    kb_launch_need need = kb_launch_need_init(block, 1, dyn_smem);
    need.max_threads = fa.maxThreadsPerBlock;
    need.local_bytes = fa.localSizeBytes;
    need.static_smem = fa.sharedSizeBytes;
    need.smem_optin = smem_optin;
    return !kb_launch_fits(&need);
}

inline const char *nt_op(bool bwd, bool ln)
{
    return ln ? (bwd ? "layernorm_backward" : "layernorm_forward")
              : (bwd ? "rmsnorm_backward" : "rmsnorm_forward");
}

#define NT_CUDA(e, p, what, call)                                                          \
    do {                                                                                   \
        cudaError_t nt_rc_ = (call);                                                       \
        if (nt_rc_ != cudaSuccess)                                                         \
            return KB_FAIL((e), KB_ERR_CUDA, "tuned %s %s %lldx%lld: %s: %s", (what),      \
                           kb_dtype_name((p)->dtype), (long long)(p)->M, (long long)(p)->N, \
                           #call, cudaGetErrorString(nt_rc_));                             \
    } while (0)

/* Every message names the backend, benchmark, dtype and shape. */
#define NT_FAIL(e, st, p, what, fmt, ...)                                                   \
    KB_FAIL((e), (st), "tuned %s %s %lldx%lld: " fmt, (what), kb_dtype_name((p)->dtype),    \
            (long long)(p)->M, (long long)(p)->N, __VA_ARGS__)

template <typename... Params, typename... Args>
kb_status nt_launch(const kb_problem *p, const char *what, kb_err *e, void (*fn)(Params...),
                    dim3 grid, dim3 block, size_t smem, int cl, bool pdl, cudaStream_t s,
                    const Args &...args)
{
    NT_CUDA(e, p, what, kb_launch(fn, grid, block, smem, cl, pdl, s, args...));
    NT_CUDA(e, p, what, cudaGetLastError());
    return KB_OK;
}

inline int64_t nt_grid_cap(int cl) { return ((int64_t)1 << 30) / cl; }

inline unsigned nt_grid(int64_t groups, int cl)
{
    const int64_t cap = nt_grid_cap(cl); /* grid-stride beyond */
    return (unsigned)((groups < cap ? groups : cap) * cl);
}

/* occ = 0 runs one CTA (cluster) per row group; where the grid covers every
 * group, the forward's one-group kernel (fwd_reg_one) does that. */
inline bool nt_fwd_one(const kb_problem *p, int rows, int cl, int occ)
{
    return occ == 0 && kb_cdiv(p->M, (int64_t)rows) <= nt_grid_cap(cl);
}

/* Threads per row and cluster for about nvt vectors per thread: whole rows
 * per CTA up to `longt` threads, clusters of `longt`-thread CTAs beyond. */
inline bool nt_shape_for(const kb_problem *p, int nvt, int longt, int *tpr, int *rows, int *cl)
{
    const int64_t total = nt_pow2ceil(kb_cdiv(kb_cdiv(p->N, nt_vec(p->dtype)), nvt));
    if (total <= longt) {
        *tpr = (int)total;
        *cl = 1;
        const int r = 256 / *tpr;
        *rows = r < 1 ? 1 : r > 128 ? 128 : r;
        return true;
    }
    if (total / longt > kMaxCluster) return false;
    *tpr = longt;
    *rows = 1;
    *cl = (int)(total / longt);
    return true;
}


template <bool LN> int nt_fwd_valid(const kb_problem *, const kb_setup_ctx *, const kb_tune_cfg *);

/* The reload loop's loads ignore the hint (fwd_loop_kernel: their cache
 * operators follow U, not the hint): hint 2 is
 * hint 1's kernel there, and canon makes the two texts one configuration,
 * so the search times that kernel once. The loop runs one CTA per row for
 * occ 0 as for occ = all (nt_fwd_launch), and it has no double buffer:
 * those fold too. */
inline void nt_fwd_canon(kb_tune_cfg *c)
{
    if (!c->v[P_RELOAD]) return;
    if (c->v[P_FWD_HINT] == 2) c->v[P_FWD_HINT] = 1;
    if (c->v[P_OCC] == 0) c->v[P_OCC] = kOccAll;
    /* The staged loop over a cluster: occ 1-16 all mean every cluster that
     * fits (nt_persistent_slots). */
    if (c->v[P_CLUSTER] > 1 && c->v[P_OCC] < kOccAll) c->v[P_OCC] = 1;
    c->v[P_FWD_DB] = 0;
}
/* The reload fallback ignores the backward's hint and double buffer; the
 * loop (reload 2, 4, 8) the double buffer and acc (its dw accumulators are
 * always in shared memory: acc=1). */
inline void nt_bwd_canon(kb_tune_cfg *c)
{
    if (c->v[P_RELOAD] == 1) c->v[P_BWD_HINT] = c->v[P_BWD_DB] = 0;
    if (c->v[P_RELOAD] >= 2) {
        c->v[P_BWD_DB] = 0;
        c->v[P_BWD_ACC] = 1;
    }
    /* A cluster's grid is every cluster that fits, whatever occ says
     * (nt_persistent_slots): one launch, one evaluation. */
    if (c->v[P_CLUSTER] > 1) c->v[P_OCC] = kOccAll;
}
template <bool LN> int nt_bwd_valid(const kb_problem *, const kb_setup_ctx *, const kb_tune_cfg *);

/* The first valid of a list of (packs per thread, db, CTA size cap) for the
 * forward, (packs per thread, CTA size cap, acc) for the backward; whole
 * rows per CTA up to the cap, clusters of cap-sized CTAs beyond; failing
 * all, the reload fallback. Persistent grids (occ = all that fit).
 * Forward: about 4 packs per thread double-buffered first (the next rows'
 * loads cover the reductions, the cross-warp barrier and the cluster
 * exchange; 64 KB+ in flight per SM at <= 64 registers), then rolled in,
 * then 8 and 16 packs; 1024-thread CTAs before clusters (N = 32768 bf16 is
 * one CTA, no cluster), 512 and 256 last (element-wise kernels for odd N
 * need more registers). Backward: about 4 packs per thread (x and dy: twice
 * the registers of the forward), CTAs of 256 threads before clusters, dw in
 * shared memory first; where 4 packs would need more than 16 such CTAs, about
 * 6 before 512-thread CTAs (bf16 1024x151936: 16 x 256 threads, NV=6, the
 * H200 cache's entry, where 16 x 512 threads at NV=3 ran far slower,
 * kernels/README.md); a row split over a cluster then takes db=2 where it
 * holds as many packs (nt_bwd_heuristic_db). */
inline int nt_bwd_am(kb_dtype d, int64_t N, bool ptr16);
inline int nt_bwd_nv(const kb_problem *p, int am, int tpr, int cl, int db);

/* Backward, a row split over a cluster: the next row group staged in shared
 * memory (db=2) while this one is reduced, dw in registers first. Measured
 * on the H200 beside db=0 entries: +3 to +21 % on aligned long rows (session
 * 16), +4 to +14 % on odd-N 16-bit rows (session 22). Only where db=2 holds
 * as many packs per thread as db=0 (NV 1, 2, 4, 8): rounded up to 8 it lost
 * 15-25 % at 1024x151936 (session 17). Shifted rows of kBwdXcRows rows or
 * more take db=3 (class-crossing slots): it won at 4096 rows and lost at
 * 512 (session 23), where each slot runs few groups and a class crossing
 * (a second pass: its w slice, partial row and an empty pipeline) costs
 * more than the idle clusters it saves. c stays as it is when no variant
 * is valid. */
constexpr int64_t kBwdXcRows = 2048;
template <bool LN>
void nt_bwd_heuristic_db(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *c)
{
    const int am = nt_bwd_am(p->dtype, p->N, true), tpr = c->v[P_THREADS], cl = c->v[P_CLUSTER];
    if (nt_bwd_nv(p, am, tpr, cl, 2) != nt_bwd_nv(p, am, tpr, cl, 0)) return;
    const int db = nt_bwd_xc_ok(am, cl) && p->M >= kBwdXcRows ? 3 : 2;
    for (int acc = 0; acc <= 1; acc++) {
        kb_tune_cfg d = *c;
        d.v[P_BWD_DB] = db;
        d.v[P_BWD_ACC] = acc;
        if (nt_bwd_valid<LN>(p, ctx, &d)) {
            *c = d;
            return;
        }
    }
}

template <bool LN, bool BWD>
void nt_heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    static const int fwd[][3] = {{4, 1, 1024}, {4, 0, 1024}, {8, 0, 1024}, {4, 1, 512},
                                 {8, 0, 512},  {16, 0, 1024}, {16, 0, 512}, {4, 0, 256},
                                 {8, 0, 256},  {16, 0, 256}};
    static const int bwd[][3] = {{4, 256, 1}, {4, 256, 0}, {6, 256, 1}, {6, 256, 0},
                                 {4, 512, 1},  {4, 512, 0}, {4, 1024, 1}, {4, 1024, 0},
                                 {8, 256, 1}, {8, 256, 0}, {8, 512, 1}, {8, 512, 0},
                                 {8, 1024, 1}, {8, 1024, 0}};
    const int nc = BWD ? (int)(sizeof bwd / sizeof bwd[0]) : (int)(sizeof fwd / sizeof fwd[0]);
    kb_tune_cfg c = {};
    /* Forward, N % VEC != 0, enough rows to fill the GPU with one CTA per
     * row: the re-reading loop, whose few registers give full occupancy,
     * beat the shifted-slot register kernel (kernels/README.md, H200
     * measurements). About 8 slots per thread; from 16K columns two of them
     * in flight per step (reload=2: at 4096x50257 bf16, 512 threads, RMSNorm
     * +7 %, LayerNorm equal; at 4095 one slot per step stays ahead), or,
     * where the row fits the shared memory, the row staged there (reload=8,
     * 512 threads, fp32 1024: at 4096x50257, on the heuristic alone, +9 to
     * +36 % over the cache entries it replaced, in all three dtypes, both
     * norms; session 21). */
    const int sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 132;
    if (!BWD && p->N % nt_vec(p->dtype) != 0 && p->N >= 1024 && p->N <= 65536 &&
        p->M >= 2 * sms) {
        int64_t t = nt_pow2ceil(kb_cdiv(p->N, 8 * nt_vec(p->dtype)));
        c.v[P_THREADS] = (int)(t < 64 ? 64 : t > 512 ? 512 : t);
        c.v[P_ROWS] = c.v[P_CLUSTER] = 1;
        c.v[P_OCC] = kOccAll;
        c.v[P_FWD_DB] = 0;
        c.v[P_RELOAD] = p->N > 16384 ? 2 : 1;
        /* 4 KB beside the row: the kernel's static shared memory (< 2 KB) */
        if (p->N > 16384 && ctx &&
            nt_fwd_loop_smem(p, 8) + 4096 <= ctx->smem_optin) {
            c.v[P_THREADS] = p->dtype == KB_FP32 ? 1024 : 512;
            c.v[P_RELOAD] = 8;
        }
        *out = c;
        return;
    }
    for (int k = 0; k < nc; k++) {
        const int nvt = BWD ? bwd[k][0] : fwd[k][0], longt = BWD ? bwd[k][1] : fwd[k][2];
        int tpr, rows, cl;
        if (!nt_shape_for(p, nvt, longt, &tpr, &rows, &cl)) continue;
        c.v[P_THREADS] = tpr;
        c.v[P_ROWS] = rows;
        c.v[P_CLUSTER] = cl;
        c.v[P_OCC] = kOccAll;
        if (BWD) c.v[P_BWD_ACC] = bwd[k][2];
        else c.v[P_FWD_DB] = fwd[k][1];
        c.v[P_RELOAD] = 0;
        if (BWD ? nt_bwd_valid<LN>(p, ctx, &c) : nt_fwd_valid<LN>(p, ctx, &c)) {
            if constexpr (BWD)
                if (cl > 1) nt_bwd_heuristic_db<LN>(p, ctx, &c);
            *out = c;
            return;
        }
    }
    c.v[P_THREADS] = 512;
    c.v[P_ROWS] = c.v[P_CLUSTER] = 1;
    c.v[P_OCC] = kOccAll;
    c.v[P_FWD_DB] = 0; /* == P_BWD_ACC: registers */
    c.v[P_RELOAD] = 1;
    *out = c;
}

/* SM count of the current device. */
inline cudaError_t nt_sms(int *sms)
{
    int dev = 0;
    cudaError_t rc = cudaGetDevice(&dev);
    if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    return rc;
}

/* CTAs of a persistent grid: min(groups, what fits) slots of cl CTAs; with
 * cl == 1 at most occ CTAs per SM. 0 when nothing fits. */
inline cudaError_t nt_persistent_slots(const void *fn, dim3 block, size_t smem, int cl, int occ,
                                       int64_t groups, int64_t *slots)
{
    int sms = 0;
    cudaError_t rc = nt_sms(&sms);
    if (rc != cudaSuccess) return rc;
    int64_t fit = 0;
    if (cl == 1) {
        int per_sm = 0;
        rc = kb_launch_prepare(fn, cl, smem);
        if (rc == cudaSuccess)
            rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn,
                                                               (int)(block.x * block.y), smem);
        if (rc != cudaSuccess) return rc;
        fit = (int64_t)sms * (per_sm < occ ? per_sm : occ);
    } else {
        fit = kb_active_clusters(fn, block, smem, cl);
    }
    if (fit < 1) {
        *slots = 0;
        return cudaSuccess;
    }
    /* As few slots as give the same number of rounds: every slot then runs
     * the same count of groups (no partial last round of a few CTAs). */
    const int64_t rounds = kb_cdiv(groups, fit);
    *slots = kb_cdiv(groups, rounds);
    return cudaSuccess;
}

/* ---- forward: valid / launch ------------------------------------------------ */

template <bool LN>
int nt_fwd_valid(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const int db = c->v[P_FWD_DB], vec = nt_vec(p->dtype);
    const size_t optin = ctx ? ctx->smem_optin : 0;
    if (p->M < 1 || p->N < 1 || c->v[P_OCC] < 0) return 0;
    if (c->v[P_RELOAD]) {
        if (tpr < 32 || tpr > 1024 || rows != 1) return 0;
        /* A cluster only for the staged loop, and no thread of it idle on
         * every row (as nt_shape_ok asks of the register kernels). */
        if (cl > 1 && (int64_t)tpr * cl > nt_pow2ceil(kb_cdiv(nt_fwd_span(p->N, vec), (int64_t)vec)))
            return 0;
        const fwd_fn lf =
            fwd_loop_kernel<LN>(p->dtype, true, p->N % vec == 0, c->v[P_FWD_HINT], c->v[P_RELOAD],
                                p->N, tpr, cl);
        const size_t smem = nt_fwd_loop_smem(p, c->v[P_RELOAD], tpr, cl);
        if (!lf || !nt_kernel_fits(reinterpret_cast<const void *>(lf), tpr, smem, optin)) return 0;
        return cl == 1 || kb_active_clusters(reinterpret_cast<const void *>(lf),
                                             dim3((unsigned)tpr), smem, cl) >= 1;
    }
    if (!nt_shape_ok(p, tpr, rows, cl)) return 0;
    const int64_t span = nt_fwd_span(p->N, vec);
    const int nv = db ? nt_pick_nv(span, tpr, cl, vec, kFwdDbNV)
                      : nt_pick_nv(span, tpr, cl, vec, kFwdNV);
    if (!nv) return 0;
    const void *fn = reinterpret_cast<const void *>(
        fwd_reg_kernel<LN>(p->dtype, nv, p->N % vec == 0, db, c->v[P_FWD_HINT],
                           nt_fwd_one(p, rows, cl, c->v[P_OCC])));
    if (!fn || !nt_kernel_fits(fn, tpr * rows, 0, optin)) return 0;
    if (cl > 1 && kb_active_clusters(fn, dim3((unsigned)tpr, 1), 0, cl) < 1) return 0;
    return 1;
}

template <bool LN>
kb_status nt_fwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                        cudaStream_t s, kb_err *e)
{
    const char *what = nt_op(false, LN);
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const int occ = c->v[P_OCC], db = c->v[P_FWD_DB], vec = nt_vec(p->dtype);
    if (!t->x || !t->w || !t->out)
        return NT_FAIL(e, KB_ERR_ARG, p, what, "%s", "x, w and out are required");
    /* The register kernels need 16-byte aligned tensors (cudaMalloc's are);
     * any other base pointer runs the element-wise loop. */
    const bool ptr16 = kb_aligned16(t->x) && kb_aligned16(t->w) && kb_aligned16(t->out);
    const bool v16 = p->N % vec == 0 && ptr16;
    fwd_args a = {t->x, t->w, t->out, p->M, p->N, p->M, 1};
    /* The hint concerns whole aligned packs: other access modes ignore it. */
    const int hint = v16 ? c->v[P_FWD_HINT] : 0;
    if (c->v[P_RELOAD] || !ptr16) {
        const int lt = c->v[P_RELOAD] ? tpr : 256;
        if (lt < 32 || lt > 1024 || lt % 32)
            return NT_FAIL(e, KB_ERR_ARG, p, what, "reload needs 32..1024 threads, not %d", lt);
        /* Element accesses run one slot per step whatever `reload` says. */
        const int u = ptr16 && c->v[P_RELOAD] ? c->v[P_RELOAD] : 1;
        if (c->v[P_RELOAD] && c->v[P_RELOAD] != 8 && cl != 1)
            return NT_FAIL(e, KB_ERR_ARG, p, what,
                           "reload=%d runs one CTA per row: cluster=%d needs reload=8",
                           c->v[P_RELOAD], cl);
        const int lcl = u == 8 ? cl : 1; /* the element loop (unaligned tensors): one CTA */
        const fwd_fn lf = fwd_loop_kernel<LN>(p->dtype, ptr16, v16, hint, u, p->N, lt, lcl);
        if (!lf)
            return NT_FAIL(e, KB_ERR_ARG, p, what,
                           "reload=%d cluster=%d: reload not 1, 2, 4 or 8, or cluster not 1..%d",
                           c->v[P_RELOAD], cl, kMaxCluster);
        /* nt_fwd_valid checked that it fits (as the backward's launch relies
         * on its own); every configuration the tuner launches passed it. */
        const size_t smem = nt_fwd_loop_smem(p, u, lt, lcl);
        /* Every pass after the first re-reads the row, from L2 only while
         * the rows in flight fit it: one CTA per row keeps every CTA that
         * fits resident (4096x50257 bf16 at 256 threads: ~600 rows, ~60 MB),
         * occ 1-16 a persistent grid of fewer (the kernel strides over
         * rows); over a cluster, every cluster that fits. */
        unsigned grid = nt_grid(p->M, lcl);
        if (c->v[P_RELOAD] && occ > 0 && occ < kOccAll) {
            int64_t slots = 0;
            NT_CUDA(e, p, what,
                    nt_persistent_slots(reinterpret_cast<const void *>(lf), dim3((unsigned)lt),
                                        smem, lcl, occ, p->M, &slots));
            if (slots < 1)
                return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                               "reload=%d threads=%d: no CTA fits an SM", c->v[P_RELOAD], lt);
            grid = (unsigned)(slots * lcl);
        }
        a.cl = lcl;
        return nt_launch(p, what, e, lf, dim3(grid), dim3((unsigned)lt), smem, lcl, false, s, a);
    }
    const int64_t span = nt_fwd_span(p->N, vec);
    const int nv = db ? nt_pick_nv(span, tpr, cl, vec, kFwdDbNV)
                      : nt_pick_nv(span, tpr, cl, vec, kFwdNV);
    const fwd_fn fn = nv && occ >= 0 && nt_shape_ok(p, tpr, rows, cl)
                          ? fwd_reg_kernel<LN>(p->dtype, nv, v16, db, hint,
                                                   nt_fwd_one(p, rows, cl, occ))
                          : nullptr;
    if (!fn)
        return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                       "threads=%d rows=%d cluster=%d db=%d cannot hold the row", tpr, rows, cl, db);
    const dim3 block((unsigned)tpr, (unsigned)rows);
    a.ngroups = kb_cdiv(p->M, rows);
    a.cl = cl;
    unsigned grid = nt_grid(a.ngroups, cl);
    if (occ > 0) {
        int64_t slots = 0;
        NT_CUDA(e, p, what,
                nt_persistent_slots(reinterpret_cast<const void *>(fn), block, 0, cl, occ,
                                    a.ngroups, &slots));
        if (slots < 1)
            return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                           "threads=%d rows=%d cluster=%d: no CTA fits an SM", tpr, rows, cl);
        grid = (unsigned)(slots * cl);
    }
    return nt_launch(p, what, e, fn, dim3(grid), block, 0, cl, false, s, a);
}

/* ---- backward: valid / workspace / launch ---------------------------------- */
/* The backward register kernel's access mode: 128-bit packs (N % VEC == 0)
 * or, for 16-bit types, shifted slots with the rows dealt out by shift class
 * (any N), both on 16-byte aligned tensors; element accesses otherwise. fp32
 * keeps element accesses on odd N: an fp32 element is a whole word, and at
 * 4096x50257 the shifted slots, re-tuned, ran 2409-2550 GB/s against 2868-3122
 * (H200, kernels/README.md "Odd N, backward"). */
inline int nt_bwd_am(kb_dtype d, int64_t N, bool ptr16)
{
    if (!ptr16) return AM_ELEM;
    if (N % nt_vec(d) == 0) return AM_AL;
    return d == KB_FP32 ? AM_ELEM : AM_SHIFT;
}

/* The shift classes the backward deals rows out by (access mode am): for
 * AM_SHIFT, the rows after which a row's shift from the 16-byte grid
 * repeats, VEC / gcd(N, VEC); otherwise 1, one class of all rows. */
inline int nt_bwd_classes(kb_dtype d, int64_t N, int am)
{
    const int vec = nt_vec(d);
    if (am != AM_SHIFT) return 1;
    int g = vec;
    while (N % g) g >>= 1; /* vec is a power of two */
    return vec / g;
}

/* The elements a row's slots span, over every shift: AM_SHIFT's cover up
 * to VEC - 1 more than N (nt_fwd_span), which sizes NV. */
inline int64_t nt_bwd_span(kb_dtype d, int64_t N, int am)
{
    return am == AM_SHIFT ? nt_fwd_span(N, nt_vec(d)) : N;
}

/* Packs per thread and tensor of the backward's register kernel: the
 * smallest compiled NV holding the row's span (am's), from the list of the
 * db variant (db=1: 1, 2; db=2, 3: 1, 2, 4, 8; db=0: kBwdNV); 0 if none. */
inline int nt_bwd_nv(const kb_problem *p, int am, int tpr, int cl, int db)
{
    const int64_t span = nt_bwd_span(p->dtype, p->N, am);
    const int vec = nt_vec(p->dtype);
    if (db >= 2) return nt_pick_nv(span, tpr, cl, vec, kBwdDbSmemNV);
    if (db == 1) return nt_pick_nv(span, tpr, cl, vec, kBwdDbRegNV);
    return nt_pick_nv(span, tpr, cl, vec, kBwdNV);
}

/* Dynamic shared memory of bwd_reg: the w slice after the dw accumulators
 * (acc=1); acc=0: the w slice, overlaid at the end by the row-slot sum (N
 * floats, R > 1). db=2 adds the staging area after them, at the float4
 * offset nt_bwd_stage returns: x and dy, NV packs each, per thread. */
inline size_t nt_bwd_stage(const kb_problem *p, const kb_tune_cfg *c, int nv)
{
    const size_t slice = (size_t)nv * nt_vec(p->dtype) * c->v[P_THREADS] * sizeof(float);
    size_t b;
    if (c->v[P_BWD_ACC]) {
        b = (c->v[P_ROWS] + 1) * slice;
    } else {
        const size_t comb = c->v[P_ROWS] > 1 ? (size_t)p->N * sizeof(float) : 0;
        b = comb > slice ? comb : slice;
    }
    return (b + 15) / 16;
}
inline size_t nt_bwd_smem(const kb_problem *p, const kb_tune_cfg *c, int nv)
{
    const size_t stage = c->v[P_BWD_DB] >= 2
                             ? (size_t)c->v[P_ROWS] * nv * 2 * c->v[P_THREADS] * 16
                             : 0;
    return nt_bwd_stage(p, c, nv) * 16 + stage;
}

/* The backward loop (reload 2, 4, 8): a loop, not the fallback (reload = 1). */
inline bool nt_bwd_looped(const kb_tune_cfg *c) { return c->v[P_RELOAD] >= 2; }

/* Dynamic shared memory of a bwd_loop CTA in access mode am: the dw
 * accumulators of its R row slots, K = ceil(span / (VEC*tpr*cl)) packs of
 * VEC floats per thread each (span: N, shifted slots N + VEC - 1;
 * nt_bwd_span); shifted slots add one such plane for w at the class's
 * shift. */
inline size_t nt_bwd_loop_smem(const kb_problem *p, const kb_tune_cfg *c, int am)
{
    const int vec = nt_vec(p->dtype), tpr = c->v[P_THREADS], cl = c->v[P_CLUSTER];
    const int64_t k = kb_cdiv(nt_bwd_span(p->dtype, p->N, am), (int64_t)vec * tpr * cl);
    const size_t planes = (size_t)c->v[P_ROWS] + (am == AM_SHIFT ? 1 : 0);
    return planes * (size_t)k * (size_t)tpr * (size_t)vec * sizeof(float);
}

/* Fallback dw: partial rows of kColsRows rows, more per chunk past grid.y's limit. */
inline int64_t nt_cols_rps(int64_t M)
{
    const int64_t r = kb_cdiv(M, 65535);
    return r > kColsRows ? r : kColsRows;
}

template <bool LN>
int nt_bwd_valid(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const size_t optin = ctx ? ctx->smem_optin : 0;
    if (p->M < 1 || p->N < 1 || c->v[P_OCC] < 1) return 0;
    if (c->v[P_RELOAD] == 1)
        return tpr >= 32 && tpr <= 1024 && rows == 1 && cl == 1;
    if (!nt_shape_ok(p, tpr, rows, cl)) return 0;
    const int am = nt_bwd_am(p->dtype, p->N, true); /* cudaMalloc'd tensors */
    size_t smem;
    const void *fn;
    if (nt_bwd_looped(c)) { /* 16-byte packs or slots; the hint: aligned packs only */
        smem = nt_bwd_loop_smem(p, c, am);
        fn = reinterpret_cast<const void *>(bwd_loop_kernel<LN>(
            p->dtype, c->v[P_RELOAD], am == AM_AL ? c->v[P_BWD_HINT] : 0, am));
    } else {
        if (c->v[P_BWD_DB] == 3 && !nt_bwd_xc_ok(am, cl)) return 0;
        const int nv = nt_bwd_nv(p, am, tpr, cl, c->v[P_BWD_DB]);
        if (!nv) return 0;
        smem = nt_bwd_smem(p, c, nv);
        fn = reinterpret_cast<const void *>(bwd_reg_kernel<LN>(p->dtype, nv, am, c->v[P_BWD_ACC],
                                                                c->v[P_BWD_HINT], c->v[P_BWD_DB]));
    }
    if (!fn || !nt_kernel_fits(fn, tpr * rows, smem, optin)) return 0;
    if (cl > 1 && kb_active_clusters(fn, dim3((unsigned)tpr, 1), smem, cl) < 1) return 0;
    if (cl == 1) { /* what the launch will ask: at least one resident CTA */
        int64_t slots = 0;
        if (nt_persistent_slots(fn, dim3((unsigned)tpr, (unsigned)rows), smem, 1, c->v[P_OCC], 1,
                                &slots) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        if (slots < 1) return 0;
    }
    return 1;
}

/* The persistent grid's slots the workspace must hold, from hardware limits
 * alone (2048 threads and 32 CTAs per SM), so it needs no device query; an
 * upper bound of what the launch asks for, which it clamps to the
 * workspace. occ caps it only without a cluster: a cluster's grid is every
 * cluster that fits (nt_persistent_slots), and a bound cut by occ would
 * clamp that grid through the workspace (session 22: occ=1 at 16-CTA
 * clusters halved the slots of 1024x151936 in a real run, while the
 * search, timing it in the start's larger workspace, had not). Shifted rows
 * (cudaMalloc'd tensors) get at least one slot per shift class, which the
 * launch needs; with class-crossing slots, P - 1 partial rows more than
 * slots (a partial row per slot and class it covers). */
inline int64_t nt_bwd_slots_bound(const kb_problem *p, int sms, const kb_tune_cfg *c)
{
    const int block = c->v[P_THREADS] * c->v[P_ROWS], cl = c->v[P_CLUSTER];
    int per_sm = 2048 / block;
    if (per_sm > 32) per_sm = 32;
    if (cl == 1 && per_sm > c->v[P_OCC]) per_sm = c->v[P_OCC];
    if (per_sm < 1) per_sm = 1;
    int64_t slots = (int64_t)sms * per_sm / cl;
    if (slots < 1) slots = 1;
    const int am = nt_bwd_am(p->dtype, p->N, true);
    const int64_t per = nt_bwd_classes(p->dtype, p->N, am);
    const int64_t groups = kb_cdiv(kb_cdiv(p->M, per), c->v[P_ROWS]) * per;
    if (slots > groups) slots = groups;
    if (!c->v[P_RELOAD] && c->v[P_BWD_DB] == 3 && nt_bwd_xc_ok(am, cl)) return slots + per - 1;
    return slots > per ? slots : per;
}

template <bool LN>
size_t nt_bwd_workspace(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    if (c->v[P_RELOAD] == 1)
        return (size_t)kb_cdiv(p->M, nt_cols_rps(p->M)) * (size_t)p->N * sizeof(float);
    const int sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 256;
    return (size_t)nt_bwd_slots_bound(p, sms, c) * (size_t)p->N * sizeof(float);
}

/* Kernels of one backward launch (kb_impl.kernels): the register kernel (or
 * the loop) and dw_reduce; the reload fallback runs dw_cols between them. */
inline int nt_bwd_kernels(const kb_problem *, const kb_tune_cfg *c)
{
    return c->v[P_RELOAD] == 1 ? 3 : 2;
}

template <bool LN>
kb_status nt_bwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                        cudaStream_t s, kb_err *e)
{
    const char *what = nt_op(true, LN);
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const int vec = nt_vec(p->dtype);
    if (!t->x || !t->dy || !t->w || !t->rstd || !t->out || !t->dw || (LN && !t->mean))
        return NT_FAIL(e, KB_ERR_ARG, p, what, "x, dy, w, rstd%s, out and dw are required",
                       LN ? ", mean" : "");
    const bool ptr16 = kb_aligned16(t->x) && kb_aligned16(t->dy) && kb_aligned16(t->w) &&
                       kb_aligned16(t->out);
    const bool v16 = p->N % vec == 0 && ptr16;
    const size_t row_bytes = (size_t)p->N * sizeof(float);
    const int64_t ws_rows = t->workspace ? (int64_t)(t->workspace_bytes / row_bytes) : 0;
    bwd_args a = {t->x, t->dy, t->w, t->mean, t->rstd, t->out, (float *)t->workspace,
                  p->M, p->N, 0, 0, 1, 1, 0};

    if (c->v[P_RELOAD] == 1) {
        if (tpr < 32 || tpr > 1024 || tpr % 32)
            return NT_FAIL(e, KB_ERR_ARG, p, what, "reload needs 32..1024 threads, not %d", tpr);
        const int64_t rps = nt_cols_rps(p->M), chunks = kb_cdiv(p->M, rps);
        if (chunks > ws_rows)
            return NT_FAIL(e, KB_ERR_ARG, p, what, "workspace of %zu bytes, %lld needed",
                           t->workspace_bytes, (long long)(chunks * (int64_t)row_bytes));
        a.ngroups = p->M;
        KB_TRY(nt_launch(p, what, e, bwd_dx_loop_kernel<LN>(p->dtype, v16),
                         dim3(nt_grid(p->M, 1)), dim3((unsigned)tpr), 0, 1, false, s, a));
        void (*cols)(const bwd_args, int64_t) = nullptr;
        KB_DISPATCH(p->dtype, T, { cols = dw_cols<T, LN>; });
        KB_TRY(nt_launch(p, what, e, cols, dim3((unsigned)kb_cdiv(p->N, 256), (unsigned)chunks),
                         dim3(256), 0, 1, false, s, a, rps));
        return nt_launch(p, what, e, dw_reduce, dim3((unsigned)kb_cdiv(p->N, 32)),
                         dim3(32, kReduceRows), 0, 1, true, s, (const float *)a.ws, chunks, p->N,
                         t->dw);
    }

    const int am = nt_bwd_am(p->dtype, p->N, ptr16);
    const bool al = am == AM_AL;
    bwd_fn fn;
    size_t smem;
    bool xc = false;
    if (nt_bwd_looped(c)) {
        const int u = c->v[P_RELOAD];
        /* Element accesses (unaligned tensors, fp32 at odd N) have no loop:
         * refused, as the forward's staged loop refuses them. The partial
         * rows of aligned rows are float4 stores. */
        if (am == AM_ELEM || (al && !kb_aligned16(t->workspace)))
            return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                           "reload=%d reads 16-byte slots: 16-byte aligned tensors and workspace, "
                           "and for fp32 N a multiple of 4",
                           u);
        if (!nt_shape_ok(p, tpr, rows, cl))
            return NT_FAIL(e, KB_ERR_ARG, p, what,
                           "reload=%d threads=%d rows=%d cluster=%d: threads x rows a multiple "
                           "of 32 up to 1024, rows 1 at a cluster, cluster 1..%d, threads x "
                           "cluster at most the row's packs",
                           u, tpr, rows, cl, kMaxCluster);
        /* the hint concerns whole aligned packs (as bwd_reg's) */
        fn = bwd_loop_kernel<LN>(p->dtype, u, al ? c->v[P_BWD_HINT] : 0, am);
        if (!fn)
            return NT_FAIL(e, KB_ERR_ARG, p, what,
                           "reload=%d hint=%d: the loop runs reload 2, 4 or 8 on aligned rows, 4 "
                           "or 8 on odd 16-bit rows; hint 0 or 1",
                           u, c->v[P_BWD_HINT]);
        smem = nt_bwd_loop_smem(p, c, am);
    } else {
        /* The hint concerns whole aligned packs, the double buffer 16-byte
         * packs (aligned or shifted): element accesses (pointers the caller
         * did not align, fp32 at odd N) run without them, and without a
         * staging area (cs: the configuration that runs). */
        kb_tune_cfg cs = *c;
        if (am == AM_ELEM) cs.v[P_BWD_DB] = 0;
        /* db=3 where every slot is whole classes anyway (aligned rows, no
         * cluster): db=2's launch, which it equals there */
        if (cs.v[P_BWD_DB] == 3 && !nt_bwd_xc_ok(am, cl)) cs.v[P_BWD_DB] = 2;
        const int db = cs.v[P_BWD_DB], nv = nt_bwd_nv(p, am, tpr, cl, db);
        xc = db == 3;
        fn = nv && nt_shape_ok(p, tpr, rows, cl)
                 ? bwd_reg_kernel<LN>(p->dtype, nv, am, c->v[P_BWD_ACC], al ? c->v[P_BWD_HINT] : 0,
                                      db)
                 : nullptr;
        if (!fn)
            return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                           "threads=%d rows=%d cluster=%d db=%d cannot hold the row", tpr, rows,
                           cl, db);
        smem = nt_bwd_smem(p, &cs, nv);
        a.stage = (int)nt_bwd_stage(p, &cs, nv);
    }
    const dim3 block((unsigned)tpr, (unsigned)rows);
    /* Shifted rows: P classes (rows c, c+P, ...; nt_bwd_classes), each
     * with its own slots (norm_tuned_bwd.cuh, bwd_reg and bwd_loop);
     * otherwise P = 1, one class of all rows. */
    const int per = nt_bwd_classes(p->dtype, p->N, am);
    a.per = per;
    a.ngroups = kb_cdiv(kb_cdiv(p->M, per), rows); /* per class */
    a.cl = cl;
    int64_t slots = 0;
    NT_CUDA(e, p, what,
            nt_persistent_slots(reinterpret_cast<const void *>(fn), block, smem, cl,
                                c->v[P_OCC], a.ngroups * per, &slots));
    if (slots < 1)
        return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                       "threads=%d rows=%d cluster=%d: no CTA (cluster) fits (%d threads at the "
                       "kernel's registers, %zu bytes of shared memory a CTA)",
                       tpr, rows, cl, tpr * rows, smem);
    int64_t prows; /* dw partial rows */
    if (xc) {
        /* Class-crossing: every cluster that fits (at most one per group),
         * slots + P - 1 partial rows; nslots counts all slots. */
        if (slots > ws_rows - (per - 1)) slots = ws_rows - (per - 1);
        prows = slots + per - 1;
        a.nslots = slots;
    } else {
        /* Whole classes: slot s serves class s % P, nslots counts per class.
         * At least one slot per class, even beyond what fits at once: slots
         * never wait on each other. */
        slots = slots / per < 1 ? per : slots / per * per;
        if (slots > ws_rows) slots = ws_rows / per * per;
        prows = slots;
        a.nslots = slots / per;
    }
    if (slots < 1)
        return NT_FAIL(e, KB_ERR_ARG, p, what,
                       "workspace of %zu bytes, %lld needed (a dw partial row of N floats%s)",
                       t->workspace_bytes, (long long)per * (long long)row_bytes,
                       per > 1 ? " per shift class" : "");
    KB_TRY(nt_launch(p, what, e, fn, dim3((unsigned)(slots * cl)), block, smem, cl, false, s, a));
    return nt_launch(p, what, e, dw_reduce, dim3((unsigned)kb_cdiv(p->N, 32)),
                     dim3(32, kReduceRows), 0, 1, true, s, (const float *)a.ws, prows, p->N,
                     t->dw);
}

} /* namespace */
#endif
