/* cross entropy, eager backend: what PyTorch eager (2.x, CUDA) launches for
 * F.cross_entropy(x, target, reduction="none") = nll_loss(log_softmax(x)) and
 * its autograd backward; unfused, intermediates in HBM (the workspace).
 * V = 16 B / sizeof(T) (PyTorch's ILP): 8 for bf16/fp16, 4 for fp32.
 *
 * Forward (2 kernels):
 *   log_softmax_fwd_*  host_softmax<LogSoftMaxForwardEpilogue> (SoftMax.cu):
 *       logp = x - max - log(sum exp(x - max)), fp32 math, logp [M,N] written
 *       in the dtype. Same dispatch on N as PyTorch:
 *         N <= 2048          _warp  softmax_warp_forward: one warp per row,
 *                            row in registers, scalar loads, 128 threads.
 *         ceil(N/1024) < 10  _reg   cunn_SoftMaxForwardReg: one 1024-thread
 *                            block per row, row in registers.
 *         row fits 48 KB     _smem  cunn_SoftMaxForwardSmem: 1024 threads, row
 *                            copied to shared memory by 128-bit loads during
 *                            the max pass (needs N % V == 0, aligned x, logp).
 *         otherwise          _gmem  cunn_SoftMaxForward: 1024 threads, max /
 *                            sum / write passes over global memory, 128-bit
 *                            accesses on each row's aligned interior, scalar
 *                            on its < V leading/trailing elements.
 *       48 KB is sharedMemPerBlock, what PyTorch tests (it never opts in).
 *   nll_gather  nll_loss_forward_no_reduce_cuda_kernel: one thread per row,
 *       loss[i] = -logp[i, target[i]] (dtype).
 * Backward (3 kernels + 1 memset), what autograd of log_softmax + nll_loss runs:
 *   logp_recompute  (elementwise) logp = x - lse[row], 128 threads, 128-bit
 *       loads of x and stores of logp. Autograd would have kept logp from the
 *       forward; our harness saves only lse fp32 [M] (SPEC), so logp is
 *       rebuilt first. It is kept in fp32, not the dtype: exp() of a
 *       bf16/fp16-rounded logp (|logp| ~ log N ~ 5..12, half-ulp up to 1/32 in
 *       bf16) is off by up to ~3 % (bf16) / ~0.4 % (fp16), beyond SPEC's
 *       tolerances; PyTorch eager would carry that error. This kernel and the
 *       wider logp reads are the bytes we move beyond PyTorch's backward:
 *       16 per element in bf16 (x 2 + logp 4 in, memset 2, g 2 + logp 4 +
 *       dx 2 in the last kernel) against PyTorch's 8.
 *   cudaMemsetAsync grad_logp = 0   at::zeros of nll_loss_backward.
 *   nll_scatter  nll_loss_backward_no_reduce_cuda_kernel: one thread per
 *       row, grad_logp[i, target[i]] = -dloss[i] (dtype).
 *   log_softmax_bwd_*  host_softmax_backward<LogSoftMaxBackwardEpilogue>:
 *       dx = g - exp(logp) * sum_j g_j (a real row reduction, though only one
 *       g_j is non-zero).
 *         N <= 1024          _warp  softmax_warp_backward: one warp per row.
 *         row of g fits 48 KB _smem  cunn_SoftMaxBackwardSmem: one block
 *                            (SoftMax_getBlockSize threads) per row, g copied
 *                            to shared memory during the sum pass.
 *         otherwise          _gmem  cunn_SoftMaxBackward: sum pass and write
 *                            pass over global memory, 128-bit interior as
 *                            in the forward.
 * The log_softmax kernels are kernels/common/softmax_eager.cuh's (shared
 * with eager softmax) with the epilogues LogSoftmaxFwd / LogSoftmaxBwd
 * (g = grad_logp, b = logp in fp32).
 * Rows are grid-strided, offsets int64; any M, N >= 1. Base pointers that are
 * not 16-byte aligned turn every 128-bit path scalar. A target outside [0, N)
 * yields NaN instead of an out-of-bounds access (PyTorch asserts).          */
#include "softmax_eager.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

/* f(i, target[i]) for rows i < M, one thread a row, grid-strided (PyTorch's
 * nll_loss kernels without reduction). */
template <typename F>
__device__ __forceinline__ void for_each_target(const int64_t *__restrict__ target, int64_t M,
                                                const F &f)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < M;
         i += (int64_t)gridDim.x * blockDim.x)
        f(i, target[i]);
}

template <typename T>
__global__ void nll_gather(const T *__restrict__ logp, const int64_t *__restrict__ target,
                           T *__restrict__ loss, int64_t M, int64_t N)
{
    for_each_target(target, M, [&](int64_t i, int64_t c) {
        loss[i] = c >= 0 && c < N ? kb_from_float<T>(-kb_to_float(logp[i * N + c]))
                                  : kb_from_float<T>(NAN);
    });
}

/* ---- backward ------------------------------------------------------------- */
/* One aligned group: V elements from flat index i0; rows may change inside
 * it (N < V or a row boundary), tracked by a column counter. */
template <typename T>
__device__ __forceinline__ void logp_group(uint4 xv, int64_t i0, const float *lse,
                                           float *logp, RowOf row_of)
{
    constexpr int V = kb_vec<T>::n;
    float f[V];
    kb_unpack<T>(xv, f);
    int64_t row = row_of(i0), col = i0 - row * row_of.n;
#pragma unroll
    for (int k = 0; k < V; k++) {
        f[k] -= __ldg(lse + row);
        if (++col == row_of.n) col = 0, row++;
    }
    kb_st_f32<V>(logp + i0, f);
}

/* logp32 = x - lse[row], flat over M*N elements like PyTorch's vectorized
 * elementwise kernel: 128 threads, each takes two groups of V elements per
 * step (both loads issued before the stores), grid-strided; the < V
 * trailing elements (or all, when !vec) one by one. */
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
logp_recompute(const T *__restrict__ x, const float *__restrict__ lse, float *__restrict__ logp,
               int64_t total, RowOf row_of, bool vec)
{
    constexpr int V = kb_vec<T>::n;
    const int64_t ngroups = vec ? total / V : 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t t0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t g = t0; g < ngroups; g += 2 * stride) {
        const bool two = g + stride < ngroups;
        const uint4 a = kb_ld128(x + g * V);
        const uint4 b = two ? kb_ld128(x + (g + stride) * V) : a;
        logp_group<T>(a, g * V, lse, logp, row_of);
        if (two) logp_group<T>(b, (g + stride) * V, lse, logp, row_of);
    }
    for (int64_t i = ngroups * V + t0; i < total; i += stride)
        logp[i] = kb_to_float(x[i]) - __ldg(lse + row_of(i));
}

template <typename T>
__global__ void nll_scatter(const float *__restrict__ dloss, const int64_t *__restrict__ target,
                            T *__restrict__ grad, int64_t M, int64_t N)
{
    for_each_target(target, M, [&](int64_t i, int64_t c) {
        if (c >= 0 && c < N)
            grad[i * N + c] = kb_from_float<T>(-dloss[i]);
        else
            grad[i * N] = kb_from_float<T>(NAN); /* poisons the row's sum */
    });
}

/* ---- host ----------------------------------------------------------------- */
template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    T *logp = (T *)t->workspace;
    KB_TRY(softmax_fwd<LogSoftmaxFwd>((const T *)t->x, logp, M, N, s, e));
    nll_gather<T><<<grid_for(kb_cdiv(M, 128)), 128, 0, s>>>(logp, t->target, (T *)t->out, M, N);
    KB_LAUNCHED(e);
    return KB_OK;
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N, total = M * N;
    const T *x = (const T *)t->x;
    float *logp = (float *)t->workspace;
    T *grad = (T *)((char *)t->workspace + align256((size_t)total * sizeof(float)));

    const bool vec = kb_aligned16(x) && kb_aligned16(logp);
    const int64_t threads = vec ? kb_cdiv(kb_cdiv(total, kb_vec<T>::n), 2) : total;
    logp_recompute<T><<<grid_for(kb_cdiv(threads, EW_THREADS)), EW_THREADS, 0, s>>>(
        x, t->lse, logp, total, RowOf{N, 1.0 / (double)N}, vec);
    KB_LAUNCHED(e);
    KB_CUDA(e, cudaMemsetAsync(grad, 0, (size_t)total * sizeof(T), s));
    nll_scatter<T><<<grid_for(kb_cdiv(M, 128)), 128, 0, s>>>(t->dloss, t->target, grad, M, N);
    KB_LAUNCHED(e);
    return softmax_bwd<LogSoftmaxBwd>((const T *)grad, (const float *)logp, (T *)t->out, M, N, s, e);
}

static kb_status check(const kb_problem *p, kb_err *e)
{
    return eager_check(p, "cross_entropy", e);
}

/* Forward: logp in the dtype. Backward: logp in fp32, then the gradient of
 * logp in the dtype. */
static size_t workspace(const kb_problem *p, bool bwd)
{
    const size_t mn = (size_t)p->M * (size_t)p->N;
    return bwd ? align256(mn * sizeof(float)) + mn * kb_dtype_size(p->dtype)
               : mn * kb_dtype_size(p->dtype);
}

} /* namespace */

KB_EAGER_IMPLS(cross_entropy, KB_CE_FWD, KB_CE_BWD, 2, 3)
