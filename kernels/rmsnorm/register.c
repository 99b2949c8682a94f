/* The rmsnorm backends this build holds and its GPU reference
 * (kernels/backends.h). */
#include "backends.h"
#include "rmsnorm_ref.h"

extern const kb_impl kb_rmsnorm_eager_fwd, kb_rmsnorm_eager_bwd, kb_rmsnorm_fused_fwd,
    kb_rmsnorm_fused_bwd, kb_rmsnorm_tuned_fwd, kb_rmsnorm_tuned_bwd;
extern const kb_impl kb_rmsnorm_cudnn_fwd, kb_rmsnorm_cudnn_bwd;

static const kb_op_gpu rms_fwd_ref = {KB_RMSNORM_FWD, NULL, NULL, kb_rmsnorm_ref_gpu_gold};
static const kb_op_gpu rms_bwd_ref = {KB_RMSNORM_BWD, NULL, NULL, kb_rmsnorm_ref_gpu_gold};
static const kb_op_gpu *const rms_refs[] = {&rms_fwd_ref, &rms_bwd_ref, NULL};

KB_BACKENDS(rmsnorm, rms_refs, &kb_rmsnorm_eager_fwd, &kb_rmsnorm_eager_bwd, &kb_rmsnorm_fused_fwd,
            &kb_rmsnorm_fused_bwd, &kb_rmsnorm_tuned_fwd, &kb_rmsnorm_tuned_bwd,
            KB_IF_CUDNN(&kb_rmsnorm_cudnn_fwd, &kb_rmsnorm_cudnn_bwd) NULL)
