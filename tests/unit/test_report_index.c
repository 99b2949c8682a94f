/* kbench-report's sorted indexes (reports/index.c, the dedup and shapes in
 * model.c) against the linear scans they replaced, on ~2000 pseudo-random
 * rows (fixed seed) with many repeated keys: the same (benchmark, backend,
 * dtype, M, N, K) under several input kinds in either order, and re-runs
 * that override earlier rows. The references here are written from the
 * documented semantics, O(n^2) on purpose: kb_report_dedup keeps each key's
 * first place with its last row's contents; kb_report_find is the first
 * row of a key (any input kind); kb_report_has a scan; kb_report_shapes a
 * (benchmark, dtype)'s shapes in input order; a cell's rows in input order;
 * the speedups' reference row the first of its key. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_int.h"
#include "report_util.h"
#include "unit.h"

static const char *const benches[] = {"softmax_forward", "rmsnorm_forward", "layernorm_forward"};
static const char *const backends[] = {"eager", "fused", "tuned", "liger"};
static const char *const dtypes[] = {"bf16", "fp16", "fp32"};
static const int64_t Ms[] = {1, 2, 3}, Ns[] = {64, 128}, Ks[] = {0, 7};
/* randn (no kind, or a config that is not one), and kinds; "shifted" twice,
 * with and without more config after it: one kind. */
static const char *const configs[] = {"", "tile=4", "inputs=shifted", "inputs=shifted tile=2",
                                      "inputs=wide", "inputs=wide tile=4"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define NROWS 2000

static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

/* The rows: keys drawn from a small grid, so most repeat; samples is the
 * row's input position (its identity through the dedup); one row in eight
 * untimed. */
static void make_rows(kb_results *r)
{
    kb_results_init(r);
    rng_state = 20261205;
    for (int i = 0; i < NROWS; i++) {
        const double ms = rnd(8) == 0 ? NAN : 0.01 * (1 + rnd(500));
        kb_result x = mk(benches[rnd(COUNT(benches))], backends[rnd(COUNT(backends))],
                         dtypes[rnd(COUNT(dtypes))], Ms[rnd(COUNT(Ms))], Ns[rnd(COUNT(Ns))], ms);
        x.K = Ks[rnd(COUNT(Ks))];
        snprintf(x.config, sizeof x.config, "%s", configs[rnd(COUNT(configs))]);
        x.samples = i;
        push(r, x);
    }
}

/* The rows and their model (kbench-report's default options). */
static void model_of(kb_results *r, kb_report_model *m)
{
    make_rows(r);
    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_err e = {""};
    ck_assert_msg(kb_report_model_build(m, r, &o, &e) == KB_OK, "%s", e.msg);
}

/* The input kind as the docs define it: the word after "inputs=" at the
 * start of config, else none. */
static void kind_of(const kb_result *x, char *out, size_t cap)
{
    out[0] = '\0';
    if (strncmp(x->config, "inputs=", 7) != 0) return;
    snprintf(out, cap, "%.*s", (int)strcspn(x->config + 7, " "), x->config + 7);
}

static int same_cell(const kb_result *x, const char *bench, const char *backend, const char *dtype)
{
    return strcmp(x->benchmark, bench) == 0 && (!backend || strcmp(x->backend, backend) == 0) &&
           strcmp(x->dtype, dtype) == 0;
}

static int same_key(const kb_result *x, const char *bench, const char *backend, const char *dtype,
                    int64_t M, int64_t N, int64_t K)
{
    return same_cell(x, bench, backend, dtype) && x->M == M && x->N == N && x->K == K;
}

static int same_key_kind(const kb_result *a, const kb_result *b)
{
    char ka[128], kb[128];
    kind_of(a, ka, sizeof ka);
    kind_of(b, kb, sizeof kb);
    return same_key(a, b->benchmark, b->backend, b->dtype, b->M, b->N, b->K) &&
           strcmp(ka, kb) == 0;
}

static const kb_result *scan_find(const kb_result *rows, size_t n, const char *bench,
                                  const char *backend, const char *dtype, int64_t M, int64_t N,
                                  int64_t K)
{
    for (size_t i = 0; i < n; i++)
        if (same_key(&rows[i], bench, backend, dtype, M, N, K)) return &rows[i];
    return NULL;
}

START_TEST(dedup_matches_reference)
{
    kb_results r, d, want;
    make_rows(&r);
    kb_results_init(&want);
    size_t want_rep = 0;
    for (size_t i = 0; i < r.n; i++) {
        size_t j = 0;
        while (j < want.n && !same_key_kind(&want.v[j], &r.v[i])) j++;
        if (j < want.n) {
            want.v[j] = r.v[i]; /* the last row's contents in the first one's place */
            want_rep++;
        } else {
            push(&want, r.v[i]);
        }
    }
    /* the data exercise what they are meant to */
    ck_assert_uint_gt(want_rep, NROWS / 3);
    ck_assert_uint_gt(want.n, 300);

    size_t rep = 12345;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_dedup(&r, &d, &rep, &e), KB_OK);
    ck_assert_uint_eq(rep, want_rep);
    ck_assert_uint_eq(d.n, want.n);
    for (size_t i = 0; i < d.n; i++) {
        const kb_result *x = &d.v[i], *y = &want.v[i];
        ck_assert_msg(x->samples == y->samples && same_key_kind(x, y) &&
                          strcmp(x->config, y->config) == 0 &&
                          (x->median_ms == y->median_ms ||
                           (isnan(x->median_ms) && isnan(y->median_ms))),
                      "dedup row %zu: input row %d (%s %s %s %lldx%lldx%lld '%s'), want input row "
                      "%d (%s %s %s %lldx%lldx%lld '%s')",
                      i, x->samples, x->benchmark, x->backend, x->dtype, (long long)x->M,
                      (long long)x->N, (long long)x->K, x->config, y->samples, y->benchmark,
                      y->backend, y->dtype, (long long)y->M, (long long)y->N, (long long)y->K,
                      y->config);
    }
    kb_results_free(&d);
    kb_results_free(&want);
    kb_results_free(&r);
}
END_TEST

/* kb_report_index_find on rows with repeated keys (the raw input, before
 * the dedup) and kb_report_find on the model's: the first row of the key. */
START_TEST(find_matches_scan)
{
    kb_results r;
    kb_report_model m;
    model_of(&r, &m);
    kb_report_index ix;
    ck_assert_int_eq(kb_report_index_build(&ix, r.v, r.n, NULL), KB_OK);
    size_t keys = 0, found = 0, kinds = 0;
    /* every key of the grid, and keys no row has (a backend, an M, an N) */
    const char *const more_backends[] = {"eager", "fused", "tuned", "liger", "cudnn"};
    const int64_t more_Ns[] = {64, 128, 96};
    for (size_t bi = 0; bi < COUNT(benches); bi++)
    for (size_t si = 0; si < COUNT(more_backends); si++)
    for (size_t di = 0; di < COUNT(dtypes); di++)
    for (int64_t M = 1; M <= 4; M++)
    for (size_t ni = 0; ni < COUNT(more_Ns); ni++)
    for (size_t ki = 0; ki < COUNT(Ks); ki++) {
        const char *b = benches[bi], *s = more_backends[si], *d = dtypes[di];
        const int64_t N = more_Ns[ni], K = Ks[ki];
        keys++;
        const kb_result *want = scan_find(r.v, r.n, b, s, d, M, N, K);
        const kb_result *got = kb_report_index_find(&ix, b, s, d, M, N, K);
        ck_assert_msg(got == want, "raw rows, %s %s %s %lldx%lldx%lld: row %d, want row %d", b, s,
                      d, (long long)M, (long long)N, (long long)K, got ? got->samples : -1,
                      want ? want->samples : -1);
        want = scan_find(m.rows.v, m.rows.n, b, s, d, M, N, K);
        got = kb_report_find(&m, b, s, d, M, N, K);
        ck_assert_msg(got == want, "model, %s %s %s %lldx%lldx%lld: row %d, want row %d", b, s, d,
                      (long long)M, (long long)N, (long long)K, got ? got->samples : -1,
                      want ? want->samples : -1);
        if (want) {
            found++;
            /* the key has rows of other input kinds after the first */
            for (const kb_result *x = want + 1; x < m.rows.v + m.rows.n; x++)
                if (same_key(x, b, s, d, M, N, K)) {
                    kinds++;
                    break;
                }
        }
    }
    ck_assert_uint_gt(found, 100);
    ck_assert_uint_gt(keys - found, 100);
    ck_assert_uint_gt(kinds, 100);
    kb_report_model_free(&m);
    kb_report_index_free(&ix);
    kb_results_free(&r);
}
END_TEST

/* kb_report_has, a cell's rows (kb_report_index_cell) and kb_report_shapes
 * against scans of the model's rows, order included. */
START_TEST(has_cells_shapes_match_scan)
{
    kb_results r;
    kb_report_model m;
    model_of(&r, &m);
    const kb_result *rows = m.rows.v;
    const size_t n = m.rows.n;
    const char *const more_benches[] = {"softmax_forward", "rmsnorm_forward", "layernorm_forward",
                                        "mlp_forward"};
    const char *const more_backends[] = {"eager", "fused", "tuned", "liger", "cudnn", NULL};
    for (size_t bi = 0; bi < COUNT(more_benches); bi++)
        for (size_t di = 0; di < COUNT(dtypes); di++) {
            const char *b = more_benches[bi], *d = dtypes[di];
            for (size_t si = 0; si < COUNT(more_backends); si++) {
                const char *s = more_backends[si];
                int want = 0;
                for (size_t i = 0; i < n && !want; i++) want = same_cell(&rows[i], b, s, d);
                ck_assert_msg(kb_report_has(&m, b, d, s) == want, "has %s %s %s: want %d", b, d,
                              s ? s : "(any)", want);
                if (!s) continue;
                size_t nc = 0, k = 0;
                const kb_result *const *cell = kb_report_index_cell(&m.ix, b, d, s, &nc);
                for (size_t i = 0; i < n; i++) {
                    if (!same_cell(&rows[i], b, s, d)) continue;
                    ck_assert_msg(k < nc && cell[k] == &rows[i], "cell %s %s %s, row %zu: %d, want %d",
                                  b, d, s, k, k < nc ? cell[k]->samples : -1, rows[i].samples);
                    k++;
                }
                ck_assert_uint_eq(k, nc);
            }
            /* shapes of (b, d) in input order, each once */
            kb_mn want[64], *got = NULL;
            size_t nw = 0, ng = 0;
            for (size_t i = 0; i < n; i++) {
                const kb_result *x = &rows[i];
                if (!same_cell(x, b, NULL, d)) continue;
                size_t j = 0;
                while (j < nw && !(want[j].M == x->M && want[j].N == x->N && want[j].K == x->K))
                    j++;
                if (j == nw) {
                    ck_assert_uint_lt(nw, COUNT(want));
                    want[nw++] = (kb_mn){x->M, x->N, x->K};
                }
            }
            ck_assert_int_eq(kb_report_shapes(&m, b, d, &got, &ng, NULL), KB_OK);
            ck_assert_uint_eq(ng, nw);
            for (size_t j = 0; j < nw; j++)
                ck_assert_msg(got[j].M == want[j].M && got[j].N == want[j].N &&
                                  got[j].K == want[j].K,
                              "shapes of %s %s, #%zu: %lldx%lldx%lld, want %lldx%lldx%lld", b, d,
                              j, (long long)got[j].M, (long long)got[j].N, (long long)got[j].K,
                              (long long)want[j].M, (long long)want[j].N, (long long)want[j].K);
            free(got);
        }
    kb_report_model_free(&m);
    kb_results_free(&r);
}
END_TEST

/* The speedups (kb_report_common_speedups indexes its rows; the model's
 * cells through m.ix): each backend row in input order over its shape's
 * first reference row, both timed. On the raw rows (keys repeated) and on
 * the model's, per dtype and pooled. */
static void check_speedups(const kb_result *rows, size_t n, const char *b, const char *d,
                           const char *ref, const char *s)
{
    double want[NROWS], got[NROWS];
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) {
        const kb_result *x = &rows[i];
        if (strcmp(x->benchmark, b) || strcmp(x->backend, s) || (d && strcmp(x->dtype, d)) ||
            !kb_report_timed(x))
            continue;
        const kb_result *y = scan_find(rows, n, b, ref, x->dtype, x->M, x->N, x->K);
        if (y && kb_report_timed(y)) want[nw++] = y->median_ms / x->median_ms;
    }
    const size_t ng = kb_report_common_speedups(rows, n, b, d, ref, s, got, NROWS);
    ck_assert_msg(ng == nw, "speedups %s %s %s/%s: %zu, want %zu", b, d ? d : "(all)", ref, s, ng,
                  nw);
    for (size_t i = 0; i < nw; i++)
        ck_assert_msg(got[i] == want[i], "speedups %s %s %s/%s #%zu: %g, want %g", b,
                      d ? d : "(all)", ref, s, i, got[i], want[i]);
}

START_TEST(speedups_match_scan)
{
    kb_results r;
    kb_report_model m;
    model_of(&r, &m);
    for (size_t bi = 0; bi < COUNT(benches); bi++)
        for (size_t di = 0; di <= COUNT(dtypes); di++)
            for (size_t si = 0; si < COUNT(backends); si++) {
                const char *b = benches[bi], *d = di < COUNT(dtypes) ? dtypes[di] : NULL;
                check_speedups(r.v, r.n, b, d, "eager", backends[si]);
                check_speedups(m.rows.v, m.rows.n, b, d, "eager", backends[si]);
                check_speedups(m.rows.v, m.rows.n, b, d, "tuned", backends[si]);
            }
    kb_report_model_free(&m);
    kb_results_free(&r);
}
END_TEST

Suite *kb_suite_report_index(void)
{
    static const TTest *const *const tests[] = {&dedup_matches_reference, &find_matches_scan,
                                                &has_cells_shapes_match_scan, &speedups_match_scan};
    Suite *s = suite_create("report_index");
    TCase *t = tcase_create("vs_scans");
    for (size_t i = 0; i < COUNT(tests); i++) tcase_add_test(t, *tests[i]);
    suite_add_tcase(s, t);
    return s;
}
