/* Device selection, properties and the speed-of-light measurement. */
#include "device.h"
#include "csvio.h"
#include "files.h"
#include "gpuspec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kb_status parse_int(const char *s, const char *what, long *out, kb_err *e)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || v < 0 || v > INT_MAX)
        return KB_FAIL(e, KB_ERR_ARG, "malformed %s '%s': expected a non-negative integer", what,
                       s);
    *out = v;
    return KB_OK;
}

kb_status kb_resource_parse(const char *count, const char *gpus, int *ordinal, kb_err *e)
{
    *ordinal = -1;
    if (!count) return KB_OK;
    long n = 0;
    KB_TRY(parse_int(count, "CTEST_RESOURCE_GROUP_COUNT", &n, e));
    if (n < 1)
        return KB_FAIL(e, KB_ERR_ARG, "CTEST_RESOURCE_GROUP_COUNT is %ld: a case needs one GPU", n);
    if (!gpus || !*gpus)
        return KB_FAIL(e, KB_ERR_ARG,
                       "CTEST_RESOURCE_GROUP_0_GPUS is not set: the resource spec file must "
                       "define a 'gpus' resource (see ci/write-gpu-spec)");
    /* "id:<id>,slots:<n>"; the id is the CUDA ordinal (ci/write-gpu-spec). */
    char buf[128];
    if (strlen(gpus) >= sizeof buf)
        return KB_FAIL(e, KB_ERR_ARG, "CTEST_RESOURCE_GROUP_0_GPUS too long: '%s'", gpus);
    strcpy(buf, gpus);
    char *semi = strchr(buf, ';');
    if (semi) *semi = '\0'; /* several GPUs granted: a case uses the first */
    char *comma = strchr(buf, ',');
    if (strncmp(buf, "id:", 3) != 0 || !comma || strncmp(comma + 1, "slots:", 6) != 0)
        return KB_FAIL(e, KB_ERR_ARG,
                       "malformed CTEST_RESOURCE_GROUP_0_GPUS '%s': expected id:<n>,slots:<n>",
                       gpus);
    *comma = '\0';
    long id = 0, slots = 0;
    KB_TRY(parse_int(buf + 3, "GPU id", &id, e));
    KB_TRY(parse_int(comma + 7, "slot count", &slots, e));
    if (slots < 1) return KB_FAIL(e, KB_ERR_ARG, "malformed CTEST_RESOURCE_GROUP_0_GPUS '%s': slots < 1", gpus);
    *ordinal = (int)id;
    return KB_OK;
}

kb_status kb_device_ordinal(int requested, int *ordinal, kb_err *e)
{
    *ordinal = requested;
    if (requested >= 0) return KB_OK;
    KB_TRY(kb_resource_parse(getenv("CTEST_RESOURCE_GROUP_COUNT"),
                             getenv("CTEST_RESOURCE_GROUP_0_GPUS"), ordinal, e));
    if (*ordinal < 0) *ordinal = 0;
    return KB_OK;
}

kb_status kb_device_open(int requested, kb_device *d, kb_err *e)
{
    memset(d, 0, sizeof *d);
    /* No GPU first: on a machine without one, the resource spec CTest hands
     * out names no real device, and the case is a SKIP whatever it says. */
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0)
        return kb_no_gpu(rc, cudaGetErrorString(rc), kb_cuda_driver_found(), e);
    int ordinal = 0;
    KB_TRY(kb_device_ordinal(requested, &ordinal, e));
    if (ordinal >= count)
        return KB_FAIL(e, KB_ERR_ARG, "GPU %d requested but only %d visible", ordinal, count);
    KB_CUDA(e, cudaSetDevice(ordinal));
    struct cudaDeviceProp prop;
    KB_CUDA(e, cudaGetDeviceProperties(&prop, ordinal));
    d->ordinal = ordinal;
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    KB_CUDA(e, cudaDeviceGetPCIBusId(d->pci, (int)sizeof d->pci, ordinal));
    d->sm_count = prop.multiProcessorCount;
    d->l2_bytes = (size_t)prop.l2CacheSize;
    d->smem_optin = prop.sharedMemPerBlockOptin;
    d->total_mem = prop.totalGlobalMem;
    d->cc_major = prop.major;
    d->cc_minor = prop.minor;
    return KB_OK;
}

int kb_tool_in_maps_line(const char *line)
{
    /* Only a mapped file's own name: a build folder called "sanitizer-test"
     * is not a tool. Not CUPTI: kbench loads it itself for the kernel check. */
    static const char *const tool_libs[] = {"sanitizer", "TreeLauncher", "ToolsInjection",
                                            "InterceptorInjection", "nsight"};
    const char *path = strchr(line, '/');
    if (!path) return 0;
    const char *base = strrchr(path, '/') + 1;
    for (size_t i = 0; i < sizeof tool_libs / sizeof *tool_libs; i++)
        if (strstr(base, tool_libs[i])) return 1;
    return 0;
}

int kb_under_cuda_tool(void)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    const char *pre = getenv("LD_PRELOAD");
    if ((inj && *inj) || (pre && (strstr(pre, "sanitizer") || strstr(pre, "nsys") ||
                                  strstr(pre, "nsight-compute") || strstr(pre, "Nsight"))))
        return 1;
    /* The tools' launcher may remove its variables from the environment once
     * its library is in (compute-sanitizer's did, and a run under it cached
     * its floor: docs/reference/timing.md); the library stays mapped. */
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    char line[4608];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        found = kb_tool_in_maps_line(line);
    }
    fclose(f);
    return found;
}

static void sol_cache_path(const kb_device *d, const char *dir, char *buf, size_t len)
{
    char name[256];
    kb_gpu_file_name(d->name, name, sizeof name);
    snprintf(buf, len, "%s/sol-%s.txt", dir, name);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static kb_status measure_copy(const kb_device *d, double *gbps, kb_err *e)
{
    /* 16x L2 per buffer (>= 1 GiB): the copy streams from HBM. */
    size_t bytes = d->l2_bytes * 16;
    if (bytes < ((size_t)1 << 30)) bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    float ms[15];
    kb_status st = KB_OK;
    cudaError_t rc = cudaMalloc(&a, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc(&b, bytes);
    if (rc == cudaSuccess) rc = cudaMemset(a, 1, bytes);
    if (rc == cudaSuccess) rc = cudaEventCreate(&t0);
    if (rc == cudaSuccess) rc = cudaEventCreate(&t1);
    for (int i = -3; i < 15 && rc == cudaSuccess; i++) {
        rc = cudaEventRecord(t0, 0);
        if (rc == cudaSuccess) rc = cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
        if (rc == cudaSuccess) rc = cudaEventRecord(t1, 0);
        if (rc == cudaSuccess) rc = cudaEventSynchronize(t1);
        if (rc == cudaSuccess && i >= 0) rc = cudaEventElapsedTime(&ms[i], t0, t1);
    }
    if (rc != cudaSuccess)
        st = KB_FAIL(e, KB_ERR_CUDA, "SOL copy measurement: %s", cudaGetErrorString(rc));
    else {
        qsort(ms, 15, sizeof ms[0], cmp_float);
        *gbps = 2.0 * (double)bytes / (ms[7] * 1e-3) / 1e9;
    }
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    cudaFree(a);
    cudaFree(b);
    return st;
}

/* Line 1: copy GB/s (the oldest format had only this line); then
 * "key value" lines. A value that does not parse, or is out of range, counts
 * as missing. */
int kb_gpu_limits_parse(const char *text, kb_gpu_limits *l)
{
    int have = 0, clean_flush = 0;
    l->sol_gbps = l->read_gbps = l->write_gbps = 0;
    l->floor_ms = -1;
    l->overhead_ms = 0;
    const char *line = text;
    for (int first = 1; line && *line; first = 0) {
        double v;
        char key[32];
        if (first) {
            if (sscanf(line, "%lf", &v) == 1 && v > 0) {
                l->sol_gbps = v;
                have |= KB_LIMITS_COPY;
            }
        } else if (sscanf(line, "%31s %lf", key, &v) == 2) {
            if (strcmp(key, "launch_floor_ms") == 0 && v >= 0) {
                l->floor_ms = v;
                have |= KB_LIMITS_FLOOR;
            } else if (strcmp(key, "launch_overhead_ms") == 0) {
                l->overhead_ms = v;
                have |= KB_LIMITS_OVERHEAD;
            } else if (strcmp(key, "read_gbps") == 0 && v > 0) {
                l->read_gbps = v;
                have |= KB_LIMITS_READ;
            } else if (strcmp(key, "write_gbps") == 0 && v > 0) {
                l->write_gbps = v;
                have |= KB_LIMITS_WRITE;
            } else if (strcmp(key, "l2_flush_clean") == 0 && v == 1) {
                clean_flush = 1;
            }
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
    /* Plausibility against the copy: see device.h. The floor and overhead
     * go with the streams: they were timed by the same kbench, under the
     * same tool (9x on the H200). */
    const int slow_read =
        (have & KB_LIMITS_COPY) && (have & KB_LIMITS_READ) && l->read_gbps < 0.5 * l->sol_gbps;
    const int slow_write =
        (have & KB_LIMITS_COPY) && (have & KB_LIMITS_WRITE) && l->write_gbps < 0.5 * l->sol_gbps;
    /* Streams, floor and overhead timed after a memset flush (caches written
     * before "l2_flush_clean 1") carried its write-back: measure again. The
     * copy is timed without a flush and stays. */
    if (slow_read || slow_write || !clean_flush) {
        l->read_gbps = l->write_gbps = 0;
        l->floor_ms = -1;
        l->overhead_ms = 0;
        have &= ~(KB_LIMITS_READ | KB_LIMITS_WRITE | KB_LIMITS_FLOOR | KB_LIMITS_OVERHEAD);
    }
    return have;
}

static int read_cache(const char *path, kb_gpu_limits *l)
{
    char text[4096];
    kb_read_small(path, text, sizeof text);
    return kb_gpu_limits_parse(text, l);
}

int kb_gpu_limits_cached(const kb_device *d, const char *cache_dir, kb_gpu_limits *l)
{
    char path[1024];
    sol_cache_path(d, cache_dir, path, sizeof path);
    return read_cache(path, l) == KB_LIMITS_ALL;
}

typedef struct {
    const kb_gpu_limits *l;
    const char *gpu;
} limits_text;

static kb_status write_limits(FILE *f, void *ctx, kb_err *e)
{
    const limits_text *t = ctx;
    const kb_gpu_limits *l = t->l;
    if (fprintf(f,
                "%.1f\nlaunch_floor_ms %.6f\nlaunch_overhead_ms %.6f\nread_gbps %.1f\n"
                "write_gbps %.1f\nl2_flush_clean 1\n"
                "# device-to-device copy GB/s (read+write); the p99-p1 spread and the median "
                "of an empty kernel timed as cases are (ms); read-only and write-only "
                "streams (GB/s); timed after the read-pass L2 flush; %s\n",
                l->sol_gbps, l->floor_ms, l->overhead_ms, l->read_gbps, l->write_gbps,
                t->gpu) < 0)
        return KB_FAIL(e, KB_ERR_IO, "cannot write the SOL cache");
    return KB_OK;
}

kb_status kb_gpu_limits_measure(const kb_device *d, const char *cache_dir, kb_flusher *flusher,
                                cudaStream_t s, kb_gpu_limits *l, kb_err *e)
{
    char path[1024];
    sol_cache_path(d, cache_dir, path, sizeof path);
    /* Another process may have measured while this one waited for the lock. */
    const int have = read_cache(path, l);
    if (have == KB_LIMITS_ALL) return KB_OK;
    if (!(have & KB_LIMITS_COPY)) KB_TRY(measure_copy(d, &l->sol_gbps, e));
    if ((have & (KB_LIMITS_READ | KB_LIMITS_WRITE)) != (KB_LIMITS_READ | KB_LIMITS_WRITE))
        KB_TRY(kb_sol_streams_measure(d, flusher, s, &l->read_gbps, &l->write_gbps, e));
    if ((have & (KB_LIMITS_FLOOR | KB_LIMITS_OVERHEAD)) != (KB_LIMITS_FLOOR | KB_LIMITS_OVERHEAD)) {
        double spread = 0;
        KB_TRY(kb_launch_jitter(flusher, s, 400, &spread, &l->overhead_ms, e));
        l->floor_ms = spread;
    }
    if (kb_under_cuda_tool()) return KB_OK; /* this run's numbers only: device.h */
    /* Silent on failure: a read-only build tree only costs a re-measure. */
    const limits_text t = {l, d->name};
    kb_err ignored = {{0}};
    (void)kb_atomic_write(path, write_limits, (void *)&t, &ignored);
    return KB_OK;
}
