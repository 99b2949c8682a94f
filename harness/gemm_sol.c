/* The bf16 GEMM speed of light, cached per GPU (gemm_sol.h). */
#include "gemm_sol.h"

#include <stdio.h>
#include <stdlib.h>

#include "files.h"

int kb_gemm_sol_parse(const char *text, double *tflops)
{
    char *end = NULL;
    const double v = strtod(text, &end);
    if (end == text || !(v > 0) || v > 1e6 || (*end != '\n' && *end != '\0')) return 0;
    *tflops = v;
    return 1;
}

kb_status kb_gemm_sol(const kb_device *d, const char *cache_dir, cudaStream_t s, double *tflops,
                      kb_err *e)
{
    char name[256], path[1024];
    kb_gpu_file_name(d->name, name, sizeof name);
    snprintf(path, sizeof path, "%s/gemm-sol-%s.txt", cache_dir, name);
    char text[256] = "";
    FILE *f = fopen(path, "r");
    if (f) {
        const size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
        if (kb_gemm_sol_parse(text, tflops)) return KB_OK;
    }
    char algo[128];
    KB_TRY(kb_gemm_peak_measure(s, tflops, algo, sizeof algo, e));
    if (kb_under_cuda_tool()) return KB_OK; /* not cached: see device.h */
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, d->ordinal);
    /* Silent, as the copy-SOL cache in device.c: the measurement is used
     * either way, and a read-only or full cache directory only costs the
     * next run a re-measure (about a second), not a wrong number. */
    f = fopen(tmp, "w");
    if (!f) return KB_OK;
    int bad = fprintf(f,
                      "%.1f\n# bf16 GEMM 8192x8192x8192 (TN, fp32 accumulation), cuBLASLt's "
                      "first heuristic algorithm, median of 20 runs; %s; %s\n",
                      *tflops, algo, d->name) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) remove(tmp);
    return KB_OK;
}
