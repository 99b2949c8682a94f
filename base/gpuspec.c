/* CTest resource spec writer; see gpuspec.h. */
#include "gpuspec.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* printf onto the end of buf; 0 when it does not fit. */
static int append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *at) return 0;
    *at += (size_t)n;
    return 1;
}

kb_status kb_gpuspec_format(int ngpu, char *buf, size_t len, kb_err *e)
{
    if (ngpu < 0) return KB_FAIL(e, KB_ERR_ARG, "GPU count %d is negative", ngpu);
    size_t at = 0;
    int ok = len > 0;
    if (ok) buf[0] = '\0';
    ok = ok && append(buf, len, &at, "{\n  \"version\": {\"major\": 1, \"minor\": 0},\n"
                                      "  \"local\": [\n    {\n      \"gpus\": [\n");
    if (ngpu == 0)
        ok = ok && append(buf, len, &at, "        {\"id\": \"nogpu\", \"slots\": %d}\n",
                          KB_GPUSPEC_NOGPU_SLOTS);
    for (int i = 0; ok && i < ngpu; i++)
        ok = append(buf, len, &at, "        {\"id\": \"%d\", \"slots\": %d}%s\n", i,
                    KB_GPUSPEC_SLOTS, i + 1 < ngpu ? "," : "");
    ok = ok && append(buf, len, &at, "      ]\n    }\n  ]\n}\n");
    if (!ok) return KB_FAIL(e, KB_ERR_IO, "resource spec for %d GPUs does not fit in %zu bytes",
                            ngpu, len);
    return KB_OK;
}

kb_status kb_gpuspec_write(const char *path, int ngpu, kb_err *e)
{
    char json[16384];
    KB_TRY(kb_gpuspec_format(ngpu, json, sizeof json, e));
    char tmp[4096];
    /* Cut, the temporary name could be the file itself (written in place,
     * not atomically) or another process's. */
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
        return KB_FAIL(e, KB_ERR_ARG, "cannot write '%.60s...': a path of %zu characters is "
                       "too long", path, strlen(path));
    FILE *f = fopen(tmp, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    int bad = fputs(json, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int err = errno;
        remove(tmp);
        return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(err));
    }
    return KB_OK;
}

/* Without a driver the runtime says "CUDA driver version is insufficient",
 * which sends users hunting for a driver update on a machine that has no GPU;
 * say what is missing first and keep CUDA's words as the detail. */
kb_status kb_no_gpu(cudaError_t rc, const char *rc_text, int driver_found, kb_err *e)
{
    if (!driver_found)
        return KB_FAIL(e, KB_ERR_NODEV, "no CUDA driver/GPU on this machine (libcuda.so.1 not found)");
    if (rc == cudaErrorInsufficientDriver)
        return KB_FAIL(e, KB_ERR_NODEV,
                       "the CUDA driver on this machine is older than kbench's CUDA runtime "
                       "(%s): update the driver",
                       rc_text);
    return KB_FAIL(e, KB_ERR_NODEV, "no CUDA GPU on this machine (%s)",
                   rc != cudaSuccess ? rc_text : "the driver sees 0 devices");
}

int kb_cuda_driver_found(void)
{
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (drv) dlclose(drv);
    return drv != NULL;
}
