/* GPU reference: simple, obviously-correct kernels that compute what the
 * forward saves for the backward and the gold outputs of every case.
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
 * dw (norm backward): column sums over M rows, deterministic, no atomics.
 * Kernel 1: thread per column, CTA row per chunk of rows, partial sums in
 * double to scratch [chunks, N]; kernel 2 sums the chunks in order.
 *
 * The backward formulas read the stored (dtype) inputs and the stored fp32
 * statistics, exactly like the backends do (reference.h). */
#include <string.h>
#include <limits.h>

#include "kb_cuda.cuh"
#include "glu_ref.h"
#include "kb_dsum.cuh"
#include "mlp_math.h"
#include "reference.h"
#include "registry.h"

#define EPS ((double)KB_NORM_EPS)

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
    return 1.0 / sqrt(s / (double)N + EPS);
}

/* Two passes: mean, then squared deviations (no cancellation). */
template <typename T>
static __device__ void row_ln_stats(const T *r, int64_t N, double *sh, double *mean, double *rstd)
{
    const double mu = row_sum(N, sh, [&](int64_t j) { return ld(r[j]); }) / (double)N;
    const double v = row_sum(N, sh, [&](int64_t j) { return (ld(r[j]) - mu) * (ld(r[j]) - mu); });
    *mean = mu;
    *rstd = 1.0 / sqrt(v / (double)N + EPS);
}

#define FOR_ROWS(i) for (int64_t i = blockIdx.x; i < M; i += gridDim.x)
#define FOR_COLS(j) for (int64_t j = threadIdx.x; j < N; j += blockDim.x)

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

/* ---- gold outputs ---------------------------------------------------------- */
template <typename T>
static __global__ void k_ce_fwd(const T *x, const int64_t *target, int64_t M, int64_t N, T *loss)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    FOR_ROWS(i) {
        const T *xr = x + i * N;
        const double lse = row_lse(xr, N, shf, shd);
        const int64_t t = target[i];
        if (threadIdx.x == 0) loss[i] = st<T>(t >= 0 && t < N ? lse - ld(xr[t]) : NAN);
    }
}

template <typename T>
static __global__ void k_ce_bwd(const T *x, const int64_t *target, const float *dloss,
                                const float *lse, int64_t M, int64_t N, T *dx)
{
    FOR_ROWS(i) {
        const T *xr = x + i * N;
        const double l = lse[i], d = dloss[i];
        const int64_t t = target[i];
        FOR_COLS(j) dx[i * N + j] = st<T>(d * (exp(ld(xr[j]) - l) - (j == t ? 1.0 : 0.0)));
    }
}

template <typename T>
static __global__ void k_softmax_bwd(const T *y, const T *dy, int64_t M, int64_t N, T *dx)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        const T *yr = y + i * N, *dyr = dy + i * N;
        const double s = row_sum(N, sh, [&](int64_t j) { return ld(dyr[j]) * ld(yr[j]); });
        FOR_COLS(j) dx[i * N + j] = st<T>(ld(yr[j]) * (ld(dyr[j]) - s));
    }
}

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

/* Partial dw over rows [y*rows, (y+1)*rows) for one column per thread:
 * consecutive threads read consecutive columns of a row (coalesced). */
template <typename T>
static __global__ void k_dw_partial(const T *x, const T *dy, const float *mean, const float *rstd,
                                    int64_t M, int64_t N, int64_t rows, double *part)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    const int64_t r0 = (int64_t)blockIdx.y * rows, r1 = r0 + rows < M ? r0 + rows : M;
    double s = 0.0;
    for (int64_t i = r0; i < r1; i++) {
        const double mu = mean ? (double)mean[i] : 0.0;
        s += ld(dy[i * N + j]) * ((ld(x[i * N + j]) - mu) * (double)rstd[i]);
    }
    part[(int64_t)blockIdx.y * N + j] = s;
}

static __global__ void k_dw_final(const double *part, int64_t chunks, int64_t N, float *dw)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    double s = 0.0;
    for (int64_t c = 0; c < chunks; c++) s += part[c * N + j];
    dw[j] = (float)s;
}

/* ---- launchers --------------------------------------------------------------- */
/* GLU, elementwise over MN: out = act(x) * up; backward dgate = dy * up *
 * act'(x) into out, dup = dy * act(x) into out + MN. */
template <typename T>
static __global__ void k_glu(const T *x, const T *up, const T *dy, int gelu, int64_t MN, T *out)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < MN; i += stride) {
        const double g = ld(x[i]), u = ld(up[i]);
        if (!dy) {
            out[i] = st<T>(kb_glu_act_d(gelu, g) * u);
            continue;
        }
        const double d = ld(dy[i]);
        out[i] = st<T>(d * u * kb_glu_dact_d(gelu, g));
        out[MN + i] = st<T>(d * kb_glu_act_d(gelu, g));
    }
}

static unsigned row_grid(int64_t M) { return (unsigned)(M < INT_MAX ? M : INT_MAX); }

/* 32..512 threads: about 8 elements per thread on short rows, 512 on long. */
static int row_threads(int64_t N)
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

static kb_status check_problem(const kb_buffers *b, const char *who, kb_err *e)
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
static const char *tensor_role(const char *expr)
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

extern "C" kb_status kb_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference (saved statistics)");
    const kb_op_gpu *own = kb_op_gpu_get(p->bench);
    if (own && own->saved) return own->saved(b, s, e);
    /* The saved statistics the descriptor lists, each from x (forwards
     * save nothing): lse, softmax's y, LayerNorm's mean and rstd, or an
     * rstd alone: RMSNorm's. */
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

static kb_status launch_dw(const kb_problem *p, const kb_tensors *t, const float *mean,
                           double *part, int64_t chunks, int64_t rows, float *dw,
                           cudaStream_t s, kb_err *e)
{
    const int threads = 256;
    const dim3 grid((unsigned)kb_cdiv(p->N, threads), (unsigned)chunks);
    KB_DISPATCH(p->dtype, T, {
        k_dw_partial<T><<<grid, threads, 0, s>>>((const T *)t->x, (const T *)t->dy, mean, t->rstd,
                                                 p->M, p->N, rows, part);
    });
    KB_LAUNCHED(e);
    k_dw_final<<<(unsigned)kb_cdiv(p->N, threads), threads, 0, s>>>(part, chunks, p->N, dw);
    KB_LAUNCHED(e);
    return KB_OK;
}

/* About 2048 CTAs in all; chunks <= 65535 (grid.y). Scratch is chunks*N
 * doubles: 4 MB at 8192x262144, 3 MB at 1152000x384. */
static kb_status gold_dw(const kb_problem *p, const kb_tensors *t, const float *mean, float *dw,
                         cudaStream_t s, kb_err *e)
{
    const int64_t cols = kb_cdiv(p->N, 256);
    int64_t chunks = kb_cdiv(2048, cols);
    if (chunks > p->M) chunks = p->M;
    if (chunks > 65535) chunks = 65535;
    const int64_t rows = kb_cdiv(p->M, chunks);
    chunks = kb_cdiv(p->M, rows);
    const size_t bytes = (size_t)chunks * (size_t)p->N * sizeof(double);
    double *part = NULL;
    cudaError_t rc = cudaMalloc((void **)&part, bytes);
    if (rc != cudaSuccess)
        return KB_FAIL(e, rc == cudaErrorMemoryAllocation ? KB_ERR_DEVMEM : KB_ERR_CUDA,
                       "gpu reference dw %lldx%lld: cudaMalloc(%zu bytes of scratch): %s",
                       (long long)p->M, (long long)p->N, bytes, cudaGetErrorString(rc));
    kb_status st_ = launch_dw(p, t, mean, part, chunks, rows, dw, s, e);
    /* The kernels must be done with part before it goes. */
    rc = cudaStreamSynchronize(s);
    if (st_ == KB_OK && rc != cudaSuccess)
        st_ = KB_FAIL(e, KB_ERR_CUDA, "gpu reference dw %lldx%lld: %s", (long long)p->M,
                      (long long)p->N, cudaGetErrorString(rc));
    rc = cudaFree(part);
    if (st_ == KB_OK && rc != cudaSuccess)
        st_ = KB_FAIL(e, KB_ERR_CUDA, "cudaFree(dw scratch): %s", cudaGetErrorString(rc));
    return st_;
}

extern "C" kb_status kb_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference");
    NEED(b->gold, who);
    const kb_op_gpu *own = kb_op_gpu_get(p->bench);
    if (own && own->gold) return own->gold(b, s, e);
    /* The shared reference's formulas, by the descriptor's family and
     * direction (an op with its own reference registers its gold above). */
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    const bool ln = bi->fam == KB_FAM_LAYERNORM;
    switch (bi->fam) {
    case KB_FAM_CROSS_ENTROPY:
        NEED(t->x, who);
        NEED(t->target, who);
        if (!bi->backward) {
            KB_DISPATCH(p->dtype, T, {
                ROWS_LAUNCH(k_ce_fwd<T>, (const T *)t->x, t->target, M, N, (T *)b->gold);
            });
            break;
        }
        NEED(t->dloss, who);
        NEED(t->lse, who);
        KB_DISPATCH(p->dtype, T, {
            ROWS_LAUNCH(k_ce_bwd<T>, (const T *)t->x, t->target, t->dloss, t->lse, M, N,
                        (T *)b->gold);
        });
        break;
    case KB_FAM_SOFTMAX:
        if (!bi->backward) {
            NEED(t->x, who);
            KB_DISPATCH(p->dtype, T, {
                ROWS_LAUNCH(k_softmax<T>, (const T *)t->x, (T *)b->gold, M, N);
            });
            break;
        }
        NEED(t->y, who);
        NEED(t->dy, who);
        KB_DISPATCH(p->dtype, T, {
            ROWS_LAUNCH(k_softmax_bwd<T>, (const T *)t->y, (const T *)t->dy, M, N, (T *)b->gold);
        });
        break;
    case KB_FAM_RMSNORM:
    case KB_FAM_LAYERNORM: {
        NEED(t->x, who);
        NEED(t->w, who);
        if (!bi->backward) {
            KB_DISPATCH(p->dtype, T, {
                ROWS_LAUNCH(k_norm_fwd<T>, (const T *)t->x, t->w, M, N, ln, (T *)b->gold);
            });
            break;
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
        break;
    }
    case KB_FAM_GEGLU:
    case KB_FAM_SWIGLU: {
        NEED(t->x, who);
        NEED(t->up, who);
        if (bi->backward) NEED(t->dy, who);
        const int64_t MN = M * N;
        const unsigned grid = (unsigned)(kb_cdiv(MN, 256) < 65536 ? kb_cdiv(MN, 256) : 65536);
        KB_DISPATCH(p->dtype, T, {
            k_glu<T><<<grid, 256, 0, s>>>((const T *)t->x, (const T *)t->up,
                                          bi->backward ? (const T *)t->dy : NULL,
                                          bi->fam == KB_FAM_GEGLU, MN, (T *)b->gold);
        });
        KB_LAUNCHED(e);
        break;
    }
    case KB_FAM_MLP: /* its own kernels and scratch (mlp_reference.cu) */
    case KB_FAM_MLP_SWIGLU:
        KB_TRY(kb_ref_gpu_mlp(b, bi->fam == KB_FAM_MLP_SWIGLU ? KB_MLP_SILU : KB_MLP_GELU_TANH, s,
                              e));
        break;
    case KB_FAM_OWN: /* its gold is its own, registered with its backends */
        return KB_FAIL(e, KB_ERR_ARG, "%s: %s has its own reference, and no GPU gold is registered",
                       who, bi->name);
    }
    return KB_OK;
}
