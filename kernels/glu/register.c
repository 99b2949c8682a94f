/* The GeGLU and SwiGLU backends (kernels/backends.h). */
#include "backends.h"

#define GLU_IMPLS(act)                                                                        \
    extern const kb_impl kb_##act##_eager_fwd, kb_##act##_eager_bwd, kb_##act##_fused_fwd,    \
        kb_##act##_fused_bwd, kb_##act##_tuned_fwd, kb_##act##_tuned_bwd;
GLU_IMPLS(geglu)
GLU_IMPLS(swiglu)
#define GLU_LIST(act)                                                                         \
    &kb_##act##_eager_fwd, &kb_##act##_eager_bwd, &kb_##act##_fused_fwd, &kb_##act##_fused_bwd, \
        &kb_##act##_tuned_fwd, &kb_##act##_tuned_bwd

KB_BACKENDS(glu, KB_GPU_REF_NONE, GLU_LIST(geglu), GLU_LIST(swiglu))
