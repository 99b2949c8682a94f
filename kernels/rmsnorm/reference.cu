/* rmsnorm's GPU reference: the gold of RMSNorm (rmsnorm_ref.h), the norms'
 * shared kernels of ref_norm.cuh with ln = false. The saved statistics of
 * the backward are the generic kb_ref_gpu_saved's (the descriptor's tensor
 * bits). */
#include "rmsnorm_ref.h"
#include "ref_norm.cuh"

extern "C" kb_status kb_rmsnorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    return norm_gold(b, false, s, e);
}
