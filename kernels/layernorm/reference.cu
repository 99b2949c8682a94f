/* layernorm's GPU reference: the gold of LayerNorm (layernorm_ref.h), the norms'
 * shared kernels of ref_norm.cuh with ln = true. The saved statistics of
 * the backward are the generic kb_ref_gpu_saved's (the descriptor's tensor
 * bits). */
#include "layernorm_ref.h"
#include "ref_norm.cuh"

extern "C" kb_status kb_layernorm_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    return norm_gold(b, true, s, e);
}
