/* Element-wise comparison of a case's outputs with its fp32 gold, on the GPU
 * (outputs reach 2^31 elements: copying them to the host would dominate). */
#ifndef KB_ACCURACY_H
#define KB_ACCURACY_H

#include "buffers.h"
#include "tolerance.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int64_t n;            /* elements compared                          */
    int64_t mismatches;
    int64_t worst_index;  /* -1 when every element is exact             */
    double worst_excess;  /* |out-gold| / allowed at worst_index        */
    double worst_out, worst_gold;
    kb_tol tol;
} kb_accuracy;

/* out vs gold with tol. */
kb_status kb_check_output(const kb_buffers *b, kb_tol tol, cudaStream_t s, kb_accuracy *acc,
                          kb_err *e);
/* dw vs gold_dw with tol widened for reduction order (tolerance.h). */
kb_status kb_check_dw(const kb_buffers *b, kb_tol tol, cudaStream_t s, kb_accuracy *acc,
                      kb_err *e);
/* "1234 of 134217728 mismatch (atol 1e-05 rtol 0.016); worst at row 17 col 4001:
 * got 0.5 gold 0.25" */
void kb_accuracy_describe(const kb_accuracy *a, int64_t N, const char *what, char *buf,
                          size_t len);

#ifdef __cplusplus
}
#endif
#endif
