/* cuBLASLt GEMMs of the MLP block (lt_gemm.h) and the bf16 GEMM peak
 * measurement behind the compute-bound SOL (harness/gemm_sol.h). */
#include "lt_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_sol.h"

#define LT(e, call, what)                                                                    \
    do {                                                                                     \
        cublasStatus_t lt_rc_ = (call);                                                      \
        if (lt_rc_ != CUBLAS_STATUS_SUCCESS)                                                 \
            return KB_FAIL((e), KB_ERR_CUDA, "cuBLASLt %s: %s", (what),                     \
                           cublasLtGetStatusString(lt_rc_));                                 \
    } while (0)

static cudaDataType_t lt_type(kb_dtype dt)
{
    return dt == KB_BF16 ? CUDA_R_16BF : dt == KB_FP16 ? CUDA_R_16F : CUDA_R_32F;
}

/* The algorithm's configuration as cuBLASLt reports it (cublasLtMatmulTile_t,
 * cublasLtMatmulStages_t values: cublasLt.h). */
static void algo_text(const cublasLtMatmulAlgo_t *a, char *buf, size_t len)
{
    int32_t id = -1;
    uint32_t tile = 0, stages = 0, splitk = 0;
    size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages,
                                         &w);
    cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                         sizeof splitk, &w);
    snprintf(buf, len, "a%d/t%u/s%u/k%u", (int)id, tile, stages, splitk ? splitk : 1u);
}

void kb_lt_gemm_destroy(kb_lt_gemm *g)
{
    if (g->c) cublasLtMatrixLayoutDestroy(g->c);
    if (g->b) cublasLtMatrixLayoutDestroy(g->b);
    if (g->a) cublasLtMatrixLayoutDestroy(g->a);
    if (g->op) cublasLtMatmulDescDestroy(g->op);
    memset(g, 0, sizeof *g);
}

static kb_status plan(cublasLtHandle_t h, kb_lt_gemm *g, kb_dtype dt, int64_t rows, int64_t cols,
                      int64_t K, int64_t ldc, int gelu, uint32_t align_b, kb_err *e)
{
    const cudaDataType_t t = lt_type(dt);
    LT(e, cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
    const int32_t tr = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    LT(e, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof tr),
       "TRANSA");
    LT(e, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt),
       "TRANSB");
    if (gelu) {
        const uint32_t epi = CUBLASLT_EPILOGUE_GELU;
        LT(e, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                             sizeof epi),
           "GELU epilogue");
    }
    /* Column-major views: the weight [cols, K] row-major is K x cols (ld K). */
    LT(e, cublasLtMatrixLayoutCreate(&g->a, t, (uint64_t)K, (uint64_t)cols, K), "layout of B");
    LT(e, cublasLtMatrixLayoutCreate(&g->b, t, (uint64_t)K, (uint64_t)rows, K), "layout of A");
    LT(e, cublasLtMatrixLayoutCreate(&g->c, t, (uint64_t)cols, (uint64_t)rows, ldc),
       "layout of C");
    cublasLtMatmulPreference_t pref = NULL;
    LT(e, cublasLtMatmulPreferenceCreate(&pref), "preference");
    const uint64_t ws = KB_LT_WORKSPACE;
    cublasLtMatmulHeuristicResult_t res;
    int n = 0;
    cublasStatus_t rc = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    /* cuBLASLt's operand A is our B (the weight). */
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                  &align_b, sizeof align_b);
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = cublasLtMatmulAlgoGetHeuristic(h, g->op, g->a, g->b, g->c, g->c, pref, 1, &res, &n);
    cublasLtMatmulPreferenceDestroy(pref);
    if (rc == CUBLAS_STATUS_NOT_SUPPORTED || (rc == CUBLAS_STATUS_SUCCESS && n < 1))
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "cuBLASLt has no algorithm for the %s GEMM [%lld x %lld] x [%lld x %lld]^T%s",
                       kb_dtype_name(dt), (long long)rows, (long long)K, (long long)cols,
                       (long long)K, gelu ? " with the GELU epilogue" : "");
    LT(e, rc, "heuristic");
    g->algo = res.algo;
    g->ws = res.workspaceSize;
    algo_text(&g->algo, g->text, sizeof g->text);
    return KB_OK;
}

kb_status kb_lt_gemm_plan(cublasLtHandle_t h, kb_lt_gemm *g, kb_dtype dt, int64_t rows,
                          int64_t cols, int64_t K, int64_t ldc, int gelu, uint32_t align_b,
                          kb_err *e)
{
    memset(g, 0, sizeof *g);
    kb_status st = plan(h, g, dt, rows, cols, K, ldc, gelu, align_b, e);
    if (st != KB_OK) kb_lt_gemm_destroy(g);
    return st;
}

kb_status kb_lt_gemm_run(cublasLtHandle_t h, const kb_lt_gemm *g, const void *A, const void *B,
                         void *C, void *ws, cudaStream_t s, kb_err *e)
{
    const float alpha = 1.0f, beta = 0.0f;
    LT(e, cublasLtMatmul(h, g->op, &alpha, B, g->a, A, g->b, &beta, C, g->c, C, g->c, &g->algo,
                         ws, g->ws, s),
       "matmul");
    return KB_OK;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* ---- the bf16 GEMM peak (gemm_sol.h) --------------------------------------- */
#define PEAK_N 8192
#define PEAK_RUNS 20

static kb_status peak_timed(cublasLtHandle_t h, const kb_lt_gemm *g, void *A, void *B, void *C,
                            void *ws, cudaStream_t s, double *tflops, kb_err *e)
{
    cudaEvent_t t0 = NULL, t1 = NULL;
    float ms[PEAK_RUNS];
    kb_status st = KB_OK;
    cudaError_t rc = cudaEventCreate(&t0);
    if (rc == cudaSuccess) rc = cudaEventCreate(&t1);
    for (int i = -5; i < PEAK_RUNS && rc == cudaSuccess && st == KB_OK; i++) {
        rc = cudaEventRecord(t0, s);
        if (rc == cudaSuccess) st = kb_lt_gemm_run(h, g, A, B, C, ws, s, e);
        if (rc == cudaSuccess && st == KB_OK) rc = cudaEventRecord(t1, s);
        if (rc == cudaSuccess && st == KB_OK) rc = cudaEventSynchronize(t1);
        if (rc == cudaSuccess && st == KB_OK && i >= 0) rc = cudaEventElapsedTime(&ms[i], t0, t1);
    }
    if (st == KB_OK && rc != cudaSuccess)
        st = KB_FAIL(e, KB_ERR_CUDA, "GEMM peak measurement: %s", cudaGetErrorString(rc));
    if (st == KB_OK) {
        qsort(ms, PEAK_RUNS, sizeof ms[0], cmp_float);
        const double n = PEAK_N;
        *tflops = 2.0 * n * n * n / (ms[PEAK_RUNS / 2] * 1e-3) / 1e12;
    }
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    return st;
}

kb_status kb_gemm_peak_measure(cudaStream_t s, double *tflops, char *algo, size_t len, kb_err *e)
{
    const size_t bytes = (size_t)PEAK_N * PEAK_N * 2;
    void *A = NULL, *B = NULL, *C = NULL, *ws = NULL;
    cublasLtHandle_t h = NULL;
    kb_lt_gemm g;
    memset(&g, 0, sizeof g);
    kb_status st = KB_OK;
    cudaError_t rc = cudaMalloc(&A, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&B, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&C, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&ws, KB_LT_WORKSPACE);
    /* Small values (0x3c00 is bf16 1.0 halves: 0x3c3c ~ 0.0115): finite sums. */
    if (rc == cudaSuccess) rc = cudaMemsetAsync(A, 0x3c, bytes, s);
    if (rc == cudaSuccess) rc = cudaMemsetAsync(B, 0x3c, bytes, s);
    if (rc != cudaSuccess)
        st = KB_FAIL(e, KB_ERR_CUDA, "GEMM peak measurement: %s", cudaGetErrorString(rc));
    if (st == KB_OK && cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS)
        st = KB_FAIL(e, KB_ERR_CUDA, "GEMM peak measurement: cublasLtCreate failed");
    if (st == KB_OK)
        st = kb_lt_gemm_plan(h, &g, KB_BF16, PEAK_N, PEAK_N, PEAK_N, PEAK_N, 0, 256, e);
    if (st == KB_OK) st = peak_timed(h, &g, A, B, C, ws, s, tflops, e);
    if (st == KB_OK) snprintf(algo, len, "algorithm %s", g.text);
    kb_lt_gemm_destroy(&g);
    if (h) cublasLtDestroy(h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(ws);
    return st;
}
