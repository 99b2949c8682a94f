/* The bf16 GEMM the compute-bound SOL is measured with (lt_gemm.c): a
 * kernel of the MLP block's, which the run layer's measurement
 * (run/gemm_sol.h) times and caches. */
#ifndef KB_GEMM_PEAK_H
#define KB_GEMM_PEAK_H

#include <stddef.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bf16 8192x8192x8192 (TN, fp32 accumulation) with cuBLASLt's first
 * heuristic algorithm, median of 20 runs: *tflops and the algorithm's name. */
kb_status kb_gemm_peak_measure(cudaStream_t s, double *tflops, char *algo, size_t len,
                               kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
