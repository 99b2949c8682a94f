/* Running cases: a session holds what every case of one process shares
 * (device, SOL, baseline file, L2 flusher, stream); kb_run_case runs one
 * case end to end: setup, inputs, accuracy, timing, baseline verdict. */
#ifndef KB_RUN_H
#define KB_RUN_H

#include "baseline.h"
#include "cli.h"
#include "device.h"
#include "gate.h"
#include "knobs.h"
#include "results.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const kb_options *o;
    kb_device dev;
    double sol_gbps;
    char baseline_path[1024];
    kb_baseline baseline;
    char tune_cache[1024];
    kb_flusher flusher;
    kb_timing_opts timing;
    kb_gate_opts gate;
    cudaStream_t stream;
    kb_results results;
    kb_knobs knobs; /* test-only (knobs.h); all off in real runs */
} kb_session;

typedef enum { KB_CASE_PASS = 0, KB_CASE_FAIL, KB_CASE_SKIP } kb_outcome;

kb_status kb_session_open(kb_session *s, const kb_options *o, kb_err *e);
/* Writes --update-baseline, --csv, --json outputs; frees everything. */
kb_status kb_session_finish(kb_session *s, kb_err *e);
void kb_session_close(kb_session *s);

/* custom: a named tuned configuration (series "tuned:<name>") or NULL.
 * The result is appended to s->results and copied to *r. */
kb_outcome kb_run_case(kb_session *s, const kb_case *c, const kb_custom_config *custom,
                       kb_result *r);

#ifdef __cplusplus
}
#endif
#endif
