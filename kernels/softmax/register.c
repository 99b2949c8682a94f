/* The softmax backends this build holds (kernels/backends.h). */
#include "backends.h"

extern const kb_impl kb_softmax_eager_fwd, kb_softmax_eager_bwd, kb_softmax_fused_fwd,
    kb_softmax_fused_bwd, kb_softmax_tuned_fwd, kb_softmax_tuned_bwd;
extern const kb_impl kb_softmax_cudnn_fwd, kb_softmax_cudnn_bwd;

KB_BACKENDS(softmax, KB_GPU_REF_NONE, &kb_softmax_eager_fwd, &kb_softmax_eager_bwd, &kb_softmax_fused_fwd,
            &kb_softmax_fused_bwd, &kb_softmax_tuned_fwd, &kb_softmax_tuned_bwd,
            KB_IF_CUDNN(&kb_softmax_cudnn_fwd, &kb_softmax_cudnn_bwd) NULL)
