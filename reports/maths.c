/* The report's maths: geomeans, speedups over the shapes both backends
 * ran, regression verdicts, one summary cell's figures, and the speedup
 * lines printed on stdout. */
#include "report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

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

/* ---- speedups and verdicts ---------------------------------------------- */

/* The reference row of x's shape, through ix (NULL: a scan of rows). */
static const kb_result *ref_row(const kb_result *rows, size_t n, const kb_report_index *ix,
                                const kb_result *x, const char *ref)
{
    return ix ? kb_report_index_find(ix, x->benchmark, ref, x->dtype, x->M, x->N, x->K)
              : kb_report_find_row(rows, n, x->benchmark, ref, x->dtype, x->M, x->N, x->K);
}

/* kb_report_common_speedups with an index of rows[0..n) (or NULL): the
 * backend's rows in input order, each with its reference row. */
static size_t common_speedups(const kb_result *rows, size_t n, const kb_report_index *ix,
                              const char *benchmark, const char *dtype, const char *ref,
                              const char *backend, double *out, size_t cap)
{
    size_t k = 0, nc = 0;
    const kb_result *const *cell =
        ix && dtype ? kb_report_index_cell(ix, benchmark, dtype, backend, &nc) : NULL;
    const size_t m = cell ? nc : n;
    for (size_t i = 0; i < m; i++) {
        const kb_result *x = cell ? cell[i] : &rows[i];
        if (strcmp(x->benchmark, benchmark) != 0 || strcmp(x->backend, backend) != 0) continue;
        if (dtype && strcmp(x->dtype, dtype) != 0) continue;
        if (!kb_report_timed(x)) continue;
        const kb_result *r = ref_row(rows, n, ix, x, ref);
        if (!r || !kb_report_timed(r)) continue;
        if (out && k < cap) out[k] = r->median_ms / x->median_ms;
        k++;
    }
    return k;
}

static double speedup(const kb_result *rows, size_t n, const kb_report_index *ix,
                      const char *benchmark, const char *dtype, const char *ref,
                      const char *backend, size_t *points)
{
    size_t k = common_speedups(rows, n, ix, benchmark, dtype, ref, backend, NULL, 0);
    if (points) *points = k;
    if (k == 0) return NAN;
    double *v = malloc(k * sizeof *v);
    if (!v) return NAN;
    common_speedups(rows, n, ix, benchmark, dtype, ref, backend, v, k);
    double g = kb_geomean(v, k);
    free(v);
    return g;
}

/* The public forms take bare rows: indexed for the call (O(n log n), not
 * a scan per row), or scanned when there is no memory for the index. */
size_t kb_report_common_speedups(const kb_result *rows, size_t n, const char *benchmark,
                                 const char *dtype, const char *ref, const char *backend,
                                 double *out, size_t cap)
{
    kb_report_index ix;
    const int have = kb_report_index_build(&ix, rows, n, NULL) == KB_OK;
    size_t k = common_speedups(rows, n, have ? &ix : NULL, benchmark, dtype, ref, backend, out, cap);
    if (have) kb_report_index_free(&ix);
    return k;
}

double kb_report_speedup(const kb_result *rows, size_t n, const char *benchmark,
                         const char *dtype, const char *ref, const char *backend,
                         size_t *points)
{
    kb_report_index ix;
    const int have = kb_report_index_build(&ix, rows, n, NULL) == KB_OK;
    double g = speedup(rows, n, have ? &ix : NULL, benchmark, dtype, ref, backend, points);
    if (have) kb_report_index_free(&ix);
    return g;
}

double kb_report_index_speedup(const kb_report_index *ix, const char *bench, const char *dtype,
                               const char *ref, const char *backend, size_t *points)
{
    return speedup(ix->rows, ix->n, ix, bench, dtype, ref, backend, points);
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

/* ---- a summary cell ----------------------------------------------------- */

void kb_report_cell_get(const kb_report_model *m, const char *bench, const char *dtype,
                        const char *backend, kb_report_cell *c)
{
    geo_acc gb = {0, 0, 0}, sol = {0, 0, 0}, mix = {0, 0, 0};
    memset(c, 0, sizeof *c);
    c->worst_gbps = NAN;
    size_t n;
    const kb_result *const *cell = kb_report_index_cell(&m->ix, bench, dtype, backend, &n);
    for (size_t i = 0; i < n; i++) { /* the cell's rows in input order */
        const kb_result *x = cell[i];
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
    c->speedup = kb_report_index_speedup(&m->ix, bench, dtype, m->ref, backend,
                                         &c->speedup_points);
}

/* ---- stdout: the PyTorch suite's lines ----------------------------------- */

static size_t count_timed(const kb_report_index *ix, const char *bench, const char *dtype,
                          const char *backend)
{
    size_t n, k = 0;
    const kb_result *const *cell = kb_report_index_cell(ix, bench, dtype, backend, &n);
    for (size_t i = 0; i < n; i++) k += (size_t)kb_report_timed(cell[i]);
    return k;
}

static int has_rows(const kb_report_index *ix, const char *bench, const char *dtype)
{
    size_t n;
    kb_report_index_cell(ix, bench, dtype, NULL, &n);
    return n > 0;
}

/* Per (benchmark, dtype), as report.md and summary.csv count them: one
 * geomean definition everywhere (a speedup pooled over dtypes would mix
 * bf16's and fp32's different byte counts into one number). */
void kb_report_print_speedups(FILE *f, const kb_results *r, const char *ref)
{
    kb_names benches = {0}, series = {0}, dtypes = {0};
    kb_report_index ix = {0};
    if (!ref) ref = "eager";
    if (kb_report_orders(r, &benches, &series, &dtypes, NULL) != KB_OK ||
        kb_report_index_build(&ix, r->v, r->n, NULL) != KB_OK) {
        fprintf(f, "kbench-report: out of host memory\n");
        goto done;
    }
    for (size_t b = 0; b < benches.n; b++)
        for (size_t d = 0; d < dtypes.n; d++) {
            const char *bench = benches.v[b], *dt = dtypes.v[d];
            if (!has_rows(&ix, bench, dt)) continue;
            fprintf(f, "Geomean speedup for benchmark %s (%s)\n", bench, dt);
            size_t nref = count_timed(&ix, bench, dt, ref);
            if (nref == 0) {
                fprintf(f, "  no %s results: speedup not computed\n", ref);
                continue;
            }
            fprintf(f, "  %s %zu data points\n", ref, nref);
            for (size_t s = 0; s < series.n; s++) {
                if (strcmp(series.v[s], ref) == 0) continue;
                size_t pts;
                double g = kb_report_index_speedup(&ix, bench, dt, ref, series.v[s], &pts);
                if (pts > 0) fprintf(f, "  %s %zu data points, %.2fx speedup\n", series.v[s], pts, g);
            }
        }
done:
    kb_report_index_free(&ix);
    kb_report_names_free(&benches);
    kb_report_names_free(&series);
    kb_report_names_free(&dtypes);
}
