/* RMSNorm, eager backend: the fp32 chain PyTorch eager runs for
 *   x32 = x.float(); y = (x32 * rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * w).to(dtype)
 * and its autograd backward, one kernel per op, every intermediate in HBM
 * (the workspace). Buffers are reused the way PyTorch's caching allocator
 * would once a tensor dies, so the workspace holds 2 (fwd) / 4 (bwd) [M,N]
 * fp32 tensors.
 *
 * Forward (8 kernels):
 *   ew Load<T>   x32 = cast(x)                 [M,N]  to_copy (elementwise)
 *   ew Square    sq = x32 * x32                [M,N]  pow_tensor_scalar(2)
 *   row_reduce   ms = sum_j sq / N             [M]    reduce_kernel<MeanOps>
 *   ew AddC      v = ms + eps                  [M]    add (scalar)
 *   ew Rsqrt     r = rsqrt(v)                  [M]    rsqrt
 *   ew MulRow    xh = x32 * r[row]             [M,N]  mul (broadcast)
 *   ew MulCol    y32 = xh * w[col]             [M,N]  mul (broadcast)
 *   ew Load<f32> y = cast(y32)                 [M,N]  to_copy
 * Backward (autograd nodes in reverse; 2 recompute kernels first, since only
 * rstd [M] is saved by the harness while autograd would have kept x32, xh):
 *   ew Load<T>   x32 = cast(x); ew MulRow xh = x32 * rstd       (recompute)
 *   ew Load<T>   g32 = cast(dy)                                 ToCopyBackward
 *   ew Mul       t = g32 * xh;  colsum t -> [chunks,N] partials; colsum
 *                partials -> dw [N]                  MulBackward0 (w), sum_to_size
 *   ew MulCol    gxh = g32 * w[col]                             MulBackward0 (xh)
 *   ew Mul       t = gxh * x32; row_reduce -> gr [M] MulBackward0 (r), sum_to_size
 *   ew MulRow    ga = gxh * r[row]                              MulBackward0 (x32)
 *   ew RsqrtBwd  gv = -0.5 * gr * r^3            [M]            RsqrtBackward0
 *                (AddBackward0 passes the gradient through: no kernel)
 *   ew MeanBwd   gsq = gv[row] / N               [M,N]          MeanBackward1
 *   ew PowBwd    gb = gsq * (2 * x32)            [M,N]          PowBackward0
 *   ew Add       gx = ga + gb                    [M,N]          gradient accumulation
 *   ew Load<f32> dx = cast(gx)                                  ToCopyBackward
 *
 * ew: PyTorch's unrolled elementwise kernel shape: 128 threads, tiles of
 * 128 * 8 elements, all loads of a tile issued before its stores (memory-level
 * parallelism without assuming 16-byte alignment), grid-strided tiles, int64
 * indices. Broadcasts find row = i / N through a double reciprocal corrected
 * by one step (exact for i < 2^53): no 64-bit division per element.
 * row_reduce: one block per row, block sum through shared memory.
 * colsum: [rows, N] -> [chunks, N]; block = 32 columns x 8 row lanes, each
 * lane strides over the chunk's rows, then an ordered sum of the 8 lanes:
 * deterministic, parallel over rows (M up to 1.15M) and columns.
 * Limits: any M, N >= 1; int64 offsets; rows grid-strided past the grid
 * cap, colsum's grid cdiv(N, 32) x chunks. The workspace holds the chain's
 * fp32 [M, N] intermediates (up to four, as PyTorch's autograd keeps
 * them), so memory, not the kernels, bounds M * N. The chain itself is
 * kernels/common/rms_eager.cuh, which add_rmsnorm's eager backend runs too. */
#include "rms_eager.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    return rms_eager_fwd<T>(p, t, (const T *)t->x, (T *)t->out, s, e);
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    return rms_eager_bwd<T>(p, t, (T *)t->out, s, e);
}

static kb_status check(const kb_problem *p, kb_err *e) { return eager_norm_check(p, "rmsnorm", e); }

static size_t workspace(const kb_problem *p, bool bwd) { return rms_eager_layout(p, bwd).total; }

} /* namespace */

KB_EAGER_IMPLS(rmsnorm, KB_RMSNORM_FWD, KB_RMSNORM_BWD, 8, 15)
