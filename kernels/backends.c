/* kb_kernels_register: one line per backend of an op direction, each
 * defined in kernels/<op>/<backend>.{cu,c} (mlp's in kernels/mlp/mlp_block.c). */
#include "backends.h"

#include "registry.h"

#define KB_FWD_BWD(op, be) extern const kb_impl kb_##op##_##be##_fwd, kb_##op##_##be##_bwd;
#define KB_FWD(op, be) extern const kb_impl kb_##op##_##be##_fwd;
#define KB_ROW_OPS(be)                                                                         \
    KB_FWD_BWD(cross_entropy, be) KB_FWD_BWD(softmax, be) KB_FWD_BWD(rmsnorm, be)             \
    KB_FWD_BWD(layernorm, be) KB_FWD_BWD(geglu, be) KB_FWD_BWD(swiglu, be) KB_FWD(mlp, be)    \
    KB_FWD(mlp_swiglu, be)
KB_ROW_OPS(eager)
KB_ROW_OPS(fused)
KB_ROW_OPS(tuned)
KB_FWD(mlp, cublaslt_epilogue)
#ifdef KB_WITH_CUDNN
KB_FWD_BWD(softmax, cudnn)
KB_FWD_BWD(rmsnorm, cudnn)
KB_FWD_BWD(layernorm, cudnn)
#endif

#define KB_PAIR(op, be) &kb_##op##_##be##_fwd, &kb_##op##_##be##_bwd,
#define KB_ALL(be)                                                                             \
    KB_PAIR(cross_entropy, be) KB_PAIR(softmax, be) KB_PAIR(rmsnorm, be) KB_PAIR(layernorm, be) \
    KB_PAIR(geglu, be) KB_PAIR(swiglu, be) &kb_mlp_##be##_fwd, &kb_mlp_swiglu_##be##_fwd,

static const kb_impl *const backends[] = {
    KB_ALL(eager) KB_ALL(fused) KB_ALL(tuned) &kb_mlp_cublaslt_epilogue_fwd,
#ifdef KB_WITH_CUDNN
    KB_PAIR(softmax, cudnn) KB_PAIR(rmsnorm, cudnn) KB_PAIR(layernorm, cudnn)
#endif
};

kb_status kb_kernels_register(kb_err *e)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        KB_TRY(kb_register(backends[i], e));
    return KB_OK;
}
