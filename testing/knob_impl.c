/* The test knobs as a decorator of a kb_impl (knobs.h): the run path asks
 * for the impl to run and never branches on a knob itself. */
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "registry.h"

static kb_status knobbed_run(const kb_problem *p, const kb_tensors *t, void *state,
                             cudaStream_t s, kb_err *e)
{
    kb_knobbed *w = state;
    KB_TRY(w->inner->run(p, t, w->inner_state, s, e));
    if (w->perturb) KB_TRY(kb_perturb_output(w->k, w->b, s, e));
    if (w->fault) KB_TRY(kb_test_fault(w->k, s, e));
    if (w->split) KB_TRY(kb_test_split_noop(s, e));
    if (w->extra) KB_CUDA(e, cudaMemsetAsync(w->extra, 0, w->extra_bytes, s));
    return kb_spin_ns(w->spin_ns, s, e);
}

static int knobbed_kernels(const kb_problem *p, const void *state)
{
    const kb_knobbed *w = state;
    return w->inner->kernels(p, w->inner_state);
}

static kb_status timed_once(void *arg, cudaStream_t s, kb_err *e)
{
    kb_knobbed *w = arg;
    return w->impl->run(&w->b->p, &w->b->t, w->state, s, e);
}

/* KBENCH_TEST_EXTRA_TIME: the hold is a fraction of the backend's own time,
 * so that time is measured first, by the same timer the case is judged with
 * (same L2 flush, same back-to-back launch), on the backend alone (no extra
 * bytes, no hold yet), 20 samples. */
static kb_status extra_time_ns(kb_knobbed *w, const kb_knob_timer *timer, kb_err *e)
{
    kb_timing_opts o = *timer->o;
    o.warmup = 3;
    o.min_samples = o.max_samples = 20;
    o.min_ms = 0;
    kb_timing t;
    kb_err inner = {{0}};
    kb_status st = kb_time_fn(timed_once, w, &o, timer->flusher, timer->stream, &t, &inner);
    if (st != KB_OK)
        return KB_FAIL(e, st, "%s: KBENCH_TEST_EXTRA_TIME: pilot timing failed: %s",
                       timer->case_name, kb_err_text(&inner));
    /* Every CUDA call succeeded, so this is no CUDA error: the knob asks for
     * a fraction of a time that is not there (a backend too quick for the
     * event timer). The knob's value cannot be applied to this case: a bad
     * argument, and a FAIL, not a SKIP, so the test using it cannot pass
     * vacuously. */
    if (!(t.median_ms > 0))
        return KB_FAIL(e, KB_ERR_ARG,
                       "%s: KBENCH_TEST_EXTRA_TIME: pilot median is %g ms, no time to add a "
                       "fraction of",
                       timer->case_name, t.median_ms);
    w->spin_ns = (uint64_t)(w->k->slow_fraction * t.median_ms * 1e6 + 0.5);
    /* Test-only knob: say what it did, so a measurement can be checked. */
    fprintf(stderr, "%s: KBENCH_TEST_EXTRA_TIME: pilot median %.4f ms, hold %llu ns per run\n",
            timer->case_name, t.median_ms, (unsigned long long)w->spin_ns);
    return KB_OK;
}

kb_status kb_knobbed_open(const kb_knobs *k, kb_impl_use use, const kb_impl *inner,
                          void *inner_state, kb_buffers *b, const char *series,
                          const kb_knob_timer *timer, kb_knobbed *w, kb_err *e)
{
    memset(w, 0, sizeof *w);
    w->impl = inner;
    w->state = inner_state;
    w->inner = inner;
    w->inner_state = inner_state;
    w->k = k;
    w->b = b;
    w->perturb = use == KB_USE_CHECKED && k->perturb && kb_knob_applies(k->perturb_backend, series);
    if (w->perturb && !kb_perturb_applies(k->perturb, b->p.bench))
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "KBENCH_TEST_PERTURB: %s does not apply to %s",
                       kb_perturb_name(k->perturb), kb_bench_info_get(b->p.bench)->name);
    w->split = use != KB_USE_CHECKED && kb_knob_applies(k->split_backend, series);
    w->fault = use == KB_USE_CHECKED && k->fault && kb_knob_applies(k->fault_backend, series);
    const int slow = use == KB_USE_TIMED && k->slow_fraction > 0 &&
                     kb_knob_applies(k->slow_backend, series);
    const int extra = use == KB_USE_TIMED && k->extra_fraction > 0 &&
                      kb_knob_applies(k->extra_backend, series);
    if (!w->perturb && !w->split && !w->fault && !slow && !extra)
        return KB_OK; /* the backend itself */

    w->deco = *inner;
    w->deco.setup = NULL;
    w->deco.describe = NULL;
    w->deco.teardown = NULL;
    w->deco.run = knobbed_run;
    w->deco.kernels = inner->kernels ? knobbed_kernels : NULL;
    w->impl = &w->deco;
    w->state = w;
    if (slow) KB_TRY(extra_time_ns(w, timer, e));
    if (extra) {
        w->extra_bytes = (size_t)(k->extra_fraction * kb_bytes_moved(&b->p));
        const cudaError_t rc = cudaMalloc(&w->extra, w->extra_bytes);
        if (rc != cudaSuccess) {
            w->extra = NULL;
            return KB_FAIL(e, KB_ERR_CUDA, "%s: KBENCH_TEST_EXTRA_BYTES: cannot allocate %zu bytes: %s",
                           timer ? timer->case_name : kb_bench_info_get(b->p.bench)->name,
                           w->extra_bytes, cudaGetErrorString(rc));
        }
    }
    return KB_OK;
}

void kb_knobbed_close(kb_knobbed *w)
{
    if (w->extra) cudaFree(w->extra);
    w->extra = NULL;
}
