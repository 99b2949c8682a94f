/* RMSNorm and LayerNorm, forward (training) and backward, through cuDNN 9's
 * graph API: one implementation for the four benchmarks, which differ only in
 * the norm mode and in the bias/mean/dbias tensors. kernels/rmsnorm/cudnn.c
 * and kernels/layernorm/cudnn.c register these functions as their kb_impl.
 * The mode and direction come from p->bench. */
#ifndef KB_CUDNN_NORM_H
#define KB_CUDNN_NORM_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

kb_status kb_cudnn_norm_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                              size_t *workspace_bytes, kb_err *e);
kb_status kb_cudnn_norm_run(const kb_problem *p, const kb_tensors *t, void *state,
                            cudaStream_t s, kb_err *e);
void kb_cudnn_norm_describe(const void *state, char *buf, size_t len);
void kb_cudnn_norm_teardown(void *state);

/* kb_<op>_cudnn_fwd / _bwd: both directions of a norm run the shared graph. */
#define KB_CUDNN_NORM_IMPL(name, bench)                                                    \
    const kb_impl name = {"cudnn", bench, kb_cudnn_norm_setup, kb_cudnn_norm_run,          \
                          kb_cudnn_norm_describe, kb_cudnn_norm_teardown, NULL}

#ifdef __cplusplus
}
#endif
#endif
