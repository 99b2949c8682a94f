/* What one use of a case runs besides the backend: hooks a program may hand
 * the session (kb_session_open) that wrap the backend's impl for one use of
 * the case. kbench hands it the test knobs (testing/knobs.h, its own
 * library); a session without hooks, and one whose knobs are all off, runs
 * the backend's impl and state untouched. The run layer knows no knob. */
#ifndef KB_CASE_HOOKS_H
#define KB_CASE_HOOKS_H

#include "buffers.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The three uses of a case's impl: the run whose output is checked, the
 * timed runs, and the kernel check's traced call. */
typedef enum { KB_USE_CHECKED, KB_USE_TIMED, KB_USE_TRACED } kb_impl_use;

/* The case's own timer (a hook may time the backend first: KB_USE_TIMED). */
typedef struct {
    const kb_timing_opts *o;
    kb_flusher *flusher;
    cudaStream_t stream;
    const char *case_name; /* in messages */
} kb_knob_timer;

typedef struct kb_case_hooks {
    /* The hooks' state for a session (from the environment, say); close
     * frees it. */
    kb_status (*open)(void **ctx, kb_err *e);
    void (*close)(void *ctx);
    /* Which impl and state the use runs (*impl = inner, *state = inner_state
     * when nothing applies); *undo, when set, is handed to unwrap after the
     * use. series: the result's backend ("tuned:wide"); b: the case's
     * buffers; timer: KB_USE_TIMED only (else NULL). KB_ERR_UNSUPPORTED:
     * the case SKIPs, e says why. On an error nothing is left to unwrap. */
    kb_status (*wrap)(void *ctx, kb_impl_use use, const kb_impl *inner, void *inner_state,
                      kb_buffers *b, const char *series, const kb_knob_timer *timer,
                      const kb_impl **impl, void **state, void **undo, kb_err *e);
    void (*unwrap)(void *undo);
} kb_case_hooks;

#ifdef __cplusplus
}
#endif
#endif
