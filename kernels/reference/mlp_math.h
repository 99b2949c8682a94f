/* The MLP block's math, shared by the CPU and GPU references (C and CUDA):
 *
 *   x [T, D] (T = M, D = N), weights wts = [Wg; Wu; Wd] in the dtype:
 *   Wg, Wu [H, D] each (H = K; rows 0..2H-1 of wts are the concatenated
 *   [2H, D] gate/up weight), then Wd [D, H];
 *   gate = x Wg^T, up = x Wu^T          [T, H]
 *   h    = act(gate) * up               [T, H]
 *   y    = h Wd^T                       [T, D]
 *   act  GELU, tanh approximation (GeGLU, PyTorch gelu(approximate="tanh")):
 *        0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)));
 *        SiLU (SwiGLU): g / (1 + exp(-g)).
 * The reference keeps gate, up and h unrounded (fp32 on the GPU, double on
 * the CPU) and rounds only y to the dtype; the backends round gate, up and
 * h to the dtype as PyTorch does, which the tolerance allows for
 * (base/tolerance.h, KB_GEMM_ROUNDING). */
#ifndef KB_MLP_MATH_H
#define KB_MLP_MATH_H

#include <math.h>

#if defined(__CUDACC__)
#define KB_MLP_HD static __host__ __device__ __forceinline__
#else
#define KB_MLP_HD static inline
#endif

/* Values of kb_glu_act (kernels/glu/glu.h). */
enum { KB_MLP_GELU_TANH = 0, KB_MLP_SILU = 1 };

KB_MLP_HD double kb_mlp_act(int act, double g)
{
    if (act == KB_MLP_SILU) return g / (1.0 + exp(-g));
    const double k0 = 0.7978845608028654; /* sqrt(2/pi) */
    return 0.5 * g * (1.0 + tanh(k0 * (g + 0.044715 * g * g * g)));
}

#endif
