/* GeGLU's and SwiGLU's GPU reference: the gold out = act(x) * up and its
 * backward [dgate; dup] (glu_ref.h), elementwise, in double, each result
 * rounded to fp32 then to the dtype (ref_rows.cuh's ld and st). */
#include "glu_ref.h"
#include "ref_rows.cuh"

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

extern "C" kb_status kb_glu_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference");
    NEED(b->gold, who);
    const int backward = kb_bench_info_get(p->bench)->backward;
    NEED(t->x, who);
    NEED(t->up, who);
    if (backward) NEED(t->dy, who);
    const int64_t MN = M * N;
    const unsigned grid = (unsigned)(kb_cdiv(MN, 256) < 65536 ? kb_cdiv(MN, 256) : 65536);
    KB_DISPATCH(p->dtype, T, {
        k_glu<T><<<grid, 256, 0, s>>>((const T *)t->x, (const T *)t->up,
                                      backward ? (const T *)t->dy : NULL,
                                      kb_glu_ref_act(p->bench) == KB_ACT_GELU_TANH, MN,
                                      (T *)b->gold);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}
