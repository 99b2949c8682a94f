/* Add + RMSNorm references (reference.c on the CPU, reference.cu on the GPU).
 *   forward : h = x + res rounded to the dtype (h_T);
 *             y = h_T * rstd * w, rstd = 1/sqrt(mean(h_T^2) + eps);
 *             out = [h; y] ([2, M, N]).
 *   backward: h (kb_ref_in.x / kb_tensors.x, the forward's saved sum), rstd
 *             (saved, from h), dy, dres: xh = h * rstd, g = dy * w,
 *             dx = rstd * (g - xh * mean(g * xh)) + dres  (out, [M, N]),
 *             dw = sum over rows of dy * xh.
 * eps = KB_NORM_EPS. */
#ifndef KB_ADD_RMSNORM_REF_H
#define KB_ADD_RMSNORM_REF_H

#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Double math over host float arrays (dtype-rounded inputs), results rounded
 * to float; p->bench says the direction, p->dtype what h rounds to. */
kb_status kb_add_rmsnorm_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                                 kb_err *e);
/* rstd[i] = 1/sqrt(mean_j h[i,j]^2 + eps), double math, rounded to float. */
void kb_add_rmsnorm_ref_cpu_rstd(int64_t M, int64_t N, const float *h, float *rstd);

/* Backward: b->t.rstd from b->t.x (= h), fp32; forward: nothing saved. */
kb_status kb_add_rmsnorm_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e);
/* b->gold (out's shape and dtype), b->gold_dw (backward) and b->gold_scale
 * (fp32, out's shape: the sum of the absolute values of the terms each
 * output adds). */
kb_status kb_add_rmsnorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
