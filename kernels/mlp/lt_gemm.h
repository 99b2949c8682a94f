/* cuBLASLt GEMMs of the MLP block in row-major terms:
 *
 *   C[rows, cols] (row stride ldc) = A[rows, K] * B[cols, K]^T
 *
 * A (activations) and B (a weight, nn.Linear's [out, in]) both K-contiguous,
 * C, A and B in the case's dtype, fp32 accumulation and scale, optionally
 * cuBLASLt's GELU epilogue (CUBLASLT_EPILOGUE_GELU: the tanh approximation,
 * applied in fp32 before C is rounded). cuBLASLt is column-major, so this is
 * its "TN" GEMM C^T = B^T' * A^T': m = cols, n = rows, k = K, the weight as
 * operand A transposed, the activations as operand B. The algorithm is
 * cuBLASLt's first heuristic choice for the shape (cublasLtMatmulAlgoGetHeuristic),
 * picked once in plan and named by kb_lt_gemm.text. */
#ifndef KB_LT_GEMM_H
#define KB_LT_GEMM_H

#include <cublasLt.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Workspace offered to cuBLASLt's heuristic (NVIDIA's Hopper recommendation). */
#define KB_LT_WORKSPACE ((size_t)32 << 20)

typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    size_t ws;      /* workspace the algorithm needs (<= KB_LT_WORKSPACE) */
    char text[48];  /* "a<algo id>/t<tile>/s<stages>/k<split-K>" */
} kb_lt_gemm;

/* KB_ERR_UNSUPPORTED when cuBLASLt has no algorithm for the problem.
 * align_b: the byte alignment the weight's pointer will have (a power of two
 * <= 256); A and C are 256-byte aligned (cuBLASLt's heuristic assumes 256
 * for every pointer unless told: a weight at an odd offset needs this). */
kb_status kb_lt_gemm_plan(cublasLtHandle_t h, kb_lt_gemm *g, kb_dtype dt, int64_t rows,
                          int64_t cols, int64_t K, int64_t ldc, int gelu, uint32_t align_b,
                          kb_err *e);
kb_status kb_lt_gemm_run(cublasLtHandle_t h, const kb_lt_gemm *g, const void *A, const void *B,
                         void *C, void *ws, cudaStream_t s, kb_err *e);
void kb_lt_gemm_destroy(kb_lt_gemm *g);

#ifdef __cplusplus
}
#endif
#endif
