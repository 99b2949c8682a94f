/* GeGLU / SwiGLU forward and backward, eager backend: the kernels PyTorch
 * eager (2.x, CUDA) launches for F.gelu(gate, approximate="tanh") * up and
 * F.silu(gate) * up, and for their backward as autograd runs it. The other
 * backends' speedups are measured against these, so they copy PyTorch's
 * decomposition and launch strategy, not anything faster.
 *
 * Kernels (aten/src/ATen/native/cuda: GeluCUDAKernelImpl / silu_kernel,
 * mul_kernel, GeluBackwardCUDAKernelImpl / silu_backward_kernel, all through
 * gpu_kernel's elementwise launcher):
 *   forward, 2 kernels:   a = act(gate);  out = a * up
 *   backward, 4 kernels:  a = act(gate)            (recompute: the benchmark's
 *                                                    backward gets gate, up, dy
 *                                                    and nothing saved; autograd
 *                                                    would read the a saved by
 *                                                    the forward instead)
 *                         dup = dy * a             MulBackward0: grad * other
 *                         da = dy * up             MulBackward0: grad * self
 *                         dgate = act_backward(da, gate)   GeluBackward0 /
 *                                                    SiluBackward0
 *   Each intermediate (a, da) is a dtype tensor making an HBM round trip
 *   (the workspace), and is rounded to the dtype as PyTorch's are.
 * Launch: the eager backends' shared elementwise kernel (kernels/common/
 * kb_eager.cuh: PyTorch's unrolled elementwise shape, 128 threads, tiles of
 * 128 x 8 elements, all loads of a tile before its stores); operands at a
 * row stride other than H (the non-contiguous gate/up slices of an
 * interleaved [T, 2H] tensor) are read through the row/column of each flat
 * index, as PyTorch's OffsetCalculator does.
 * Math as aten's (glu_math.cuh, torch_*): fp32 opmath, tanhf, expf.
 * Limits: any M, H >= 1, 64-bit indices. */
#include "glu_math.cuh"
#include "kb_eager.cuh"

namespace {

/* Element i of a [M, H] operand of row stride ld (ld == H: contiguous). */
template <typename T> struct strided {
    const T *p;
    int64_t ld, H;
    RowOf row;
    __device__ __forceinline__ float operator()(int64_t i) const
    {
        if (ld == H) return kb_to_float(p[i]);
        const int64_t m = row(i);
        return kb_to_float(p[m * ld + (i - m * H)]);
    }
};

template <typename T> strided<T> operand(const void *p, int64_t ld, int64_t H)
{
    return {(const T *)p, ld, H, {H, 1.0 / (double)H}};
}

/* a = act(gate) */
template <typename T, int ACT> struct act_f {
    strided<T> g;
    __device__ __forceinline__ float operator()(int64_t i) const { return glu_torch_act<ACT>(g(i)); }
};
/* a * b */
template <typename T> struct mul_f {
    strided<T> a, b;
    __device__ __forceinline__ float operator()(int64_t i) const { return a(i) * b(i); }
};
/* act_backward(grad, self): grad * act'(self). */
template <typename T, int ACT> struct act_bwd_f {
    strided<T> grad, x;
    __device__ __forceinline__ float operator()(int64_t i) const
    {
        return grad(i) * glu_torch_dact<ACT>(x(i));
    }
};

/* One elementwise kernel into a contiguous [M, H] output. */
template <typename T, typename F>
kb_status launch(void *out, int64_t M, int64_t H, const F &f, cudaStream_t s, kb_err *e)
{
    return ew<T>((T *)out, M * H, f, s, e);
}

} /* namespace */

extern "C" kb_status kb_glu_eager_launch(kb_dtype dt, kb_glu_act act, const void *gate,
                                         const void *up, int64_t ld_in, void *a, void *out,
                                         int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "eager glu forward";
    kb_status st = KB_OK;
    KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, {
        const act_f<T, A> fa = {operand<T>(gate, ld_in, H)};
        st = launch<T>(a, M, H, fa, s, e);
        const mul_f<T> fm = {operand<T>(a, H, H), operand<T>(up, ld_in, H)};
        if (st == KB_OK) st = launch<T>(out, M, H, fm, s, e);
    });
    return st;
}

/* The backward's 4 kernels; a and da are [M, H] scratch. */
static kb_status eager_bwd(kb_dtype dt, kb_glu_act act, const void *gate, const void *up,
                           const void *dy, int64_t ld_in, void *a, void *da, void *dgate,
                           void *dup, int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "eager glu backward";
    kb_status st = KB_OK;
    KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, {
        const strided<T> g = operand<T>(gate, ld_in, H), d = operand<T>(dy, ld_in, H);
        const act_f<T, A> fa = {g};
        st = launch<T>(a, M, H, fa, s, e);
        const mul_f<T> fdup = {d, operand<T>(a, H, H)}, fda = {d, operand<T>(up, ld_in, H)};
        if (st == KB_OK) st = launch<T>(dup, M, H, fdup, s, e);
        if (st == KB_OK) st = launch<T>(da, M, H, fda, s, e);
        const act_bwd_f<T, A> fdg = {operand<T>(da, H, H), g};
        if (st == KB_OK) st = launch<T>(dgate, M, H, fdg, s, e);
    });
    return st;
}

/* ---- the kb_impls --------------------------------------------------------- */
static size_t plane_bytes(const kb_problem *p)
{
    return (size_t)p->M * (size_t)p->N * kb_dtype_size(p->dtype);
}

/* Workspace: the HBM intermediates, a (forward), a and da (backward). */
template <int BWD>
static kb_status eager_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                             size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    KB_TRY(glu_check(BWD ? "eager glu backward" : "eager glu forward", p->dtype,
                     KB_ACT_GELU_TANH, p->N, p->M, p->N, e));
    *workspace_bytes = (BWD ? 2 : 1) * plane_bytes(p);
    return KB_OK;
}

template <int ACT>
static kb_status eager_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                               cudaStream_t s, kb_err *e)
{
    return kb_glu_eager_launch(p->dtype, (kb_glu_act)ACT, t->x, t->up, p->N, t->workspace,
                               t->out, p->M, p->N, s, e);
}

template <int ACT>
static kb_status eager_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                               cudaStream_t s, kb_err *e)
{
    const size_t plane = plane_bytes(p);
    return eager_bwd(p->dtype, (kb_glu_act)ACT, t->x, t->up, t->dy, p->N, t->workspace,
                     (char *)t->workspace + plane, t->out, (char *)t->out + plane, p->M, p->N,
                     s, e);
}

#define EAGER_IMPL(sym, id, setup, run, kernels)                              \
    extern "C" const kb_impl sym = {"eager", id, setup, run, NULL, NULL, kernels};
EAGER_IMPL(kb_geglu_eager_fwd, KB_GEGLU_FWD, eager_setup<0>, eager_fwd_run<KB_ACT_GELU_TANH>,
           kb_kernels_fixed<2>)
EAGER_IMPL(kb_geglu_eager_bwd, KB_GEGLU_BWD, eager_setup<1>, eager_bwd_run<KB_ACT_GELU_TANH>,
           kb_kernels_fixed<4>)
EAGER_IMPL(kb_swiglu_eager_fwd, KB_SWIGLU_FWD, eager_setup<0>, eager_fwd_run<KB_ACT_SILU>,
           kb_kernels_fixed<2>)
EAGER_IMPL(kb_swiglu_eager_bwd, KB_SWIGLU_BWD, eager_setup<1>, eager_bwd_run<KB_ACT_SILU>,
           kb_kernels_fixed<4>)
