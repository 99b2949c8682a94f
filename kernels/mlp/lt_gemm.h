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
 * picked once in plan and named by kb_lt_gemm.text.
 *
 * cuBLASLt is loaded at run time (kb_lt_open: dlopen of the toolkit's
 * libcublasLt, the path CMake found, then the loader's search), not linked:
 * linked, its start-up cost (~0.15 s of initialisers) fell on every kbench
 * process, ~1000 per CTest run, though only mlp_forward uses it. The table
 * of functions is typed from cublasLt.h's prototypes (__typeof__), belongs
 * to one case's state (no global mutable state) and keeps the library mapped
 * (RTLD_NODELETE: it registers CUDA kernels). */
#ifndef KB_LT_GEMM_H
#define KB_LT_GEMM_H

#include <cublasLt.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cuBLASLt functions kbench calls, and a handle. */
#define KB_LT_FN(X)                                                                           \
    X(Create) X(Destroy) X(GetStatusString) X(MatmulDescCreate) X(MatmulDescDestroy)          \
    X(MatmulDescSetAttribute) X(MatrixLayoutCreate) X(MatrixLayoutDestroy)                    \
    X(MatmulPreferenceCreate) X(MatmulPreferenceDestroy) X(MatmulPreferenceSetAttribute)      \
    X(MatmulAlgoGetHeuristic) X(MatmulAlgoConfigGetAttribute) X(Matmul)
typedef struct {
    void *lib;
    cublasLtHandle_t h;
#define KB_LT_FIELD(name) __typeof__(&cublasLt##name) name;
    KB_LT_FN(KB_LT_FIELD)
#undef KB_LT_FIELD
} kb_lt;

/* Load cuBLASLt and create a handle; KB_ERR_UNSUPPORTED (the case SKIPs)
 * when the library or a symbol is missing. */
kb_status kb_lt_open(kb_lt *lt, kb_err *e);
void kb_lt_close(kb_lt *lt);

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
kb_status kb_lt_gemm_plan(const kb_lt *lt, kb_lt_gemm *g, kb_dtype dt, int64_t rows,
                          int64_t cols, int64_t K, int64_t ldc, int gelu, uint32_t align_b,
                          kb_err *e);
kb_status kb_lt_gemm_run(const kb_lt *lt, const kb_lt_gemm *g, const void *A, const void *B,
                         void *C, void *ws, cudaStream_t s, kb_err *e);
void kb_lt_gemm_destroy(const kb_lt *lt, kb_lt_gemm *g);

#ifdef __cplusplus
}
#endif
#endif
