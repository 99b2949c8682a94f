/* The cross_entropy backends this build holds and its GPU reference
 * (kernels/backends.h). */
#include "backends.h"
#include "cross_entropy_ref.h"

extern const kb_impl kb_cross_entropy_eager_fwd, kb_cross_entropy_eager_bwd, kb_cross_entropy_fused_fwd,
    kb_cross_entropy_fused_bwd, kb_cross_entropy_tuned_fwd, kb_cross_entropy_tuned_bwd;

static const kb_op_gpu ce_fwd_ref = {KB_CE_FWD, NULL, NULL, kb_cross_entropy_ref_gpu_gold};
static const kb_op_gpu ce_bwd_ref = {KB_CE_BWD, NULL, NULL, kb_cross_entropy_ref_gpu_gold};
static const kb_op_gpu *const ce_refs[] = {&ce_fwd_ref, &ce_bwd_ref, NULL};

KB_BACKENDS(cross_entropy, ce_refs, &kb_cross_entropy_eager_fwd, &kb_cross_entropy_eager_bwd, &kb_cross_entropy_fused_fwd,
            &kb_cross_entropy_fused_bwd, &kb_cross_entropy_tuned_fwd, &kb_cross_entropy_tuned_bwd, NULL)
