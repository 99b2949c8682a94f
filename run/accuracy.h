/* Comparison of a case's outputs with its fp32 gold, on the GPU (outputs
 * reach 2^31 elements: copying them to the host would dominate): element
 * by element (assert_close) and in norm per row (tolerance.h). */
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
    /* normwise criterion (tolerance.h), per row or over the whole output */
    int64_t nw_rows;        /* rows judged or not                         */
    int64_t nw_zero_rows;   /* gold all zero: left to assert_close        */
    int64_t nw_bad_rows;    /* rows over the bound: the case fails        */
    int64_t nw_worst_row;   /* -1 when no row was judged                  */
    double nw_worst_excess; /* ||out-gold|| / allowed norm at worst_row   */
    double nw_worst_rel;    /* ||out-gold|| / ||gold|| at worst_row       */
    double nw_bound;        /* KB_NORMWISE_C * u(dtype)                   */
} kb_accuracy;

/* out vs gold with tol. */
kb_status kb_check_output(const kb_buffers *b, kb_tol tol, cudaStream_t s, kb_accuracy *acc,
                          kb_err *e);
/* dw vs gold_dw with tol widened for reduction order (tolerance.h). */
kb_status kb_check_dw(const kb_buffers *b, kb_tol tol, cudaStream_t s, kb_accuracy *acc,
                      kb_err *e);
/* "1234 of 134217728 mismatch (atol 1e-05 rtol 0.016); worst at row 17 col 4001:
 * got 0.5 gold 0.25" */
/* "output: normwise error exceeds its bound in 3 of 4096 rows; worst row 17: ..." */
void kb_normwise_describe(const kb_accuracy *a, const char *what, char *buf, size_t len);
void kb_accuracy_describe(const kb_accuracy *a, int64_t N, const char *what, char *buf,
                          size_t len);

#ifdef __cplusplus
}
#endif
#endif
