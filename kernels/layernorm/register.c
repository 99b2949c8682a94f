/* The layernorm backends this build holds and its GPU reference
 * (kernels/backends.h). */
#include "backends.h"
#include "layernorm_ref.h"

extern const kb_impl kb_layernorm_eager_fwd, kb_layernorm_eager_bwd, kb_layernorm_fused_fwd,
    kb_layernorm_fused_bwd, kb_layernorm_tuned_fwd, kb_layernorm_tuned_bwd;
extern const kb_impl kb_layernorm_cudnn_fwd, kb_layernorm_cudnn_bwd;

static const kb_op_gpu ln_fwd_ref = {KB_LAYERNORM_FWD, NULL, NULL, kb_layernorm_ref_gpu_gold};
static const kb_op_gpu ln_bwd_ref = {KB_LAYERNORM_BWD, NULL, NULL, kb_layernorm_ref_gpu_gold};
static const kb_op_gpu *const ln_refs[] = {&ln_fwd_ref, &ln_bwd_ref, NULL};

KB_BACKENDS(layernorm, ln_refs, &kb_layernorm_eager_fwd, &kb_layernorm_eager_bwd, &kb_layernorm_fused_fwd,
            &kb_layernorm_fused_bwd, &kb_layernorm_tuned_fwd, &kb_layernorm_tuned_bwd,
            KB_IF_CUDNN(&kb_layernorm_cudnn_fwd, &kb_layernorm_cudnn_bwd) NULL)
