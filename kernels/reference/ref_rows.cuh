/* The GPU references' shared building blocks (CUDA), which every op
 * folder's reference.cu of a row op includes, so each reduction is written
 * once: loads and stores at the reference's precision, the block-wide row
 * reductions (row_sum, row_max, row_lse, RMS and LayerNorm statistics), the
 * softmax row kernel (softmax's gold and the saved y), the launch shape of a
 * row kernel and the checks every entry point starts with.
 *
 * Strategy of every row kernel: one CTA per row (grid-stride over rows when
 * M exceeds the grid), each thread strides over the row with scalar loads,
 * several passes that re-read the row from global memory (max, sums, write),
 * all arithmetic and sums in double, block reductions by warp shuffles plus
 * 32 doubles of shared memory. Only the stored results are rounded: saved
 * statistics to fp32, outputs to fp32 then to the dtype (the gold is "the
 * fp32 reference rounded to the output dtype"). Limits: none on N (no
 * shared row buffer), M up to 2^63; speed is a few HBM passes per case.
 *
 * The backward formulas read the stored (dtype) inputs and the stored fp32
 * statistics, exactly like the backends do (reference.h). */
#ifndef KB_REF_ROWS_CUH
#define KB_REF_ROWS_CUH

#include <limits.h>
#include <string.h>

#include "kb_cuda.cuh"
#include "kb_dsum.cuh"
#include "reference.h"
#include "registry.h"

#define KB_REF_EPS ((double)KB_NORM_EPS)

template <typename T> static __device__ __forceinline__ double ld(const T &v)
{
    return (double)kb_to_float(v);
}

/* double -> fp32 -> dtype, the same double rounding the CPU check applies. */
template <typename T> static __device__ __forceinline__ T st(double v)
{
    return kb_from_float<T>((float)v);
}

template <typename F> static __device__ double row_sum(int64_t N, double *sh, F f)
{
    double s = 0.0;
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) s += f(j);
    return kb_block_sum_d(s, sh);
}

template <typename T> static __device__ double row_max(const T *r, int64_t N, float *sh)
{
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, kb_to_float(r[j]));
    return (double)kb_block_max(m, sh);
}

template <typename T> static __device__ double row_lse(const T *r, int64_t N, float *shf, double *shd)
{
    const double m = row_max(r, N, shf);
    return m + log(row_sum(N, shd, [&](int64_t j) { return exp(ld(r[j]) - m); }));
}

template <typename T> static __device__ double row_rms_rstd(const T *r, int64_t N, double *sh)
{
    const double s = row_sum(N, sh, [&](int64_t j) { return ld(r[j]) * ld(r[j]); });
    return 1.0 / sqrt(s / (double)N + KB_REF_EPS);
}

/* Two passes: mean, then squared deviations (no cancellation). */
template <typename T>
static __device__ void row_ln_stats(const T *r, int64_t N, double *sh, double *mean, double *rstd)
{
    const double mu = row_sum(N, sh, [&](int64_t j) { return ld(r[j]); }) / (double)N;
    const double v = row_sum(N, sh, [&](int64_t j) { return (ld(r[j]) - mu) * (ld(r[j]) - mu); });
    *mean = mu;
    *rstd = 1.0 / sqrt(v / (double)N + KB_REF_EPS);
}

#define FOR_ROWS(i) for (int64_t i = blockIdx.x; i < M; i += gridDim.x)
#define FOR_COLS(j) for (int64_t j = threadIdx.x; j < N; j += blockDim.x)

/* y = softmax(x) row by row: softmax's forward gold and the saved y of its
 * backward. */
template <typename T> static __global__ void k_softmax(const T *x, T *y, int64_t M, int64_t N)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    FOR_ROWS(i) {
        const T *xr = x + i * N;
        T *yr = y + i * N;
        const double m = row_max(xr, N, shf);
        const double s = row_sum(N, shd, [&](int64_t j) { return exp(ld(xr[j]) - m); });
        FOR_COLS(j) yr[j] = st<T>(exp(ld(xr[j]) - m) / s);
    }
}

/* ---- host ------------------------------------------------------------------------ */
static inline unsigned row_grid(int64_t M) { return (unsigned)(M < INT_MAX ? M : INT_MAX); }

/* 32..512 threads: about 8 elements per thread on short rows, 512 on long. */
static inline int row_threads(int64_t N)
{
    int t = 32;
    while (t < 512 && (int64_t)t * 8 < N) t *= 2;
    return t;
}

#define ROWS_LAUNCH(kernel, ...)                                                          \
    do {                                                                                  \
        kernel<<<row_grid(p->M), row_threads(p->N), 0, s>>>(__VA_ARGS__);                 \
        KB_LAUNCHED(e);                                                                   \
    } while (0)

static inline kb_status check_problem(const kb_buffers *b, const char *who, kb_err *e)
{
    if (!b) return KB_FAIL(e, KB_ERR_ARG, "%s: buffers is NULL", who);
    const kb_problem *p = &b->p;
    if ((unsigned)p->bench >= KB_NUM_BENCH || (unsigned)p->dtype >= KB_NUM_DTYPES ||
        p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "%s: bad problem (bench %d, dtype %d, %lldx%lld)", who,
                       (int)p->bench, (int)p->dtype, (long long)p->M, (long long)p->N);
    return KB_OK;
}

/* The tensor a NEED names: "t->x" -> "x", "b->gold_dw" -> "gold_dw" (the
 * buffer's role, as --dump and the accuracy messages name it). */
static inline const char *tensor_role(const char *expr)
{
    const char *arrow = strstr(expr, "->");
    return arrow ? arrow + 2 : expr;
}

/* An input or output the reference reads or writes but the case did not
 * allocate: a harness bug, named in the case's terms. */
#define NEED(ptr, who)                                                                    \
    do {                                                                                  \
        if (!(ptr))                                                                       \
            return KB_FAIL(e, KB_ERR_ARG, "%s: %s %s %lldx%lld: tensor '%s' not allocated", \
                           who, kb_bench_info_get(p->bench)->name, kb_dtype_name(p->dtype), \
                           (long long)p->M, (long long)p->N, tensor_role(#ptr));          \
    } while (0)

/* What every entry point starts with: what it computes, for messages
 * (who), the problem checked, and p, t, M, N. */
#define REF_BEGIN(b, e, what)                                                             \
    const char *const who = (what);                                                      \
    KB_TRY(check_problem((b), who, (e)));                                                 \
    const kb_problem *p = &(b)->p;                                                        \
    const kb_tensors *t = &(b)->t;                                                        \
    const int64_t M = p->M, N = p->N

#endif
