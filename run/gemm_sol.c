/* The bf16 GEMM speed of light, cached per GPU (gemm_sol.h). */
#include "gemm_sol.h"

#include <stdio.h>
#include <stdlib.h>

#include "csvio.h"
#include "files.h"

int kb_gemm_sol_parse(const char *text, double *tflops)
{
    char *end = NULL;
    const double v = strtod(text, &end);
    if (end == text || !(v > 0) || v > 1e6 || (*end != '\n' && *end != '\0')) return 0;
    *tflops = v;
    return 1;
}

typedef struct {
    double tflops;
    const char *algo, *gpu;
} peak_text;

static kb_status write_peak(FILE *f, void *ctx, kb_err *e)
{
    const peak_text *t = ctx;
    if (fprintf(f,
                "%.1f\n# bf16 GEMM 8192x8192x8192 (TN, fp32 accumulation), cuBLASLt's "
                "first heuristic algorithm, median of 20 runs; %s; %s\n",
                t->tflops, t->algo, t->gpu) < 0)
        return KB_FAIL(e, KB_ERR_IO, "cannot write the GEMM peak cache");
    return KB_OK;
}

kb_status kb_gemm_sol(const kb_device *d, const char *cache_dir, cudaStream_t s, double *tflops,
                      kb_err *e)
{
    char name[256], path[1024];
    kb_gpu_file_name(d->name, name, sizeof name);
    snprintf(path, sizeof path, "%s/gemm-sol-%s.txt", cache_dir, name);
    char text[256];
    if (kb_read_small(path, text, sizeof text) > 0 && kb_gemm_sol_parse(text, tflops)) return KB_OK;
    char algo[128];
    KB_TRY(kb_gemm_peak_measure(s, tflops, algo, sizeof algo, e));
    if (kb_under_cuda_tool()) return KB_OK; /* not cached: see device.h */
    /* Silent, as the copy-SOL cache in device.c: the measurement is used
     * either way, and a read-only or full cache directory only costs the
     * next run a re-measure (about a second), not a wrong number. */
    const peak_text t = {*tflops, algo, d->name};
    kb_err ignored = {{0}};
    (void)kb_atomic_write(path, write_peak, (void *)&t, &ignored);
    return KB_OK;
}
