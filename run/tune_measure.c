/* kb_tune_measure: the tuner's candidates in case buffers (buffers.h),
 * filled and referenced as a case is (reference.h), checked at the case's
 * default tolerance (accuracy.h) and timed with the case's timer, L2
 * flushed before each sample (timing.h). */
#include "tune_measure.h"

#include <stdlib.h>

#include "accuracy.h"
#include "buffers_gpu.h"
#include "reference.h"
#include "registry.h"
#include "timing.h"

/* The inputs of a search: fixed, so two searches of one problem rank the
 * same data. */
#define TUNE_SEED 1234

struct kb_tune_bench {
    kb_buffers b;
    kb_flusher fl;
};

static void bench_close(kb_tune_bench *tb)
{
    kb_flusher_free(&tb->fl);
    kb_buffers_free(&tb->b);
    free(tb);
}

static kb_status bench_open(void *arg, const kb_problem *p, size_t workspace_bytes,
                            cudaStream_t s, kb_tune_bench **out, kb_tensors *t, kb_err *e)
{
    *out = NULL;
    kb_tune_bench *tb = (kb_tune_bench *)calloc(1, sizeof *tb);
    if (!tb) return KB_FAIL(e, KB_ERR_IO, "out of host memory");
    kb_status st = kb_buffers_alloc(p, workspace_bytes, &tb->b, e);
    if (st == KB_OK) st = kb_flusher_init(&tb->fl, e);
    if (st == KB_OK) st = kb_buffers_prepare(&tb->b, TUNE_SEED, s, e);
    if (st != KB_OK) {
        bench_close(tb);
        return st;
    }
    *t = tb->b.t;
    *out = tb;
    return KB_OK;
}

static kb_status bench_poison(kb_tune_bench *tb, cudaStream_t s, kb_err *e)
{
    return kb_buffers_poison(&tb->b, s, e);
}

static kb_status bench_check(kb_tune_bench *tb, cudaStream_t s, int *bad, char *what,
                             size_t len, kb_err *e)
{
    const kb_problem *p = &tb->b.p;
    const kb_tol tol = kb_tol_default(p->dtype);
    kb_accuracy acc;
    const char *label = "output";
    KB_TRY(kb_check_output(&tb->b, tol, s, &acc, e));
    if (!acc.mismatches && tb->b.t.dw) {
        label = "dw";
        KB_TRY(kb_check_dw(&tb->b, tol, s, &acc, e));
    }
    *bad = acc.mismatches != 0;
    if (*bad) kb_accuracy_describe(&acc, kb_out_cols(p), label, what, len);
    return KB_OK;
}

static kb_status bench_time(kb_tune_bench *tb, kb_tune_launch_fn fn, void *arg, cudaStream_t s,
                            double *median_ms, kb_err *e)
{
    kb_timing_opts o;
    kb_timing_defaults(&o);
    /* Ranking candidates needs less precision than a reported result, and a
     * whole sweep has to tune in minutes: ~0.1 s per candidate at most. */
    o.warmup = 2;
    o.min_samples = 10;
    o.max_samples = 200;
    o.min_ms = 2;
    o.max_ms = 100;
    o.target_rel_err = 0.01;
    kb_timing tm;
    KB_TRY(kb_time_fn(fn, arg, &o, &tb->fl, s, &tm, e));
    *median_ms = tm.median_ms;
    return KB_OK;
}

const kb_tune_measurer kb_tune_measure = {NULL, bench_open, bench_poison, bench_check, bench_time,
                                          bench_close};
