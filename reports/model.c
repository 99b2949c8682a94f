/* The report's model: rows keyed (with their input kind) and deduplicated,
 * GB/s and TFLOP/s filled in, the orders every output walks in, the run's
 * SOL figures, and the lookups the writers ask (through index.c's sorted
 * index of the rows, built with the model). maths.c computes on it;
 * report.c builds it and drives the writers. */
#include "report_int.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "sol.h"

/* ---- keys --------------------------------------------------------------- */

int kb_report_timed(const kb_result *x) { return isfinite(x->median_ms) && x->median_ms > 0; }

/* The input kind of a row ("" for randn): kbench writes "inputs=<kind>" at
 * the start of the config column of an input-kind case. Part of the key, so
 * the kinds of one shape stay apart. */
size_t kb_report_inputs_of(const kb_result *x, const char **kind)
{
    *kind = "";
    if (strncmp(x->config, "inputs=", 7) != 0) return 0;
    *kind = x->config + 7;
    return strcspn(*kind, " ");
}

/* An order of rows' keys (benchmark, backend, dtype, M, N, K and input
 * kind; the numbers compared first, as cheaper); 0 for the same key. */
static int key_cmp(const kb_result *a, const kb_result *b)
{
    const char *ka, *kb;
    const size_t na = kb_report_inputs_of(a, &ka), nb = kb_report_inputs_of(b, &kb);
    int c = (a->M > b->M) - (a->M < b->M);
    if (!c) c = (a->N > b->N) - (a->N < b->N);
    if (!c) c = (a->K > b->K) - (a->K < b->K);
    if (!c) c = strcmp(a->benchmark, b->benchmark);
    if (!c) c = strcmp(a->backend, b->backend);
    if (!c) c = strcmp(a->dtype, b->dtype);
    if (!c) c = memcmp(ka, kb, na < nb ? na : nb);
    if (!c) c = (na > nb) - (na < nb);
    return c;
}

/* Keys, then input position: equal keys in input order. */
static int key_pos_cmp(const void *pa, const void *pb)
{
    const kb_result *a = *(const kb_result *const *)pa, *b = *(const kb_result *const *)pb;
    const int c = key_cmp(a, b);
    return c ? c : (a > b) - (a < b);
}

const kb_result *kb_report_find_row(const kb_result *rows, size_t n, const char *bench,
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

/* ---- dedup -------------------------------------------------------------- */

double kb_report_row_gbps(const kb_result *x)
{
    if (!kb_report_timed(x)) return NAN;
    if (isfinite(x->gbps) && x->gbps > 0) return x->gbps;
    kb_problem p;
    memset(&p, 0, sizeof p);
    if (kb_bench_find(x->benchmark, &p.bench, NULL) != KB_OK) return NAN;
    if (kb_dtype_parse(x->dtype, &p.dtype, NULL) != KB_OK) return NAN;
    p.M = x->M;
    p.N = x->N;
    p.K = x->K;
    return kb_bytes_moved(&p) / (x->median_ms * 1e-3) / 1e9;
}

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
    const double gbps = kb_report_row_gbps(x);
    if (isfinite(gbps)) x->gbps = gbps;
}

/* The later row of a key wins but keeps the first one's place, so the
 * order of shapes and series stays the input's. The input sorted by key
 * (then position) gives each key's first and last row in O(n log n);
 * winner[first] = last, and the winners are taken in input order. */
kb_status kb_report_dedup(const kb_results *in, kb_results *out, size_t *replaced, kb_err *e)
{
    const size_t n = in->n;
    kb_results_init(out);
    const kb_result **v = malloc((n ? n : 1) * sizeof *v);
    const kb_result **winner = calloc(n ? n : 1, sizeof *winner);
    kb_status st = v && winner ? KB_OK
                               : KB_FAIL(e, KB_ERR_NOMEM, "out of host memory merging %zu rows", n);
    for (size_t i = 0; st == KB_OK && i < n; i++) v[i] = &in->v[i];
    if (st == KB_OK) qsort(v, n, sizeof *v, key_pos_cmp);
    for (size_t i = 0; st == KB_OK && i < n;) {
        size_t j = i + 1;
        while (j < n && key_cmp(v[i], v[j]) == 0) j++;
        winner[v[i] - in->v] = v[j - 1];
        i = j;
    }
    for (size_t i = 0; st == KB_OK && i < n; i++) {
        if (!winner[i]) continue;
        st = kb_results_push(out, winner[i], e);
        if (st == KB_OK) fill_gbps(&out->v[out->n - 1]);
    }
    free(v);
    free(winner);
    if (st != KB_OK) {
        kb_results_free(out);
        return st;
    }
    if (replaced) *replaced = n - out->n;
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

void kb_report_names_free(kb_names *s)
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
    int n = 0;
    for (int i = 0; i < KB_NUM_BENCH; i++)
        if (kb_bench_info_get((kb_bench_id)i)) known[n++] = kb_bench_info_get((kb_bench_id)i)->name;
    return names_collect(s, r, FIELD_BENCH, known, n, e);
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

kb_status kb_report_orders(const kb_results *r, kb_names *benches, kb_names *series,
                           kb_names *dtypes, kb_err *e)
{
    KB_TRY(collect_benches(benches, r, e));
    KB_TRY(collect_series(series, r, e));
    return collect_dtypes(dtypes, r, e);
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
    if (st == KB_OK) st = kb_report_orders(&m->rows, &m->benches, &m->series, &m->dtypes, e);
    if (st == KB_OK) st = kb_report_index_build(&m->ix, m->rows.v, m->rows.n, e);
    if (st == KB_OK) st = kb_report_gpu_cmp_build(r, &m->gpu_cmp, e);
    if (st != KB_OK) kb_report_model_free(m);
    return st;
}

void kb_report_model_free(kb_report_model *m)
{
    kb_report_gpu_cmp_free(&m->gpu_cmp);
    kb_report_index_free(&m->ix);
    kb_results_free(&m->rows);
    kb_report_names_free(&m->benches);
    kb_report_names_free(&m->series);
    kb_report_names_free(&m->dtypes);
    kb_report_names_free(&m->gpus);
    kb_report_names_free(&m->versions);
}

static int shape_pos_cmp(const void *pa, const void *pb)
{
    const kb_result *a = *(const kb_result *const *)pa, *b = *(const kb_result *const *)pb;
    int c = (a->M > b->M) - (a->M < b->M);
    if (!c) c = (a->N > b->N) - (a->N < b->N);
    if (!c) c = (a->K > b->K) - (a->K < b->K);
    return c ? c : (a > b) - (a < b);
}

static int pos_cmp(const void *pa, const void *pb)
{
    const kb_result *a = *(const kb_result *const *)pa, *b = *(const kb_result *const *)pb;
    return (a > b) - (a < b);
}

/* The (benchmark, dtype)'s rows sorted by shape, then position: each
 * shape's first row; those in input order are the shapes in input order. */
kb_status kb_report_shapes(const kb_report_model *m, const char *bench, const char *dtype,
                           kb_mn **out, size_t *n, kb_err *e)
{
    size_t c, k = 0;
    const kb_result *const *cell = kb_report_index_cell(&m->ix, bench, dtype, NULL, &c);
    const kb_result **r = malloc((c ? c : 1) * sizeof *r);
    kb_mn *v = malloc((c ? c : 1) * sizeof *v);
    if (!r || !v) {
        free(r);
        free(v);
        return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory listing shapes of %s", bench);
    }
    memcpy(r, cell, c * sizeof *r);
    qsort(r, c, sizeof *r, shape_pos_cmp);
    for (size_t i = 0; i < c; i++)
        if (!k || r[k - 1]->M != r[i]->M || r[k - 1]->N != r[i]->N || r[k - 1]->K != r[i]->K)
            r[k++] = r[i];
    qsort(r, k, sizeof *r, pos_cmp);
    for (size_t i = 0; i < k; i++) v[i] = (kb_mn){r[i]->M, r[i]->N, r[i]->K};
    free(r);
    *out = v;
    *n = k;
    return KB_OK;
}

const kb_result *kb_report_find(const kb_report_model *m, const char *bench,
                                const char *backend, const char *dtype, int64_t M, int64_t N,
                                int64_t K)
{
    return kb_report_index_find(&m->ix, bench, backend, dtype, M, N, K);
}

int kb_report_has(const kb_report_model *m, const char *bench, const char *dtype,
                  const char *backend)
{
    size_t n;
    kb_report_index_cell(&m->ix, bench, dtype, backend, &n);
    return n > 0;
}

int kb_report_is_peer(const char *backend)
{
    return kb_backend_index(backend) < 0 && strncmp(backend, "tuned:", 6) != 0;
}

void kb_report_case_name(const kb_result *x, char *buf, size_t len)
{
    const char *kind;
    const int n = (int)kb_report_inputs_of(x, &kind);
    char shape[72];
    kb_shape_format(shape, sizeof shape, x->M, x->N, x->K); /* MxNxK for the 3-D ops */
    snprintf(buf, len, "%s.%s.%s.%s%s%.*s", x->benchmark, x->backend, x->dtype, shape,
             n ? "." : "", n, kind);
}
