/* The MLP block's GPU reference (mlp_math.h): simple fp32 GEMMs.
 *
 * Strategy: rows of x in chunks of R rows (R*H <= 2^24, so each fp32
 * scratch matrix is <= 64 MB whatever the shape). Per chunk:
 *   1. G = x Wg^T, U = x Wu^T           (fp32, [R, H]; gemm_nt)
 *   2. G = act(G) * U                   (fp32 h, in place)
 *   3. y = G Wd^T rounded to the dtype, scale = sqrt(sum_k (h_k Wd_k)^2)
 * gemm_nt: C[r, c] = sum_k A[r, k] B[c, k], both operands K-contiguous;
 * 64x64 output tiles, 256 threads of 4x4 outputs each (rows ty + 16i,
 * columns tx + 16j), K in steps of 16 through shared memory, fp32
 * accumulation in a fixed order (the same sums on every run). Out-of-range
 * rows, columns and k are loaded as 0 and not stored, so any T, D, H >= 1.
 * Limits: T, D, H < 2^31 / 64 tiles per grid dimension (65535 in y: T up
 * to 4 M rows per chunk is far above R). Speed: a few TFLOP/s; ~1-2 s for
 * the largest registered shape (8192 x 4096 x 14336). */
#include <math.h>

#include "kb_cuda.cuh"
#include "mlp_ref.h"
#include "registry.h"

#define TILE 64
#define TK 16

template <typename TA, typename TB, bool SCALE, typename TC>
static __global__ void __launch_bounds__(256)
    gemm_nt(const TA *A, int64_t lda, const TB *B, int64_t ldb, int64_t rows, int64_t cols,
            int64_t K, TC *C, int64_t ldc, float *S)
{
    __shared__ float As[TK][TILE + 1];
    __shared__ float Bs[TK][TILE + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t r0 = (int64_t)blockIdx.y * TILE, c0 = (int64_t)blockIdx.x * TILE;
    float acc[4][4], sq[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = sq[i][j] = 0.f;
    for (int64_t k0 = 0; k0 < K; k0 += TK) {
        for (int idx = threadIdx.x; idx < TILE * TK; idx += 256) {
            const int r = idx / TK, k = idx % TK;
            const int64_t gk = k0 + k;
            As[k][r] = r0 + r < rows && gk < K ? kb_to_float(A[(r0 + r) * lda + gk]) : 0.f;
            Bs[k][r] = c0 + r < cols && gk < K ? kb_to_float(B[(c0 + r) * ldb + gk]) : 0.f;
        }
        __syncthreads();
        for (int k = 0; k < TK; k++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = As[k][ty + 16 * i];
            for (int j = 0; j < 4; j++) b[j] = Bs[k][tx + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    const float t = a[i] * b[j];
                    acc[i][j] += t;
                    if (SCALE) sq[i][j] += t * t;
                }
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            const int64_t r = r0 + ty + 16 * i, c = c0 + tx + 16 * j;
            if (r >= rows || c >= cols) continue;
            C[r * ldc + c] = kb_from_float<TC>(acc[i][j]);
            if (SCALE) S[r * ldc + c] = sqrtf(sq[i][j]);
        }
}

static __global__ void glu_inplace(float *G, const float *U, int64_t n, int act)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        G[i] = (float)(kb_mlp_act(act, (double)G[i]) * (double)U[i]);
}

static dim3 tiles(int64_t rows, int64_t cols)
{
    return dim3((unsigned)kb_cdiv(cols, TILE), (unsigned)kb_cdiv(rows, TILE));
}

template <typename T>
static kb_status chunk(const kb_problem *p, const T *x, const T *w, T *y, float *scale,
                       int64_t r0, int64_t R, float *G, float *U, int act, cudaStream_t s,
                       kb_err *e)
{
    const int64_t D = p->N, H = p->K;
    const T *Wg = w, *Wu = w + H * D, *Wd = w + 2 * H * D;
    const T *xr = x + r0 * D;
    gemm_nt<T, T, false, float><<<tiles(R, H), 256, 0, s>>>(xr, D, Wg, D, R, H, D, G, H, NULL);
    KB_LAUNCHED(e);
    gemm_nt<T, T, false, float><<<tiles(R, H), 256, 0, s>>>(xr, D, Wu, D, R, H, D, U, H, NULL);
    KB_LAUNCHED(e);
    const int64_t n = R * H;
    glu_inplace<<<(unsigned)(kb_cdiv(n, 256) < 65536 ? kb_cdiv(n, 256) : 65536), 256, 0, s>>>(
        G, U, n, act);
    KB_LAUNCHED(e);
    gemm_nt<float, T, true, T><<<tiles(R, D), 256, 0, s>>>(G, H, Wd, H, R, D, H, y + r0 * D, D,
                                                           scale + r0 * D);
    KB_LAUNCHED(e);
    return KB_OK;
}

/* act per mlp_math.h. */
static kb_status mlp_gold(kb_buffers *b, int act, cudaStream_t s, kb_err *e)
{
    const kb_problem *p = &b->p;
    char shape[72];
    kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
    if (p->M < 1 || p->N < 1 || p->K < 1 || !b->t.x || !b->t.wts || !b->gold || !b->gold_scale)
        return KB_FAIL(e, KB_ERR_ARG, "gpu reference mlp %s: bad shape or missing x, wts, gold "
                       "or gold_scale", shape);
    int64_t R = ((int64_t)1 << 24) / p->K;
    if (R < 1) R = 1;
    if (R > p->M) R = p->M;
    const size_t bytes = (size_t)R * (size_t)p->K * sizeof(float);
    float *G = NULL, *U = NULL;
    cudaError_t rc = cudaMalloc((void **)&G, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc((void **)&U, bytes);
    if (rc != cudaSuccess) {
        cudaFree(G);
        return KB_FAIL(e, rc == cudaErrorMemoryAllocation ? KB_ERR_DEVMEM : KB_ERR_CUDA,
                       "gpu reference mlp %s: cudaMalloc(2 x %zu bytes of scratch): %s", shape,
                       bytes, cudaGetErrorString(rc));
    }
    kb_status st = KB_OK;
    for (int64_t r0 = 0; r0 < p->M && st == KB_OK; r0 += R) {
        const int64_t rows = p->M - r0 < R ? p->M - r0 : R;
        KB_DISPATCH(p->dtype, T, {
            st = chunk<T>(p, (const T *)b->t.x, (const T *)b->t.wts, (T *)b->gold, b->gold_scale,
                          r0, rows, G, U, act, s, e);
        });
    }
    /* The kernels must be done with the scratch before it goes. */
    rc = cudaStreamSynchronize(s);
    if (st == KB_OK && rc != cudaSuccess)
        st = KB_FAIL(e, KB_ERR_CUDA, "gpu reference mlp %s: %s", shape, cudaGetErrorString(rc));
    cudaFree(G);
    cudaFree(U);
    return st;
}

extern "C" kb_status kb_mlp_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    if (!b) return KB_FAIL(e, KB_ERR_ARG, "gpu reference mlp: buffers is NULL");
    return mlp_gold(b, kb_mlp_ref_act(b->p.bench), s, e);
}
