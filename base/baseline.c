/* Stored baselines: strict CSV reading, keyed upsert, sorted atomic writes.
 *
 * A baseline gates performance, so a file that does not parse cleanly is an
 * error naming file:line (the line the bad row starts on), never a partial
 * read. Rows are validated the same way when read, upserted and written, so
 * what kbench writes it can always read back. */
#include "baseline.h"
#include "files.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvio.h"
#include "registry.h"

enum { C_BENCH, C_BACKEND, C_DTYPE, C_M, C_N, C_MEDIAN, C_GBPS, C_NOISE,
       C_SAMPLES, C_Q1, C_Q3, C_DATE, C_VERSION, C_KERNELS, C_KNAMES, C_K, C_SM, NCOLS };
#define NREQUIRED 8 /* benchmark..noise */
static const char *const col_names[NCOLS] = {
    "benchmark", "backend", "dtype", "M", "N", "median_ms", "gbps", "noise",
    "samples", "q1_ms", "q3_ms", "date", "version", "kernels", "kernel_names", "K", "sm_mhz"};

void kb_baseline_init(kb_baseline *b)
{
    b->v = NULL;
    b->n = b->cap = 0;
}

void kb_baseline_free(kb_baseline *b)
{
    free(b->v);
    kb_baseline_init(b);
}

static int key_cmp(const kb_baseline_row *a, const kb_baseline_row *b)
{
    int c = strcmp(a->benchmark, b->benchmark);
    if (!c) c = strcmp(a->backend, b->backend);
    if (!c) c = strcmp(a->dtype, b->dtype);
    if (!c) c = (a->M > b->M) - (a->M < b->M);
    if (!c) c = (a->N > b->N) - (a->N < b->N);
    if (!c) c = (a->K > b->K) - (a->K < b->K);
    return c;
}

static int key_cmp_qsort(const void *a, const void *b) { return key_cmp(a, b); }

static ptrdiff_t find_index(const kb_baseline *b, const kb_baseline_row *key)
{
    for (size_t i = 0; i < b->n; i++)
        if (key_cmp(&b->v[i], key) == 0) return (ptrdiff_t)i;
    return -1;
}

static kb_status push(kb_baseline *b, const kb_baseline_row *r, kb_err *e)
{
    kb_baseline_row *v = kb_grow(b->v, b->n, &b->cap, sizeof *v, 64);
    if (!v) return KB_FAIL(e, KB_ERR_NOMEM, "baseline: out of host memory");
    b->v = v;
    b->v[b->n++] = *r;
    return KB_OK;
}

static int terminated(const char *s, size_t cap) { return memchr(s, '\0', cap) != NULL; }

/* What is wrong with a row, or NULL; the reason, naming the value, goes in
 * why (len >= 128). Shared by read, upsert and write. */
static const char *row_problem(const kb_baseline_row *r, char *why, size_t len)
{
    if (!terminated(r->benchmark, sizeof r->benchmark) || !terminated(r->backend, sizeof r->backend) ||
        !terminated(r->dtype, sizeof r->dtype) || !terminated(r->date, sizeof r->date) ||
        !terminated(r->version, sizeof r->version) ||
        !terminated(r->kernel_names, sizeof r->kernel_names))
        return "a text field is not NUL-terminated";
    if (!r->benchmark[0] || !r->backend[0] || !r->dtype[0])
        return "benchmark, backend and dtype must not be empty";
    if (r->M < 1 || r->N < 1)
        snprintf(why, len, "M and N must be >= 1, got M %lld, N %lld", (long long)r->M,
                 (long long)r->N);
    else if (r->K < 0)
        snprintf(why, len, "K must be >= 1, or empty for a 2-D op, got %lld", (long long)r->K);
    else if (kb_shape_too_large(r->M, r->N, r->K)) {
        char shape[72];
        kb_shape_format(shape, sizeof shape, r->M, r->N, r->K);
        snprintf(why, len, "shape %s is larger than kbench runs (%s)", shape, KB_SHAPE_LIMIT_TEXT);
    } else if (!isfinite(r->median_ms) || r->median_ms <= 0)
        snprintf(why, len, "median_ms must be finite and > 0, got %g", r->median_ms);
    else if (!isfinite(r->gbps) || r->gbps <= 0)
        snprintf(why, len, "gbps must be finite and > 0, got %g", r->gbps);
    else if (!isfinite(r->noise) || r->noise < 0)
        snprintf(why, len, "noise must be finite and >= 0, got %g", r->noise);
    else if (r->samples < 0)
        snprintf(why, len, "samples must be >= 0, got %d", r->samples);
    else if (r->kernels < 0)
        snprintf(why, len, "kernels must be >= 0 or empty, got %d", r->kernels);
    else if (!isnan(r->q1_ms) && (!isfinite(r->q1_ms) || r->q1_ms < 0))
        snprintf(why, len, "q1_ms must be >= 0 or empty, got %g", r->q1_ms);
    else if (!isnan(r->q3_ms) && (!isfinite(r->q3_ms) || r->q3_ms < 0))
        snprintf(why, len, "q3_ms must be >= 0 or empty, got %g", r->q3_ms);
    else if (isfinite(r->sm_mhz) ? r->sm_mhz < 0 : !isnan(r->sm_mhz)) /* 0, NaN: not recorded */
        snprintf(why, len, "sm_mhz must be > 0 or empty, got %g", r->sm_mhz);
    else
        return NULL;
    return why;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct {
    const char *path;
    kb_baseline b;  /* rows read so far */
    long *lines;    /* line of each row in b, for duplicate messages */
    size_t nheader; /* fields in the header row */
    int idx[NCOLS];
} read_ctx;

#define BAD(...) KB_FAIL(e, KB_ERR_PARSE, __VA_ARGS__)

static kb_status get_text(read_ctx *c, char *const *f, int col, long line, char *dst,
                          size_t cap, int required, kb_err *e)
{
    const char *s = c->idx[col] >= 0 ? f[c->idx[col]] : "";
    if (required && !*s) return BAD("%s:%ld: column '%s' is empty", c->path, line, col_names[col]);
    if (strlen(s) >= cap)
        return BAD("%s:%ld: column '%s' is longer than %zu characters: '%.40s...'", c->path,
                   line, col_names[col], cap - 1, s);
    if (required && kb_csv_control_char(s)) /* a key */
        return BAD("%s:%ld: column '%s' holds a control character (0x%02x)", c->path, line,
                   col_names[col], kb_csv_control_char(s));
    strcpy(dst, s);
    return KB_OK;
}

/* Numeric columns: exactly one of d (finite double) and i (integer) is
 * non-NULL. An optional column absent or empty leaves it unchanged. */
static kb_status get_num(read_ctx *c, char *const *f, int col, long line, double *d, int64_t *i,
                         kb_err *e)
{
    const char *s = c->idx[col] >= 0 ? f[c->idx[col]] : "";
    if (!*s) {
        if (col < NREQUIRED)
            return BAD("%s:%ld: column '%s' is empty", c->path, line, col_names[col]);
        return KB_OK;
    }
    if (d ? kb_parse_double(s, d) != 0 : kb_parse_int64(s, i) != 0)
        return BAD("%s:%ld: column '%s': '%.40s' is not %s", c->path, line, col_names[col], s,
                   d ? "a finite number" : "an integer");
    return KB_OK;
}
#define get_double(c, f, col, line, out, e) get_num(c, f, col, line, out, NULL, e)
#define get_int(c, f, col, line, out, e) get_num(c, f, col, line, NULL, out, e)

/* Columns only a results file has (results.h). A results CSV has every
 * column a baseline needs, so without this check one given as the baseline
 * (swapped arguments) was read as one: every row then matched itself, SAME. */
static const char *const results_only[] = {"accuracy", "verdict", "baseline_gbps"};

static kb_status on_row(void *ctx, size_t row, char *const *f, size_t n, long line, kb_err *e)
{
    read_ctx *c = ctx;
    if (row == 0) {
        c->nheader = n;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < sizeof results_only / sizeof results_only[0]; k++)
                if (strcmp(f[i], results_only[k]) == 0)
                    return BAD("%s:%ld: the header has column '%s', which only results files "
                               "have: this looks like a results CSV, not a baseline (a baseline "
                               "is baselines/<gpu>.csv, written by kbench --update-baseline)",
                               c->path, line, f[i]);
        return kb_csv_map_header(c->path, line, f, n, col_names, NCOLS, NREQUIRED, c->idx, e);
    }
    if (n != c->nheader)
        return BAD("%s:%ld: %zu fields, the header has %zu (truncated or malformed row)",
                   c->path, line, n, c->nheader);

    kb_baseline_row r;
    memset(&r, 0, sizeof r);
    r.q1_ms = r.q3_ms = r.sm_mhz = NAN;
    int64_t samples = 0, kernels = 0;
    KB_TRY(get_text(c, f, C_BENCH, line, r.benchmark, sizeof r.benchmark, 1, e));
    KB_TRY(get_text(c, f, C_BACKEND, line, r.backend, sizeof r.backend, 1, e));
    KB_TRY(get_text(c, f, C_DTYPE, line, r.dtype, sizeof r.dtype, 1, e));
    KB_TRY(get_int(c, f, C_M, line, &r.M, e));
    KB_TRY(get_int(c, f, C_N, line, &r.N, e));
    KB_TRY(get_double(c, f, C_MEDIAN, line, &r.median_ms, e));
    KB_TRY(get_double(c, f, C_GBPS, line, &r.gbps, e));
    KB_TRY(get_double(c, f, C_NOISE, line, &r.noise, e));
    KB_TRY(get_int(c, f, C_SAMPLES, line, &samples, e));
    KB_TRY(get_double(c, f, C_Q1, line, &r.q1_ms, e));
    KB_TRY(get_double(c, f, C_Q3, line, &r.q3_ms, e));
    KB_TRY(get_text(c, f, C_DATE, line, r.date, sizeof r.date, 0, e));
    KB_TRY(get_text(c, f, C_VERSION, line, r.version, sizeof r.version, 0, e));
    KB_TRY(get_int(c, f, C_KERNELS, line, &kernels, e));
    KB_TRY(get_text(c, f, C_KNAMES, line, r.kernel_names, sizeof r.kernel_names, 0, e));
    KB_TRY(get_int(c, f, C_K, line, &r.K, e));
    KB_TRY(get_double(c, f, C_SM, line, &r.sm_mhz, e));
    if (c->idx[C_SM] >= 0 && f[c->idx[C_SM]][0] && !(r.sm_mhz > 0))
        return BAD("%s:%ld: column 'sm_mhz': %g is not a clock (> 0, or empty)", c->path, line,
                   r.sm_mhz);
    if (samples < 0 || samples > INT_MAX)
        return BAD("%s:%ld: column 'samples': %lld out of range", c->path, line, (long long)samples);
    r.samples = (int)samples;
    if (kernels < 0 || kernels > INT_MAX)
        return BAD("%s:%ld: column 'kernels': %lld out of range", c->path, line, (long long)kernels);
    r.kernels = (int)kernels;

    char why_buf[256];
    const char *why = row_problem(&r, why_buf, sizeof why_buf);
    if (why) return BAD("%s:%ld: %s", c->path, line, why);
    /* Duplicate keys: found once all rows are read (find_duplicate). */

    size_t cap = c->b.cap;
    KB_TRY(push(&c->b, &r, e));
    if (c->b.cap != cap) {
        long *l = realloc(c->lines, c->b.cap * sizeof *l);
        if (!l) {
            c->b.n--; /* every row kept has its line (find_duplicate) */
            return KB_FAIL(e, KB_ERR_NOMEM, "%s: out of host memory", c->path);
        }
        c->lines = l;
    }
    c->lines[c->b.n - 1] = line;
    return KB_OK;
}

/* Keys, then position in the file: equal keys in file order. */
static int key_pos_cmp(const void *pa, const void *pb)
{
    const kb_baseline_row *a = *(const kb_baseline_row *const *)pa,
                          *b = *(const kb_baseline_row *const *)pb;
    const int c = key_cmp(a, b);
    return c ? c : (a > b) - (a < b);
}

/* The rows read: the duplicate a row-by-row check meets first, i.e. the
 * earliest row whose key an earlier row has, named with that earlier row's
 * line. O(n log n): the rows sorted by key, then position; of each run of
 * equal keys, the second is its earliest repeat and the first the row it
 * repeats; the earliest repeat of all runs is reported. KB_OK: none. */
static kb_status find_duplicate(const read_ctx *c, kb_err *e)
{
    const size_t n = c->b.n;
    if (n < 2) return KB_OK;
    const kb_baseline_row **v = malloc(n * sizeof *v);
    if (!v) return KB_FAIL(e, KB_ERR_NOMEM, "%s: out of host memory", c->path);
    for (size_t i = 0; i < n; i++) v[i] = &c->b.v[i];
    qsort(v, n, sizeof *v, key_pos_cmp);
    size_t first = n, dup = n; /* dup == n: none */
    for (size_t i = 1; i < n; i++) {
        if (key_cmp(v[i - 1], v[i]) != 0) continue;
        const size_t j = (size_t)(v[i] - c->b.v);
        if (j < dup) { /* v[i - 1]: a run's first only when v[i] is its second, the least j */
            dup = j;
            first = (size_t)(v[i - 1] - c->b.v);
        }
    }
    free(v);
    if (dup == n) return KB_OK;
    const kb_baseline_row *r = &c->b.v[dup];
    char shape[72];
    kb_shape_format(shape, sizeof shape, r->M, r->N, r->K); /* MxN for the 2-D ops */
    return BAD("%s:%ld: duplicate row for %s %s %s %s (first on line %ld)", c->path,
               c->lines[dup], r->benchmark, r->backend, r->dtype, shape, c->lines[first]);
}

kb_status kb_baseline_read(const char *path, kb_baseline *b, kb_err *e)
{
    read_ctx c = {.path = path};
    kb_baseline_init(&c.b);
    int missing = 0;
    kb_status st = kb_csv_read(path, on_row, &c, &missing, e);
    if (!missing) {
        /* A duplicate among the rows read comes before any error the read
         * stopped at (that error is on a later line): it is the one
         * reported, as when each row was checked as it was read. */
        kb_err de = {{0}};
        const kb_status d = find_duplicate(&c, &de);
        if (d == KB_ERR_PARSE || (d != KB_OK && st == KB_OK)) {
            st = d;
            if (e) *e = de;
        }
    }
    free(c.lines);
    if (st != KB_OK) {
        kb_baseline_free(&c.b);
        if (missing) { /* no file yet: nothing recorded for this GPU */
            kb_baseline_free(b);
            if (e) e->msg[0] = '\0';
            return KB_OK;
        }
        return st; /* b untouched */
    }
    kb_baseline_free(b);
    *b = c.b;
    return KB_OK;
}

/* ---- lookup and update -------------------------------------------------- */

static int make_key(kb_baseline_row *k, const char *benchmark, const char *backend,
                    const char *dtype, int64_t M, int64_t N, int64_t K)
{
    memset(k, 0, sizeof *k);
    if (strlen(benchmark) >= sizeof k->benchmark || strlen(backend) >= sizeof k->backend ||
        strlen(dtype) >= sizeof k->dtype)
        return -1;
    strcpy(k->benchmark, benchmark);
    strcpy(k->backend, backend);
    strcpy(k->dtype, dtype);
    k->M = M;
    k->N = N;
    k->K = K;
    return 0;
}

const kb_baseline_row *kb_baseline_find(const kb_baseline *b, const char *benchmark,
                                        const char *backend, const char *dtype, int64_t M,
                                        int64_t N, int64_t K)
{
    kb_baseline_row k;
    if (make_key(&k, benchmark, backend, dtype, M, N, K) != 0) return NULL; /* cannot be stored */
    ptrdiff_t i = find_index(b, &k);
    return i >= 0 ? &b->v[i] : NULL;
}

kb_status kb_baseline_upsert(kb_baseline *b, const kb_baseline_row *row, kb_err *e)
{
    char why_buf[256];
    const char *why = row_problem(row, why_buf, sizeof why_buf);
    if (why) {
        char shape[72];
        kb_shape_format(shape, sizeof shape, row->M, row->N, row->K);
        return KB_FAIL(e, KB_ERR_ARG, "baseline row %.47s %.47s %.7s %s: %s", row->benchmark,
                       row->backend, row->dtype, shape, why);
    }
    ptrdiff_t i = find_index(b, row);
    if (i >= 0) {
        b->v[i] = *row;
        return KB_OK;
    }
    return push(b, row, e);
}

/* ---- writing ------------------------------------------------------------ */

typedef struct {
    const kb_baseline_row *v;
    size_t n;
} write_ctx;

/* The K column is written only when a row has a third size and sm_mhz only
 * when a row has a clock, so a file of 2-D rows stays what it was before 3-D
 * ops existed. */
static kb_status write_rows(FILE *f, void *ctx, kb_err *e)
{
    const write_ctx *w = ctx;
    int ncols = C_K;
    for (size_t i = 0; i < w->n; i++) {
        if (w->v[i].K > 0 && ncols < C_K + 1) ncols = C_K + 1;
        if (w->v[i].sm_mhz > 0) ncols = NCOLS;
    }
    for (int j = 0; j < ncols; j++) kb_csv_put(f, col_names[j], j > 0);
    fputc('\n', f);
    for (size_t i = 0; i < w->n; i++) {
        const kb_baseline_row *r = &w->v[i];
        char num[32];
        kb_csv_put(f, r->benchmark, 0);
        kb_csv_put(f, r->backend, 1);
        kb_csv_put(f, r->dtype, 1);
        snprintf(num, sizeof num, "%lld", (long long)r->M);
        kb_csv_put(f, num, 1);
        snprintf(num, sizeof num, "%lld", (long long)r->N);
        kb_csv_put(f, num, 1);
        kb_csv_put_double(f, r->median_ms, 1);
        kb_csv_put_double(f, r->gbps, 1);
        kb_csv_put_double(f, r->noise, 1);
        snprintf(num, sizeof num, "%d", r->samples);
        kb_csv_put(f, num, 1);
        kb_csv_put_double(f, r->q1_ms, 1);
        kb_csv_put_double(f, r->q3_ms, 1);
        kb_csv_put(f, r->date, 1);
        kb_csv_put(f, r->version, 1);
        if (r->kernels > 0) snprintf(num, sizeof num, "%d", r->kernels);
        else num[0] = '\0';
        kb_csv_put(f, num, 1);
        kb_csv_put(f, r->kernel_names, 1);
        if (ncols > C_K) {
            if (r->K > 0) snprintf(num, sizeof num, "%lld", (long long)r->K);
            else num[0] = '\0';
            kb_csv_put(f, num, 1);
        }
        if (ncols > C_SM) kb_csv_put_double(f, r->sm_mhz > 0 ? r->sm_mhz : NAN, 1);
        fputc('\n', f);
    }
    return KB_OK; /* stream errors are caught by kb_atomic_write */
}

kb_status kb_baseline_write(const char *path, const kb_baseline *b, kb_err *e)
{
    for (size_t i = 0; i < b->n; i++) {
        char why_buf[256];
        const char *why = row_problem(&b->v[i], why_buf, sizeof why_buf);
        if (why) return KB_FAIL(e, KB_ERR_ARG, "%s: row %zu: %s (nothing written)", path, i, why);
    }
    kb_baseline_row *sorted = NULL;
    if (b->n) {
        sorted = malloc(b->n * sizeof *sorted);
        if (!sorted) return KB_FAIL(e, KB_ERR_NOMEM, "%s: out of host memory", path);
        memcpy(sorted, b->v, b->n * sizeof *sorted);
        qsort(sorted, b->n, sizeof *sorted, key_cmp_qsort);
    }
    kb_status st = KB_OK;
    for (size_t i = 1; i < b->n && st == KB_OK; i++)
        if (key_cmp(&sorted[i - 1], &sorted[i]) == 0) {
            char shape[72];
            kb_shape_format(shape, sizeof shape, sorted[i].M, sorted[i].N, sorted[i].K);
            st = KB_FAIL(e, KB_ERR_ARG, "%s: duplicate key %s %s %s %s (nothing written)", path,
                         sorted[i].benchmark, sorted[i].backend, sorted[i].dtype, shape);
        }
    if (st == KB_OK) {
        write_ctx w = {sorted, b->n};
        st = kb_atomic_write(path, write_rows, &w, e);
    }
    free(sorted);
    return st;
}

kb_status kb_baseline_update(const char *path, kb_baseline_merge_fn merge, void *ctx,
                             size_t *rows, kb_err *e)
{
    const int lock = kb_lock_parent(path, e);
    if (lock < 0) return KB_ERR_IO;
    kb_baseline b;
    kb_baseline_init(&b);
    kb_status st = kb_baseline_read(path, &b, e);
    if (st == KB_OK) st = merge(&b, ctx, e);
    if (st == KB_OK) st = kb_baseline_write(path, &b, e);
    kb_unlock(lock);
    if (rows) *rows = b.n;
    kb_baseline_free(&b);
    if (st == KB_ERR_IO && e) { /* a write that failed: say what became of the file */
        char msg[sizeof e->msg - KB_ERR_WHERE];
        snprintf(msg, sizeof msg, "%s", e->msg);
        KB_FAIL(e, st, "%s (baseline %s not updated: it is as it was)", msg, path);
    }
    return st;
}

void kb_baseline_path(const char *dir, const char *gpu_name, char *buf, size_t len)
{
    if (!len) return;
    size_t n = 0;
    if (dir && *dir) {
        size_t d = strlen(dir);
        snprintf(buf, len, "%s%s", dir, dir[d - 1] == '/' ? "" : "/");
        n = strlen(buf);
    } else {
        buf[0] = '\0';
    }
    kb_gpu_file_name(gpu_name, buf + n, len - n);
    n += strlen(buf + n);
    if (n + 4 < len) strcpy(buf + n, ".csv");
}

kb_status kb_baseline_check_path(const char *path, int explicit_path, int will_write,
                                 const char *missing_hint, int *missing, kb_err *e)
{
    return kb_input_file_check("baseline file", path, explicit_path, will_write, missing_hint,
                               missing, e);
}
