/* The softmax backends this build holds and its GPU reference
 * (kernels/backends.h). */
#include "backends.h"
#include "softmax_ref.h"

extern const kb_impl kb_softmax_eager_fwd, kb_softmax_eager_bwd, kb_softmax_fused_fwd,
    kb_softmax_fused_bwd, kb_softmax_tuned_fwd, kb_softmax_tuned_bwd;
extern const kb_impl kb_softmax_cudnn_fwd, kb_softmax_cudnn_bwd;

static const kb_op_gpu sm_fwd_ref = {KB_SOFTMAX_FWD, NULL, NULL, kb_softmax_ref_gpu_gold};
static const kb_op_gpu sm_bwd_ref = {KB_SOFTMAX_BWD, NULL, NULL, kb_softmax_ref_gpu_gold};
static const kb_op_gpu *const sm_refs[] = {&sm_fwd_ref, &sm_bwd_ref, NULL};

KB_BACKENDS(softmax, sm_refs, &kb_softmax_eager_fwd, &kb_softmax_eager_bwd, &kb_softmax_fused_fwd,
            &kb_softmax_fused_bwd, &kb_softmax_tuned_fwd, &kb_softmax_tuned_bwd,
            KB_IF_CUDNN(&kb_softmax_cudnn_fwd, &kb_softmax_cudnn_bwd) NULL)
