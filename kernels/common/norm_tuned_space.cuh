/* The tuned norms' search space (its parameters, their choices, the
 * kb_tune_space initialisers) and the kernel tables: which instantiated
 * kernel a configuration runs, and the host helpers that size it (packs
 * per thread, spans, shared memory). The parameters' meaning:
 * norm_tuned.cuh. */
#ifndef KB_NORM_TUNED_SPACE_CUH
#define KB_NORM_TUNED_SPACE_CUH

#include "norm_tuned_bwd_loop.cuh"
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
 * over 8 classes run 24: ncu on the H200, 2026-12-04). Elsewhere there is one class, or
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

} /* namespace */
#endif
