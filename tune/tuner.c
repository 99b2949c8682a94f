/* The kb_impl glue every tuned kernel file uses: kb_tuned_setup picks a
 * launch configuration (--tuned-config, else the tuning cache, else the
 * kernel's heuristic; with --tune a search whose candidates are checked for
 * accuracy and timed through the measurer it is handed, kb_setup_ctx.measurer)
 * and kb_tuned_run launches it. The configuration
 * texts are in config.c, the cache file in cache.c, the search in search.c. */
#include "tune_int.h"
#include "cli.h"
#include "files.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* Candidates timed per search (~20-60 ms each): the one-step descent and
 * end probes converge in 20-40, the all-directions check takes the rest.
 * With seven parameters (softmax backward, the norms then; the norm
 * backward has eight since 2026-12-03) 43 of 122 searches on the H200
 * needed more than 96 and a median of 77 (docs/dev/kernels/README.md, "How the tuned
 * backend picks"). KBENCH_TUNE_EVALS overrides it (ci/tune
 * --evals). */
#define SEARCH_MAX_EVALS 200

typedef struct {
    const kb_tune_space *sp;
    kb_tune_cfg cfg;
    char source[512]; /* "heuristic" | "cache:<file>" | "tuned:<file>" | "custom" */
    char note[160];   /* why the heuristic replaced a cache entry, or "" */
} tuned_state;

typedef struct {
    const kb_tune_space *sp;
    const kb_problem *p;
    const kb_setup_ctx *ctx;
    const kb_tune_measurer *m;
    kb_tune_bench *b;
    kb_tensors t;   /* the measurer's tensors, as a case run would see them */
    void *extra_ws; /* grown when a candidate needs more than t's workspace */
    size_t extra_bytes;
    cudaStream_t s;
} timing_arg;

typedef struct {
    timing_arg *ta;
    kb_tensors t;
    const kb_tune_cfg *c;
} launch_arg;

static kb_status launch_once(void *arg, cudaStream_t s, kb_err *e)
{
    launch_arg *la = (launch_arg *)arg;
    return la->ta->sp->launch(la->ta->p, &la->t, la->c, s, e);
}

/* The case's shape as messages name it: "MxN", or "MxNxK" for a 3-D op
 * (rope's key/value heads, the MLP's hidden width), whose K would otherwise
 * be left out. buf holds 72 characters. */
static const char *shape_text(const kb_problem *p, char *buf, size_t len)
{
    kb_shape_format(buf, len, p->M, p->N, p->K);
    return buf;
}

static kb_status check_candidate(const timing_arg *ta, const kb_tune_cfg *c, kb_err *e)
{
    const kb_problem *p = ta->p;
    char what[160], cfg[256], shape[72];
    int bad = 0;
    KB_TRY(ta->m->check(ta->b, ta->s, &bad, what, sizeof what, e));
    if (!bad) return KB_OK;
    kb_tune_format(ta->sp, c, cfg, sizeof cfg);
    return KB_FAIL(e, KB_ERR_ACCURACY, "tuning %s %s %s: candidate %s is wrong: %s", ta->sp->op,
                   kb_dtype_name(p->dtype), shape_text(p, shape, sizeof shape), cfg, what);
}

static kb_status time_candidate(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    timing_arg *ta = (timing_arg *)arg;
    launch_arg la = {ta, ta->t, c};
    size_t ws = ta->sp->workspace ? ta->sp->workspace(ta->p, ta->ctx, c) : 0;
    /* The candidate sees the workspace a case run with it would have, not
     * the start's: a launch may size its grid by the workspace (the norm
     * backward's slots), and a larger one here would time a launch no real
     * run makes. */
    if (ws <= ta->t.workspace_bytes) la.t.workspace_bytes = ws;
    if (ws > ta->t.workspace_bytes) {
        if (ws > ta->extra_bytes) {
            if (ta->extra_ws) KB_CUDA(e, cudaFree(ta->extra_ws));
            ta->extra_ws = NULL;
            ta->extra_bytes = 0;
            if (cudaMalloc(&ta->extra_ws, ws) != cudaSuccess) {
                (void)cudaGetLastError();
                *cost = INFINITY; /* this candidate does not fit; others may */
                return KB_OK;
            }
            ta->extra_bytes = ws;
        }
        la.t.workspace = ta->extra_ws;
        la.t.workspace_bytes = ws;
    }
    /* A launch the hardware refuses (too many registers for the block, an
     * unschedulable cluster) is a bad candidate, not a failed search. */
    KB_TRY(ta->m->poison(ta->b, ta->s, e));
    kb_err le;
    kb_status st = ta->sp->launch(ta->p, &la.t, c, ta->s, &le);
    if (st != KB_OK) {
        (void)cudaGetLastError();
        if (cudaStreamSynchronize(ta->s) != cudaSuccess) {
            if (e) *e = le;
            return st;
        }
        *cost = INFINITY;
        return KB_OK;
    }
    /* A configuration that computes wrong results is a kernel bug: stop and
     * say which one, rather than time it (or silently skip it). */
    KB_TRY(check_candidate(ta, c, e));
    return ta->m->time(ta->b, launch_once, &la, ta->s, cost, e);
}

static kb_status run_search(const kb_tune_space *sp, const kb_problem *p,
                            const kb_setup_ctx *ctx, const kb_tune_cfg *start, kb_tune_cfg *best,
                            double *gbps, kb_err *e)
{
    if (!ctx->measurer)
        return KB_FAIL(e, KB_ERR_ARG, "%s: tuning without a measurer (kb_setup_ctx.measurer)",
                       sp->op);
    timing_arg ta;
    memset(&ta, 0, sizeof ta);
    ta.sp = sp;
    ta.p = p;
    ta.ctx = ctx;
    ta.m = ctx->measurer;

    kb_status st = KB_OK;
    double ms = INFINITY;
    char shape[72];
    /* The environment's values first: a bad one fails before the search,
     * and an unwritable log before the search it would have recorded. */
    int max_evals = SEARCH_MAX_EVALS;
    st = kb_env_tune_evals(getenv("KBENCH_TUNE_EVALS"), &max_evals, e);
    const char *log_path = getenv("KBENCH_TUNE_LOG");
    FILE *lf = NULL;
    if (st == KB_OK && log_path && *log_path && !(lf = fopen(log_path, "a")))
        st = KB_FAIL(e, KB_ERR_IO, "KBENCH_TUNE_LOG '%s': cannot open for appending: %s", log_path,
                     strerror(errno));
    const cudaError_t crc = st == KB_OK ? cudaStreamCreateWithFlags(&ta.s, cudaStreamNonBlocking)
                                        : cudaSuccess;
    if (crc != cudaSuccess) {
        st = KB_FAIL(e, KB_ERR_CUDA, "%s: cudaStreamCreate: %s", sp->op, cudaGetErrorString(crc));
        ta.s = NULL;
    }
    if (st == KB_OK) {
        const size_t ws = sp->workspace ? sp->workspace(p, ctx, start) : 0;
        st = ta.m->open(ta.m->arg, p, ws, ta.s, &ta.b, &ta.t, e);
        if (st == KB_ERR_DEVMEM) st = KB_ERR_UNSUPPORTED; /* the case itself will not fit */
    }
    int evals = 0;
    const double t0 = kb_mono_s();
    if (st == KB_OK)
        st = kb_tune_search(sp, p, ctx, start, time_candidate, &ta, max_evals, best, &ms, &evals,
                            e);
    if (st == KB_OK && lf) {
        /* ci/tune's record of what each search cost (its run-time estimate). */
        char cfg[256], bucket[64];
        kb_tune_format(sp, best, cfg, sizeof cfg);
        kb_tune_bucket(p->dtype, p->M, p->N, p->K, bucket, sizeof bucket);
        /* benchmark,dtype,M,N,bucket,evals,search_s,best_ms,config */
        fprintf(lf, "%s,%s,%lld,%lld,\"%s\",%d,%.3f,%.4f,\"%s\"\n", sp->op,
                kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, bucket, evals,
                kb_mono_s() - t0, ms, cfg);
    }
    if (lf && fclose(lf) != 0 && st == KB_OK)
        st = KB_FAIL(e, KB_ERR_IO, "KBENCH_TUNE_LOG '%s': write failed: %s", log_path,
                     strerror(errno));
    if (st == KB_OK && !isfinite(ms))
        st = KB_FAIL(e, KB_ERR_CUDA, "%s %s: no candidate configuration ran", sp->op,
                     shape_text(p, shape, sizeof shape));
    if (ta.s) {
        /* A fault of the last candidate surfaces here: the search then did
         * not finish, whatever it measured (after a failure the first error
         * stands). */
        const cudaError_t sync = cudaStreamSynchronize(ta.s);
        if (sync != cudaSuccess && st == KB_OK)
            st = KB_FAIL(e, KB_ERR_CUDA, "%s %s: tuning search: %s", sp->op,
                         shape_text(p, shape, sizeof shape), cudaGetErrorString(sync));
    }
    if (st == KB_OK) *gbps = kb_bytes_moved(p) / (ms * 1e-3) / 1e9;
    if (ta.extra_ws) cudaFree(ta.extra_ws);
    if (ta.b) ta.m->close(ta.b);
    if (ta.s) cudaStreamDestroy(ta.s);
    return st;
}

static kb_status from_cache(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                            const kb_tune_key *k, tuned_state *st, int *found, kb_err *e)
{
    char cfg[KB_TUNE_LINE_MAX];
    double gbps;
    int lineno = 0;
    KB_TRY(kb_tune_cache_find(ctx->tune_cache, k, cfg, sizeof cfg, &gbps, found, &lineno, e));
    if (!*found) return KB_OK;
    kb_tune_cfg c;
    kb_err pe;
    /* A stale entry (the kernel's parameters changed since it was written)
     * or one that cannot run this particular N of its bucket: heuristic. */
    if (kb_tune_parse(sp, cfg, &st->cfg, &c, &pe) != KB_OK) {
        snprintf(st->note, sizeof st->note, "cached %.100s unknown to this build", cfg);
        return KB_OK;
    }
    /* Every key known, but one left out: `kbench --tune` writes every
     * parameter, so this is a hand edit or an entry not migrated when its
     * kernel gained a parameter (docs/dev/tuning.md). Filled from the
     * heuristic it would be reported as the cache's choice while being
     * neither: refused, naming the line. A search (--tune) replaces it, so
     * there it only starts from the heuristic. */
    if (kb_tune_parse(sp, cfg, NULL, &c, &pe) != KB_OK) {
        if (!ctx->tune)
            return KB_FAIL(e, KB_ERR_PARSE, "%s:%d: tuning-cache entry '%s' is incomplete: %s "
                           "(complete it, or delete the line and tune again)",
                           ctx->tune_cache, lineno, cfg, pe.msg);
        snprintf(st->note, sizeof st->note, "cached %.100s incomplete", cfg);
        return KB_OK;
    }
    if (!kb_tune_valid(sp, p, ctx, &c)) {
        snprintf(st->note, sizeof st->note, "cached %.100s cannot run N=%lld", cfg, (long long)p->N);
        return KB_OK;
    }
    st->cfg = c;
    snprintf(st->source, sizeof st->source, "cache:%s", ctx->tune_cache);
    return KB_OK;
}

kb_status kb_tuned_setup(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                         void **state, size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    tuned_state *st = (tuned_state *)calloc(1, sizeof *st);
    if (!st) return KB_FAIL(e, KB_ERR_IO, "out of host memory");
    st->sp = sp;
    sp->heuristic(p, ctx, &st->cfg);
    if (sp->canon) sp->canon(&st->cfg);
    snprintf(st->source, sizeof st->source, "heuristic");
    kb_status rc = KB_OK;
    char text[256], shape[72];
    if (!kb_tune_valid(sp, p, ctx, &st->cfg)) {
        kb_tune_format(sp, &st->cfg, text, sizeof text);
        /* A failure, not a SKIP: every shape the op accepts must have a
         * runnable heuristic, so the op's validity check rejecting it is a
         * bug (a kernel that spills, a launch or 32-bit index limit, no code
         * for this GPU). As a SKIP it hid a build whose every tuned
         * cross-entropy forward case verified nothing. Checked before the
         * custom and cached configurations on purpose: a cache entry must
         * not hide a broken fallback that other buckets and GPUs run. */
        rc = KB_FAIL(e, KB_ERR_CUDA,
                     "%s %s %s: heuristic %s cannot run (a bug: the op's validity check "
                     "rejects it: a kernel that spills registers, a launch or 32-bit index limit, "
                     "or no code for this GPU)",
                     sp->op, kb_dtype_name(p->dtype), shape_text(p, shape, sizeof shape), text);
        goto out;
    }
    if (ctx->custom_config) {
        kb_tune_cfg c;
        rc = kb_tune_parse(sp, ctx->custom_config, &st->cfg, &c, e);
        if (rc != KB_OK) goto out;
        if (!kb_tune_valid(sp, p, ctx, &c)) {
            kb_tune_format(sp, &c, text, sizeof text);
            rc = KB_FAIL(e, KB_ERR_ARG, "%s %s %s: custom config %s cannot run this shape",
                         sp->op, kb_dtype_name(p->dtype), shape_text(p, shape, sizeof shape),
                         text);
            goto out;
        }
        st->cfg = c;
        snprintf(st->source, sizeof st->source, "custom");
        goto out;
    }

    char gpu[256], bucket[64];
    kb_tune_key_gpu(ctx->gpu_name, gpu, sizeof gpu);
    kb_tune_bucket(p->dtype, p->M, p->N, p->K, bucket, sizeof bucket);
    const kb_tune_key k = {gpu, sp->op, kb_dtype_name(p->dtype), bucket};
    if (ctx->tune) {
        /* The search starts at this bucket's own cache entry when this build
         * can run it, else at the heuristic: the descent only moves to
         * faster configurations, so re-tuning (after a kernel gained a
         * parameter, say) ends no slower than the entry it replaces. */
        kb_tune_cfg best, start = st->cfg;
        double gbps = 0;
        if (ctx->tune_cache) {
            int found = 0;
            tuned_state probe = *st;
            rc = from_cache(sp, p, ctx, &k, &probe, &found, e);
            if (rc != KB_OK) goto out;
            if (found && strncmp(probe.source, "cache", 5) == 0) start = probe.cfg;
        }
        rc = run_search(sp, p, ctx, &start, &best, &gbps, e);
        if (rc != KB_OK) goto out;
        st->cfg = best;
        if (ctx->tune_cache) {
            kb_tune_format(sp, &best, text, sizeof text);
            rc = kb_tune_cache_store(ctx->tune_cache, &k, text, gbps, e);
            if (rc != KB_OK) goto out;
            snprintf(st->source, sizeof st->source, "tuned:%s", ctx->tune_cache);
        } else {
            snprintf(st->source, sizeof st->source, "tuned");
        }
    } else if (ctx->tune_cache) {
        /* This M class's entry, else one of the M classes within two powers
         * of two, the larger first (timed on more rows, less noisy); never
         * one further away. An entry this build cannot use does not end the
         * search; the first such one's reason stays as the note when none
         * is used. k.bucket is `bucket`. */
        const int64_t mc = kb_tune_rows_class(p->M);
        const int64_t big = (int64_t)1 << 60; /* no overflow in mc * 4 */
        const int64_t near[] = {mc, mc < big ? mc * 2 : 0, mc / 2, mc < big ? mc * 4 : 0, mc / 4};
        char note[sizeof st->note] = "";
        for (size_t i = 0; i < sizeof near / sizeof near[0] && rc == KB_OK; i++) {
            if (near[i] < 1) continue;
            int found = 0;
            st->note[0] = '\0';
            kb_tune_bucket(p->dtype, near[i], p->N, p->K, bucket, sizeof bucket);
            rc = from_cache(sp, p, ctx, &k, st, &found, e);
            if (rc != KB_OK || !found) continue;
            if (strncmp(st->source, "cache", 5) == 0) { /* used */
                if (i > 0)
                    snprintf(st->note, sizeof st->note, "entry of M<=%lld", (long long)near[i]);
                note[0] = '\0';
                break;
            }
            if (!note[0]) {
                if (i > 0)
                    snprintf(note, sizeof note, "%.150s (entry of M<=%lld)", st->note,
                             (long long)near[i]);
                else
                    snprintf(note, sizeof note, "%s", st->note);
            }
        }
        if (note[0]) snprintf(st->note, sizeof st->note, "%s", note);
    }
out:
    if (rc != KB_OK) {
        free(st);
        return rc;
    }
    *workspace_bytes = sp->workspace ? sp->workspace(p, ctx, &st->cfg) : 0;
    *state = st;
    return KB_OK;
}

kb_status kb_tuned_run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                       kb_err *e)
{
    const tuned_state *st = (const tuned_state *)state;
    if (!st) return KB_FAIL(e, KB_ERR_ARG, "tuned: run without setup");
    return st->sp->launch(p, t, &st->cfg, s, e);
}

int kb_tuned_kernels(const kb_problem *p, const void *state)
{
    const tuned_state *st = (const tuned_state *)state;
    if (!st) return 0;
    return st->sp->kernels ? st->sp->kernels(p, &st->cfg) : 1;
}

void kb_tuned_describe(const void *state, char *buf, size_t len)
{
    const tuned_state *st = (const tuned_state *)state;
    if (!len) return;
    if (!st) {
        snprintf(buf, len, "-");
        return;
    }
    char cfg[256];
    kb_tune_format(st->sp, &st->cfg, cfg, sizeof cfg);
    const char *colon = strchr(st->source, ':');
    const int label = colon ? (int)(colon - st->source) : (int)strlen(st->source);
    if (st->note[0])
        snprintf(buf, len, "%s (%.*s; %s)", cfg, label, st->source, st->note);
    else
        snprintf(buf, len, "%s (%.*s)", cfg, label, st->source);
}

void kb_tuned_teardown(void *state) { free(state); }
