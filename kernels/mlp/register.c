/* The MLP block's backends (kernels/mlp/mlp_block.c; kernels/backends.h). */
#include "backends.h"

extern const kb_impl kb_mlp_eager_fwd, kb_mlp_fused_fwd, kb_mlp_tuned_fwd,
    kb_mlp_cublaslt_epilogue_fwd, kb_mlp_swiglu_eager_fwd, kb_mlp_swiglu_fused_fwd,
    kb_mlp_swiglu_tuned_fwd;

KB_BACKENDS(mlp, KB_GPU_REF_NONE, &kb_mlp_eager_fwd, &kb_mlp_fused_fwd, &kb_mlp_tuned_fwd,
            &kb_mlp_cublaslt_epilogue_fwd, &kb_mlp_swiglu_eager_fwd, &kb_mlp_swiglu_fused_fwd,
            &kb_mlp_swiglu_tuned_fwd)
