/* The MLP block's backends (kernels/mlp/mlp_block.c) and GPU reference
 * (kernels/backends.h). */
#include "backends.h"
#include "mlp_ref.h"

extern const kb_impl kb_mlp_eager_fwd, kb_mlp_fused_fwd, kb_mlp_tuned_fwd,
    kb_mlp_cublaslt_epilogue_fwd, kb_mlp_swiglu_eager_fwd, kb_mlp_swiglu_fused_fwd,
    kb_mlp_swiglu_tuned_fwd;

static const kb_op_gpu mlp_fwd_ref = {KB_MLP_FWD, NULL, NULL, kb_mlp_ref_gpu_gold};
static const kb_op_gpu mlp_swiglu_fwd_ref = {KB_MLP_SWIGLU_FWD, NULL, NULL, kb_mlp_ref_gpu_gold};
static const kb_op_gpu *const mlp_refs[] = {&mlp_fwd_ref, &mlp_swiglu_fwd_ref, NULL};

KB_BACKENDS(mlp, mlp_refs, &kb_mlp_eager_fwd, &kb_mlp_fused_fwd, &kb_mlp_tuned_fwd,
            &kb_mlp_cublaslt_epilogue_fwd, &kb_mlp_swiglu_eager_fwd, &kb_mlp_swiglu_fused_fwd,
            &kb_mlp_swiglu_tuned_fwd)
