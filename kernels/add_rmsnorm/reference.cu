/* Add + RMSNorm on the GPU: the saved rstd of the backward and the gold
 * outputs with their error scale (formulas: add_rmsnorm_ref.h).
 *
 * Strategy: simple, obviously-correct kernels, as kernels/reference/
 * the other ops' references: one CTA of 256 threads per row (grid-stride over rows
 * past 2^20), each thread strides over the row with scalar loads, several
 * passes re-reading the row, every sum and product in double (block sums
 * by shuffles plus 32 doubles of shared memory). Stored results only are
 * rounded: rstd to fp32, gold to fp32 then to the dtype, scale to fp32.
 * h in the forward is x + r rounded to the dtype first, as a backend stores
 * it and as y is defined on. dw: the norms' column sums (ref_dw.cuh), h
 * as x and no mean.
 * gold_scale is the sum of the absolute values of the terms each output adds:
 *   h: |x| + |r|;  y: |h_T| * rstd * |w|;
 *   dx: rstd * (|g| + |xh| * mean_row|g * xh|) + |dres|.
 * Limits: any M, N >= 1; int64 offsets; scratch chunks * N doubles. */
#include "add_rmsnorm_ref.h"
#include "ref_dw.cuh"
#include "ref_rows.cuh" /* ld, st, row_rms_rstd, FOR_ROWS, FOR_COLS, REF_BEGIN, NEED */

#define AR_THREADS 256
#define AR_MAX_GRID (1 << 20)

/* The stored h of x + r: exact in double, rounded to fp32 then to T. */
template <typename T> static __device__ __forceinline__ double ar_h(const T *x, const T *r, int64_t k)
{
    return ld(st<T>(ld(x[k]) + ld(r[k])));
}

template <typename T>
static __global__ void ar_k_rstd(const T *h, int64_t M, int64_t N, float *rstd)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        const double rs = row_rms_rstd(h + i * N, N, sh);
        if (threadIdx.x == 0) rstd[i] = (float)rs;
    }
}

template <typename T>
static __global__ void ar_k_fwd(const T *x, const T *r, const float *w, int64_t M, int64_t N,
                                T *gold, float *scale)
{
    __shared__ double sh[32];
    const int64_t MN = M * N;
    FOR_ROWS(i) {
        double s = 0.0;
        FOR_COLS(j) {
            const double h = ar_h(x, r, i * N + j);
            s += h * h;
        }
        const double rs = 1.0 / sqrt(kb_block_sum_d(s, sh) / (double)N + KB_REF_EPS);
        FOR_COLS(j) {
            const int64_t k = i * N + j;
            const double h = ar_h(x, r, k);
            gold[k] = st<T>(h);
            scale[k] = (float)(fabs(ld(x[k])) + fabs(ld(r[k])));
            gold[MN + k] = st<T>(h * rs * (double)w[j]);
            scale[MN + k] = (float)(fabs(h) * rs * fabs((double)w[j]));
        }
    }
}

template <typename T>
static __global__ void ar_k_bwd(const T *h, const float *w, const T *dy, const T *dres,
                                const float *rstd, int64_t M, int64_t N, T *gold, float *scale)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        const double rs = rstd[i];
        double s = 0.0, sa = 0.0;
        FOR_COLS(j) {
            const double gx = ld(dy[i * N + j]) * (double)w[j] * (ld(h[i * N + j]) * rs);
            s += gx;
            sa += fabs(gx);
        }
        const double c = kb_block_sum_d(s, sh) / (double)N;
        const double ca = kb_block_sum_d(sa, sh) / (double)N;
        FOR_COLS(j) {
            const int64_t k = i * N + j;
            const double g = ld(dy[k]) * (double)w[j], xh = ld(h[k]) * rs;
            gold[k] = st<T>(rs * (g - xh * c) + ld(dres[k]));
            scale[k] = (float)(rs * (fabs(g) + fabs(xh) * ca) + fabs(ld(dres[k])));
        }
    }
}

/* ---- host ----------------------------------------------------------------------- */
static unsigned ar_grid(int64_t M) { return (unsigned)(M < AR_MAX_GRID ? M : AR_MAX_GRID); }

/* ref_rows.cuh's check of the problem, and that it is this op's. */
static kb_status ar_check(const kb_problem *p, const char *who, kb_err *e)
{
    if (p->bench != KB_ADD_RMSNORM_FWD && p->bench != KB_ADD_RMSNORM_BWD)
        return KB_FAIL(e, KB_ERR_ARG, "%s: bad problem (bench %d, dtype %d, %lldx%lld)", who,
                       (int)p->bench, (int)p->dtype, (long long)p->M, (long long)p->N);
    return KB_OK;
}

extern "C" kb_status kb_add_rmsnorm_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference (saved statistics)");
    KB_TRY(ar_check(p, who, e));
    if (p->bench != KB_ADD_RMSNORM_BWD) return KB_OK; /* the forward saves nothing */
    NEED(t->x, who);
    NEED(t->rstd, who);
    KB_DISPATCH(p->dtype, T, {
        ar_k_rstd<T><<<ar_grid(M), AR_THREADS, 0, s>>>((const T *)t->x, M, N, (float *)t->rstd);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_add_rmsnorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference");
    KB_TRY(ar_check(p, who, e));
    NEED(b->gold, who);
    NEED(b->gold_scale, who);
    NEED(t->x, who);
    NEED(t->w, who);
    if (p->bench == KB_ADD_RMSNORM_FWD) {
        NEED(t->res, who);
        KB_DISPATCH(p->dtype, T, {
            ar_k_fwd<T><<<ar_grid(M), AR_THREADS, 0, s>>>((const T *)t->x, (const T *)t->res,
                                                          t->w, M, N, (T *)b->gold, b->gold_scale);
        });
        KB_LAUNCHED(e);
        return KB_OK;
    }
    NEED(t->dy, who);
    NEED(t->dres, who);
    NEED(t->rstd, who);
    NEED(b->gold_dw, who);
    KB_DISPATCH(p->dtype, T, {
        ar_k_bwd<T><<<ar_grid(M), AR_THREADS, 0, s>>>(
            (const T *)t->x, t->w, (const T *)t->dy, (const T *)t->dres, t->rstd, M, N,
            (T *)b->gold, b->gold_scale);
    });
    KB_LAUNCHED(e);
    return gold_dw(p, t, NULL, b->gold_dw, s, e); /* ref_dw.cuh, mean NULL: x * rstd */
}
