/* GeGLU's and SwiGLU's references (reference.c on the CPU, reference.cu on
 * the GPU): out = act(x) * up; backward dgate = dy * up * act'(x), dup =
 * dy * act(x), out = [dgate; dup]. The benchmark says the activation
 * (geglu_*: GELU, tanh approximation; swiglu_*: SiLU). The activations and
 * their derivatives in double, for the CPU and the GPU reference alike (C
 * and CUDA), exactly kernels/reference/reference.h's formulas:
 *   gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *   silu(x)      = x / (1 + exp(-x))
 * tanh and exp saturate without inf/inf: for large negative x, 1 + tanh(u)
 * and 1 / (1 + exp(-x)) go to 0 (exp(-x) = inf gives x / inf = 0), and
 * (1 - tanh(u)^2) is exactly 0 wherever tanh saturates, while x^2 stays
 * finite in double for any float x. */
#ifndef KB_GLU_REF_H
#define KB_GLU_REF_H

#include <math.h>

#include "glu.h"
#include "reference.h"

#if defined(__CUDACC__)
#define KB_GR static __host__ __device__ __forceinline__
#else
#define KB_GR static inline
#endif

#define KB_GELU_BETA_D 0.79788456080286535588 /* sqrt(2/pi) */
#define KB_GELU_KAPPA_D 0.044715

KB_GR double kb_glu_act_d(int gelu, double x)
{
    if (gelu) return 0.5 * x * (1.0 + tanh(KB_GELU_BETA_D * (x + KB_GELU_KAPPA_D * x * x * x)));
    return x / (1.0 + exp(-x));
}

KB_GR double kb_glu_dact_d(int gelu, double x)
{
    if (gelu) {
        const double t = tanh(KB_GELU_BETA_D * (x + KB_GELU_KAPPA_D * x * x * x));
        return 0.5 * (1.0 + t) +
               0.5 * x * (1.0 - t * t) * KB_GELU_BETA_D * (1.0 + 3.0 * KB_GELU_KAPPA_D * x * x);
    }
    const double s = 1.0 / (1.0 + exp(-x));
    return s * (1.0 + x * (1.0 - s));
}

#ifdef __cplusplus
extern "C" {
#endif

/* The activation of a GLU benchmark: GELU (tanh) for geglu_*, SiLU for
 * swiglu_*. */
kb_glu_act kb_glu_ref_act(kb_bench_id b);
/* The activations and their derivatives in double (the unit tests check them
 * against closed forms). */
double kb_ref_glu_act(kb_glu_act act, double x);
double kb_ref_glu_dact(kb_glu_act act, double x);
/* Double math over host float arrays, results rounded to float. */
kb_status kb_glu_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e);
/* b->gold of either direction. */
kb_status kb_glu_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
