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
 * Launch (launch_vectorized_kernel): 128 threads per block, 4 elements per
 * thread (thread_work_size), one block per 512 elements; 4-element vector
 * loads/stores when every operand is contiguous and aligned to the vector,
 * else element-wise with row/column index arithmetic (the
 * unrolled_elementwise_kernel + OffsetCalculator path PyTorch takes for the
 * non-contiguous gate/up slices of an interleaved [T, 2H] tensor).
 * Math as aten's (glu_math.cuh, torch_*): fp32 opmath, tanhf, expf.
 * Limits: any M, H >= 1, 64-bit indices. */
#include "glu_math.cuh"

namespace {

#define EW_THREADS 128
#define EW_WORK 4 /* elements per thread */
#define EW_MAX_GRID 2147483647LL

template <int ACT> struct act_f {
    __device__ __forceinline__ float operator()(float g, float) const { return glu_torch_act<ACT>(g); }
};
struct mul_f {
    __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};
/* act_backward(grad, self): grad * act'(self). */
template <int ACT> struct act_bwd_f {
    __device__ __forceinline__ float operator()(float grad, float x) const
    {
        return grad * glu_torch_dact<ACT>(x);
    }
};

template <typename T> struct alignas(EW_WORK * sizeof(T)) pack4 {
    T v[EW_WORK];
};

/* out = f(a, b) over n contiguous elements (b may be NULL for a unary f). */
template <typename T, typename F>
__global__ void __launch_bounds__(EW_THREADS)
ew_vec(F f, const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ o, int64_t n)
{
    const int64_t stride = (int64_t)gridDim.x * EW_THREADS * EW_WORK;
    for (int64_t i = ((int64_t)blockIdx.x * EW_THREADS + threadIdx.x) * EW_WORK; i < n;
         i += stride) {
        if (i + EW_WORK <= n) {
            const pack4<T> pa = *reinterpret_cast<const pack4<T> *>(a + i);
            pack4<T> pb = {}, po;
            if (b) pb = *reinterpret_cast<const pack4<T> *>(b + i);
#pragma unroll
            for (int k = 0; k < EW_WORK; k++)
                po.v[k] = kb_from_float<T>(f(kb_to_float(pa.v[k]), b ? kb_to_float(pb.v[k]) : 0.f));
            *reinterpret_cast<pack4<T> *>(o + i) = po;
        } else {
            for (int64_t j = i; j < n; j++)
                o[j] = kb_from_float<T>(f(kb_to_float(a[j]), b ? kb_to_float(b[j]) : 0.f));
        }
    }
}

/* Strided operands: element (m, j) of x at x + m * ld_x + j. */
template <typename T, typename F>
__global__ void __launch_bounds__(EW_THREADS)
ew_strided(F f, const T *__restrict__ a, int64_t lda, const T *__restrict__ b, int64_t ldb,
           T *__restrict__ o, int64_t ldo, int64_t M, int64_t H)
{
    const int64_t n = M * H, stride = (int64_t)gridDim.x * EW_THREADS * EW_WORK;
    for (int64_t base = (int64_t)blockIdx.x * EW_THREADS * EW_WORK; base < n; base += stride) {
#pragma unroll
        for (int k = 0; k < EW_WORK; k++) {
            const int64_t i = base + k * EW_THREADS + threadIdx.x;
            if (i >= n) break;
            const int64_t m = i / H, j = i - m * H;
            o[m * ldo + j] = kb_from_float<T>(
                f(kb_to_float(a[m * lda + j]), b ? kb_to_float(b[m * ldb + j]) : 0.f));
        }
    }
}

template <typename T> static bool al(const void *p)
{
    return !p || ((uintptr_t)p % (EW_WORK * sizeof(T))) == 0;
}

/* One elementwise kernel: out = f(a, b), [M, H] with row strides. */
template <typename T, typename F>
static kb_status ew(const char *who, F f, const void *a, int64_t lda, const void *b, int64_t ldb,
                    void *o, int64_t ldo, int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    const int64_t n = M * H;
    int64_t grid = kb_cdiv(n, EW_THREADS * EW_WORK);
    if (grid > EW_MAX_GRID) grid = EW_MAX_GRID;
    const bool dense = lda == H && (!b || ldb == H) && ldo == H;
    if (dense && al<T>(a) && al<T>(b) && al<T>(o))
        ew_vec<T, F><<<(unsigned)grid, EW_THREADS, 0, s>>>(f, (const T *)a, (const T *)b, (T *)o, n);
    else
        ew_strided<T, F><<<(unsigned)grid, EW_THREADS, 0, s>>>(f, (const T *)a, lda, (const T *)b,
                                                               ldb, (T *)o, ldo, M, H);
    return glu_launched(who, M, H, e);
}

} /* namespace */

extern "C" kb_status kb_glu_eager_launch(kb_dtype dt, kb_glu_act act, const void *gate,
                                         const void *up, int64_t ld_in, void *a, void *out,
                                         int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "eager glu forward";
    KB_TRY(glu_check(who, dt, act, ld_in, M, H, e));
    kb_status st = KB_OK;
    KB_DISPATCH(dt, T, KB_ACT_DISPATCH(act, A, {
        st = ew<T>(who, act_f<A>(), gate, ld_in, NULL, 0, a, H, M, H, s, e);
        if (st == KB_OK) st = ew<T>(who, mul_f(), a, H, up, ld_in, out, H, M, H, s, e);
    }));
    return st;
}
/* The backward's 4 kernels; a and da are [M, H] scratch. */
static kb_status eager_bwd(kb_dtype dt, kb_glu_act act, const void *gate, const void *up,
                           const void *dy, int64_t ld_in, void *a, void *da, void *dgate,
                           void *dup, int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "eager glu backward";
    KB_TRY(glu_check(who, dt, act, ld_in, M, H, e));
    kb_status st = KB_OK;
    KB_DISPATCH(dt, T, KB_ACT_DISPATCH(act, A, {
        st = ew<T>(who, act_f<A>(), gate, ld_in, NULL, 0, a, H, M, H, s, e);
        if (st == KB_OK) st = ew<T>(who, mul_f(), dy, ld_in, a, H, dup, H, M, H, s, e);
        if (st == KB_OK) st = ew<T>(who, mul_f(), dy, ld_in, up, ld_in, da, H, M, H, s, e);
        if (st == KB_OK) st = ew<T>(who, act_bwd_f<A>(), da, H, gate, ld_in, dgate, H, M, H, s, e);
    }));
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

extern "C" const kb_impl kb_geglu_eager_fwd = {"eager", KB_GEGLU_FWD, eager_setup<0>,
                                               eager_fwd_run<KB_ACT_GELU_TANH>, NULL, NULL,
                                               kb_kernels_fixed<2>};
extern "C" const kb_impl kb_geglu_eager_bwd = {"eager", KB_GEGLU_BWD, eager_setup<1>,
                                               eager_bwd_run<KB_ACT_GELU_TANH>, NULL, NULL,
                                               kb_kernels_fixed<4>};
extern "C" const kb_impl kb_swiglu_eager_fwd = {"eager", KB_SWIGLU_FWD, eager_setup<0>,
                                                eager_fwd_run<KB_ACT_SILU>, NULL, NULL,
                                                kb_kernels_fixed<2>};
extern "C" const kb_impl kb_swiglu_eager_bwd = {"eager", KB_SWIGLU_BWD, eager_setup<1>,
                                                eager_bwd_run<KB_ACT_SILU>, NULL, NULL,
                                                kb_kernels_fixed<4>};
