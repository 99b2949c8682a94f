/* The speed of light of the compute-bound ops (mlp_forward): the bf16 GEMM
 * rate a GPU reaches, measured once per GPU model with cuBLASLt and cached
 * beside the copy SOL, in <state dir>/gemm-sol-<gpu>.txt:
 *
 *   <TFLOP/s>
 *   # bf16 GEMM 8192x8192x8192 (TN, fp32 accumulation), cuBLASLt's first
 *   # heuristic algorithm, median of 20 runs; <algorithm>; <gpu name>
 *
 * Delete the file to measure again. */
#ifndef KB_GEMM_SOL_H
#define KB_GEMM_SOL_H

#include <stddef.h>

#include "device.h"
#include "gemm_peak.h"
#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cached rate, or measured (the caller holds the GPU lock) and cached.
 * A read-only cache folder only costs a re-measure. */
kb_status kb_gemm_sol(const kb_device *d, const char *cache_dir, cudaStream_t s, double *tflops,
                      kb_err *e);
/* The cache file's text: 1 and *tflops when its first line is a positive
 * number, else 0 (missing or damaged: measure). Pure. */
int kb_gemm_sol_parse(const char *text, double *tflops);
/* The measurement itself, kb_gemm_peak_measure, is the MLP kernels'
 * (kernels/mlp/gemm_peak.h: cuBLASLt, TFLOP/s and the algorithm's name). */

#ifdef __cplusplus
}
#endif
#endif
