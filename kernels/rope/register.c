/* The rope backends and GPU reference (kernels/backends.h). */
#include "backends.h"
#include "rope.h"

extern const kb_impl kb_rope_eager_fwd, kb_rope_eager_bwd, kb_rope_fused_fwd, kb_rope_fused_bwd,
    kb_rope_tuned_fwd, kb_rope_tuned_bwd;

static const kb_op_gpu rope_fwd_ref = {KB_ROPE_FWD, kb_rope_ref_gpu_inputs, NULL,
                                       kb_rope_ref_gpu_gold};
static const kb_op_gpu rope_bwd_ref = {KB_ROPE_BWD, kb_rope_ref_gpu_inputs, NULL,
                                       kb_rope_ref_gpu_gold};
static const kb_op_gpu *const rope_refs[] = {&rope_fwd_ref, &rope_bwd_ref, NULL};

KB_BACKENDS(rope, rope_refs, &kb_rope_eager_fwd, &kb_rope_eager_bwd, &kb_rope_fused_fwd,
            &kb_rope_fused_bwd, &kb_rope_tuned_fwd, &kb_rope_tuned_bwd)
