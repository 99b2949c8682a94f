/* A case's buffers on the device (run/buffers.c): allocated together after
 * checking that they fit in free device memory (base/buffers.h has the type
 * and the layout), poisoned before the checked run, their guard bands read
 * after it. */
#ifndef KB_BUFFERS_GPU_H
#define KB_BUFFERS_GPU_H

#include "buffers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KB_ERR_DEVMEM (kb_buffers_fit's, or cudaMalloc's out of memory) when it
 * does not fit; other CUDA failures are KB_ERR_CUDA. */
kb_status kb_buffers_alloc(const kb_problem *p, size_t ws, kb_buffers *b, kb_err *e);
void kb_buffers_free(kb_buffers *b);
/* Fill outputs (out, dw) with NaN so unwritten elements fail accuracy, and
 * every guard band with its pattern. */
kb_status kb_buffers_poison(kb_buffers *b, cudaStream_t s, kb_err *e);
/* After the checked run (stream synchronised): 0 when every guard band is
 * intact, 1 with the damage described in msg (guard.h); KB_ERR_CUDA through
 * *st when the bands cannot be read. */
int kb_buffers_guards_broken(const kb_buffers *b, char *msg, size_t len, kb_status *st,
                             kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
