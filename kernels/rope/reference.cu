/* rope's GPU reference: the cos/sin input table and the gold outputs of a
 * case (layout and formulas: rope.h).
 *
 * Strategy: obviously-correct grid-strided kernels, one thread per element,
 * double math, no shared memory.
 *   inputs: cs[m*D + d] = cos, cs[M*D + m*D + d] = sin of HF's angle
 *     m * base^(-2 (d mod D/2) / D) (kb_rope_ref_cos_sin's formula), in
 *     double, rounded to the dtype: deterministic (no random state), so
 *     every run and GPU gets the same table.
 *   gold: from the stored dtype inputs (x for the forward, dy for the
 *     backward, and cs), each element's two products summed in double,
 *     rounded to fp32 and then to the dtype; gold_scale (fp32) is
 *     |a*cos| + |b*sin| of the element's two terms (the size of what is
 *     added, so cancellation near zero is judged against it).
 * Limits: any M, N, K >= 1, 64-bit indices. */
#include <math.h>

#include "kb_cuda.cuh"
#include "ref_rows.cuh" /* ld, st: values at the reference's precision */
#include "rope.h"

namespace {

constexpr int kD = KB_ROPE_HEAD_DIM;
constexpr unsigned kThreads = 256;
constexpr int64_t kMaxGrid = 65535 * 16;

unsigned grid_of(int64_t n)
{
    const int64_t b = kb_cdiv(n, kThreads);
    return (unsigned)(b < kMaxGrid ? b : kMaxGrid);
}

/* One rounding, double to the dtype (through float would round twice for
 * bf16 / fp16). */
template <typename T> __device__ __forceinline__ T round_double(double v);
template <> __device__ __forceinline__ float round_double<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ kb_bf16 round_double<kb_bf16>(double v)
{
    return __double2bfloat16(v);
}
template <> __device__ __forceinline__ kb_fp16 round_double<kb_fp16>(double v)
{
    return __double2half(v);
}

template <typename T> __global__ void rope_ref_table(T *cs, int64_t M, double base)
{
    const int64_t n = M * kD;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t m = i / kD, d = i % kD, f = d % (kD / 2);
        const double a = (double)m * (1.0 / pow(base, (double)(2 * f) / (double)kD));
        cs[i] = round_double<T>(cos(a));
        cs[n + i] = round_double<T>(sin(a));
    }
}

template <typename T, bool BWD>
__global__ void rope_ref_gold(const T *src, const T *cs, T *gold, float *scale, int64_t M,
                              int64_t heads)
{
    constexpr int64_t H = kD / 2;
    const int64_t n = heads * M * kD;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / kD, d = i % kD, m = row % M;
        const T *a = src + row * kD;
        const T *c = cs + m * kD, *s = cs + M * kD + m * kD;
        double t0, t1; /* the element's two terms */
        if (d < H) {
            t0 = ld(a[d]) * ld(c[d]);
            t1 = BWD ? ld(a[d + H]) * ld(s[d + H]) : -ld(a[d + H]) * ld(s[d]);
        } else {
            t0 = ld(a[d]) * ld(c[d]);
            t1 = BWD ? -ld(a[d - H]) * ld(s[d - H]) : ld(a[d - H]) * ld(s[d]);
        }
        gold[i] = st<T>(t0 + t1);
        scale[i] = (float)(fabs(t0) + fabs(t1));
    }
}

} /* namespace */

extern "C" kb_status kb_rope_ref_gpu_inputs(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    static const char who[] = "gpu reference rope inputs";
    const kb_problem *p = &b->p;
    KB_TRY(kb_rope_check(p, who, e));
    if (!b->t.cs) return KB_FAIL(e, KB_ERR_ARG, "%s: no cs tensor", who);
    KB_DISPATCH(p->dtype, T, {
        rope_ref_table<T><<<grid_of(p->M * kD), kThreads, 0, s>>>((T *)b->t.cs, p->M,
                                                                       KB_ROPE_BASE);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_rope_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    static const char who[] = "gpu reference rope";
    const kb_problem *p = &b->p;
    KB_TRY(kb_rope_check(p, who, e));
    const bool bwd = p->bench == KB_ROPE_BWD;
    const void *src = bwd ? b->t.dy : b->t.x;
    if (!src || !b->t.cs || !b->gold || !b->gold_scale)
        return KB_FAIL(e, KB_ERR_ARG, "%s: missing %s, cs, gold or gold_scale", who,
                       bwd ? "dy" : "x");
    const int64_t heads = kb_rope_heads(p);
    const unsigned g = grid_of(heads * p->M * kD);
    KB_DISPATCH(p->dtype, T, {
        if (bwd)
            rope_ref_gold<T, true><<<g, kThreads, 0, s>>>((const T *)src, (const T *)b->t.cs,
                                                          (T *)b->gold, b->gold_scale, p->M, heads);
        else
            rope_ref_gold<T, false><<<g, kThreads, 0, s>>>((const T *)src, (const T *)b->t.cs,
                                                           (T *)b->gold, b->gold_scale, p->M,
                                                           heads);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}
