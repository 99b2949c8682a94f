/* softmax's references (reference.c on the CPU, reference.cu on the GPU);
 * formulas in kernels/reference/reference.h:
 *   forward  y = exp(x - max) / sum exp(x - max)
 *   backward dx = y * (dy - sum_j(dy*y)), y the forward's saved output. */
#ifndef KB_SOFTMAX_REF_H
#define KB_SOFTMAX_REF_H

#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Double math over host float arrays, results rounded to float. */
kb_status kb_softmax_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                             kb_err *e);
/* b->gold of either direction. */
kb_status kb_softmax_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
