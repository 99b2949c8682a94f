/* The kernel check of a case; see kernel_check.h. */
#include "kernel_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_trace.h"

/* One per session, made at the first check: CUPTI is loaded once. */
struct kb_kernel_checker {
    kb_tracer *tracer; /* NULL: the check is skipped, why says why */
    char why[700];
};

void kb_kernel_checker_free(struct kb_kernel_checker *k)
{
    if (!k) return;
    kb_tracer_close(k->tracer);
    free(k);
}

int kb_kernels_changed(int got, int expected, int base, const char *base_names, char *why,
                       size_t len)
{
    const int bad_decl = expected > 0 && got != expected, bad_base = base > 0 && got != base;
    int n = snprintf(why, len, "%d kernel%s per call", got, got == 1 ? "" : "s");
    size_t used = n > 0 && (size_t)n < len ? (size_t)n : len;
    if (expected > 0 && used < len) {
        n = snprintf(why + used, len - used, "; the backend declares %d%s", expected,
                     bad_decl ? " (differs)" : "");
        used += n > 0 ? (size_t)n : 0;
    }
    if (base > 0 && used < len) {
        n = snprintf(why + used, len - used, "; its baseline row records %d%s (%s)", base,
                     bad_base ? ", differs" : "", base_names && *base_names ? base_names : "no names");
        used += n > 0 ? (size_t)n : 0;
    }
    if (expected <= 0 && base <= 0 && used < len)
        snprintf(why + used, len - used, "; nothing to compare with (not declared, no baseline "
                                         "count)");
    return bad_decl || bad_base;
}

/* ---- the traced call ---------------------------------------------------------- */
typedef struct {
    const kb_case *c;
    const kb_tensors *t;
    void *state;
} call_arg;

static kb_status traced_call(void *arg, cudaStream_t s, kb_err *e)
{
    const call_arg *a = arg;
    return a->c->impl->run(&a->c->p, a->t, a->state, s, e);
}

static struct kb_kernel_checker *checker(kb_session *s)
{
    if (s->kernels) return s->kernels;
    struct kb_kernel_checker *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    kb_err e = {{0}};
    if (kb_tracer_open(NULL, 0, &k->tracer, &e) != KB_OK) {
        snprintf(k->why, sizeof k->why, "%s", kb_err_text(&e));
        fprintf(stderr, "kbench: kernel check skipped: %s\n", k->why);
    }
    s->kernels = k;
    return k;
}

/* Verbose runs (and CTest logs): every kernel with its launch shape. */
static void print_trace(FILE *f, const kb_kernel_trace *tr)
{
    const int kept = tr->n < KB_TRACE_MAX ? tr->n : KB_TRACE_MAX;
    for (int i = 0; i < kept; i++) {
        const kb_kernel_rec *k = &tr->k[i];
        fprintf(f, "  kernel %d/%d: %s  grid (%d,%d,%d) block (%d,%d,%d)  %d regs  smem %d+%d B  "
                   "%.2f us\n",
                i + 1, tr->n, k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0],
                k->block[1], k->block[2], k->registers, k->smem_static, k->smem_dynamic,
                k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) * 1e-3 : 0.0);
    }
}

/* The check is skipped for this case: say why where nothing else is said. */
static kb_outcome skipped(kb_result *r, const char *why, kb_outcome oc)
{
    if (!r->message[0]) snprintf(r->message, sizeof r->message, "kernel check skipped: %s", why);
    return oc;
}

kb_outcome kb_kernel_check(kb_session *s, const kb_case *c, void *state, const kb_tensors *t,
                           kb_outcome oc, kb_result *r)
{
    if (r->accuracy != KB_ACC_PASS) return oc;
    struct kb_kernel_checker *k = checker(s);
    if (!k) return skipped(r, "out of host memory", oc);
    if (!k->tracer) return skipped(r, k->why, oc);

    kb_err e = {{0}};
    kb_kernel_trace *tr = malloc(sizeof *tr);
    if (!tr) return skipped(r, "out of host memory", oc);
    call_arg a = {c, t, state};
    /* Same cache state as every timed run: L2 flushed just before. */
    kb_status st = kb_flush(&s->flusher, s->stream, &e);
    if (st == KB_OK) st = kb_trace_call(k->tracer, traced_call, &a, s->stream, tr, &e);
    if (st == KB_ERR_UNSUPPORTED) { /* CUPTI refused: not the case's fault */
        free(tr);
        return skipped(r, kb_err_text(&e), oc);
    }
    if (st != KB_OK) {
        snprintf(r->message, sizeof r->message, "kernel check: %s", kb_err_text(&e));
        free(tr);
        return KB_CASE_FAIL;
    }
    if (tr->n == 0) {
        char why[160];
        snprintf(why, sizeof why, "CUPTI recorded no kernel on the case's stream (%d on others)",
                 tr->other);
        free(tr);
        return skipped(r, why, oc);
    }
    r->kernels = tr->n;
    kb_trace_names(tr, r->kernel_names, sizeof r->kernel_names);
    kb_trace_times_us(tr, r->kernel_us, sizeof r->kernel_us);
    if (s->o->print_result || s->o->mode == KB_MODE_CASE) print_trace(stdout, tr);
    free(tr);

    const int expected = c->impl->kernels ? c->impl->kernels(&c->p, state) : 0;
    const kb_baseline_row *row =
        kb_baseline_find(&s->baseline, r->benchmark, r->backend, r->dtype, r->M, r->N, r->K);
    char why[1400];
    if (!kb_kernels_changed(r->kernels, expected, row ? row->kernels : 0,
                            row ? row->kernel_names : NULL, why, sizeof why))
        return oc;
    /* The time verdict stays readable: a fusion may come apart at no cost. */
    char was[sizeof r->message];
    snprintf(was, sizeof was, "%s", r->message);
    snprintf(r->message, sizeof r->message, "FUSION_CHANGED (time verdict %s): %s%s%s",
             r->verdict[0] ? r->verdict : "not checked", why, was[0] ? "; " : "", was);
    snprintf(r->verdict, sizeof r->verdict, "%s", kb_verdict_name(KB_VERDICT_FUSION_CHANGED));
    return KB_CASE_FAIL;
}

/* ---- baselines ------------------------------------------------------------------- */
void kb_kernels_to_row(const kb_baseline *old, const kb_result *r, kb_baseline_row *row)
{
    const kb_baseline_row *was =
        old ? kb_baseline_find(old, r->benchmark, r->backend, r->dtype, r->M, r->N, r->K) : NULL;
    if (r->kernels > 0) {
        row->kernels = r->kernels;
        snprintf(row->kernel_names, sizeof row->kernel_names, "%s", r->kernel_names);
    } else if (was) {
        row->kernels = was->kernels;
        snprintf(row->kernel_names, sizeof row->kernel_names, "%s", was->kernel_names);
    }
}

typedef struct {
    const char *path;
    const kb_results *res;
    size_t updated, missing;
} kernels_merge;

static kb_status merge_kernels(kb_baseline *b, void *ctx, kb_err *e)
{
    kernels_merge *m = ctx;
    if (b->n == 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s has no rows: record the timing columns first "
                       "(--update-baseline)", m->path);
    for (size_t i = 0; i < m->res->n; i++) {
        const kb_result *r = &m->res->v[i];
        if (r->accuracy != KB_ACC_PASS || r->kernels <= 0) continue;
        const kb_baseline_row *was =
            kb_baseline_find(b, r->benchmark, r->backend, r->dtype, r->M, r->N, r->K);
        if (!was) {
            m->missing++;
            continue;
        }
        kb_baseline_row row = *was;
        kb_kernels_to_row(NULL, r, &row);
        KB_TRY(kb_baseline_upsert(b, &row, e));
        m->updated++;
    }
    return KB_OK;
}

kb_status kb_baseline_record_kernels(const char *path, const kb_results *res, size_t *updated,
                                     size_t *missing, kb_err *e)
{
    kernels_merge m = {path, res, 0, 0};
    const kb_status st = kb_baseline_update(path, merge_kernels, &m, NULL, e);
    if (updated) *updated = m.updated;
    if (missing) *missing = m.missing;
    return st;
}
