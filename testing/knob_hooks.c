/* The test knobs as the run layer's case hooks (case_hooks.h): the run
 * layer calls these through the table kbench hands its session, so it
 * links no knob; each wrapped use is a kb_knobbed of its own (it points
 * into itself, so it lives on the heap from open to close). */
#include <stdlib.h>

#include "knobs.h"

static kb_status hooks_open(void **ctx, kb_err *e)
{
    kb_knobs *k = calloc(1, sizeof *k);
    if (!k) return KB_FAIL(e, KB_ERR_NOMEM, "test knobs: out of host memory");
    const kb_status st = kb_knobs_from_env(k, e);
    if (st != KB_OK) {
        free(k);
        return st;
    }
    *ctx = k;
    return KB_OK;
}

static void hooks_close(void *ctx) { free(ctx); }

static kb_status hooks_wrap(void *ctx, kb_impl_use use, const kb_impl *inner, void *inner_state,
                            kb_buffers *b, const char *series, const kb_knob_timer *timer,
                            const kb_impl **impl, void **state, void **undo, kb_err *e)
{
    *impl = inner;
    *state = inner_state;
    *undo = NULL;
    kb_knobbed *w = calloc(1, sizeof *w);
    if (!w) return KB_FAIL(e, KB_ERR_NOMEM, "test knobs: out of host memory");
    const kb_status st = kb_knobbed_open(ctx, use, inner, inner_state, b, series, timer, w, e);
    if (st != KB_OK) {
        kb_knobbed_close(w);
        free(w);
        return st;
    }
    *impl = w->impl;
    *state = w->state;
    *undo = w;
    return KB_OK;
}

static void hooks_unwrap(void *undo)
{
    kb_knobbed_close(undo);
    free(undo);
}

const kb_case_hooks kb_test_knob_hooks = {hooks_open, hooks_close, hooks_wrap, hooks_unwrap};
