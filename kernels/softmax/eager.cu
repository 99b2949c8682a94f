/* softmax, eager backend: what PyTorch eager (2.x, CUDA) launches for
 * torch.softmax(x, -1) and its backward, with the same dispatch on N as
 * host_softmax / host_softmax_backward in aten/src/ATen/native/cuda/SoftMax.cu.
 * The speedups of the other backends are measured against these kernels, so
 * they copy PyTorch's strategy, not anything faster. V = 16 B / sizeof(T)
 * (PyTorch's ILP): 8 for bf16/fp16, 4 for fp32. fp32 math, output rounded to
 * the dtype once.
 *
 * Forward:
 *   N <= 2048          fwd_warp  softmax_warp_forward (PersistentSoftmax.cuh):
 *                      one warp per row, row in registers (lane l holds
 *                      elements l, l+32, ...; ITERS = next_pow2(N)/32 <= 64,
 *                      padded with -inf), scalar loads, warp-shuffle
 *                      reductions, 128-thread blocks. PyTorch packs 2 rows per
 *                      warp for N <= 128; we keep 1.
 *   N > 2048: one block of 1024 threads per row (SoftMaxForward_getBlockSize),
 *   reductions through warp shuffles + 32 floats of shared memory:
 *     ceil(N/1024) < 10  fwd_reg   cunn_SoftMaxForwardReg: the row in
 *                      registers, REG = ceil(N/1024) scalar strided loads per
 *                      thread; read once, written once.
 *     row fits 48 KB   fwd_smem  cunn_SoftMaxForwardSmem: 128-bit loads copy
 *                      the row into shared memory during the max pass; sum
 *                      and write passes read it from there. Needs N % V == 0
 *                      and 16-byte aligned x, y. 48 KB is sharedMemPerBlock,
 *                      what PyTorch tests; it does not opt in to more.
 *     otherwise        fwd_gmem  cunn_SoftMaxForward: three passes over the
 *                      row in global memory (max, sum of exp, write), which
 *                      L2 partly absorbs; 128-bit loads/stores for the
 *                      aligned interior of each row, scalar for its < V
 *                      leading/trailing elements (ilpReduce and
 *                      WriteFpropResultsVectorized's "shift").
 * Backward (dx = y * (dy - sum_j dy_j*y_j)):
 *   N <= 1024          bwd_warp  softmax_warp_backward: one warp per row.
 *   N > 1024: one block per row, SoftMax_getBlockSize threads:
 *     row fits 48 KB   bwd_smem  cunn_SoftMaxBackwardSmem: dy copied into
 *                      shared memory during the dot pass (y is read from
 *                      global memory in both passes); same conditions as
 *                      fwd_smem.
 *     otherwise        bwd_gmem  cunn_SoftMaxBackward: dot pass and write pass
 *                      over global memory, 128-bit interior as above.
 *   PyTorch first runs tmp = dy*y as a separate elementwise kernel, then this
 *   one on (tmp, y): 6 M*N element transfers where ours moves 3 (+ L2
 *   re-reads). SPEC counts softmax as one kernel, so the product is formed
 *   in place; a bf16 tmp would also break SPEC's element-wise tolerance for
 *   tiny N, where dx = tmp - y*sum(tmp) cancels.
 * Rows are grid-strided (any M >= 1), offsets int64; any N >= 1. Base
 * pointers that are not 16-byte aligned turn every 128-bit path scalar.
 * The kernels (softmax_{fwd,bwd}_*) are kernels/common/softmax_eager.cuh's,
 * shared with eager cross entropy's log_softmax, with the epilogues
 * SoftmaxFwd / SoftmaxBwd (g = dy, b = y).                                 */
#include "softmax_eager.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    return softmax_fwd<SoftmaxFwd>((const T *)t->x, (T *)t->out, p->M, p->N, s, e);
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    return softmax_bwd<SoftmaxBwd>((const T *)t->dy, (const T *)t->y, (T *)t->out, p->M, p->N,
                                   s, e);
}

static kb_status check(const kb_problem *p, kb_err *e) { return eager_check(p, "softmax", e); }
static size_t workspace(const kb_problem *, bool) { return 0; }

} /* namespace */

KB_EAGER_IMPLS(softmax, KB_SOFTMAX_FWD, KB_SOFTMAX_BWD, 1, 1)
