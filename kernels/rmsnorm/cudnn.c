/* RMSNorm forward and backward through cuDNN 9's graph API; the graph,
 * engine choice and execution live in kernels/cudnn/cudnn_norm.c, shared with
 * LayerNorm (they differ only in the norm mode and LayerNorm's mean/bias).
 *
 * cuDNN calls: dlopen("libcudnn.so.9"), cudnnCreate, cudnnBackend{Create,
 * SetAttribute,Finalize}Descriptor for the tensors, one
 *   forward   NORM_FORWARD  (CUDNN_RMS_NORM, CUDNN_NORM_FWD_TRAINING):
 *             x[M,N,1,1], scale w[1,N,1,1] fp32, epsilon by value, no bias
 *             -> y, inv_variance[M,1,1,1] fp32 (= rstd, in the workspace)
 *   backward  NORM_BACKWARD (CUDNN_RMS_NORM): x, dy, w, saved rstd
 *             -> dx, dscale (= dw[N] fp32), no dbias
 * operation, the operation graph, engine heuristics (A, then FALLBACK), an
 * execution plan; per run cudnnSetStream + cudnnBackendExecute.
 * Declines (SKIP, with cuDNN's text): cuDNN absent, or no engine finalizes a
 * plan for the shape/dtype. */
#include "cudnn_norm.h"
#include "kbench.h"

KB_CUDNN_NORM_IMPL(kb_rmsnorm_cudnn_fwd, KB_RMSNORM_FWD);
KB_CUDNN_NORM_IMPL(kb_rmsnorm_cudnn_bwd, KB_RMSNORM_BWD);
