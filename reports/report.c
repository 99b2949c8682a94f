/* The report's model and maths: dedup, orders, geomeans, speedups over the
 * shapes both backends ran, regression verdicts; and kb_report_generate,
 * which drives the writers in markdown.c, summary.c and plot.c. */
#include "report_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "gate.h"
#include "registry.h"
#include "sol.h"

/* ---- geomean ------------------------------------------------------------ */

/* Log-sum so a long list of large values cannot overflow. */
typedef struct {
    double logsum;
    size_t n;
    int bad;
} geo_acc;

static void geo_add(geo_acc *a, double v)
{
    if (!(isfinite(v) && v > 0)) a->bad = 1;
    else a->logsum += log(v);
    a->n++;
}

static double geo_value(const geo_acc *a)
{
    if (a->n == 0 || a->bad) return NAN;
    return exp(a->logsum / (double)a->n);
}

double kb_geomean(const double *v, size_t n)
{
    geo_acc a = {0, 0, 0};
    for (size_t i = 0; i < n; i++) geo_add(&a, v[i]);
    return geo_value(&a);
}

int kb_report_timed(const kb_result *x) { return isfinite(x->median_ms) && x->median_ms > 0; }

/* The input kind of a row ("" for randn): kbench writes "inputs=<kind>" at
 * the start of the config column of an input-kind case. Part of the key, so
 * the kinds of one shape stay apart. */
static size_t inputs_of(const kb_result *x, const char **kind)
{
    *kind = "";
    if (strncmp(x->config, "inputs=", 7) != 0) return 0;
    *kind = x->config + 7;
    return strcspn(*kind, " ");
}

static int same_key(const kb_result *a, const kb_result *b)
{
    const char *ka, *kb;
    const size_t na = inputs_of(a, &ka), nb = inputs_of(b, &kb);
    return a->M == b->M && a->N == b->N && a->K == b->K && strcmp(a->benchmark, b->benchmark) == 0 &&
           strcmp(a->backend, b->backend) == 0 && strcmp(a->dtype, b->dtype) == 0 &&
           na == nb && strncmp(ka, kb, na) == 0;
}

static const kb_result *find_row(const kb_result *rows, size_t n, const char *bench,
                                 const char *backend, const char *dtype, int64_t M,
                                 int64_t N, int64_t K)
{
    for (size_t i = 0; i < n; i++) {
        const kb_result *x = &rows[i];
        if (x->M == M && x->N == N && x->K == K && strcmp(x->benchmark, bench) == 0 &&
            strcmp(x->backend, backend) == 0 && strcmp(x->dtype, dtype) == 0)
            return x;
    }
    return NULL;
}

size_t kb_report_common_speedups(const kb_result *rows, size_t n, const char *benchmark,
                                 const char *dtype, const char *ref, const char *backend,
                                 double *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const kb_result *x = &rows[i];
        if (strcmp(x->benchmark, benchmark) != 0 || strcmp(x->backend, backend) != 0) continue;
        if (dtype && strcmp(x->dtype, dtype) != 0) continue;
        if (!kb_report_timed(x)) continue;
        const kb_result *r = find_row(rows, n, benchmark, ref, x->dtype, x->M, x->N, x->K);
        if (!r || !kb_report_timed(r)) continue;
        if (out && k < cap) out[k] = r->median_ms / x->median_ms;
        k++;
    }
    return k;
}

double kb_report_speedup(const kb_result *rows, size_t n, const char *benchmark,
                         const char *dtype, const char *ref, const char *backend,
                         size_t *points)
{
    size_t k = kb_report_common_speedups(rows, n, benchmark, dtype, ref, backend, NULL, 0);
    if (points) *points = k;
    if (k == 0) return NAN;
    double *v = malloc(k * sizeof *v);
    if (!v) return NAN;
    kb_report_common_speedups(rows, n, benchmark, dtype, ref, backend, v, k);
    double g = kb_geomean(v, k);
    free(v);
    return g;
}

static const char *judge(kb_perf now, double base_gbps, double base_noise, double tol,
                         double *change)
{
    kb_gate_opts g;
    kb_gate_defaults(&g);
    g.tolerance = tol;
    double c, band;
    kb_perf base = {base_gbps, base_noise, NAN, NAN};
    kb_verdict v = kb_verdict_decide(&g, &base, &now, &c, &band);
    if (change) *change = c;
    return v == KB_VERDICT_NONE ? NULL : kb_verdict_name(v);
}

const char *kb_report_judge(double now_gbps, double now_noise, double base_gbps,
                            double base_noise, double tol, double *change)
{
    return judge((kb_perf){now_gbps, now_noise, NAN, NAN}, base_gbps, base_noise, tol, change);
}

const char *kb_report_judge_row(const kb_result *x, double base_gbps, double base_noise,
                                double tol, double *change)
{
    return judge((kb_perf){x->gbps, x->noise, x->median_ms, x->min_ms}, base_gbps, base_noise,
                 tol, change);
}

/* ---- dedup -------------------------------------------------------------- */

static void fill_gbps(kb_result *x)
{
    if (!kb_report_timed(x)) return;
    kb_problem p;
    memset(&p, 0, sizeof p);
    /* A compute-bound op's TFLOP/s (peers' rows do not carry it). */
    if (!(isfinite(x->tflops) && x->tflops > 0) &&
        kb_bench_find(x->benchmark, &p.bench, NULL) == KB_OK) {
        p.M = x->M;
        p.N = x->N;
        p.K = x->K;
        const double fl = kb_flops(&p);
        x->tflops = fl > 0 ? fl / (x->median_ms * 1e-3) / 1e12 : NAN;
    }
    if (isfinite(x->gbps) && x->gbps > 0) return;
    if (kb_bench_find(x->benchmark, &p.bench, NULL) != KB_OK) return;
    if (kb_dtype_parse(x->dtype, &p.dtype, NULL) != KB_OK) return;
    p.M = x->M;
    p.N = x->N;
    p.K = x->K;
    x->gbps = kb_bytes_moved(&p) / (x->median_ms * 1e-3) / 1e9;
}

kb_status kb_report_dedup(const kb_results *in, kb_results *out, size_t *replaced, kb_err *e)
{
    size_t rep = 0;
    kb_results_init(out);
    for (size_t i = 0; i < in->n; i++) {
        const kb_result *x = &in->v[i];
        size_t j = 0;
        while (j < out->n && !same_key(&out->v[j], x)) j++;
        if (j < out->n) {
            /* The later row wins but keeps the first one's place, so the
             * order of shapes and series stays the input's. */
            out->v[j] = *x;
            fill_gbps(&out->v[j]);
            rep++;
            continue;
        }
        kb_status st = kb_results_push(out, x, e);
        if (st != KB_OK) {
            kb_results_free(out);
            return st;
        }
        fill_gbps(&out->v[out->n - 1]);
    }
    if (replaced) *replaced = rep;
    return KB_OK;
}

/* ---- orders ------------------------------------------------------------- */

static int names_has(const kb_names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0) return 1;
    return 0;
}

static kb_status names_push(kb_names *s, const char *name, kb_err *e)
{
    if (names_has(s, name)) return KB_OK;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        const char **v = realloc(s->v, cap * sizeof *v);
        if (!v) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory listing report series");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = name;
    return KB_OK;
}

static void names_free(kb_names *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

enum { FIELD_BENCH, FIELD_BACKEND, FIELD_DTYPE };

static const char *field(const kb_result *x, int f)
{
    return f == FIELD_BENCH ? x->benchmark : f == FIELD_BACKEND ? x->backend : x->dtype;
}

/* The names in `known` that occur, in that order, then the rest as met. */
static kb_status names_collect(kb_names *s, const kb_results *r, int f,
                               const char *const *known, size_t nknown, kb_err *e)
{
    for (size_t k = 0; k < nknown; k++)
        for (size_t i = 0; i < r->n; i++)
            if (strcmp(field(&r->v[i], f), known[k]) == 0) {
                KB_TRY(names_push(s, field(&r->v[i], f), e));
                break;
            }
    for (size_t i = 0; i < r->n; i++) KB_TRY(names_push(s, field(&r->v[i], f), e));
    return KB_OK;
}

static kb_status collect_benches(kb_names *s, const kb_results *r, kb_err *e)
{
    const char *known[KB_NUM_BENCH];
    for (int i = 0; i < KB_NUM_BENCH; i++) known[i] = kb_bench_info_get((kb_bench_id)i)->name;
    return names_collect(s, r, FIELD_BENCH, known, KB_NUM_BENCH, e);
}

static kb_status collect_series(kb_names *s, const kb_results *r, kb_err *e)
{
    const char *known[KB_NUM_BACKENDS];
    for (int i = 0; i < KB_NUM_BACKENDS; i++) known[i] = kb_backend_name(i);
    return names_collect(s, r, FIELD_BACKEND, known, KB_NUM_BACKENDS, e);
}

static kb_status collect_dtypes(kb_names *s, const kb_results *r, kb_err *e)
{
    const char *known[KB_NUM_DTYPES];
    for (int i = 0; i < KB_NUM_DTYPES; i++) known[i] = kb_dtype_name((kb_dtype)i);
    return names_collect(s, r, FIELD_DTYPE, known, KB_NUM_DTYPES, e);
}

/* ---- stdout: the PyTorch suite's lines ----------------------------------- */

static size_t count_timed(const kb_results *r, const char *bench, const char *dtype,
                          const char *backend)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (kb_report_timed(&r->v[i]) && strcmp(r->v[i].benchmark, bench) == 0 &&
            strcmp(r->v[i].dtype, dtype) == 0 && strcmp(r->v[i].backend, backend) == 0)
            k++;
    return k;
}

static int has_rows(const kb_results *r, const char *bench, const char *dtype)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].benchmark, bench) == 0 && strcmp(r->v[i].dtype, dtype) == 0) return 1;
    return 0;
}

/* Per (benchmark, dtype), as report.md and summary.csv count them: one
 * geomean definition everywhere (a speedup pooled over dtypes would mix
 * bf16's and fp32's different byte counts into one number). */
void kb_report_print_speedups(FILE *f, const kb_results *r, const char *ref)
{
    kb_names benches = {0}, series = {0}, dtypes = {0};
    if (!ref) ref = "eager";
    if (collect_benches(&benches, r, NULL) != KB_OK || collect_series(&series, r, NULL) != KB_OK ||
        collect_dtypes(&dtypes, r, NULL) != KB_OK) {
        fprintf(f, "kbench-report: out of host memory\n");
        goto done;
    }
    for (size_t b = 0; b < benches.n; b++)
        for (size_t d = 0; d < dtypes.n; d++) {
            const char *bench = benches.v[b], *dt = dtypes.v[d];
            if (!has_rows(r, bench, dt)) continue;
            fprintf(f, "Geomean speedup for benchmark %s (%s)\n", bench, dt);
            size_t nref = count_timed(r, bench, dt, ref);
            if (nref == 0) {
                fprintf(f, "  no %s results: speedup not computed\n", ref);
                continue;
            }
            fprintf(f, "  %s %zu data points\n", ref, nref);
            for (size_t s = 0; s < series.n; s++) {
                if (strcmp(series.v[s], ref) == 0) continue;
                size_t pts;
                double g = kb_report_speedup(r->v, r->n, bench, dt, ref, series.v[s], &pts);
                if (pts > 0) fprintf(f, "  %s %zu data points, %.2fx speedup\n", series.v[s], pts, g);
            }
        }
done:
    names_free(&benches);
    names_free(&series);
    names_free(&dtypes);
}

/* ---- the model ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The run's SOL: the median of the rows' sol_gbps (or, at off, another
 * stream's column), so one odd row (a peer file measured elsewhere) cannot
 * move it. */
static double median_sol(const kb_results *r, size_t off)
{
    size_t k = 0;
    double *v = malloc((r->n ? r->n : 1) * sizeof *v);
    if (!v) return NAN;
    for (size_t i = 0; i < r->n; i++) {
        const double g = *(const double *)((const char *)&r->v[i] + off);
        if (isfinite(g) && g > 0) v[k++] = g;
    }
    double m = NAN;
    if (k) {
        qsort(v, k, sizeof *v, cmp_double);
        m = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    }
    free(v);
    return m;
}

/* % of SOL per row: an explicit SOL overrides every row; otherwise the row's
 * own sol_pct or sol_gbps (kbench rows carry them), and the run's SOL for
 * rows without (peers' files). */
static void fill_sol(kb_result *x, double model_sol, int override, double model_peak)
{
    if (isfinite(x->tflops) && x->tflops > 0) { /* compute-bound: of the GEMM peak */
        const double peak = isfinite(x->peak_tflops) && x->peak_tflops > 0 ? x->peak_tflops
                                                                            : model_peak;
        x->sol_pct = 100.0 * x->tflops / peak;
        return;
    }
    if (!(isfinite(x->gbps) && x->gbps > 0)) {
        x->sol_pct = NAN;
        return;
    }
    if (override) x->sol_pct = 100.0 * x->gbps / model_sol;
    else if (isfinite(x->sol_pct) && x->sol_pct > 0) return;
    else if (isfinite(x->sol_gbps) && x->sol_gbps > 0) x->sol_pct = 100.0 * x->gbps / x->sol_gbps;
    else if (isfinite(model_sol)) x->sol_pct = 100.0 * x->gbps / model_sol;
    else x->sol_pct = NAN;
}

/* % of the SOL for the row's own read:write mix (sol.h): the row's own when
 * it carries one (kbench rows), else from the byte model and the run's
 * streams (peers' files); an explicit SOL replaces the copy stream. */
static void fill_mix(kb_result *x, const kb_report_model *m, int override)
{
    kb_problem p;
    memset(&p, 0, sizeof p);
    if (!(isfinite(x->gbps) && x->gbps > 0)) {
        x->mix_sol_pct = NAN;
        return;
    }
    if (!override && isfinite(x->mix_sol_pct) && x->mix_sol_pct > 0) return;
    x->mix_sol_pct = NAN;
    if (!override && isfinite(x->mix_sol_gbps) && x->mix_sol_gbps > 0) {
        x->mix_sol_pct = 100.0 * x->gbps / x->mix_sol_gbps;
        return;
    }
    if (kb_bench_find(x->benchmark, &p.bench, NULL) != KB_OK ||
        kb_dtype_parse(x->dtype, &p.dtype, NULL) != KB_OK)
        return;
    p.M = x->M;
    p.N = x->N;
    p.K = x->K;
    const kb_sol_streams s = {m->sol_gbps, m->read_gbps, m->write_gbps};
    x->mix_sol_gbps = kb_sol_mix_for(&p, &s);
    x->mix_sol_pct = 100.0 * x->gbps / x->mix_sol_gbps;
}

kb_status kb_report_model_build(kb_report_model *m, const kb_results *r,
                                const kb_report_opts *o, kb_err *e)
{
    memset(m, 0, sizeof *m);
    KB_TRY(kb_report_dedup(r, &m->rows, &m->replaced, e));
    int override = o->sol_gbps > 0;
    m->sol_gbps = override ? o->sol_gbps : median_sol(&m->rows, offsetof(kb_result, sol_gbps));
    m->read_gbps = median_sol(&m->rows, offsetof(kb_result, sol_read_gbps));
    m->write_gbps = median_sol(&m->rows, offsetof(kb_result, sol_write_gbps));
    m->peak_tflops = median_sol(&m->rows, offsetof(kb_result, peak_tflops));
    m->tol = o->tolerance > 0 ? o->tolerance : KB_REPORT_DEFAULT_TOL;
    m->ref = o->reference && *o->reference ? o->reference : "eager";
    m->image_base = o->image_base;
    for (size_t i = 0; i < m->rows.n; i++) {
        fill_sol(&m->rows.v[i], m->sol_gbps, override, m->peak_tflops);
        fill_mix(&m->rows.v[i], m, override);
    }
    kb_status st = KB_OK;
    /* Every GPU and kbench version of the input, not the first row's: merged
     * files from two GPUs or two builds must not pass for one run. */
    for (size_t i = 0; i < m->rows.n && st == KB_OK; i++) {
        const kb_result *x = &m->rows.v[i];
        if (x->gpu[0]) st = names_push(&m->gpus, x->gpu, e);
        if (st == KB_OK && x->version[0] && !kb_report_is_peer(x->backend))
            st = names_push(&m->versions, x->version, e);
    }
    if (o->title && *o->title) snprintf(m->gpu, sizeof m->gpu, "%s", o->title);
    for (size_t i = 0; !(o->title && *o->title) && i < m->gpus.n; i++) {
        const size_t n = strlen(m->gpu);
        snprintf(m->gpu + n, sizeof m->gpu - n, "%s%s", i ? ", " : "", m->gpus.v[i]);
    }
    if (st == KB_OK) st = collect_benches(&m->benches, &m->rows, e);
    if (st == KB_OK) st = collect_series(&m->series, &m->rows, e);
    if (st == KB_OK) st = collect_dtypes(&m->dtypes, &m->rows, e);
    if (st != KB_OK) kb_report_model_free(m);
    return st;
}

void kb_report_model_free(kb_report_model *m)
{
    kb_results_free(&m->rows);
    names_free(&m->benches);
    names_free(&m->series);
    names_free(&m->dtypes);
    names_free(&m->gpus);
    names_free(&m->versions);
}

kb_status kb_report_shapes(const kb_report_model *m, const char *bench, const char *dtype,
                           kb_mn **out, size_t *n, kb_err *e)
{
    kb_mn *v = malloc((m->rows.n ? m->rows.n : 1) * sizeof *v);
    if (!v) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory listing shapes of %s", bench);
    size_t k = 0;
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (strcmp(x->benchmark, bench) != 0 || strcmp(x->dtype, dtype) != 0) continue;
        size_t j = 0;
        while (j < k && !(v[j].M == x->M && v[j].N == x->N && v[j].K == x->K)) j++;
        if (j == k) v[k++] = (kb_mn){x->M, x->N, x->K};
    }
    *out = v;
    *n = k;
    return KB_OK;
}

const kb_result *kb_report_find(const kb_report_model *m, const char *bench,
                                const char *backend, const char *dtype, int64_t M, int64_t N,
                                int64_t K)
{
    return find_row(m->rows.v, m->rows.n, bench, backend, dtype, M, N, K);
}

int kb_report_has(const kb_report_model *m, const char *bench, const char *dtype,
                  const char *backend)
{
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (strcmp(x->benchmark, bench) == 0 && strcmp(x->dtype, dtype) == 0 &&
            (!backend || strcmp(x->backend, backend) == 0))
            return 1;
    }
    return 0;
}

void kb_report_cell_get(const kb_report_model *m, const char *bench, const char *dtype,
                        const char *backend, kb_report_cell *c)
{
    geo_acc gb = {0, 0, 0}, sol = {0, 0, 0}, mix = {0, 0, 0};
    memset(c, 0, sizeof *c);
    c->worst_gbps = NAN;
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (strcmp(x->benchmark, bench) != 0 || strcmp(x->dtype, dtype) != 0 ||
            strcmp(x->backend, backend) != 0)
            continue;
        if (x->accuracy == KB_ACC_FAIL) c->fails++;
        if (x->accuracy == KB_ACC_SKIP) c->skips++;
        if (!kb_report_timed(x)) continue;
        c->points++;
        if (isfinite(x->gbps) && x->gbps > 0) {
            geo_add(&gb, x->gbps);
            if (!(x->gbps >= c->worst_gbps)) { /* NaN-safe: the first one wins */
                c->worst_gbps = x->gbps;
                c->worst = (kb_mn){x->M, x->N, x->K};
            }
        }
        if (isfinite(x->sol_pct) && x->sol_pct > 0) geo_add(&sol, x->sol_pct);
        if (isfinite(x->mix_sol_pct) && x->mix_sol_pct > 0) geo_add(&mix, x->mix_sol_pct);
    }
    c->gbps = geo_value(&gb);
    c->sol_pct = geo_value(&sol);
    c->mix_sol_pct = geo_value(&mix);
    c->speedup = kb_report_speedup(m->rows.v, m->rows.n, bench, dtype, m->ref, backend,
                                   &c->speedup_points);
}

int kb_report_is_peer(const char *backend)
{
    return kb_backend_index(backend) < 0 && strncmp(backend, "tuned:", 6) != 0;
}

void kb_report_case_name(const kb_result *x, char *buf, size_t len)
{
    const char *kind;
    const int n = (int)inputs_of(x, &kind);
    char shape[72];
    kb_shape_format(shape, sizeof shape, x->M, x->N, x->K); /* MxNxK for the 3-D ops */
    snprintf(buf, len, "%s.%s.%s.%s%s%.*s", x->benchmark, x->backend, x->dtype, shape,
             n ? "." : "", n, kind);
}

/* A verdict the run recorded stands, except NO_BASELINE: the run had no
 * row, but the baseline given to the report may have one, and a row judged
 * by nobody must not pass as "not checked". */
static int recorded_verdict(const kb_result *x)
{
    return x->verdict[0] && strcmp(x->verdict, "NO_BASELINE") != 0;
}

/* The baseline row the report judges x by, or NULL (x keeps its own verdict,
 * is not timed, or bl has no row for it). */
static const kb_baseline_row *judged_by(const kb_result *x, const kb_baseline *bl)
{
    if (!bl || recorded_verdict(x) || !kb_report_timed(x)) return NULL;
    return kb_baseline_find(bl, x->benchmark, x->backend, x->dtype, x->M, x->N, x->K);
}

kb_status kb_report_judge_all(const kb_report_model *m, const kb_baseline *bl,
                              kb_report_judged **out, kb_err *e)
{
    kb_report_judged *j = calloc(m->rows.n ? m->rows.n : 1, sizeof *j);
    if (!j) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory judging regressions");
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        const kb_baseline_row *b =
            bl ? kb_baseline_find(bl, x->benchmark, x->backend, x->dtype, x->M, x->N, x->K) : NULL;
        /* The run's own baseline figure first: it is what its verdict saw. */
        double base = isfinite(x->baseline_gbps) ? x->baseline_gbps : b ? b->gbps : NAN;
        j[i].row = x;
        j[i].base_gbps = base;
        j[i].noise = x->noise;
        const char *v = NULL;
        if (kb_report_timed(x))
            v = kb_report_judge_row(x, base, b ? b->noise : NAN, m->tol, &j[i].change);
        else
            j[i].change = NAN;
        j[i].verdict = recorded_verdict(x) ? x->verdict : v ? v : x->verdict[0] ? x->verdict : NULL;
    }
    *out = j;
    return KB_OK;
}

/* ---- driver --------------------------------------------------------------- */

void kb_report_opts_init(kb_report_opts *o)
{
    memset(o, 0, sizeof *o);
    o->formats = KB_REPORT_ALL;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* The GPU a baseline file is for, from its name (report.h): *gpu gets the
 * name's stem ("NVIDIA_H200"); 1 when it is a GPU's name as kbench writes
 * it, 0 when the name says nothing (a copy named "baseline.csv"). The
 * prefixes are how CUDA names NVIDIA's GPUs, blanks written as '_'. */
static int baseline_gpu(const char *path, char *gpu, size_t len)
{
    static const char *const vendor[] = {"NVIDIA_", "Tesla_", "Quadro_", "GeForce_", "TITAN_"};
    const char *b = base_name(path);
    size_t n = strlen(b);
    if (n > 4 && strcmp(b + n - 4, ".csv") == 0) n -= 4;
    snprintf(gpu, len, "%.*s", (int)n, b);
    for (size_t k = 0; k < sizeof vendor / sizeof vendor[0]; k++)
        if (strncmp(gpu, vendor[k], strlen(vendor[k])) == 0) return 1;
    return 0;
}

/* Whether a baseline's stem names the GPU whose file name is rgpu: the name
 * itself, or a copy kept under it with a '-' or '.' suffix
 * ("NVIDIA_H200-old", "NVIDIA_H200.2026-11"). '_' stands for a blank in a
 * GPU's name, so "NVIDIA_H200_NVL" is another GPU, not a copy. */
static int same_gpu_file(const char *stem, const char *rgpu)
{
    const size_t n = strlen(rgpu);
    return strncmp(stem, rgpu, n) == 0 && (stem[n] == '\0' || stem[n] == '-' || stem[n] == '.');
}

/* Rows judged by a baseline must come from its GPU: a baseline is one GPU's
 * numbers, and an A100's rows judged against the H200's file gave "no
 * regression" without a word. Refused when the file's name says another
 * GPU; when it says none, or judged rows name none, bl_info->gpu_note says
 * what was not checked (stderr and report.md). */
static kb_status check_baseline_gpu(const kb_report_model *m, const kb_baseline *bl,
                                    const char *path, kb_report_baseline_info *info, kb_err *e)
{
    char bgpu[256], rgpu[256], name[256];
    const int known = baseline_gpu(path, bgpu, sizeof bgpu);
    size_t judged = 0, unnamed = 0;
    const char *seen = NULL; /* a GPU of the judged rows, for the note */
    int several = 0;
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (!judged_by(x, bl)) continue;
        judged++;
        if (!x->gpu[0]) {
            unnamed++;
            continue;
        }
        if (seen && strcmp(seen, x->gpu) != 0) several = 1;
        if (!seen) seen = x->gpu;
        if (!known) continue;
        kb_gpu_file_name(x->gpu, rgpu, sizeof rgpu);
        if (same_gpu_file(bgpu, rgpu)) continue;
        kb_report_case_name(x, name, sizeof name);
        return KB_FAIL(e, KB_ERR_ARG,
                       "baseline %s is for GPU %s (its file name), but %s was measured on %s: "
                       "a baseline judges only its own GPU's rows (that GPU's file would be "
                       "%s.csv, or a copy named %s-SUFFIX.csv)",
                       path, bgpu, name, x->gpu, rgpu, rgpu);
    }
    info->gpu_note[0] = '\0';
    if (judged && !known)
        snprintf(info->gpu_note, sizeof info->gpu_note,
                 "the GPU of baseline %s is unknown (its file name is not a GPU's, as kbench's "
                 "baselines/<gpu>.csv are): %zu row(s) measured on %s%s are judged against it "
                 "without checking that it was recorded there",
                 info->name, judged, seen ? seen : "an unnamed GPU",
                 several || (seen && unnamed) ? " and others" : "");
    else if (unnamed)
        snprintf(info->gpu_note, sizeof info->gpu_note,
                 "%zu row(s) judged against baseline %s name no GPU (no gpu column): that "
                 "they were measured on %s is not checked",
                 unnamed, info->name, bgpu);
    return KB_OK;
}

static kb_status write_markdown(const char *dir, const kb_report_model *m,
                                const kb_report_judged *j, const kb_report_baseline_info *bl,
                                const kb_plot_result *plots, kb_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/report.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    kb_status st = kb_report_write_markdown(f, m, j, bl, plots, e);
    if (fclose(f) != 0 && st == KB_OK)
        st = KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    /* The same report as one self-contained page, for CI artifacts. */
    if (st == KB_OK) {
        char html[4096], title[sizeof m->gpu + 32];
        snprintf(html, sizeof html, "%s/report.html", dir);
        snprintf(title, sizeof title, "kbench report%s%s", m->gpu[0] ? ": " : "", m->gpu);
        st = kb_report_write_html(path, html, dir, title, e);
    }
    return st;
}

/* "a, b, c" of a name list, for stderr. */
static void names_join(const kb_names *s, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        const size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%s", i ? ", " : "", s->v[i]);
    }
}

static int compared(const char *verdict)
{
    return verdict && strcmp(verdict, "NO_BASELINE") != 0;
}

kb_status kb_report_generate(const kb_results *r, const kb_report_opts *o, kb_err *e)
{
    if (r->n == 0)
        return KB_FAIL(e, KB_ERR_ARG, "no results to report: the input has no rows");
    unsigned files = o->formats & (KB_REPORT_MD | KB_REPORT_CSV | KB_REPORT_PLOTS);
    if (files && !(o->out_dir && *o->out_dir))
        return KB_FAIL(e, KB_ERR_ARG, "no output directory given for the report");

    kb_report_model m;
    KB_TRY(kb_report_model_build(&m, r, o, e));
    kb_baseline bl;
    kb_baseline_init(&bl);
    kb_report_judged *j = NULL;
    kb_plot_result plots = {KB_PLOTS_OFF, ""};
    kb_report_baseline_info info;
    memset(&info, 0, sizeof info);
    kb_report_outcome oc;
    memset(&oc, 0, sizeof oc);
    kb_status st = KB_OK;

    if (o->formats & KB_REPORT_STDOUT) kb_report_print_speedups(o->out ? o->out : stdout, &m.rows, m.ref);
    /* A missing baseline is an empty one (as kb_baseline_read has it: a GPU
     * without baselines yet); report.md says so. */
    if (o->baseline_path) {
        info.name = base_name(o->baseline_path);
        info.missing = access(o->baseline_path, F_OK) != 0;
        oc.baseline_given = 1;
    }
    if (o->baseline_path && !info.missing) st = kb_baseline_read(o->baseline_path, &bl, e);
    if (st == KB_OK && o->baseline_path)
        st = check_baseline_gpu(&m, &bl, o->baseline_path, &info, e);
    if (st == KB_OK && info.gpu_note[0]) fprintf(stderr, "kbench-report: warning: %s\n", info.gpu_note);
    if (st == KB_OK && m.gpus.n > 1) {
        char list[1024];
        names_join(&m.gpus, list, sizeof list);
        fprintf(stderr, "kbench-report: warning: the input mixes %zu GPUs (%s): their numbers "
                        "do not compare, and a baseline is one GPU's\n", m.gpus.n, list);
    }
    if (st == KB_OK && m.versions.n > 1) {
        char list[1024];
        names_join(&m.versions, list, sizeof list);
        fprintf(stderr, "kbench-report: warning: the input mixes %zu kbench versions (%s)\n",
                m.versions.n, list);
    }
    if (st == KB_OK) st = kb_report_judge_all(&m, &bl, &j, e);
    for (size_t i = 0; st == KB_OK && i < m.rows.n; i++) {
        const kb_result *x = &m.rows.v[i];
        if (x->accuracy == KB_ACC_PASS || x->accuracy == KB_ACC_FAIL || compared(j[i].verdict))
            oc.checked++;
        if (kb_report_is_peer(x->backend)) continue;
        if (kb_baseline_find(&bl, x->benchmark, x->backend, x->dtype, x->M, x->N, x->K))
            oc.baseline_matched++;
        char kind[32];
        const char *k;
        const size_t kn = inputs_of(x, &k);
        snprintf(kind, sizeof kind, "%.*s", (int)kn, k);
        /* a library's known deviation fails as expected (harness/registry.c) */
        if (x->accuracy == KB_ACC_FAIL && kb_known_deviation(x->benchmark, x->backend, kind))
            continue;
        if (x->accuracy == KB_ACC_FAIL ||
            (j[i].verdict && (strcmp(j[i].verdict, "SLOWER") == 0 ||
                              strcmp(j[i].verdict, "FUSION_CHANGED") == 0)))
            oc.regressions++;
    }
    info.matched = oc.baseline_matched;
    if (st == KB_OK && o->regressions) *o->regressions = oc.regressions;
    if (st == KB_OK && o->outcome) *o->outcome = oc;
    if (st == KB_OK && files) st = kb_mkdir_p(o->out_dir, e);
    if (st == KB_OK && (o->formats & KB_REPORT_PLOTS)) {
        st = kb_report_plots(&m, o->out_dir, o->gnuplot, &plots, e);
        if (st == KB_OK && plots.state != KB_PLOTS_DRAWN)
            fprintf(stderr, "kbench-report: %s\n", plots.detail);
    }
    if (st == KB_OK && (o->formats & KB_REPORT_MD))
        st = write_markdown(o->out_dir, &m, j, &info, &plots, e);
    if (st == KB_OK && (o->formats & KB_REPORT_CSV)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/summary.csv", o->out_dir);
        st = kb_report_write_summary_csv(path, &m, e);
    }
    free(j);
    kb_baseline_free(&bl);
    kb_report_model_free(&m);
    return st;
}

int kb_report_exit_status(const kb_report_outcome *oc, const char *baseline_path, char *why,
                          size_t len)
{
    why[0] = '\0';
    /* Checked first: a report that verified nothing is no pass, and the
     * regressions it may still count come from accuracy alone. */
    if (oc->baseline_given && oc->baseline_matched == 0) {
        snprintf(why, len,
                 "baseline %s has no row for any kbench case in the results: nothing was "
                 "compared with it (a wrong file, or results of other cases); see the report",
                 baseline_path ? baseline_path : "(given)");
        return 1;
    }
    if (oc->checked == 0) {
        snprintf(why, len,
                 "nothing was verified: no row's accuracy was checked (PASS or FAIL) and no "
                 "row's speed was compared with a baseline (every case skipped or untimed, "
                 "and no verdict); see the report");
        return 1;
    }
    return oc->regressions ? 4 : 0;
}

/* Whether path is the same file as dir/name (when that exists). */
static int same_file(const struct stat *in, const char *dir, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && st.st_dev == in->st_dev && st.st_ino == in->st_ino;
}

kb_status kb_report_check_inputs(const kb_report_opts *o, const char *const *paths, size_t n,
                                 kb_err *e)
{
    static const struct {
        unsigned format;
        const char *name;
    } outs[] = {{KB_REPORT_MD, "report.md"}, {KB_REPORT_MD, "report.html"},
                {KB_REPORT_CSV, "summary.csv"}};
    static const char *const plot_ext[] = {".dat", ".gp", ".png", ".svg"};
    if (!(o->out_dir && *o->out_dir)) return KB_OK;
    for (size_t i = 0; i < n; i++) {
        struct stat in;
        if (!paths[i] || stat(paths[i], &in) != 0) continue; /* its reader says why */
        for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
            if ((o->formats & outs[k].format) && same_file(&in, o->out_dir, outs[k].name))
                return KB_FAIL(e, KB_ERR_ARG,
                               "input %s is the report's own %s/%s: writing the report would "
                               "replace it (give another --out)",
                               paths[i], o->out_dir, outs[k].name);
        if (!(o->formats & KB_REPORT_PLOTS)) continue;
        /* Plots are named after what the input holds: any plot file in
         * <out>/plots may be rewritten. */
        const char *b = base_name(paths[i]), *dot = strrchr(b, '.');
        int plot_like = 0;
        for (size_t k = 0; dot && k < sizeof plot_ext / sizeof plot_ext[0]; k++)
            plot_like |= strcmp(dot, plot_ext[k]) == 0;
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", b > paths[i] ? (int)(b - paths[i]) : 1,
                 b > paths[i] ? paths[i] : ".");
        struct stat d, pd;
        char plots_dir[4096];
        snprintf(plots_dir, sizeof plots_dir, "%s/plots", o->out_dir);
        if (plot_like && stat(dir, &d) == 0 && stat(plots_dir, &pd) == 0 &&
            d.st_dev == pd.st_dev && d.st_ino == pd.st_ino)
            return KB_FAIL(e, KB_ERR_ARG,
                           "input %s lies in the report's own %s: writing the plots may "
                           "replace it (give another --out)",
                           paths[i], plots_dir);
    }
    return KB_OK;
}
