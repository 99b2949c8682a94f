/* A case's buffers filled for a run (reference.h): inputs, saved statistics,
 * gold. */
#include "reference.h"

kb_status kb_buffers_prepare(kb_buffers *b, uint64_t seed, cudaStream_t s, kb_err *e)
{
    KB_TRY(kb_inputs_generate(b, seed, s, e));
    KB_TRY(kb_ref_gpu_saved(b, s, e));
    KB_TRY(kb_ref_gpu_gold(b, s, e));
    KB_CUDA(e, cudaStreamSynchronize(s));
    return KB_OK;
}
