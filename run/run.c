/* One case, end to end. The order matters: accuracy before timing (a wrong
 * kernel's speed means nothing), outputs poisoned before the checked run
 * (an unwritten element is NaN and fails). */
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "accuracy.h"
#include "buffers_gpu.h"
#include "dump.h"
#include "files.h"
#include "gemm_sol.h"
#include "kernel_check.h"
#include "plancache.h"
#include "reference.h"
#include "sol.h"
#include "tune_measure.h"

#define KB_SEED 0x6b62656e6368ull /* "kbench" */

/* The baseline file, checked before any GPU work: a path the user typed must
 * exist (else nothing would be gated and every case would pass). */
kb_status kb_session_baseline_path(const kb_options *o, const char *gpu_name, char *path,
                                   size_t len, int *missing, kb_err *e)
{
    if (o->baseline)
        KB_TRY(kb_path_print(path, len, "--baseline", o->baseline, e, "%s", o->baseline));
    else
        kb_baseline_path(KBENCH_BASELINE_DIR, gpu_name, path, len);
    return kb_baseline_check_path(path, o->baseline != NULL, o->update_baseline,
                                  "--baseline names the file to gate against; add "
                                  "--update-baseline to start a new one",
                                  missing, e);
}

kb_status kb_session_tune_cache_path(const kb_options *o, const char *env, const char *gpu_file,
                                     char *path, size_t len, kb_err *e)
{
    const char *named = o->tune_cache ? o->tune_cache : env && *env ? env : NULL;
    int missing;
    if (!named) {
        snprintf(path, len, "%s/%s.txt", KBENCH_TUNE_DIR, gpu_file ? gpu_file : "unknown_gpu");
        return KB_OK;
    }
    KB_TRY(kb_path_print(path, len, o->tune_cache ? "--tune-cache" : "KBENCH_TUNE_CACHE", named, e,
                         "%s", named));
    return kb_input_file_check("tuning cache", path, 1, o->tune,
                               o->tune_cache ? "--tune-cache names the cache the tuned backend "
                                               "reads; --tune starts a new one"
                                             : "KBENCH_TUNE_CACHE names the cache the tuned "
                                               "backend reads; --tune starts a new one",
                               &missing, e);
}

/* SOL and the time floor come from the per-GPU cache; measuring them needs
 * the GPU to itself, so a cache miss takes the GPU lock first. */
static kb_status gpu_limits(kb_session *s, kb_err *e)
{
    if (!kb_gpu_limits_cached(&s->dev, KBENCH_STATE_DIR, &s->limits)) {
        KB_TRY(kb_gpu_lock_acquire(&s->lock, s->lock_path, "kbench (measuring SOL and launch "
                                   "jitter)", stdout, e));
        kb_status st = kb_gpu_limits_measure(&s->dev, KBENCH_STATE_DIR, &s->flusher, s->stream,
                                             &s->limits, e);
        kb_gpu_lock_release(&s->lock);
        KB_TRY(st);
    }
    s->sol_gbps = s->limits.sol_gbps;
    s->gate.floor_ms = s->limits.floor_ms;
    return KB_OK;
}

kb_status kb_session_open(kb_session *s, const kb_options *o, const kb_case_hooks *hooks,
                          kb_err *e)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    kb_results_init(&s->results);
    if (o->csv) KB_TRY(kb_rowfile_init(&s->csv_out, o->csv, KB_ROWS_CSV, e));
    if (o->json) KB_TRY(kb_rowfile_init(&s->json_out, o->json, KB_ROWS_JSON, e));
    kb_baseline_init(&s->baseline);
    kb_gpu_lock_init(&s->lock);
    kb_timing_defaults(&s->timing);
    if (!isnan(o->budget_ms)) s->timing.max_ms = o->budget_ms;
    kb_gate_defaults(&s->gate);
    if (!isnan(o->perf_tolerance)) s->gate.tolerance = o->perf_tolerance;
    s->hooks = hooks;
    if (hooks && hooks->open) KB_TRY(hooks->open(&s->hooks_ctx, e));
    /* An explicit --baseline is checked and read before the device: a
     * mistyped path or a malformed file is an error on every machine, GPU
     * or not (after the device, no GPU's SKIP hid it). Read once: the
     * session keeps it. */
    if (o->baseline) {
        KB_TRY(kb_session_baseline_path(o, NULL, s->baseline_path, sizeof s->baseline_path,
                                        &s->baseline_missing, e));
        KB_TRY(kb_baseline_read(s->baseline_path, &s->baseline, e));
    }
    /* So is a named tuning cache (the GPU's own file is known only later). */
    const char *env_cache = getenv("KBENCH_TUNE_CACHE");
    KB_TRY(kb_session_tune_cache_path(o, env_cache, NULL, s->tune_cache, sizeof s->tune_cache, e));
    double t = (1e3 * kb_mono_s());
    KB_TRY(kb_device_open(o->device, &s->dev, e));
    s->open_ms[0] = (1e3 * kb_mono_s()) - t;
    t = (1e3 * kb_mono_s());
    kb_env_collect(&s->dev, &s->env);
    kb_env_compact(&s->env, s->env_text, sizeof s->env_text);
    kb_gpu_lock_path(NULL, s->dev.pci, s->lock_path, sizeof s->lock_path);
    kb_plan_cache_dir(KBENCH_STATE_DIR, s->plan_dir, sizeof s->plan_dir);
    char gpu[256];
    kb_gpu_file_name(s->dev.name, gpu, sizeof gpu);
    if (!o->baseline) { /* the GPU's own file, known only now */
        KB_TRY(kb_session_baseline_path(o, s->dev.name, s->baseline_path,
                                        sizeof s->baseline_path, &s->baseline_missing, e));
        KB_TRY(kb_baseline_read(s->baseline_path, &s->baseline, e));
    }
    KB_TRY(kb_session_tune_cache_path(o, env_cache, gpu, s->tune_cache, sizeof s->tune_cache, e));
    s->open_ms[1] = (1e3 * kb_mono_s()) - t;
    t = (1e3 * kb_mono_s());
    KB_TRY(kb_flusher_init(&s->flusher, e));
    KB_CUDA(e, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    s->open_ms[2] = (1e3 * kb_mono_s()) - t;
    t = (1e3 * kb_mono_s());
    /* --prepare runs beside other processes that build plans: nothing it
     * could measure would be the GPU's own speed. */
    if (!o->prepare) KB_TRY(gpu_limits(s, e));
    s->open_ms[3] = (1e3 * kb_mono_s()) - t;
    return KB_OK;
}

void kb_session_close(kb_session *s)
{
    if (s->hooks && s->hooks->close) s->hooks->close(s->hooks_ctx);
    s->hooks_ctx = NULL;
    kb_gpu_lock_release(&s->lock);
    kb_kernel_checker_free(s->kernels);
    s->kernels = NULL;
    kb_flusher_free(&s->flusher);
    if (s->stream) cudaStreamDestroy(s->stream);
    kb_baseline_free(&s->baseline);
    kb_results_free(&s->results);
    kb_rowfile_abandon(&s->csv_out); /* not committed: the .partial files stay */
    kb_rowfile_abandon(&s->json_out);
    s->stream = NULL;
}


static void iso_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The passing results upserted into the baseline file; run under the
 * file's lock by kb_baseline_update, which re-reads the file first: another
 * process may have updated other rows since the session started. */
typedef struct {
    const kb_results *results;
    size_t n; /* rows written */
} baseline_merge;

static kb_status merge_results(kb_baseline *b, void *ctx, kb_err *e)
{
    baseline_merge *m = ctx;
    for (size_t i = 0; i < m->results->n; i++) {
        const kb_result *r = &m->results->v[i];
        if (r->accuracy != KB_ACC_PASS || !(r->gbps > 0)) continue;
        kb_baseline_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.benchmark, sizeof row.benchmark, "%s", r->benchmark);
        snprintf(row.backend, sizeof row.backend, "%s", r->backend);
        snprintf(row.dtype, sizeof row.dtype, "%s", r->dtype);
        row.M = r->M;
        row.N = r->N;
        row.K = r->K;
        row.median_ms = r->median_ms;
        row.gbps = r->gbps;
        row.noise = r->noise;
        row.samples = r->samples;
        row.q1_ms = r->q1_ms;
        row.q3_ms = r->q3_ms;
        /* The clock matters to the verdict of compute-bound cases only. */
        row.sm_mhz = r->tflops > 0 && r->sm_mhz > 0 ? r->sm_mhz : NAN;
        snprintf(row.date, sizeof row.date, "%s", r->date);
        snprintf(row.version, sizeof row.version, "%s", KB_VERSION);
        kb_kernels_to_row(b, r, &row);
        KB_TRY(kb_baseline_upsert(b, &row, e));
        m->n++;
    }
    return KB_OK;
}

static kb_status update_baseline(kb_session *s, kb_err *e)
{
    /* The baselines folder may not exist yet (a fresh checkout of a new GPU). */
    KB_TRY(kb_mkdir_parent(s->baseline_path, e));
    baseline_merge m = {&s->results, 0};
    size_t rows = 0;
    KB_TRY(kb_baseline_update(s->baseline_path, merge_results, &m, &rows, e));
    printf("baseline: %zu rows written to %s (%zu rows in file)\n", m.n, s->baseline_path, rows);
    return KB_OK;
}

/* Every output is attempted even when one fails: a baseline that cannot be
 * written must not also lose the results CSV. The first error is returned. */
kb_status kb_session_finish(kb_session *s, kb_err *e)
{
    kb_status first = KB_OK, st;
    kb_err tmp;
    if (s->o->csv && (st = kb_rowfile_commit(&s->csv_out, &tmp)) != KB_OK) {
        first = st;
        *e = tmp;
    }
    if (s->o->json && (st = kb_rowfile_commit(&s->json_out, &tmp)) != KB_OK && first == KB_OK) {
        first = st;
        *e = tmp;
    }
    if (s->o->update_baseline && (st = update_baseline(s, &tmp)) != KB_OK && first == KB_OK) {
        first = st;
        *e = tmp;
    }
    size_t nk = 0, nmiss = 0;
    if (s->o->update_baseline_kernels &&
        (st = kb_baseline_record_kernels(s->baseline_path, &s->results, &nk, &nmiss, &tmp)) !=
            KB_OK && first == KB_OK) {
        first = st;
        *e = tmp;
    } else if (s->o->update_baseline_kernels)
        printf("baseline: kernel columns of %zu rows written to %s (%zu results have no row)\n",
               nk, s->baseline_path, nmiss);
    return first;
}

/* ---- one case -------------------------------------------------------------- */
typedef struct {
    const kb_impl *impl; /* the case's, or the knobs' wrapper of it (knobs.h) */
    const kb_problem *p;
    const kb_tensors *t;
    void *state;
} timed_arg;

static kb_status timed_run(void *arg, cudaStream_t st, kb_err *e)
{
    timed_arg *a = (timed_arg *)arg;
    return a->impl->run(a->p, a->t, a->state, st, e);
}

static kb_tol case_tolerance(const kb_session *s, kb_dtype d)
{
    kb_tol t = kb_tol_default(d);
    if (!isnan(s->o->tolerance)) t.atol = t.rtol = s->o->tolerance;
    return t;
}

static kb_outcome finish(kb_outcome oc, kb_session *s, kb_result *r, kb_err *e)
{
    if (oc != KB_CASE_PASS && !r->message[0]) snprintf(r->message, sizeof r->message, "%s", e->msg);
    kb_err pe;
    if (kb_results_push(&s->results, r, &pe) != KB_OK)
        fprintf(stderr, "kbench: %s\n", kb_err_text(&pe));
    /* Written now, so a run cut short keeps its finished cases. */
    if ((s->o->csv && kb_rowfile_add(&s->csv_out, r, &pe) != KB_OK) ||
        (s->o->json && kb_rowfile_add(&s->json_out, r, &pe) != KB_OK))
        fprintf(stderr, "kbench: %s\n", kb_err_text(&pe));
    return oc;
}

/* Accuracy of out (and dw); fills r, returns 1 when everything is close. */
static int check_accuracy(kb_session *s, const kb_buffers *b, kb_result *r, kb_err *e,
                          kb_status *st)
{
    kb_accuracy acc;
    const kb_tol tol = case_tolerance(s, b->p.dtype);
    const int64_t cols = kb_out_cols(&b->p);
    *st = kb_check_output(b, tol, s->stream, &acc, e);
    if (*st != KB_OK) return 0;
    r->mismatches = acc.mismatches;
    r->max_err = acc.worst_excess;
    if (acc.mismatches) {
        kb_accuracy_describe(&acc, cols, "output", r->message, sizeof r->message);
        return 0;
    }
    if (acc.nw_bad_rows) {
        kb_normwise_describe(&acc, "output", r->message, sizeof r->message);
        return 0;
    }
    if (b->t.dw) {
        kb_accuracy dw;
        *st = kb_check_dw(b, tol, s->stream, &dw, e);
        if (*st != KB_OK) return 0;
        r->mismatches = dw.mismatches;
        if (dw.worst_excess > r->max_err) r->max_err = dw.worst_excess;
        if (dw.mismatches) {
            kb_accuracy_describe(&dw, b->p.N, "dw", r->message, sizeof r->message);
            return 0;
        }
        if (dw.nw_bad_rows) {
            kb_normwise_describe(&dw, "dw", r->message, sizeof r->message);
            return 0;
        }
    }
    return 1;
}

static kb_status measure(kb_session *s, timed_arg *arg, double budget_scale, kb_timing *t,
                         kb_err *e)
{
    kb_timing_opts o = s->timing;
    o.max_ms *= budget_scale;
    o.min_ms *= budget_scale;
    return kb_time_fn(timed_run, arg, &o, &s->flusher, s->stream, t, e);
}

/* One round: the timing, then the SM clock right after the samples (the GPU
 * still busy) for the throttle rule (kb_judge). */
static kb_status measure_round(kb_session *s, timed_arg *arg, double budget_scale, kb_timing *t,
                               kb_judge_round *m, kb_err *e)
{
    KB_TRY(measure(s, arg, budget_scale, t, e));
    return kb_sm_clock(s->stream, &m->sm_mhz, &m->sm_max_mhz, e);
}

static void record_timing(kb_session *s, const kb_problem *p, const kb_timing *t, kb_result *r)
{
    r->median_ms = t->median_ms;
    r->min_ms = t->min_ms;
    r->max_ms = t->max_ms;
    r->noise = t->noise;
    r->q1_ms = t->q1_ms;
    r->q3_ms = t->q3_ms;
    r->samples = t->samples;
    r->gbps = kb_bytes_moved(p) / (t->median_ms * 1e-3) / 1e9;
    r->sol_gbps = s->sol_gbps;
    r->sol_pct = 100.0 * r->gbps / s->sol_gbps;
    r->mix_sol_pct = 100.0 * r->gbps / r->mix_sol_gbps; /* set with the case (NaN: unknown) */
    const double flops = kb_flops(p);
    if (flops > 0) { /* compute-bound: against the measured GEMM peak */
        r->tflops = flops / (t->median_ms * 1e-3) / 1e12;
        r->peak_tflops = s->gemm_tflops > 0 ? s->gemm_tflops : NAN;
        r->sol_pct = 100.0 * r->tflops / r->peak_tflops;
    }
}

static kb_outcome time_and_judge(kb_session *s, const kb_case *c, timed_arg *arg, kb_result *r,
                                 kb_err *e);

/* One use of a case (case_hooks.h): the backend's impl and state, or what
 * the session's hooks wrap them in; close it after the use. */
typedef struct {
    const kb_impl *impl;
    void *state;
    void *undo;
} case_use;

static kb_status use_open(const kb_session *s, kb_impl_use use, const kb_case *c, void *state,
                          kb_buffers *b, const char *series, const kb_knob_timer *timer,
                          case_use *u, kb_err *e)
{
    u->impl = c->impl;
    u->state = state;
    u->undo = NULL;
    if (!s->hooks || !s->hooks->wrap) return KB_OK;
    return s->hooks->wrap(s->hooks_ctx, use, c->impl, state, b, series, timer, &u->impl,
                          &u->state, &u->undo, e);
}

static void use_close(const kb_session *s, case_use *u)
{
    if (u->undo && s->hooks && s->hooks->unwrap) s->hooks->unwrap(u->undo);
    u->undo = NULL;
}

/* The kernel check (kernel_check.h), its wall time a phase of its own. */
static kb_outcome kernel_check(kb_session *s, const kb_case *c, void *state, kb_buffers *b,
                               kb_outcome oc, kb_result *r, kb_err *e)
{
    case_use traced;
    if (use_open(s, KB_USE_TRACED, c, state, b, r->backend, NULL, &traced, e) != KB_OK)
        return KB_CASE_FAIL;
    kb_case as_run = *c;
    as_run.impl = traced.impl;
    oc = kb_kernel_check(s, &as_run, traced.state, &b->t, oc, r);
    use_close(s, &traced);
    s->phases.kernels = (1e3 * kb_mono_s());
    return oc;
}

static kb_outcome run_buffers(kb_session *s, const kb_case *c, const char *case_name, void *state,
                              kb_buffers *b, kb_result *r, kb_err *e)
{
    /* A compute-bound op's SOL is the GPU's measured GEMM peak: cached per
     * GPU, measured here (the GPU lock is held) the first time it is needed. */
    if (kb_flops(&c->p) > 0 && !(s->gemm_tflops > 0) && !s->o->no_timing &&
        kb_gemm_sol(&s->dev, KBENCH_STATE_DIR, s->stream, &s->gemm_tflops, e) != KB_OK)
        return KB_CASE_FAIL;
    case_use checked; /* the session's hooks (the test knobs); none: the case's own impl */
    kb_status st = use_open(s, KB_USE_CHECKED, c, state, b, r->backend, NULL, &checked, e);
    if (st == KB_ERR_UNSUPPORTED) return KB_CASE_SKIP;
    if (st == KB_OK) st = kb_buffers_prepare(b, KB_SEED, s->stream, e);
    if (st == KB_OK) st = kb_buffers_poison(b, s->stream, e);
    if (st == KB_OK) st = checked.impl->run(&c->p, &b->t, checked.state, s->stream, e);
    use_close(s, &checked);
    if (st == KB_OK) {
        cudaError_t rc = cudaStreamSynchronize(s->stream);
        if (rc != cudaSuccess)
            st = KB_FAIL(e, KB_ERR_CUDA, "%s: %s", case_name, cudaGetErrorString(rc));
    }
    if (st != KB_OK) return KB_CASE_FAIL;
    if (kb_buffers_guards_broken(b, r->message, sizeof r->message, &st, e)) {
        r->accuracy = KB_ACC_FAIL;
        return KB_CASE_FAIL;
    }
    if (st != KB_OK) return KB_CASE_FAIL;
    int ok = check_accuracy(s, b, r, e, &st);
    if (st != KB_OK) return KB_CASE_FAIL;
    r->accuracy = ok ? KB_ACC_PASS : KB_ACC_FAIL;
    const char *deviation = kb_case_known_deviation(c);
    if (!ok && deviation) { /* still a failure, but one the registry expects */
        char first[sizeof r->message];
        snprintf(first, sizeof first, "%s", r->message);
        snprintf(r->message, sizeof r->message, "known deviation: %s -- %s", deviation, first);
    }
    if (s->o->dump_dir && kb_dump_case(s->o->dump_dir, case_name, b, e) != KB_OK)
        return KB_CASE_FAIL;
    /* A known deviation of a library is an expected failure (pytest's xfail,
     * CTest's PASS_REGULAR_EXPRESSION on its FAIL line): it stays FAIL in the
     * results, but does not fail the run. */
    if (!ok) return deviation ? KB_CASE_PASS : KB_CASE_FAIL;
    s->phases.check = (1e3 * kb_mono_s());
    /* An input kind tests numerics; its speed is the randn case's. */
    if (s->o->no_timing || c->inputs != KB_INPUTS_RANDN)
        return kernel_check(s, c, state, b, KB_CASE_PASS, r, e);

    /* Before any timed run (the knobs' pilot included): the GPU settled
     * after the previous case's memory was freed (kb_settle, timing.h). */
    kb_settle_report rep;
    if (kb_settle_wait(&s->flusher, s->stream, &s->settle, 1000.0, &rep, e) != KB_OK)
        return KB_CASE_FAIL;
    if (rep.probes > KB_SETTLE_NEED)
        fprintf(stderr, "%s: timing waited %.0f ms for the GPU to settle (memory bandwidth %.1f%% "
                "below the session's best at first%s)\n", case_name, rep.waited_ms,
                100 * rep.first_slow, rep.gave_up ? "; gave up: that is the new reference" : "");
    case_use timed;
    const kb_knob_timer timer = {&s->timing, &s->flusher, s->stream, case_name};
    if (use_open(s, KB_USE_TIMED, c, state, b, r->backend, &timer, &timed, e) != KB_OK)
        return KB_CASE_FAIL;
    timed_arg arg = {timed.impl, &c->p, &b->t, timed.state};
    kb_outcome oc = time_and_judge(s, c, &arg, r, e);
    s->phases.timing = (1e3 * kb_mono_s());
    use_close(s, &timed);
    return kernel_check(s, c, state, b, oc, r, e);
}

static kb_outcome time_and_judge(kb_session *s, const kb_case *c, timed_arg *arg, kb_result *r,
                                 kb_err *e)
{
    const kb_baseline_row *row =
        kb_baseline_find(&s->baseline, r->benchmark, r->backend, r->dtype, r->M, r->N, r->K);
    const kb_judge_base base = {row ? row->gbps : NAN, row ? row->noise : NAN,
                                row ? row->median_ms : NAN, row ? row->kernels : 0,
                                row && row->sm_mhz > 0 ? row->sm_mhz : NAN};
    kb_judgement j;
    /* What the case said before timing; a round's judgement replaces the
     * previous round's, never this (a stale NOISY reason must not stand
     * beside a final SAME). */
    char before[sizeof r->message];
    snprintf(before, sizeof before, "%s", r->message);
    kb_verdict first = KB_VERDICT_NONE;
    double first_change = NAN;
    for (int round = 0;; round++) { /* the policy is kb_judge's (gate.h) */
        kb_timing t;
        kb_judge_round m = {{0, 0, 0, 0}, 0, 0, kb_flops(&c->p) > 0};
        /* The second round starts on a settled GPU too: what slowed the
         * first (the driver still scrubbing memory a previous case freed)
         * must not slow the round that confirms or clears it. */
        kb_settle_report rep;
        if (round > 0 &&
            kb_settle_wait(&s->flusher, s->stream, &s->settle, 1000.0, &rep, e) != KB_OK) {
            snprintf(r->message, sizeof r->message, "%s", before);
            r->verdict[0] = '\0';
            return KB_CASE_FAIL;
        }
        if (measure_round(s, arg, round ? 4.0 : 1.0, &t, &m, e) != KB_OK) {
            /* No verdict: round 0's must not stand for a case that failed. */
            snprintf(r->message, sizeof r->message, "%s", before);
            r->verdict[0] = '\0';
            return KB_CASE_FAIL;
        }
        record_timing(s, &c->p, &t, r);
        r->baseline_gbps = base.gbps;
        m.now = (kb_perf){r->gbps, r->noise, r->median_ms, r->min_ms};
        r->sm_mhz = m.sm_mhz > 0 ? m.sm_mhz : NAN;
        kb_judge(&s->gate, &base, &m, round, s->baseline_path, &j);
        snprintf(r->verdict, sizeof r->verdict, "%s", kb_verdict_name(j.verdict));
        snprintf(r->message, sizeof r->message, "%s", j.message[0] ? j.message : before);
        if (round == 0) {
            first = j.verdict;
            first_change = j.change;
        }
        if (!j.remeasure) break;
    }
    /* A first round that read SLOWER and a second that did not: the case
     * passes, and its message says what the first round saw. */
    if (first == KB_VERDICT_SLOWER && j.verdict != KB_VERDICT_SLOWER) {
        const size_t n = strlen(r->message);
        snprintf(r->message + n, sizeof r->message - n,
                 "%sthe first round read SLOWER (%+.1f%%); the second, with 4x the budget, "
                 "%s",
                 n ? "; " : "", 100 * first_change, kb_verdict_name(j.verdict));
    }
    return j.fails ? KB_CASE_FAIL : KB_CASE_PASS;
}

static kb_outcome run_locked(kb_session *s, const kb_case *c, const kb_custom_config *custom,
                             const char *name, kb_result *r, kb_err *ep);

static void setup_ctx(const kb_session *s, const kb_custom_config *custom, kb_setup_ctx *ctx)
{
    *ctx = (kb_setup_ctx){s->dev.ordinal, s->dev.sm_count, s->dev.l2_bytes, s->dev.smem_optin,
                          s->dev.name,
                          /* --compile-mode heuristic: no cache, the heuristic decides */
                          s->o->compile_mode == KB_COMPILE_HEURISTIC ? NULL : s->tune_cache,
                          custom ? custom->text : NULL, s->o->tune, s->plan_dir,
                          &kb_tune_measure};
}

/* --prepare: the backend's setup and teardown only, without the GPU lock
 * (a library's plan building is host work: cuDNN's heuristics and runtime
 * compilation), so that later timed runs find their plans cached. */
static kb_outcome prepare_case(kb_session *s, const kb_case *c, kb_result *r, double t0)
{
    kb_err e = {{0}};
    kb_setup_ctx ctx;
    setup_ctx(s, NULL, &ctx);
    void *state = NULL;
    size_t ws = 0;
    kb_status st = c->impl->setup ? c->impl->setup(&c->p, &ctx, &state, &ws, &e) : KB_OK;
    if (st == KB_OK && c->impl->describe) c->impl->describe(state, r->config, sizeof r->config);
    if (c->impl->teardown && state) c->impl->teardown(state);
    s->phases.setup = (1e3 * kb_mono_s()) - t0;
    s->phases.total = s->phases.setup;
    if (st == KB_ERR_UNSUPPORTED) return finish(KB_CASE_SKIP, s, r, &e);
    if (st != KB_OK) return finish(KB_CASE_FAIL, s, r, &e);
    return finish(KB_CASE_PASS, s, r, &e);
}

kb_outcome kb_run_case(kb_session *s, const kb_case *c, const kb_custom_config *custom,
                       kb_result *r)
{
    kb_err e = {{0}};
    char name[160];
    kb_case_name(c, name, sizeof name);
    memset(r, 0, sizeof *r);
    snprintf(r->benchmark, sizeof r->benchmark, "%s", kb_bench_info_get(c->p.bench)->name);
    snprintf(r->backend, sizeof r->backend, "%s%s%s", c->backend, custom ? ":" : "",
             custom ? custom->name : "");
    snprintf(r->dtype, sizeof r->dtype, "%s", kb_dtype_name(c->p.dtype));
    r->M = c->p.M;
    r->N = c->p.N;
    r->K = c->p.K;
    r->tflops = r->peak_tflops = NAN;
    r->median_ms = r->min_ms = r->max_ms = r->noise = r->q1_ms = r->q3_ms = r->sm_mhz = NAN;
    r->gbps = r->sol_pct = r->max_err = r->baseline_gbps = r->mix_sol_pct = NAN;
    r->sol_gbps = s->sol_gbps;
    r->sol_read_gbps = s->limits.read_gbps > 0 ? s->limits.read_gbps : NAN;
    r->sol_write_gbps = s->limits.write_gbps > 0 ? s->limits.write_gbps : NAN;
    const kb_sol_streams ss = {s->sol_gbps, s->limits.read_gbps, s->limits.write_gbps};
    r->mix_sol_gbps = kb_sol_mix_for(&c->p, &ss);
    snprintf(r->gpu, sizeof r->gpu, "%s", s->dev.name);
    snprintf(r->version, sizeof r->version, "%s", KB_VERSION);
    snprintf(r->env, sizeof r->env, "%s", s->env_text);
    iso_now(r->date, sizeof r->date);
    r->accuracy = KB_ACC_SKIP;

    kb_phases *ph = &s->phases;
    memset(ph, 0, sizeof *ph);
    const double t0 = (1e3 * kb_mono_s());
    if (s->o->prepare) return prepare_case(s, c, r, t0);
    /* The whole GPU part of the case holds the GPU lock: another process's
     * accuracy run or allocation would disturb this timing as much as its
     * timing would. */
    if (kb_gpu_lock_acquire(&s->lock, s->lock_path, name, stdout, &e) != KB_OK) {
        r->accuracy = KB_ACC_FAIL;
        return finish(KB_CASE_FAIL, s, r, &e);
    }
    ph->lock = (1e3 * kb_mono_s());
    kb_outcome oc = run_locked(s, c, custom, name, r, &e);
    kb_gpu_lock_release(&s->lock);
    /* Each phase's end stamp becomes its duration; phases not reached are 0. */
    double prev = t0, *stamps[] = {&ph->lock, &ph->setup, &ph->alloc, &ph->check, &ph->timing,
                                   &ph->kernels, &ph->teardown};
    for (size_t i = 0; i < sizeof stamps / sizeof *stamps; i++) {
        if (*stamps[i] <= 0) continue;
        const double end = *stamps[i];
        *stamps[i] = end - prev;
        prev = end;
    }
    ph->total = prev - t0;
    return finish(oc, s, r, &e);
}

static kb_outcome run_locked(kb_session *s, const kb_case *c, const kb_custom_config *custom,
                             const char *name, kb_result *r, kb_err *ep)
{
    kb_err e = {{0}};
    kb_phases *ph = &s->phases;
    kb_setup_ctx ctx;
    setup_ctx(s, custom, &ctx);
    void *state = NULL;
    size_t ws = 0;
    kb_status st = c->impl->setup ? c->impl->setup(&c->p, &ctx, &state, &ws, &e) : KB_OK;
    ph->setup = (1e3 * kb_mono_s());
    if (st == KB_ERR_UNSUPPORTED) {
        *ep = e;
        return KB_CASE_SKIP;
    }
    if (st != KB_OK) {
        r->accuracy = KB_ACC_FAIL;
        *ep = e;
        return KB_CASE_FAIL;
    }
    if (c->impl->describe) c->impl->describe(state, r->config, sizeof r->config);
    if (c->inputs != KB_INPUTS_RANDN) { /* results rows of a kind say so */
        char cfg[sizeof r->config];
        snprintf(cfg, sizeof cfg, "inputs=%s%s%s", kb_inputs_name(c->inputs),
                 r->config[0] ? " " : "", r->config);
        memcpy(r->config, cfg, sizeof cfg);
    }
    kb_buffers b;
    kb_outcome oc;
    st = kb_buffers_alloc(&c->p, ws, &b, &e);
    ph->alloc = (1e3 * kb_mono_s());
    b.inputs = c->inputs;
    if (st == KB_ERR_DEVMEM)
        oc = KB_CASE_SKIP;
    else if (st != KB_OK)
        oc = KB_CASE_FAIL;
    else
        oc = run_buffers(s, c, name, state, &b, r, &e);
    if (oc == KB_CASE_FAIL && r->accuracy == KB_ACC_SKIP)
        r->accuracy = KB_ACC_FAIL;
    kb_buffers_free(&b);
    if (c->impl->teardown) c->impl->teardown(state);
    /* A failed launch can leave a sticky error; surface it here, not in the
     * next case. */
    cudaError_t rc = cudaDeviceSynchronize();
    if (rc != cudaSuccess && oc != KB_CASE_FAIL) {
        KB_FAIL(&e, KB_ERR_CUDA, "%s: %s", name, cudaGetErrorString(rc));
        oc = KB_CASE_FAIL;
    }
    ph->teardown = (1e3 * kb_mono_s());
    *ep = e;
    return oc;
}
