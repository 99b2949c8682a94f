/* The rmsnorm backends this build holds (kernels/backends.h). */
#include "backends.h"

extern const kb_impl kb_rmsnorm_eager_fwd, kb_rmsnorm_eager_bwd, kb_rmsnorm_fused_fwd,
    kb_rmsnorm_fused_bwd, kb_rmsnorm_tuned_fwd, kb_rmsnorm_tuned_bwd;
extern const kb_impl kb_rmsnorm_cudnn_fwd, kb_rmsnorm_cudnn_bwd;

KB_BACKENDS(rmsnorm, KB_GPU_REF_NONE, &kb_rmsnorm_eager_fwd, &kb_rmsnorm_eager_bwd, &kb_rmsnorm_fused_fwd,
            &kb_rmsnorm_fused_bwd, &kb_rmsnorm_tuned_fwd, &kb_rmsnorm_tuned_bwd,
            KB_IF_CUDNN(&kb_rmsnorm_cudnn_fwd, &kb_rmsnorm_cudnn_bwd) NULL)
