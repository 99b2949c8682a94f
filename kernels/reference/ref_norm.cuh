/* The norms' GPU reference (CUDA), shared by rmsnorm and layernorm: their
 * forward rows, the backward's row formula and the dw column sums, and the
 * gold of either norm (norm_gold; ln false: RMSNorm, no centring and no
 * mean(g) term). Built on ref_rows.cuh's row reductions.
 *
 * dw (norm backward): column sums over M rows, deterministic, no atomics.
 * Kernel 1: thread per column, CTA row per chunk of rows, partial sums in
 * double to scratch [chunks, N]; kernel 2 sums the chunks in order. */
#ifndef KB_REF_NORM_CUH
#define KB_REF_NORM_CUH

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
