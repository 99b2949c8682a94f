/* rmsnorm's references (reference.c on the CPU, reference.cu on the GPU),
 * RMSNorm (no bias); formulas in kernels/reference/reference.h:
 *   forward  rstd = 1/sqrt(mean(x^2) + eps); y = x * rstd * w
 *   backward xh = x*rstd; g = dy*w; dx = rstd * (g - xh * mean(g*xh));
 *            dw = sum_i dy*xh, rstd the forward's saved statistic.
 * The row math is shared with the other norm (ref_rows.h, ref_norm.cuh). */
#ifndef KB_RMSNORM_REF_H
#define KB_RMSNORM_REF_H

#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Double math over host float arrays, results rounded to float. */
kb_status kb_rmsnorm_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                             kb_err *e);
/* b->gold of either direction, and b->gold_dw for the backward. */
kb_status kb_rmsnorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
