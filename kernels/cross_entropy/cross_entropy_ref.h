/* cross_entropy's references (reference.c on the CPU, reference.cu on the
 * GPU); formulas in kernels/reference/reference.h:
 *   forward  loss[i] = lse[i] - x[i, target[i]]
 *   backward dx[i,j] = dloss[i] * (exp(x[i,j] - lse[i]) - (j == target[i])),
 *            lse the forward's saved statistic. */
#ifndef KB_CROSS_ENTROPY_REF_H
#define KB_CROSS_ENTROPY_REF_H

#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Double math over host float arrays, results rounded to float. */
kb_status kb_cross_entropy_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                                   kb_err *e);
/* b->gold of either direction. */
kb_status kb_cross_entropy_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
