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
#include "kb_cuda.cuh"
#include "kb_dsum.cuh"
#include "ref_dw.cuh"

#define AR_EPS ((double)KB_NORM_EPS)
#define AR_THREADS 256
#define AR_MAX_GRID (1 << 20)

#define AR_ROWS(i) for (int64_t i = blockIdx.x; i < M; i += gridDim.x)
#define AR_COLS(j) for (int64_t j = threadIdx.x; j < N; j += blockDim.x)

template <typename T> static __device__ __forceinline__ double ar_ld(const T &v)
{
    return (double)kb_to_float(v);
}

/* double -> fp32 -> dtype, as the gold is defined. */
template <typename T> static __device__ __forceinline__ T ar_st(double v)
{
    return kb_from_float<T>((float)v);
}

/* The stored h of x + r: exact in double, rounded to fp32 then to T. */
template <typename T> static __device__ __forceinline__ double ar_h(const T *x, const T *r, int64_t k)
{
    return ar_ld(ar_st<T>(ar_ld(x[k]) + ar_ld(r[k])));
}

template <typename T>
static __global__ void ar_k_rstd(const T *h, int64_t M, int64_t N, float *rstd)
{
    __shared__ double sh[32];
    AR_ROWS(i) {
        double s = 0.0;
        AR_COLS(j) s += ar_ld(h[i * N + j]) * ar_ld(h[i * N + j]);
        s = kb_block_sum_d(s, sh);
        if (threadIdx.x == 0) rstd[i] = (float)(1.0 / sqrt(s / (double)N + AR_EPS));
    }
}

template <typename T>
static __global__ void ar_k_fwd(const T *x, const T *r, const float *w, int64_t M, int64_t N,
                                T *gold, float *scale)
{
    __shared__ double sh[32];
    const int64_t MN = M * N;
    AR_ROWS(i) {
        double s = 0.0;
        AR_COLS(j) {
            const double h = ar_h(x, r, i * N + j);
            s += h * h;
        }
        const double rs = 1.0 / sqrt(kb_block_sum_d(s, sh) / (double)N + AR_EPS);
        AR_COLS(j) {
            const int64_t k = i * N + j;
            const double h = ar_h(x, r, k);
            gold[k] = ar_st<T>(h);
            scale[k] = (float)(fabs(ar_ld(x[k])) + fabs(ar_ld(r[k])));
            gold[MN + k] = ar_st<T>(h * rs * (double)w[j]);
            scale[MN + k] = (float)(fabs(h) * rs * fabs((double)w[j]));
        }
    }
}

template <typename T>
static __global__ void ar_k_bwd(const T *h, const float *w, const T *dy, const T *dres,
                                const float *rstd, int64_t M, int64_t N, T *gold, float *scale)
{
    __shared__ double sh[32];
    AR_ROWS(i) {
        const double rs = rstd[i];
        double s = 0.0, sa = 0.0;
        AR_COLS(j) {
            const double gx = ar_ld(dy[i * N + j]) * (double)w[j] * (ar_ld(h[i * N + j]) * rs);
            s += gx;
            sa += fabs(gx);
        }
        const double c = kb_block_sum_d(s, sh) / (double)N;
        const double ca = kb_block_sum_d(sa, sh) / (double)N;
        AR_COLS(j) {
            const int64_t k = i * N + j;
            const double g = ar_ld(dy[k]) * (double)w[j], xh = ar_ld(h[k]) * rs;
            gold[k] = ar_st<T>(rs * (g - xh * c) + ar_ld(dres[k]));
            scale[k] = (float)(rs * (fabs(g) + fabs(xh) * ca) + fabs(ar_ld(dres[k])));
        }
    }
}

/* ---- host ----------------------------------------------------------------------- */
static unsigned ar_grid(int64_t M) { return (unsigned)(M < AR_MAX_GRID ? M : AR_MAX_GRID); }

static const char *ar_name(const kb_problem *p)
{
    return p->bench == KB_ADD_RMSNORM_BWD ? "add_rmsnorm_backward" : "add_rmsnorm_forward";
}

static kb_status ar_check(const kb_buffers *b, const char *who, kb_err *e)
{
    if (!b) return KB_FAIL(e, KB_ERR_ARG, "%s: buffers is NULL", who);
    const kb_problem *p = &b->p;
    if ((p->bench != KB_ADD_RMSNORM_FWD && p->bench != KB_ADD_RMSNORM_BWD) ||
        (unsigned)p->dtype >= KB_NUM_DTYPES || p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "%s: bad problem (bench %d, dtype %d, %lldx%lld)", who,
                       (int)p->bench, (int)p->dtype, (long long)p->M, (long long)p->N);
    return KB_OK;
}

#define AR_NEED(ptr)                                                                       \
    do {                                                                                   \
        if (!(ptr))                                                                        \
            return KB_FAIL(e, KB_ERR_ARG, "%s: %s %s %lldx%lld: tensor '%s' not allocated", \
                           who, ar_name(p), kb_dtype_name(p->dtype), (long long)p->M,      \
                           (long long)p->N, #ptr);                                         \
    } while (0)

extern "C" kb_status kb_add_rmsnorm_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    const char *const who = "GPU reference (saved statistics)";
    KB_TRY(ar_check(b, who, e));
    const kb_problem *p = &b->p;
    const kb_tensors *t = &b->t;
    if (p->bench != KB_ADD_RMSNORM_BWD) return KB_OK; /* the forward saves nothing */
    AR_NEED(t->x);
    AR_NEED(t->rstd);
    KB_DISPATCH(p->dtype, T, {
        ar_k_rstd<T><<<ar_grid(p->M), AR_THREADS, 0, s>>>((const T *)t->x, p->M, p->N,
                                                          (float *)t->rstd);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_add_rmsnorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    const char *const who = "GPU reference";
    KB_TRY(ar_check(b, who, e));
    const kb_problem *p = &b->p;
    const kb_tensors *t = &b->t;
    AR_NEED(b->gold);
    AR_NEED(b->gold_scale);
    AR_NEED(t->x);
    AR_NEED(t->w);
    if (p->bench == KB_ADD_RMSNORM_FWD) {
        AR_NEED(t->res);
        KB_DISPATCH(p->dtype, T, {
            ar_k_fwd<T><<<ar_grid(p->M), AR_THREADS, 0, s>>>((const T *)t->x, (const T *)t->res,
                                                             t->w, p->M, p->N, (T *)b->gold,
                                                             b->gold_scale);
        });
        KB_LAUNCHED(e);
        return KB_OK;
    }
    AR_NEED(t->dy);
    AR_NEED(t->dres);
    AR_NEED(t->rstd);
    AR_NEED(b->gold_dw);
    KB_DISPATCH(p->dtype, T, {
        ar_k_bwd<T><<<ar_grid(p->M), AR_THREADS, 0, s>>>(
            (const T *)t->x, t->w, (const T *)t->dy, (const T *)t->dres, t->rstd, p->M, p->N,
            (T *)b->gold, b->gold_scale);
    });
    KB_LAUNCHED(e);
    return gold_dw(p, t, NULL, b->gold_dw, s, e); /* ref_dw.cuh, mean NULL: x * rstd */
}
