/* layernorm's references (reference.c on the CPU, reference.cu on the GPU),
 * LayerNorm without bias; formulas in kernels/reference/reference.h:
 *   forward  mean, rstd = 1/sqrt(var + eps) (biased var); y = (x-mean)*rstd*w
 *   backward xh = (x-mean)*rstd; g = dy*w;
 *            dx = rstd * (g - mean(g) - xh*mean(g*xh)); dw = sum_i dy*xh,
 *            mean and rstd the forward's saved statistics.
 * The row math is shared with the other norm (ref_rows.h, ref_norm.cuh). */
#ifndef KB_LAYERNORM_REF_H
#define KB_LAYERNORM_REF_H

#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Double math over host float arrays, results rounded to float. */
kb_status kb_layernorm_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                               kb_err *e);
/* b->gold of either direction, and b->gold_dw for the backward. */
kb_status kb_layernorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
