/* The GeGLU and SwiGLU backends and their GPU reference (kernels/backends.h). */
#include "backends.h"
#include "glu_ref.h"

#define GLU_IMPLS(act)                                                                        \
    extern const kb_impl kb_##act##_eager_fwd, kb_##act##_eager_bwd, kb_##act##_fused_fwd,    \
        kb_##act##_fused_bwd, kb_##act##_tuned_fwd, kb_##act##_tuned_bwd;
GLU_IMPLS(geglu)
GLU_IMPLS(swiglu)
#define GLU_LIST(act)                                                                         \
    &kb_##act##_eager_fwd, &kb_##act##_eager_bwd, &kb_##act##_fused_fwd, &kb_##act##_fused_bwd, \
        &kb_##act##_tuned_fwd, &kb_##act##_tuned_bwd

static const kb_op_gpu geglu_fwd_ref = {KB_GEGLU_FWD, NULL, NULL, kb_glu_ref_gpu_gold};
static const kb_op_gpu geglu_bwd_ref = {KB_GEGLU_BWD, NULL, NULL, kb_glu_ref_gpu_gold};
static const kb_op_gpu swiglu_fwd_ref = {KB_SWIGLU_FWD, NULL, NULL, kb_glu_ref_gpu_gold};
static const kb_op_gpu swiglu_bwd_ref = {KB_SWIGLU_BWD, NULL, NULL, kb_glu_ref_gpu_gold};
static const kb_op_gpu *const glu_refs[] = {&geglu_fwd_ref, &geglu_bwd_ref, &swiglu_fwd_ref,
                                            &swiglu_bwd_ref, NULL};

KB_BACKENDS(glu, glu_refs, GLU_LIST(geglu), GLU_LIST(swiglu))
