/* Rotary position embedding, forward and backward, fused backend: Liger-
 * Kernel's _triton_rope (liger_kernel/ops/rope.py) as hand-written CUDA C.
 * One kernel per call.
 *
 * Strategy (Liger's): one program (CTA) per position row m, grid = M (grid-
 * strided past 2^31 - 1), handling every q and k head of that position: the
 * (N + K) * D/2 rotation pairs of the row are split among the CTA's threads
 * as (head, column) items, column fastest. cos and sin of the position (both
 * halves, D values each) are loaded by a thread once for its column and
 * reused across the heads it visits (the item stride, blockDim, is a
 * multiple of the columns per head, so a thread's column never changes for
 * D = 128); each x element is read once and each output written once.
 * A thread's access is W elements of the low half (d) and the matching W of
 * the high half (d + D/2): 16-byte vectors when every pointer is 16-byte
 * aligned and D/2 * sizeof(T) is a multiple of 16 (what Triton's
 * divisibility specialisation vectorises), scalars otherwise. Liger's
 * launch: 4 warps (num_warps left at Triton's default), so 128 threads.
 * Math in fp32 (rope_math.cuh); the backward is the same kernel with the
 * transposed rotation (Liger's BACKWARD_PASS: sin negated). Liger rotates q
 * and k in place; here the result goes to out (same layout as x).
 * Layout: q [N, M, D] then k [K, M, D] (rope.h), so a position's heads are
 * M*D elements apart; the fused design reads them from one CTA all the same.
 * Limits: any M, N, K >= 1, 64-bit offsets; D = KB_ROPE_HEAD_DIM, even. */
#include <stdio.h>

#include "fused_rows.cuh"
#include "rope_math.cuh"

namespace {

constexpr int kThreads = 128; /* Liger: num_warps = 4 */

template <typename T, int D, int W, bool BWD>
__global__ void __launch_bounds__(kThreads)
rope_fused_kernel(const T *__restrict__ x, const T *__restrict__ cs, T *__restrict__ out,
                  int64_t M, int64_t heads)
{
    constexpr int H = D / 2, P = H / W; /* P accesses cover a half of one head */
    static_assert(H % W == 0, "a vector never straddles the two halves");
    const int64_t items = heads * P;
    for (int64_t m = blockIdx.x; m < M; m += gridDim.x) {
        const T *c = cs + m * D, *s = cs + M * D + m * D;
        float clo[W], chi[W], slo[W], shi[W];
        int cur = -1; /* column whose cos/sin are held */
        for (int64_t j = threadIdx.x; j < items; j += blockDim.x) {
            const int64_t h = j / P;
            const int col = (int)(j - h * P) * W;
            if (col != cur) {
                fused_ld<T, W, false>(c + col, clo);
                fused_ld<T, W, false>(c + col + H, chi);
                fused_ld<T, W, false>(s + col, slo);
                fused_ld<T, W, false>(s + col + H, shi);
                cur = col;
            }
            const int64_t at = (h * M + m) * D + col;
            float lo[W], hi[W], olo[W], ohi[W];
            fused_ld<T, W, true>(x + at, lo);
            fused_ld<T, W, true>(x + at + H, hi);
#pragma unroll
            for (int i = 0; i < W; i++)
                rope_pair<BWD>(lo[i], hi[i], clo[i], chi[i], slo[i], shi[i], olo[i], ohi[i]);
            fused_st<T, W, false>(out + at, olo);
            fused_st<T, W, false>(out + at + H, ohi);
        }
    }
}

template <bool BWD>
kb_status rope_fused_launch(const kb_problem *p, const void *src, const void *cs, void *out,
                            cudaStream_t s, kb_err *e)
{
    const char *who = BWD ? "fused rope_backward" : "fused rope_forward";
    KB_TRY(kb_rope_check(p, who, e));
    if (!src || !cs || !out)
        return KB_FAIL(e, KB_ERR_ARG, "%s: missing %s, cs or out", who, BWD ? "dy" : "x");
    constexpr int D = KB_ROPE_HEAD_DIM;
    const bool aligned = kb_aligned16(src) && kb_aligned16(cs) && kb_aligned16(out);
    const int64_t heads = kb_rope_heads(p);
    KB_DISPATCH(p->dtype, T, {
        constexpr int V = kb_vec<T>::n;
        const T *a = (const T *)src, *c = (const T *)cs;
        T *o = (T *)out;
        if constexpr ((D / 2) % V == 0) {
            if (aligned)
                rope_fused_kernel<T, D, V, BWD>
                    <<<fused_grid(p->M), kThreads, 0, s>>>(a, c, o, p->M, heads);
            else
                rope_fused_kernel<T, D, 1, BWD>
                    <<<fused_grid(p->M), kThreads, 0, s>>>(a, c, o, p->M, heads);
        } else {
            (void)aligned;
            rope_fused_kernel<T, D, 1, BWD>
                <<<fused_grid(p->M), kThreads, 0, s>>>(a, c, o, p->M, heads);
        }
    });
    const cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess) {
        char shape[72];
        kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
        return KB_FAIL(e, KB_ERR_CUDA, "%s %s %s: launch: %s", who, kb_dtype_name(p->dtype),
                       shape, cudaGetErrorString(rc));
    }
    return KB_OK;
}

/* ---- the kb_impls --------------------------------------------------------- */
template <bool BWD>
kb_status rope_fused_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                           size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    *workspace_bytes = 0;
    return kb_rope_check(p, BWD ? "fused rope_backward" : "fused rope_forward", e);
}

kb_status rope_fused_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                             cudaStream_t s, kb_err *e)
{
    return rope_fused_launch<false>(p, t->x, t->cs, t->out, s, e);
}

kb_status rope_fused_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                             cudaStream_t s, kb_err *e)
{
    return rope_fused_launch<true>(p, t->dy, t->cs, t->out, s, e);
}

void rope_fused_describe(const void *state, char *buf, size_t len)
{
    snprintf(buf, len, "threads=%d", kThreads);
}

} /* namespace */

extern "C" const kb_impl kb_rope_fused_fwd = {"fused",           KB_ROPE_FWD,
                                              rope_fused_setup<false>, rope_fused_fwd_run,
                                              rope_fused_describe, NULL,
                                              kb_kernels_fixed<1>};
extern "C" const kb_impl kb_rope_fused_bwd = {"fused",           KB_ROPE_BWD,
                                              rope_fused_setup<true>, rope_fused_bwd_run,
                                              rope_fused_describe, NULL,
                                              kb_kernels_fixed<1>};
