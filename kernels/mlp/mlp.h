/* mlp_forward's backends (mlp_block.c) and their own kernel. */
#ifndef KB_MLP_H
#define KB_MLP_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = a[i] * b[i], i < n (mlp_kernels.cu). */
kb_status kb_mlp_mul(kb_dtype dt, const void *a, const void *b, void *out, int64_t n,
                     int sm_count, cudaStream_t s, kb_err *e);

/* Bytes of [T,H] intermediates and inputs one call writes and reads back
 * through HBM besides x, the weights and y (the block's minimum), by
 * backend: what fusing saves is eager's figure minus the backend's
 * (docs/dev/kernels/mlp.md, "mlp_forward"). Pure; unit tested. */
double kb_mlp_intermediate_bytes(const char *backend, kb_dtype dt, int64_t T, int64_t D,
                                 int64_t H);

#ifdef __cplusplus
}
#endif
#endif
