/* Sorted indexes for the report's lookups, so a report is O(n log n) in its
 * rows rather than O(n^2): a table, a plot or a speedup asks for one row per
 * (shape, series), and for the rows of one (benchmark, dtype, backend) once
 * per summary cell. Pointer arrays sorted once with qsort and searched by
 * hand (a lower bound, so that of rows with equal keys the first in input
 * order is found, as a linear scan finds it; bsearch returns any of them).
 * Every order ends in the row's address, which makes it total: qsort is not
 * stable, and the address is the input position. Sorted arrays rather than
 * a hash table: the cells are ranges (a prefix of the key), which a hash
 * cannot give, and at 2x10^5 rows a lookup is some 18 comparisons. */
#include "report_int.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int cmp_addr(const void *a, const void *b)
{
    const char *x = a, *y = b; /* elements of one array */
    return (x > y) - (x < y);
}

/* ---- results rows ----------------------------------------------------- */

/* (benchmark, dtype, backend): a cell; backend NULL compares the first two. */
static int cmp_cell(const kb_result *x, const char *bench, const char *dtype, const char *backend)
{
    int c = strcmp(x->benchmark, bench);
    if (!c) c = strcmp(x->dtype, dtype);
    if (!c && backend) c = strcmp(x->backend, backend);
    return c;
}

static int cmp_shape(const kb_result *x, int64_t M, int64_t N, int64_t K)
{
    int c = cmp_i64(x->M, M);
    if (!c) c = cmp_i64(x->N, N);
    if (!c) c = cmp_i64(x->K, K);
    return c;
}

static int by_cell(const void *pa, const void *pb)
{
    const kb_result *a = *(const kb_result *const *)pa, *b = *(const kb_result *const *)pb;
    int c = cmp_cell(a, b->benchmark, b->dtype, b->backend);
    return c ? c : cmp_addr(a, b);
}

static int by_key(const void *pa, const void *pb)
{
    const kb_result *a = *(const kb_result *const *)pa, *b = *(const kb_result *const *)pb;
    int c = cmp_cell(a, b->benchmark, b->dtype, b->backend);
    if (!c) c = cmp_shape(a, b->M, b->N, b->K);
    return c ? c : cmp_addr(a, b);
}

static const kb_result **sorted(const kb_result *rows, size_t n,
                                int (*cmp)(const void *, const void *))
{
    const kb_result **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < n; i++) v[i] = &rows[i];
    qsort(v, n, sizeof *v, cmp);
    return v;
}

kb_status kb_report_index_build(kb_report_index *ix, const kb_result *rows, size_t n, kb_err *e)
{
    memset(ix, 0, sizeof *ix);
    ix->rows = rows;
    ix->n = n;
    ix->by_cell = sorted(rows, n, by_cell);
    ix->by_key = ix->by_cell ? sorted(rows, n, by_key) : NULL;
    if (!ix->by_key) {
        kb_report_index_free(ix);
        return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory indexing %zu report rows", n);
    }
    return KB_OK;
}

void kb_report_index_free(kb_report_index *ix)
{
    free(ix->by_cell);
    free(ix->by_key);
    ix->by_cell = ix->by_key = NULL;
    ix->n = 0;
}

/* First i in v[lo, hi) with cmp_cell(v[i], ...) >= 0 (upper: > 0). */
static size_t cell_bound(const kb_result *const *v, size_t lo, size_t hi, const char *bench,
                         const char *dtype, const char *backend, int upper)
{
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = cmp_cell(v[mid], bench, dtype, backend);
        if (c < 0 || (upper && c == 0)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

const kb_result *const *kb_report_index_cell(const kb_report_index *ix, const char *bench,
                                             const char *dtype, const char *backend,
                                             size_t *count)
{
    const kb_result *const *v = ix->by_cell;
    const size_t lo = cell_bound(v, 0, ix->n, bench, dtype, backend, 0);
    const size_t hi = cell_bound(v, lo, ix->n, bench, dtype, backend, 1);
    *count = hi - lo;
    return v + lo;
}

const kb_result *kb_report_index_find(const kb_report_index *ix, const char *bench,
                                      const char *backend, const char *dtype, int64_t M,
                                      int64_t N, int64_t K)
{
    const kb_result *const *v = ix->by_key;
    size_t lo = 0, hi = ix->n;
    while (lo < hi) { /* the first row not below the key: the earliest of equals */
        const size_t mid = lo + (hi - lo) / 2;
        int c = cmp_cell(v[mid], bench, dtype, backend);
        if (!c) c = cmp_shape(v[mid], M, N, K);
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo == ix->n || cmp_cell(v[lo], bench, dtype, backend) || cmp_shape(v[lo], M, N, K))
        return NULL;
    return v[lo];
}

/* ---- baseline rows -------------------------------------------------------- */

/* kb_baseline_find's key order (base/baseline.c), then the address: its
 * linear search finds the first of equal rows (a file has none). */
static int cmp_base(const kb_baseline_row *x, const char *bench, const char *backend,
                    const char *dtype, int64_t M, int64_t N, int64_t K)
{
    int c = strcmp(x->benchmark, bench);
    if (!c) c = strcmp(x->backend, backend);
    if (!c) c = strcmp(x->dtype, dtype);
    if (!c) c = cmp_i64(x->M, M);
    if (!c) c = cmp_i64(x->N, N);
    if (!c) c = cmp_i64(x->K, K);
    return c;
}

static int by_base(const void *pa, const void *pb)
{
    const kb_baseline_row *a = *(const kb_baseline_row *const *)pa,
                          *b = *(const kb_baseline_row *const *)pb;
    const int c = cmp_base(a, b->benchmark, b->backend, b->dtype, b->M, b->N, b->K);
    return c ? c : cmp_addr(a, b);
}

kb_status kb_report_base_index_build(kb_report_base_index *ix, const kb_baseline *bl, kb_err *e)
{
    const size_t n = bl ? bl->n : 0;
    ix->n = 0;
    ix->v = malloc((n ? n : 1) * sizeof *ix->v);
    if (!ix->v)
        return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory indexing %zu baseline rows", n);
    for (size_t i = 0; i < n; i++) ix->v[i] = &bl->v[i];
    qsort(ix->v, n, sizeof *ix->v, by_base);
    ix->n = n;
    return KB_OK;
}

void kb_report_base_index_free(kb_report_base_index *ix)
{
    free(ix->v);
    ix->v = NULL;
    ix->n = 0;
}

const kb_baseline_row *kb_report_base_find(const kb_report_base_index *ix, const kb_result *x)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (cmp_base(ix->v[mid], x->benchmark, x->backend, x->dtype, x->M, x->N, x->K) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ix->n || cmp_base(ix->v[lo], x->benchmark, x->backend, x->dtype, x->M, x->N, x->K))
        return NULL;
    return ix->v[lo];
}
