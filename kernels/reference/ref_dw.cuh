/* The weight gradient of a normalisation, dw[j] = sum over rows of
 * dy * (x - mean) * rstd (mean NULL: RMSNorm's x * rstd), for the GPU
 * references of every op that has one (rmsnorm, layernorm, add_rmsnorm):
 * column sums over M rows, deterministic, no atomics. Kernel 1: thread per
 * column, CTA row per chunk of rows, partial sums in double to scratch
 * [chunks, N]; kernel 2 sums the chunks in order. Reads t->x, t->dy and
 * t->rstd. */
#ifndef KB_REF_DW_CUH
#define KB_REF_DW_CUH

#include "ref_rows.cuh"

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

#endif
