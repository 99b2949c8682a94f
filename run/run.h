/* Running cases: a session holds what every case of one process shares
 * (device, SOL, baseline file, L2 flusher, stream); kb_run_case runs one
 * case end to end: setup, inputs, accuracy, timing, baseline verdict. */
#ifndef KB_RUN_H
#define KB_RUN_H

#include "baseline.h"
#include "cli.h"
#include "device.h"
#include "envinfo.h"
#include "gate.h"
#include "gpulock.h"
#include "case_hooks.h"
#include "results.h"
#include "rowfile.h"
#include "timing.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where one case's wall time went (ms), printed with verbose results: the
 * suite's own speed is measured, not guessed. */
typedef struct {
    double lock, setup, alloc, check, timing, kernels, teardown, total;
} kb_phases;

typedef struct {
    const kb_options *o;
    kb_device dev;
    kb_env env;             /* the banner's facts; each row's env column */
    char env_text[256];
    double sol_gbps;
    double gemm_tflops;     /* bf16 GEMM peak (gemm_sol.h); 0 until a compute-bound case needs it */
    kb_gpu_limits limits;
    kb_gpu_lock lock;       /* held while a case uses the GPU (gpulock.h) */
    char lock_path[512];
    char plan_dir[1024]; /* kb_plan_cache_dir: where backends keep built plans */
    char baseline_path[1024];
    int baseline_missing;   /* no file: every case is NO_BASELINE */
    kb_baseline baseline;
    char tune_cache[1024];
    kb_flusher flusher;
    kb_settle settle;   /* the GPU settled before each case's timing (timing.h) */
    kb_timing_opts timing;
    kb_gate_opts gate;
    cudaStream_t stream;
    kb_results results;
    kb_rowfile csv_out, json_out; /* --csv, --json: a row as each case ends */
    const kb_case_hooks *hooks; /* what wraps a case's runs (case_hooks.h), or NULL */
    void *hooks_ctx;
    kb_phases phases; /* of the last case */
    double open_ms[4];  /* session start-up: device, baseline, flush buffer+stream, SOL/floor */
    struct kb_kernel_checker *kernels; /* kernel_check.h; NULL until the first check */
} kb_session;

typedef enum { KB_CASE_PASS = 0, KB_CASE_FAIL, KB_CASE_SKIP } kb_outcome;

/* hooks: what wraps each use of a case (case_hooks.h: kbench hands the test
 * knobs), or NULL: every case runs its backend as it is. */
kb_status kb_session_open(kb_session *s, const kb_options *o, const kb_case_hooks *hooks,
                          kb_err *e);
/* The baseline file a run gates against (--baseline, or the default file of
 * gpu_name, which may be NULL with --baseline) and whether it is missing; KB_ERR_ARG for an explicit path that does
 * not exist (unless --update-baseline will create it). */
kb_status kb_session_baseline_path(const kb_options *o, const char *gpu_name, char *path,
                                   size_t len, int *missing, kb_err *e);
/* The tuning cache the tuned backend reads: --tune-cache, else env
 * (KBENCH_TUNE_CACHE), else the GPU's committed file under the tuning folder
 * (gpu_file: kb_gpu_file_name of its name; NULL before the device is open).
 * A named cache that does not exist is KB_ERR_ARG unless --tune starts it:
 * a mistyped path would have the tuned backend run its heuristic on every
 * case without a word, and the gate read that as a slowdown. */
kb_status kb_session_tune_cache_path(const kb_options *o, const char *env, const char *gpu_file,
                                     char *path, size_t len, kb_err *e);
/* Writes --update-baseline, --csv, --json outputs; frees everything. */
kb_status kb_session_finish(kb_session *s, kb_err *e);
void kb_session_close(kb_session *s);

/* custom: a named tuned configuration (series "tuned:<name>") or NULL.
 * The result is appended to s->results and copied to *r. */
kb_outcome kb_run_case(kb_session *s, const kb_case *c, const kb_custom_config *custom,
                       kb_result *r);

/* GPU reference vs CPU reference on small shapes (every benchmark, dtype;
 * kbench --self-test, selftest.c); prints one line per check to log.
 * KB_ERR_ACCURACY on a mismatch. */
kb_status kb_reference_selftest(FILE *log, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
