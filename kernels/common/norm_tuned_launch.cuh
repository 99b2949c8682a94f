/* The tuned norms' validity (can this configuration run this shape on
 * this GPU: instantiated, fits registers and shared memory, schedulable
 * cluster), workspace and launches, forward and backward. */
#ifndef KB_NORM_TUNED_LAUNCH_CUH
#define KB_NORM_TUNED_LAUNCH_CUH

#include "norm_tuned_heuristic.cuh"

namespace {

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
 * (H200, docs/dev/kernels/norm-backward.md, "Tried, not kept"). */
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
 * clamp that grid through the workspace (H200, 2026-12-04: occ=1 at 16-CTA
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
     * with its own slots (norm_tuned_bwd.cuh and norm_tuned_bwd_loop.cuh, bwd_reg and bwd_loop);
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
