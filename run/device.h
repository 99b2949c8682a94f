/* The GPU a process runs on: chosen by --device, or by CTest's resource
 * allocation (ctest --resource-spec-file), else device 0. */
#ifndef KB_DEVICE_H
#define KB_DEVICE_H

#include "kbench.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int ordinal;
    char name[256];    /* cudaDeviceProp.name                  */
    char pci[32];      /* PCI bus id, e.g. 0000:19:00.0        */
    int sm_count;
    size_t l2_bytes, smem_optin, total_mem;
    int cc_major, cc_minor;
} kb_device;

/* CTest resource allocation: count = $CTEST_RESOURCE_GROUP_COUNT, gpus =
 * $CTEST_RESOURCE_GROUP_0_GPUS ("id:3,slots:1"). *ordinal = -1 when count
 * is NULL (no allocation). Malformed values are KB_ERR_ARG. Pure: unit
 * tested without a GPU. */
kb_status kb_resource_parse(const char *count, const char *gpus, int *ordinal, kb_err *e);

/* The GPU ordinal to use: requested when >= 0, else CTest's allocation
 * (environment), else 0. KB_ERR_ARG for a malformed allocation. */
kb_status kb_device_ordinal(int requested, int *ordinal, kb_err *e);

/* requested >= 0 overrides the environment. KB_ERR_NODEV when the driver or
 * a device is missing (the caller exits with KB_EXIT_SKIP). */
kb_status kb_device_open(int requested, kb_device *d, kb_err *e);

/* What a GPU model can do, measured once and cached in cache_dir
 * ("sol-<gpu>.txt"):
 *   sol_gbps     device-to-device copy bandwidth (read+write bytes / time)
 *                on a buffer far larger than L2;
 *   floor_ms     the verdict's time floor: the launch-to-launch spread
 *                (p99 - p1) of an empty kernel timed as cases are timed;
 *   overhead_ms  that empty kernel's median (what timing adds to any case);
 *   read_gbps    a read-only stream (128-bit loads, reduced) and
 *   write_gbps   a write-only stream (128-bit stores), each over a buffer
 *                far larger than L2 timed as cases are: with sol_gbps the
 *                three points of the traffic-mix SOL (sol.h). */
typedef struct {
    double sol_gbps, floor_ms, overhead_ms, read_gbps, write_gbps;
} kb_gpu_limits;

/* 1 when a CUDA tool is injected into this process (compute-sanitizer, ncu,
 * nsys: CUDA_INJECTION64_PATH, their LD_PRELOAD libraries, or one of their
 * libraries mapped into the process). Under one,
 * kernels run many times slower: what is measured then (SOL, launch jitter,
 * GEMM peak) must not be cached, or every later run on the GPU would judge
 * against it (a 9x time floor made launch-bound regressions SAME). */
int kb_under_cuda_tool(void);
/* One line of /proc/self/maps: 1 when it maps a CUDA tool's library (the
 * tools' launcher may strip the variables above once it is loaded). */
int kb_tool_in_maps_line(const char *line);

/* Reads the cache; 1 when it holds every field, else 0 (missing, old or
 * unreadable: measure). A cache written before the read/write streams were
 * measured lacks them, and one written before the read-pass L2 flush (no
 * "l2_flush_clean 1" line) had them, the floor and the overhead timed after
 * a memset flush: 0, and kb_gpu_limits_measure measures those again, keeping
 * the copy. */
int kb_gpu_limits_cached(const kb_device *d, const char *cache_dir, kb_gpu_limits *l);
/* Measures what the cache lacks (the GPU must be idle: take the GPU lock
 * first) and writes the cache, except under a CUDA tool (kb_under_cuda_tool:
 * the numbers serve this run only). flusher/stream: those cases are timed
 * with. */
kb_status kb_gpu_limits_measure(const kb_device *d, const char *cache_dir, kb_flusher *flusher,
                                cudaStream_t s, kb_gpu_limits *l, kb_err *e);

/* The read-only and write-only streams (sol_stream.cu). */
kb_status kb_sol_streams_measure(const kb_device *d, kb_flusher *f, cudaStream_t s,
                                 double *read_gbps, double *write_gbps, kb_err *e);

/* Parses a cache file's text into l; returns which fields it held
 * (KB_LIMITS_* bits). A one-way stream below half the copy bandwidth is
 * not a measurement of an idle GPU (one-way streams run faster than a copy;
 * the cache written under compute-sanitizer held 6 %): that cache was
 * written under a CUDA tool, so both streams, the launch-jitter floor and
 * the overhead count as missing and are measured again (the copy, a
 * cudaMemcpy, is kept). So do they without the "l2_flush_clean 1" line:
 * timed after a memset flush, they carried its write-back. Pure: unit
 * tested. */
enum {
    KB_LIMITS_COPY = 1, KB_LIMITS_FLOOR = 2, KB_LIMITS_OVERHEAD = 4, KB_LIMITS_READ = 8,
    KB_LIMITS_WRITE = 16, KB_LIMITS_ALL = 31
};
int kb_gpu_limits_parse(const char *text, kb_gpu_limits *l);

#ifdef __cplusplus
}
#endif
#endif
