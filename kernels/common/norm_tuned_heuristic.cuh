/* The tuned norms' canonical forms (two texts of one kernel are one
 * configuration) and the heuristic default a shape without a tuning-cache
 * entry runs. */
#ifndef KB_NORM_TUNED_HEURISTIC_CUH
#define KB_NORM_TUNED_HEURISTIC_CUH

#include "norm_tuned_space.cuh"

namespace {

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
 * docs/dev/kernels/norm-forward.md); a row split over a cluster then takes db=2 where it
 * holds as many packs (nt_bwd_heuristic_db). */
inline int nt_bwd_am(kb_dtype d, int64_t N, bool ptr16);
inline int nt_bwd_nv(const kb_problem *p, int am, int tpr, int cl, int db);

/* Backward, a row split over a cluster: the next row group staged in shared
 * memory (db=2) while this one is reduced, dw in registers first. Measured on
 * the H200 beside db=0 entries: +3 to +21 % on aligned long rows (2026-12-03),
 * +4 to +14 % on odd-N 16-bit rows (2026-12-04). Only where db=2 holds as
 * many packs per thread as db=0 (NV 1, 2, 4, 8): rounded up to 8 it lost
 * 15-25 % at 1024x151936 (2026-12-03). Shifted rows of kBwdXcRows rows or
 * more take db=3 (class-crossing slots): it won at 4096 rows and lost at
 * 512 (2026-12-04), where each slot runs few groups and a class crossing
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
     * beat the shifted-slot register kernel (docs/dev/kernels/norm-forward.md, H200
     * measurements). About 8 slots per thread; from 16K columns two of them
     * in flight per step (reload=2: at 4096x50257 bf16, 512 threads, RMSNorm
     * +7 %, LayerNorm equal; at 4095 one slot per step stays ahead), or,
     * where the row fits the shared memory, the row staged there (reload=8,
     * 512 threads, fp32 1024: at 4096x50257, on the heuristic alone, +9 to
     * +36 % over the cache entries it replaced, in all three dtypes, both
     * norms; H200, 2026-12-03). */
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

} /* namespace */
#endif
