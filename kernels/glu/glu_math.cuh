/* GLU activations on the device, fp32 (the kernels of kernels/glu/).
 *
 * Two formulations of the same function:
 *   torch_*  PyTorch eager's and Liger's: 0.5 x (1 + tanh(u)) with tanhf, and
 *            x / (1 + expf(-x)); the backward as aten's GeluCUDAKernelImpl /
 *            silu_backward write it. The eager and fused backends use these.
 *   sig_*    the speed-of-light form: 1 + tanh(u) = 2 sigmoid(2u), so
 *            gelu_tanh(x) = x sigmoid(2u): one exp and one reciprocal, and no
 *            cancellation in 1 + tanh(u) for negative x. FAST: __expf (ex2)
 *            and an approximate reciprocal (16-bit outputs: far below their
 *            rounding); else expf and an IEEE division (fp32 outputs).
 * Saturation (the `wide` input kind, 20 randn): exp(-z) overflows to inf for
 * z < -88, giving sigmoid 0 and x * 0 = 0, never inf/inf; x^3 overflowing
 * (|x| > 7e12) gives u = +-inf and the same limits. The derivatives' polynomial
 * 1 + 3c x^2 is taken at x^2 <= 1e4: beyond |x| = 100, sigmoid(2u)(1 - sigmoid(2u))
 * is exactly 0 in fp32, and an unclamped x^2 = inf would make 0 * inf = NaN. */
#ifndef KB_GLU_MATH_CUH
#define KB_GLU_MATH_CUH

#include "glu.h"
#include "kb_cuda.cuh"

#define KB_GELU_BETA 0.7978845608028654f /* sqrt(2/pi) */
#define KB_GELU_KAPPA 0.044715f

/* ---- PyTorch's formulation (eager, fused) --------------------------------- */
template <int ACT> __device__ __forceinline__ float glu_torch_act(float x)
{
    if constexpr (ACT == KB_ACT_GELU_TANH) {
        const float inner = KB_GELU_BETA * (x + KB_GELU_KAPPA * x * x * x);
        return 0.5f * x * (1.f + tanhf(inner));
    } else {
        return x / (1.f + expf(-x));
    }
}

/* d act / dx */
template <int ACT> __device__ __forceinline__ float glu_torch_dact(float x)
{
    if constexpr (ACT == KB_ACT_GELU_TANH) {
        const float x_sq = fminf(x * x, 1e4f);
        const float t = tanhf(KB_GELU_BETA * (x + KB_GELU_KAPPA * x_sq * x));
        const float left = 0.5f * x, right = 1.f + t;
        return 0.5f * right + left * (1.f - t * t) * KB_GELU_BETA * (1.f + 3.f * KB_GELU_KAPPA * x_sq);
    } else {
        const float s = 1.f / (1.f + expf(-x));
        return s * (1.f + x * (1.f - s));
    }
}

/* ---- sigmoid formulation (tuned) ---------------------------------------------- */
template <bool FAST> __device__ __forceinline__ float glu_sigmoid(float z)
{
    /* __fdividef(1, inf) is 0: saturates like the IEEE division. */
    if constexpr (FAST)
        return __fdividef(1.f, 1.f + __expf(-z));
    else
        return 1.f / (1.f + expf(-z));
}

/* The sigmoid's argument: 2u for GELU, x for SiLU. */
template <int ACT> __device__ __forceinline__ float glu_sig_arg(float x)
{
    if constexpr (ACT == KB_ACT_GELU_TANH)
        return 2.f * KB_GELU_BETA * (x + KB_GELU_KAPPA * x * x * x);
    else
        return x;
}

template <int ACT, bool FAST> __device__ __forceinline__ float glu_sig_act(float x)
{
    return x * glu_sigmoid<FAST>(glu_sig_arg<ACT>(x));
}

/* act(x) and act'(x) from one sigmoid. */
template <int ACT, bool FAST>
__device__ __forceinline__ void glu_sig_act_dact(float x, float &a, float &da)
{
    const float s = glu_sigmoid<FAST>(glu_sig_arg<ACT>(x));
    a = x * s;
    if constexpr (ACT == KB_ACT_GELU_TANH) {
        const float x_sq = fminf(x * x, 1e4f);
        da = s + 2.f * KB_GELU_BETA * (x * s * (1.f - s)) * (1.f + 3.f * KB_GELU_KAPPA * x_sq);
    } else {
        da = s * (1.f + x * (1.f - s));
    }
}

/* Problem checks shared by the launchers: the message names the caller. */
static inline kb_status glu_check(const char *who, kb_dtype dt, int act, int64_t ld_in,
                                  int64_t M, int64_t H, kb_err *e)
{
    if ((unsigned)dt >= KB_NUM_DTYPES || (act != KB_ACT_GELU_TANH && act != KB_ACT_SILU) ||
        M < 1 || H < 1 || ld_in < H)
        return KB_FAIL(e, KB_ERR_ARG,
                       "%s: bad problem %lldx%lld (ld_in %lld, dtype %d, activation %d)", who,
                       (long long)M, (long long)H, (long long)ld_in, (int)dt, act);
    return KB_OK;
}

static inline kb_status glu_launched(const char *who, int64_t M, int64_t H, kb_err *e)
{
    const cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "%s %lldx%lld: launch: %s", who, (long long)M,
                       (long long)H, cudaGetErrorString(rc));
    return KB_OK;
}

/* KB_ACT_DISPATCH(act, A, body): body with constexpr int A = the activation. */
#define KB_ACT_DISPATCH(act, A, ...)                                          \
    do {                                                                      \
        if ((act) == KB_ACT_GELU_TANH) {                                      \
            constexpr int A = KB_ACT_GELU_TANH;                               \
            __VA_ARGS__;                                                      \
        } else {                                                              \
            constexpr int A = KB_ACT_SILU;                                    \
            __VA_ARGS__;                                                      \
        }                                                                     \
    } while (0)

/* KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, body): every launcher's
 * frame: glu_check's verdict (returned on failure), then body with storage
 * type T and constexpr int A = the activation. */
#define KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, ...)              \
    KB_TRY(glu_check(who, dt, act, ld_in, M, H, e));                          \
    KB_DISPATCH(dt, T, KB_ACT_DISPATCH(act, A, __VA_ARGS__))

#endif
