/* softmax, eager backend: what PyTorch eager launches for torch.softmax(x, -1)
 * and its autograd backward. PyTorch uses ONE kernel each way, so do we; the
 * speedups of the other backends are measured against these.
 *
 * Kernels (same dispatch on N both ways, as aten/src/ATen/native/cuda/SoftMax.cu):
 *   N <= 1024  softmax_{fwd,bwd}_warp   mirrors dispatch_softmax_{forward,backward}
 *              (PersistentSoftmax.cuh): one warp per row, the row in registers
 *              (lane l holds elements l, l+32, ...; ITERS = next_pow2(N)/32 per
 *              lane, padded with -inf / 0), warp-shuffle reductions, 4 warps
 *              (128 threads) per block. PyTorch packs 2 rows per warp for
 *              N <= 128; we keep 1 for simplicity.
 *   N > 1024   softmax_{fwd,bwd}_block  mirrors cunn_SoftMax{Forward,Backward}:
 *              one block per row, passes over the row in global memory (fwd:
 *              max, sum of exp, write; bwd: sum(dy*y), write), block
 *              reductions through shared memory; block size from PyTorch's
 *              SoftMax_getBlockSize. Scalar loads (PyTorch vectorises when
 *              aligned); loops unrolled by 4 so several loads are in flight.
 * fp32 math inside, output rounded to the dtype once. Rows are grid-strided,
 * so any M >= 1 fits the grid; all offsets are int64.
 *   fwd  y  = exp(x - max) / sum_j exp(x_j - max)
 *   bwd  dx = y * (dy - sum_j dy_j*y_j)                                      */
#include "kb_cuda.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

#define WARP_ROWS 4           /* warps (= rows) per block on the warp path */
#define MAX_BLOCKS (1 << 20)  /* grid cap; rows are grid-strided beyond it  */

/* ---- N <= 1024: one warp per row, row in registers ---------------------- */
template <typename T, int ITERS>
__global__ void __launch_bounds__(WARP_ROWS * 32)
softmax_fwd_warp(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (int64_t)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5); row < M;
         row += (int64_t)gridDim.x * WARP_ROWS) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        float v[ITERS];
        float mx = -INFINITY;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            v[k] = j < N ? kb_to_float(xr[j]) : -INFINITY;
            mx = fmaxf(mx, v[k]);
        }
        mx = kb_warp_max(mx);
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            v[k] = expf(v[k] - mx); /* padding: exp(-inf) = 0 */
            sum += v[k];
        }
        sum = kb_warp_sum(sum);
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            if (j < N) yr[j] = kb_from_float<T>(v[k] / sum);
        }
    }
}

template <typename T, int ITERS>
__global__ void __launch_bounds__(WARP_ROWS * 32)
softmax_bwd_warp(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                 int64_t M, int N)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (int64_t)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5); row < M;
         row += (int64_t)gridDim.x * WARP_ROWS) {
        const int64_t off = row * N;
        float yv[ITERS], gv[ITERS];
        float dot = 0.f;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            yv[k] = j < N ? kb_to_float(y[off + j]) : 0.f;
            gv[k] = j < N ? kb_to_float(dy[off + j]) : 0.f;
            dot += yv[k] * gv[k];
        }
        dot = kb_warp_sum(dot);
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            if (j < N) dx[off + j] = kb_from_float<T>(yv[k] * (gv[k] - dot));
        }
    }
}

/* ---- N > 1024: one block per row, passes over global memory ------------- */
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_fwd_block(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        float mx = -INFINITY;
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) mx = fmaxf(mx, kb_to_float(xr[j]));
        mx = kb_block_max(mx, scratch);
        float sum = 0.f;
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) sum += expf(kb_to_float(xr[j]) - mx);
        sum = kb_block_sum(sum, scratch);
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
            yr[j] = kb_from_float<T>(expf(kb_to_float(xr[j]) - mx) / sum);
    }
}

template <typename T>
__global__ void __launch_bounds__(1024)
softmax_bwd_block(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                  int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const int64_t off = row * N;
        float dot = 0.f;
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
            dot += kb_to_float(y[off + j]) * kb_to_float(dy[off + j]);
        dot = kb_block_sum(dot, scratch);
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const float yv = kb_to_float(y[off + j]);
            dx[off + j] = kb_from_float<T>(yv * (kb_to_float(dy[off + j]) - dot));
        }
    }
}

/* ---- host ----------------------------------------------------------------- */
/* PyTorch's SoftMax_getBlockSize: ILP = 16 B / sizeof(T), keep at least half
 * the row "vectorised", power of two in [32, 1024]. */
static unsigned block_threads(int64_t N, size_t elem)
{
    int64_t max_threads = N / (int64_t)(16 / elem) / 2;
    if (max_threads > 1024) max_threads = 1024;
    unsigned t = 32;
    while ((int64_t)t < max_threads) t *= 2;
    return t;
}

static unsigned grid_for(int64_t items)
{
    return (unsigned)(items < MAX_BLOCKS ? items : MAX_BLOCKS);
}

/* Instantiates the warp kernel with ITERS = next_pow2(N)/32, as PyTorch
 * templates on log2(N). */
#define WARP_CASES(X)                                                         \
    X(1) X(2) X(4) X(8) X(16) X(32)

template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const T *x = (const T *)t->x;
    T *y = (T *)t->out;
    if (p->N <= 1024) {
        const int N = (int)p->N;
        const unsigned grid = grid_for(kb_cdiv(p->M, WARP_ROWS));
#define X(it)                                                                 \
    if (N <= 32 * (it)) {                                                     \
        softmax_fwd_warp<T, it><<<grid, WARP_ROWS * 32, 0, s>>>(x, y, p->M, N); \
        KB_LAUNCHED(e);                                                       \
        return KB_OK;                                                         \
    }
        WARP_CASES(X)
#undef X
    }
    softmax_fwd_block<T><<<grid_for(p->M), block_threads(p->N, sizeof(T)), 0, s>>>(x, y, p->M, p->N);
    KB_LAUNCHED(e);
    return KB_OK;
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const T *y = (const T *)t->y, *dy = (const T *)t->dy;
    T *dx = (T *)t->out;
    if (p->N <= 1024) {
        const int N = (int)p->N;
        const unsigned grid = grid_for(kb_cdiv(p->M, WARP_ROWS));
#define X(it)                                                                 \
    if (N <= 32 * (it)) {                                                     \
        softmax_bwd_warp<T, it><<<grid, WARP_ROWS * 32, 0, s>>>(y, dy, dx, p->M, N); \
        KB_LAUNCHED(e);                                                       \
        return KB_OK;                                                         \
    }
        WARP_CASES(X)
#undef X
    }
    softmax_bwd_block<T><<<grid_for(p->M), block_threads(p->N, sizeof(T)), 0, s>>>(y, dy, dx, p->M,
                                                                                 p->N);
    KB_LAUNCHED(e);
    return KB_OK;
}

static kb_status setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                       size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    *workspace_bytes = 0;
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "eager softmax: bad problem %lldx%lld dtype %d",
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    return KB_OK;
}

static kb_status run_fwd(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                         kb_err *e)
{
    if ((unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "eager softmax_forward: bad dtype %d", (int)p->dtype);
    kb_status st = KB_OK;
    KB_DISPATCH(p->dtype, T, st = fwd<T>(p, t, s, e));
    return st;
}

static kb_status run_bwd(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                         kb_err *e)
{
    if ((unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "eager softmax_backward: bad dtype %d", (int)p->dtype);
    kb_status st = KB_OK;
    KB_DISPATCH(p->dtype, T, st = bwd<T>(p, t, s, e));
    return st;
}

} /* namespace */

extern "C" const kb_impl kb_softmax_eager_fwd = {"eager", KB_SOFTMAX_FWD, setup, run_fwd, NULL,
                                                 NULL};
extern "C" const kb_impl kb_softmax_eager_bwd = {"eager", KB_SOFTMAX_BWD, setup, run_bwd, NULL,
                                                 NULL};
