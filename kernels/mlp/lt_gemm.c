/* cuBLASLt GEMMs of the MLP block (lt_gemm.h) and the bf16 GEMM peak
 * measurement behind the compute-bound SOL (run/gemm_sol.h). */
#include "lt_gemm.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_peak.h"

#define LT(e, call, what)                                                                    \
    do {                                                                                     \
        cublasStatus_t lt_rc_ = (call);                                                      \
        if (lt_rc_ != CUBLAS_STATUS_SUCCESS)                                                 \
            return KB_FAIL((e), KB_ERR_CUDA, "cuBLASLt %s: %s", (what),                     \
                           lt->GetStatusString(lt_rc_));                                     \
    } while (0)

void kb_lt_close(kb_lt *lt)
{
    if (lt->h) lt->Destroy(lt->h);
    if (lt->lib) dlclose(lt->lib);
    memset(lt, 0, sizeof *lt);
}

kb_status kb_lt_open(kb_lt *lt, kb_err *e)
{
    static const char *const names[] = {
#ifdef KBENCH_CUBLASLT_LIB
        KBENCH_CUBLASLT_LIB, /* the toolkit's, found by CMake */
#endif
        "libcublasLt.so"};
    memset(lt, 0, sizeof *lt);
    const char *why = NULL; /* dlerror's text of the last attempt */
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lt->lib; i++) {
        lt->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!lt->lib) why = dlerror();
    }
    if (!lt->lib)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "cuBLASLt is not available: %s",
                       why ? why : "dlopen failed");
#define KB_LT_RESOLVE(name)                                                                   \
    {                                                                                         \
        void *sym = dlsym(lt->lib, "cublasLt" #name);                                         \
        if (!sym) {                                                                           \
            kb_lt_close(lt);                                                                  \
            return KB_FAIL(e, KB_ERR_UNSUPPORTED, "cuBLASLt library lacks cublasLt%s", #name); \
        }                                                                                     \
        memcpy((void *)&lt->name, &sym, sizeof sym);                                          \
    }
    KB_LT_FN(KB_LT_RESOLVE)
#undef KB_LT_RESOLVE
    const cublasStatus_t rc = lt->Create(&lt->h);
    if (rc != CUBLAS_STATUS_SUCCESS) {
        const char *text = lt->GetStatusString(rc);
        lt->h = NULL;
        kb_lt_close(lt);
        return KB_FAIL(e, KB_ERR_CUDA, "cublasLtCreate: %s", text);
    }
    return KB_OK;
}

static cudaDataType_t lt_type(kb_dtype dt)
{
    return dt == KB_BF16 ? CUDA_R_16BF : dt == KB_FP16 ? CUDA_R_16F : CUDA_R_32F;
}

/* The algorithm's configuration as cuBLASLt reports it (cublasLtMatmulTile_t,
 * cublasLtMatmulStages_t values: cublasLt.h). */
static void algo_text(const kb_lt *lt, const cublasLtMatmulAlgo_t *a, char *buf, size_t len)
{
    int32_t id = -1;
    uint32_t tile = 0, stages = 0, splitk = 0;
    size_t w = 0;
    lt->MatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    lt->MatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    lt->MatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages,
                                         &w);
    lt->MatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                         sizeof splitk, &w);
    snprintf(buf, len, "a%d/t%u/s%u/k%u", (int)id, tile, stages, splitk ? splitk : 1u);
}

void kb_lt_gemm_destroy(const kb_lt *lt, kb_lt_gemm *g)
{
    if (g->c) lt->MatrixLayoutDestroy(g->c);
    if (g->b) lt->MatrixLayoutDestroy(g->b);
    if (g->a) lt->MatrixLayoutDestroy(g->a);
    if (g->op) lt->MatmulDescDestroy(g->op);
    memset(g, 0, sizeof *g);
}

static kb_status plan(const kb_lt *lt, kb_lt_gemm *g, kb_dtype dt, int64_t rows, int64_t cols,
                      int64_t K, int64_t ldc, int gelu, uint32_t align_b, kb_err *e)
{
    const cudaDataType_t t = lt_type(dt);
    LT(e, lt->MatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
    const int32_t tr = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    LT(e, lt->MatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof tr),
       "TRANSA");
    LT(e, lt->MatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt),
       "TRANSB");
    if (gelu) {
        const uint32_t epi = CUBLASLT_EPILOGUE_GELU;
        LT(e, lt->MatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                             sizeof epi),
           "GELU epilogue");
    }
    /* Column-major views: the weight [cols, K] row-major is K x cols (ld K). */
    LT(e, lt->MatrixLayoutCreate(&g->a, t, (uint64_t)K, (uint64_t)cols, K), "layout of B");
    LT(e, lt->MatrixLayoutCreate(&g->b, t, (uint64_t)K, (uint64_t)rows, K), "layout of A");
    LT(e, lt->MatrixLayoutCreate(&g->c, t, (uint64_t)cols, (uint64_t)rows, ldc),
       "layout of C");
    cublasLtMatmulPreference_t pref = NULL;
    LT(e, lt->MatmulPreferenceCreate(&pref), "preference");
    const uint64_t ws = KB_LT_WORKSPACE;
    cublasLtMatmulHeuristicResult_t res;
    int n = 0;
    cublasStatus_t rc = lt->MatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    /* cuBLASLt's operand A is our B (the weight). */
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = lt->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                  &align_b, sizeof align_b);
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = lt->MatmulAlgoGetHeuristic(lt->h, g->op, g->a, g->b, g->c, g->c, pref, 1, &res, &n);
    lt->MatmulPreferenceDestroy(pref);
    if (rc == CUBLAS_STATUS_NOT_SUPPORTED || (rc == CUBLAS_STATUS_SUCCESS && n < 1))
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "cuBLASLt has no algorithm for the %s GEMM [%lld x %lld] x [%lld x %lld]^T%s",
                       kb_dtype_name(dt), (long long)rows, (long long)K, (long long)cols,
                       (long long)K, gelu ? " with the GELU epilogue" : "");
    LT(e, rc, "heuristic");
    g->algo = res.algo;
    g->ws = res.workspaceSize;
    algo_text(lt, &g->algo, g->text, sizeof g->text);
    return KB_OK;
}

kb_status kb_lt_gemm_plan(const kb_lt *lt, kb_lt_gemm *g, kb_dtype dt, int64_t rows,
                          int64_t cols, int64_t K, int64_t ldc, int gelu, uint32_t align_b,
                          kb_err *e)
{
    memset(g, 0, sizeof *g);
    kb_status st = plan(lt, g, dt, rows, cols, K, ldc, gelu, align_b, e);
    if (st != KB_OK) kb_lt_gemm_destroy(lt, g);
    return st;
}

kb_status kb_lt_gemm_run(const kb_lt *lt, const kb_lt_gemm *g, const void *A, const void *B,
                         void *C, void *ws, cudaStream_t s, kb_err *e)
{
    const float alpha = 1.0f, beta = 0.0f;
    LT(e, lt->Matmul(lt->h, g->op, &alpha, B, g->a, A, g->b, &beta, C, g->c, C, g->c, &g->algo,
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

static kb_status peak_timed(const kb_lt *lt, const kb_lt_gemm *g, void *A, void *B, void *C,
                            void *ws, cudaStream_t s, double *tflops, kb_err *e)
{
    cudaEvent_t t0 = NULL, t1 = NULL;
    float ms[PEAK_RUNS];
    kb_status st = KB_OK;
    cudaError_t rc = cudaEventCreate(&t0);
    if (rc == cudaSuccess) rc = cudaEventCreate(&t1);
    for (int i = -5; i < PEAK_RUNS && rc == cudaSuccess && st == KB_OK; i++) {
        rc = cudaEventRecord(t0, s);
        if (rc == cudaSuccess) st = kb_lt_gemm_run(lt, g, A, B, C, ws, s, e);
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
    kb_lt lt;
    memset(&lt, 0, sizeof lt);
    kb_lt_gemm g;
    memset(&g, 0, sizeof g);
    kb_status st = KB_OK;
    cudaError_t rc = cudaMalloc(&A, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&B, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&C, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&ws, KB_LT_WORKSPACE);
    /* Every element the bf16 0x3c3c (~0.0115): 8192-term sums stay ~1, finite. */
    if (rc == cudaSuccess) rc = cudaMemsetAsync(A, 0x3c, bytes, s);
    if (rc == cudaSuccess) rc = cudaMemsetAsync(B, 0x3c, bytes, s);
    if (rc != cudaSuccess)
        st = KB_FAIL(e, KB_ERR_CUDA, "GEMM peak measurement: %s", cudaGetErrorString(rc));
    if (st == KB_OK) st = kb_lt_open(&lt, e);
    if (st == KB_OK)
        st = kb_lt_gemm_plan(&lt, &g, KB_BF16, PEAK_N, PEAK_N, PEAK_N, PEAK_N, 0, 256, e);
    if (st == KB_OK) st = peak_timed(&lt, &g, A, B, C, ws, s, tflops, e);
    if (st == KB_OK) snprintf(algo, len, "algorithm %s", g.text);
    if (lt.lib) {
        kb_lt_gemm_destroy(&lt, &g);
        kb_lt_close(&lt);
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(ws);
    return st;
}
