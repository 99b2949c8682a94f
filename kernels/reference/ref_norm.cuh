/* The norms' GPU reference (CUDA), shared by rmsnorm and layernorm: their
 * forward rows, the backward's row formula and the dw column sums, and the
 * gold of either norm (norm_gold; ln false: RMSNorm, no centring and no
 * mean(g) term). Built on ref_rows.cuh's row reductions and ref_dw.cuh's
 * column sums. */
#ifndef KB_REF_NORM_CUH
#define KB_REF_NORM_CUH

#include "ref_dw.cuh"
#include "ref_rows.cuh"

/* RMSNorm when ln == false (no centring). */
template <typename T>
static __global__ void k_norm_fwd(const T *x, const float *w, int64_t M, int64_t N, bool ln, T *y)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        const T *xr = x + i * N;
        double mu = 0.0, rs;
        if (ln)
            row_ln_stats(xr, N, sh, &mu, &rs);
        else
            rs = row_rms_rstd(xr, N, sh);
        FOR_COLS(j) y[i * N + j] = st<T>((ld(xr[j]) - mu) * rs * (double)w[j]);
    }
}

/* mean == NULL: RMSNorm (mean 0, no mean(g) term). */
template <typename T>
static __global__ void k_norm_bwd(const T *x, const float *w, const T *dy, const float *mean,
                                  const float *rstd, int64_t M, int64_t N, T *dx)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        const T *xr = x + i * N, *dyr = dy + i * N;
        const double mu = mean ? (double)mean[i] : 0.0, rs = rstd[i];
        auto g = [&](int64_t j) { return ld(dyr[j]) * (double)w[j]; };
        auto xh = [&](int64_t j) { return (ld(xr[j]) - mu) * rs; };
        const double mg = mean ? row_sum(N, sh, g) / (double)N : 0.0;
        const double mgx = row_sum(N, sh, [&](int64_t j) { return g(j) * xh(j); }) / (double)N;
        FOR_COLS(j) dx[i * N + j] = st<T>(rs * (g(j) - mg - xh(j) * mgx));
    }
}

/* The gold of RMSNorm (ln false) or LayerNorm (ln true), either direction
 * (the descriptor's): y, or dx and dw. */
static kb_status norm_gold(kb_buffers *b, bool ln, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference");
    NEED(b->gold, who);
    NEED(t->x, who);
    NEED(t->w, who);
    if (!kb_bench_info_get(p->bench)->backward) {
        KB_DISPATCH(p->dtype, T, {
            ROWS_LAUNCH(k_norm_fwd<T>, (const T *)t->x, t->w, M, N, ln, (T *)b->gold);
        });
        return KB_OK;
    }
    NEED(t->dy, who);
    NEED(t->rstd, who);
    NEED(b->gold_dw, who);
    if (ln) NEED(t->mean, who);
    const float *mean = ln ? t->mean : NULL;
    KB_DISPATCH(p->dtype, T, {
        ROWS_LAUNCH(k_norm_bwd<T>, (const T *)t->x, t->w, (const T *)t->dy, mean, t->rstd,
                    M, N, (T *)b->gold);
    });
    KB_TRY(gold_dw(p, t, mean, b->gold_dw, s, e));
    return KB_OK;
}

#endif
