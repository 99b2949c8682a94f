/* The MLP block's references (reference.c on the CPU, reference.cu on the
 * GPU), mlp_math.h's formulas: y = (act(x Wg^T) * (x Wu^T)) Wd^T, with its
 * error scale sqrt(sum_k (h_k Wd_k)^2). The benchmark says the activation
 * (mlp_forward: GELU, tanh approximation; mlp_swiglu_forward: SiLU). */
#ifndef KB_MLP_REF_H
#define KB_MLP_REF_H

#include "mlp_math.h"
#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The activation of an MLP benchmark (KB_MLP_GELU_TANH or KB_MLP_SILU). */
int kb_mlp_ref_act(kb_bench_id b);

/* mlp_forward (mlp_math.h), double throughout: y [T,D] and the error scale
 * sqrt(sum_k (h_k Wd_k)^2) [T,D] (may be NULL) from x [T,D] and wts
 * [3*H*D] as float arrays. For small shapes (the unit tests, --self-test). */
kb_status kb_ref_cpu_mlp(int act, int64_t T, int64_t D, int64_t H, const float *x,
                         const float *wts, float *y, float *scale, kb_err *e);
/* The descriptor's ref_cpu: p is MxNxK (T x D x H; K >= 1, else KB_ERR_ARG),
 * in->x and in->wts, out->out = y and out->scale (may be NULL). */
kb_status kb_mlp_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e);
/* b->gold and b->gold_scale: fp32 GEMMs (simple tiled kernels) over chunks
 * of rows. */
kb_status kb_mlp_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
