/* The add_rmsnorm backends and GPU reference (kernels/backends.h). */
#include "add_rmsnorm_ref.h"
#include "backends.h"

extern const kb_impl kb_add_rmsnorm_eager_fwd, kb_add_rmsnorm_eager_bwd, kb_add_rmsnorm_fused_fwd,
    kb_add_rmsnorm_fused_bwd, kb_add_rmsnorm_tuned_fwd, kb_add_rmsnorm_tuned_bwd;

static const kb_op_gpu ar_fwd_ref = {KB_ADD_RMSNORM_FWD, NULL, kb_add_rmsnorm_ref_gpu_saved,
                                     kb_add_rmsnorm_ref_gpu_gold};
static const kb_op_gpu ar_bwd_ref = {KB_ADD_RMSNORM_BWD, NULL, kb_add_rmsnorm_ref_gpu_saved,
                                     kb_add_rmsnorm_ref_gpu_gold};
static const kb_op_gpu *const ar_refs[] = {&ar_fwd_ref, &ar_bwd_ref, NULL};

KB_BACKENDS(add_rmsnorm, ar_refs, &kb_add_rmsnorm_eager_fwd, &kb_add_rmsnorm_eager_bwd,
            &kb_add_rmsnorm_fused_fwd, &kb_add_rmsnorm_fused_bwd, &kb_add_rmsnorm_tuned_fwd,
            &kb_add_rmsnorm_tuned_bwd)
