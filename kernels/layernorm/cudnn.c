/* LayerNorm forward and backward through cuDNN 9's graph API; the graph,
 * engine choice and execution live in kernels/cudnn/cudnn_norm.c, shared with
 * RMSNorm.
 *
 * cuDNN calls: dlopen("libcudnn.so.9"), cudnnCreate, cudnnBackend{Create,
 * SetAttribute,Finalize}Descriptor for the tensors, one
 *   forward   NORM_FORWARD  (CUDNN_LAYER_NORM, CUDNN_NORM_FWD_TRAINING):
 *             x[M,N,1,1], scale w[1,N,1,1] fp32, bias[1,N,1,1] fp32 (zeros:
 *             kbench's LayerNorm has no bias, cudnn-frontend always passes
 *             one), epsilon by value -> y, mean and inv_variance [M,1,1,1]
 *             fp32 (the saved statistics, in the workspace)
 *   backward  NORM_BACKWARD (CUDNN_LAYER_NORM): x, dy, w, saved mean and rstd
 *             -> dx, dscale (= dw[N] fp32), dbias (workspace, discarded)
 * operation, the operation graph, engine heuristics (A, then FALLBACK), an
 * execution plan; per run cudnnSetStream + cudnnBackendExecute.
 * The zero bias costs 4*N extra bytes read per forward and the discarded
 * dbias 4*N bytes written per backward, both outside SPEC's byte model and
 * negligible next to M*N.
 * Declines (SKIP, with cuDNN's text): cuDNN absent, or no engine finalizes a
 * plan for the shape/dtype. */
#include "cudnn_norm.h"
#include "kbench.h"

KB_CUDNN_NORM_IMPL(kb_layernorm_cudnn_fwd, KB_LAYERNORM_FWD);
KB_CUDNN_NORM_IMPL(kb_layernorm_cudnn_bwd, KB_LAYERNORM_BWD);
