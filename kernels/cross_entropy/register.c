/* The cross_entropy backends this build holds (kernels/backends.h). */
#include "backends.h"

extern const kb_impl kb_cross_entropy_eager_fwd, kb_cross_entropy_eager_bwd, kb_cross_entropy_fused_fwd,
    kb_cross_entropy_fused_bwd, kb_cross_entropy_tuned_fwd, kb_cross_entropy_tuned_bwd;

KB_BACKENDS(cross_entropy, KB_GPU_REF_NONE, &kb_cross_entropy_eager_fwd, &kb_cross_entropy_eager_bwd, &kb_cross_entropy_fused_fwd,
            &kb_cross_entropy_fused_bwd, &kb_cross_entropy_tuned_fwd, &kb_cross_entropy_tuned_bwd, NULL)
