/* The GPU reference's generic entry points (reference.h): the saved
 * statistics of a case, by the descriptor's tensor bits, and the dispatch of
 * the gold to the kb_op_gpu the op's folder registers. No op's gold lives
 * here: each op folder's reference.cu has its own, built from the shared
 * building blocks of ref_rows.cuh (row kernels, reductions, checks; its
 * header comment has the strategy and limits) and ref_norm.cuh. */
#include "ref_rows.cuh"

/* ---- saved statistics ------------------------------------------------------ */
template <typename T> static __global__ void k_lse(const T *x, int64_t M, int64_t N, float *lse)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    FOR_ROWS(i) {
        const double v = row_lse(x + i * N, N, shf, shd);
        if (threadIdx.x == 0) lse[i] = (float)v;
    }
}

template <typename T>
static __global__ void k_norm_stats(const T *x, int64_t M, int64_t N, float *mean, float *rstd)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        double mu = 0.0, rs;
        if (mean)
            row_ln_stats(x + i * N, N, sh, &mu, &rs);
        else
            rs = row_rms_rstd(x + i * N, N, sh);
        if (threadIdx.x == 0) {
            if (mean) mean[i] = (float)mu;
            rstd[i] = (float)rs;
        }
    }
}

extern "C" kb_status kb_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference (saved statistics)");
    const kb_op_gpu *own = kb_op_gpu_get(p->bench);
    if (own && own->saved) return own->saved(b, s, e);
    /* The saved statistics the case's descriptor lists, each from x (a
     * forward case allocates none and saves nothing): lse, softmax's y,
     * LayerNorm's mean and rstd, or an rstd alone: RMSNorm's. */
    const unsigned saved = kb_bench_info_get(p->bench)->tensors;
    if (saved & KB_T_LSE) {
        NEED(t->x, who);
        NEED(t->lse, who);
        KB_DISPATCH(p->dtype, T, { ROWS_LAUNCH(k_lse<T>, (const T *)t->x, M, N, (float *)t->lse); });
    }
    if (saved & KB_T_Y) {
        NEED(t->x, who);
        NEED(t->y, who);
        KB_DISPATCH(p->dtype, T, { ROWS_LAUNCH(k_softmax<T>, (const T *)t->x, (T *)t->y, M, N); });
    }
    if (saved & KB_T_RSTD) {
        /* mean with it for LayerNorm; RMSNorm's rstd alone. */
        NEED(t->x, who);
        if (saved & KB_T_MEAN) NEED(t->mean, who);
        NEED(t->rstd, who);
        KB_DISPATCH(p->dtype, T, {
            ROWS_LAUNCH(k_norm_stats<T>, (const T *)t->x, M, N,
                        (float *)(saved & KB_T_MEAN ? t->mean : NULL), (float *)t->rstd);
        });
    }
    return KB_OK;
}

extern "C" kb_status kb_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    const char *const who = "GPU reference";
    KB_TRY(check_problem(b, who, e));
    const kb_problem *p = &b->p;
    NEED(b->gold, who);
    const kb_op_gpu *own = kb_op_gpu_get(p->bench);
    if (own && own->gold) return own->gold(b, s, e);
    return KB_FAIL(e, KB_ERR_ARG, "%s: %s has no GPU gold (its folder's register.c registers "
                   "no kb_op_gpu with a gold for it)", who, kb_bench_info_get(p->bench)->name);
}
