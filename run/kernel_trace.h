/* The kernels one call of a case launches, recorded with CUPTI.
 *
 * CUPTI is the CUDA toolkit's profiling library; its Activity API records
 * every kernel with its name, grid, block, registers, shared memory and
 * start/end time. kbench loads it at run time (dlopen, as it loads cuDNN), so
 * it builds and runs where CUPTI is missing: opening the tracer then fails
 * with KB_ERR_UNSUPPORTED and a message naming what was tried, and the
 * kernel check of each case is SKIP with that reason.
 *
 * The few CUPTI types and functions used are declared in kernel_trace.c, not
 * taken from cupti.h, so no build needs CUPTI's headers; where the headers are
 * on the include path, the record layout is checked against them when
 * kernel_trace.c compiles.
 *
 * kb_trace_call records one call: it enables kernel activity, runs fn once,
 * waits for the stream, disables the activity and flushes CUPTI's buffers,
 * keeping only the kernels that ran on fn's stream (the caller's L2 flush,
 * other streams' work and anything else in the process are not the case's),
 * sorted by start time. It is never used inside timed runs. */
#ifndef KB_KERNEL_TRACE_H
#define KB_KERNEL_TRACE_H

#include "kbench.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_TRACE_MAX 64 /* kernels kept per call; more are counted, not kept */

typedef struct {
    char name[128];              /* short readable name (kb_kernel_short_name) */
    int grid[3], block[3];
    int registers;               /* per thread                                  */
    int smem_static, smem_dynamic; /* bytes per block                           */
    uint64_t start_ns, end_ns;   /* GPU timestamps                              */
} kb_kernel_rec;

typedef struct {
    int n;     /* kernels on the traced stream (the first KB_TRACE_MAX are in k) */
    int other; /* kernel records on other streams, ignored                      */
    kb_kernel_rec k[KB_TRACE_MAX];
} kb_kernel_trace;

typedef struct kb_tracer kb_tracer;

/* Loads CUPTI: the first of libs[0..nlibs) that dlopen accepts. libs NULL:
 * $KBENCH_CUPTI_LIB alone when set (a path, or "none" to turn the check off;
 * kb_cli_check_env refuses one that does not load, before any GPU work),
 * else libcupti.so, libcupti.so.13, libcupti.so.12, the library found when
 * kbench was configured, then the toolkit's extras/CUPTI/lib64 and lib64.
 * Missing library or symbols: KB_ERR_UNSUPPORTED, the message says why. */
kb_status kb_tracer_open(const char *const *libs, size_t nlibs, kb_tracer **out, kb_err *e);
void kb_tracer_close(kb_tracer *t);

/* One traced call of fn on stream s (see above). fn's own failure is
 * returned as it is; a CUPTI call that fails is KB_ERR_UNSUPPORTED. */
kb_status kb_trace_call(kb_tracer *t, kb_timed_fn fn, void *arg, cudaStream_t s,
                        kb_kernel_trace *out, kb_err *e);

/* Short readable form of a kernel name as CUPTI gives it (mangled C++, or a
 * plain C name): demangled where the C++ runtime's demangler is linked,
 * return type, parameter list, "(anonymous namespace)::" and namespace
 * qualifiers dropped, template arguments kept while they fit;
 * "_ZN12_GLOBAL__N_19ew_kernelIf6SquareEEvPT_lT0_" -> "ew_kernel<float, Square>".
 * ';' (the list separator of results) becomes ','. */
void kb_kernel_short_name(const char *mangled, char *buf, size_t len);

/* The names joined with ';' and the durations in microseconds joined with
 * ';' (same order), as the results and baseline columns hold them. */
void kb_trace_names(const kb_kernel_trace *t, char *buf, size_t len);
void kb_trace_times_us(const kb_kernel_trace *t, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
