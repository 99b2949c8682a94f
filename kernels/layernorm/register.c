/* The layernorm backends this build holds (kernels/backends.h). */
#include "backends.h"

extern const kb_impl kb_layernorm_eager_fwd, kb_layernorm_eager_bwd, kb_layernorm_fused_fwd,
    kb_layernorm_fused_bwd, kb_layernorm_tuned_fwd, kb_layernorm_tuned_bwd;
extern const kb_impl kb_layernorm_cudnn_fwd, kb_layernorm_cudnn_bwd;

KB_BACKENDS(layernorm, KB_GPU_REF_NONE, &kb_layernorm_eager_fwd, &kb_layernorm_eager_bwd, &kb_layernorm_fused_fwd,
            &kb_layernorm_fused_bwd, &kb_layernorm_tuned_fwd, &kb_layernorm_tuned_bwd,
            KB_IF_CUDNN(&kb_layernorm_cudnn_fwd, &kb_layernorm_cudnn_bwd) NULL)
