/* Results: a growable array, CSV (libcsv) and JSON files, one-line print.
 *
 * Columns are described once (cols[]) and drive the CSV writer, the JSON
 * writer and the reader, so the three cannot drift apart. Missing values:
 * NaN doubles, samples <= 0 and mismatches < 0 ("not checked") are written
 * as empty CSV fields / JSON null and read back as NaN, 0 and -1. */
#include "results.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csvio.h"
#include "gate.h"
#include "registry.h"

/* T_DIM: an int64 size that may be absent (K of the 2-D ops): written only
 * when > 0, read as 0 when empty or missing. T_VRD: a verdict's text, read
 * only when kb_verdict_parse knows it (a misspelt verdict would drop out of
 * every count of the report unseen). */
typedef enum { T_STR, T_I64, T_INT, T_DBL, T_ACC, T_DIM, T_VRD } col_type;
/* What a T_DBL read from a file may hold besides empty (not measured): a
 * time or a rate of 0 or less cannot be measured, and the report would take
 * it for one (a geomean of 0, a change of -100 %). */
typedef enum { R_ANY, R_POS, R_NONNEG } col_range;
typedef struct {
    const char *name;
    col_type type;
    size_t off, size;
    col_range range;
} col;

#define FIELD_SIZE(f) sizeof(((kb_result *)0)->f)
#define STR(f) {#f, T_STR, offsetof(kb_result, f), FIELD_SIZE(f), R_ANY}
#define VRD(f) {#f, T_VRD, offsetof(kb_result, f), FIELD_SIZE(f), R_ANY}
#define I64(f) {#f, T_I64, offsetof(kb_result, f), 0, R_ANY}
#define INT(f) {#f, T_INT, offsetof(kb_result, f), 0, R_ANY}
#define DBL(f) {#f, T_DBL, offsetof(kb_result, f), 0, R_ANY}
#define POS(f) {#f, T_DBL, offsetof(kb_result, f), 0, R_POS}
#define NNEG(f) {#f, T_DBL, offsetof(kb_result, f), 0, R_NONNEG}
#define ACC(f) {#f, T_ACC, offsetof(kb_result, f), 0, R_ANY}
#define DIM(f) {#f, T_DIM, offsetof(kb_result, f), 0, R_ANY}

/* CSV order as documented in results.h; the first NREQUIRED must be in any
 * CSV we read. "message" (the verdict's reason, a skip's, a failure's) is
 * last: a NOISY case's reason would otherwise be lost to a report built
 * from CSVs (ci/gate). */
static const col cols[] = {
    STR(benchmark), STR(backend),  STR(dtype),    I64(M),       I64(N),
    POS(median_ms), POS(min_ms),   POS(max_ms),   NNEG(noise),  POS(gbps),
    DBL(sol_gbps),  DBL(sol_pct),  INT(samples),  ACC(accuracy), I64(mismatches),
    DBL(max_err),   DBL(baseline_gbps), VRD(verdict), STR(gpu),  STR(config),
    STR(date),      STR(version),  STR(env),     INT(kernels), STR(kernel_names),
    STR(kernel_us), DBL(sol_read_gbps), DBL(sol_write_gbps), DBL(mix_sol_gbps),
    DBL(mix_sol_pct), DIM(K),      DBL(tflops),  DBL(peak_tflops), STR(message)};
#define NCOLS (sizeof cols / sizeof cols[0])
#define NCSV NCOLS
#define NREQUIRED 6 /* benchmark,backend,dtype,M,N,median_ms */
#define NKEY 5      /* text/ints that must be present and valid in every row */

#define AT(x, c, T) ((T *)((char *)(x) + (c)->off))
#define CAT(x, c, T) ((const T *)((const char *)(x) + (c)->off))

static const char *const acc_names[KB_NUM_ACC] = {"", "PASS", "FAIL", "SKIP"};

const char *kb_acc_name(kb_acc a)
{
    return (unsigned)a < KB_NUM_ACC ? acc_names[a] : "?";
}

kb_status kb_acc_parse(const char *s, kb_acc *a, kb_err *e)
{
    const int i = kb_name_index(acc_names, KB_NUM_ACC, s);
    if (i >= 0) {
        *a = (kb_acc)i;
        return KB_OK;
    }
    return KB_FAIL(e, KB_ERR_PARSE, "'%.40s' is not an accuracy (PASS, FAIL, SKIP or empty)", s);
}

void kb_results_init(kb_results *r)
{
    r->v = NULL;
    r->n = r->cap = 0;
}

void kb_results_free(kb_results *r)
{
    free(r->v);
    kb_results_init(r);
}

kb_status kb_results_push(kb_results *r, const kb_result *x, kb_err *e)
{
    kb_result *v = kb_grow(r->v, r->n, &r->cap, sizeof *v, 64);
    if (!v) return KB_FAIL(e, KB_ERR_NOMEM, "results: out of host memory");
    r->v = v;
    r->v[r->n++] = *x;
    return KB_OK;
}

/* Text of one value for CSV/JSON; empty means missing. Strings are returned
 * as pointers (not copied) through *str. */
static void value_text(const kb_result *x, const col *c, char *buf, size_t len, const char **str)
{
    *str = NULL;
    buf[0] = '\0';
    switch (c->type) {
    case T_STR:
    case T_VRD: *str = CAT(x, c, char); break;
    case T_ACC: *str = kb_acc_name(*CAT(x, c, kb_acc)); break;
    case T_I64: {
        int64_t v = *CAT(x, c, int64_t);
        if (v >= 0) snprintf(buf, len, "%lld", (long long)v);
        break;
    }
    case T_INT: {
        int v = *CAT(x, c, int);
        if (v > 0) snprintf(buf, len, "%d", v);
        break;
    }
    case T_DIM: {
        int64_t v = *CAT(x, c, int64_t);
        if (v > 0) snprintf(buf, len, "%lld", (long long)v);
        break;
    }
    case T_DBL: kb_format_double(buf, len, *CAT(x, c, double)); break;
    }
}

/* ---- CSV ---------------------------------------------------------------- */

void kb_results_csv_header(FILE *f)
{
    for (size_t j = 0; j < NCSV; j++) kb_csv_put(f, cols[j].name, j > 0);
    fputc('\n', f);
}

void kb_result_csv_row(FILE *f, const kb_result *x)
{
    for (size_t j = 0; j < NCSV; j++) {
        char buf[40];
        const char *s;
        value_text(x, &cols[j], buf, sizeof buf, &s);
        kb_csv_put(f, s ? s : buf, j > 0);
    }
    fputc('\n', f);
}

static kb_status write_csv(FILE *f, void *ctx, kb_err *e)
{
    const kb_results *r = ctx;
    kb_results_csv_header(f);
    for (size_t i = 0; i < r->n; i++) kb_result_csv_row(f, &r->v[i]);
    return KB_OK; /* stream errors are caught by kb_atomic_write */
}

kb_status kb_results_write_csv(const kb_results *r, const char *path, kb_err *e)
{
    return kb_atomic_write(path, write_csv, (void *)r, e);
}

/* ---- JSON --------------------------------------------------------------- */

size_t kb_utf8_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;      /* overlong */
        else if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;      /* overlong */
        else if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

/* JSON text must be UTF-8 (RFC 8259). Our strings come from C APIs (GPU
 * names, cuDNN and CUDA messages, file names) that promise no encoding, so a
 * byte that does not start a well-formed sequence is written as \u00XX, the
 * Latin-1 reading of the byte: the output is valid UTF-8 whatever the input,
 * and nothing is dropped. Control characters are escaped as JSON requires. */
void kb_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = kb_utf8_len((const char *)p);
        if (n > 1) {
            fwrite(p, 1, n, f);
            p += n;
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f || n == 0)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
        p++;
    }
    fputc('"', f);
}

void kb_result_json_object(FILE *f, const kb_result *x)
{
    fputc('{', f);
    for (size_t j = 0; j < NCOLS; j++) {
        char buf[40];
        const char *s;
        value_text(x, &cols[j], buf, sizeof buf, &s);
        if (j) fputs(", ", f);
        kb_json_string(f, cols[j].name);
        fputs(": ", f);
        if (s)
            kb_json_string(f, s);
        else
            fputs(buf[0] ? buf : "null", f);
    }
    fputc('}', f);
}

static kb_status write_json(FILE *f, void *ctx, kb_err *e)
{
    const kb_results *r = ctx;
    fputc('[', f);
    for (size_t i = 0; i < r->n; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        kb_result_json_object(f, &r->v[i]);
    }
    fputs(r->n ? "\n]\n" : "]\n", f);
    return KB_OK;
}

kb_status kb_results_write_json(const kb_results *r, const char *path, kb_err *e)
{
    return kb_atomic_write(path, write_json, (void *)r, e);
}

/* ---- reading ------------------------------------------------------------ */

typedef struct {
    const char *path;
    kb_results *r;
    size_t nheader;
    int idx[NCOLS];
} read_ctx;

static kb_status parse_value(const read_ctx *c, const col *k, int key, const char *s,
                             long line, kb_result *x, kb_err *e)
{
    if (key && !*s)
        return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: column '%s' is empty", c->path, line, k->name);
    switch (k->type) {
    case T_STR:
        /* Keys must fit exactly; free text (config, gpu, ...) is cut to fit. */
        if (key && strlen(s) >= k->size)
            return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: column '%s' is longer than %zu characters",
                           c->path, line, k->name, k->size - 1);
        if (key && kb_csv_control_char(s))
            return KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: column '%s' holds a control character (0x%02x)", c->path,
                           line, k->name, kb_csv_control_char(s));
        snprintf(AT(x, k, char), k->size, "%s", s);
        return KB_OK;
    case T_DIM:
    case T_I64:
    case T_INT: {
        int64_t v = k->type == T_I64 ? -1 : 0;
        if (*s && kb_parse_int64(s, &v) != 0)
            return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: column '%s': '%.40s' is not an integer",
                           c->path, line, k->name, s);
        if ((key && v < 1) || (k->type == T_DIM && v < 0))
            return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: column '%s' must be >= 1, got %lld",
                           c->path, line, k->name, (long long)v);
        /* The counts (samples, mismatches, kernels): a negative one was read
         * as it stood, and written back empty, as "not measured". */
        if (*s && v < 0)
            return KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: column '%s': %lld must be >= 0 (empty when not measured)",
                           c->path, line, k->name, (long long)v);
        if (k->type == T_INT) {
            if (v < INT_MIN || v > INT_MAX)
                return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: column '%s': %lld out of range",
                               c->path, line, k->name, (long long)v);
            *AT(x, k, int) = (int)v;
        } else {
            *AT(x, k, int64_t) = v;
        }
        return KB_OK;
    }
    case T_ACC: {
        kb_err why;
        if (kb_acc_parse(s, AT(x, k, kb_acc), &why) != KB_OK)
            return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: column '%s': %s", c->path, line, k->name,
                           why.msg);
        return KB_OK;
    }
    case T_DBL: {
        double v = NAN;
        /* Peers' scripts may spell a missing value "nan" (numpy, pandas). */
        if (*s && strcasecmp(s, "nan") != 0 && kb_parse_double(s, &v) != 0)
            return KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: column '%s': '%.40s' is not a finite number (empty or nan "
                           "for missing)",
                           c->path, line, k->name, s);
        if ((k->range == R_POS && !(isnan(v) || v > 0)) ||
            (k->range == R_NONNEG && !(isnan(v) || v >= 0)))
            return KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: column '%s': %.40s must be %s (empty or nan when not "
                           "measured)",
                           c->path, line, k->name, s, k->range == R_POS ? "> 0" : ">= 0");
        *AT(x, k, double) = v;
        return KB_OK;
    }
    case T_VRD: {
        kb_verdict v;
        if (kb_verdict_parse(s, &v, NULL) != KB_OK) {
            char known[128] = "";
            for (int i = KB_VERDICT_NONE + 1; i <= KB_VERDICT_FUSION_CHANGED; i++) {
                const size_t n = strlen(known);
                snprintf(known + n, sizeof known - n, "%s, ", kb_verdict_name((kb_verdict)i));
            }
            return KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: column '%s': '%.40s' is not a verdict (%sor empty when not "
                           "checked)",
                           c->path, line, k->name, s, known);
        }
        snprintf(AT(x, k, char), k->size, "%s", s);
        return KB_OK;
    }
    }
    return KB_OK;
}

/* A baseline file (baselines/<gpu>.csv, baseline.h) has the columns a
 * results file needs, so without this check one given as results would be read
 * as rows without accuracy or verdict: a report of nothing checked, or
 * worse, of a baseline's figures as if they were a run's. Its header has the
 * quartiles (results files do not) and no accuracy or verdict column. */
static kb_status refuse_baseline(const char *path, char *const *f, size_t n, kb_err *e)
{
    int q1 = 0, q3 = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(f[i], "accuracy") || !strcmp(f[i], "verdict")) return KB_OK;
        q1 |= !strcmp(f[i], "q1_ms");
        q3 |= !strcmp(f[i], "q3_ms");
    }
    if (!q1 || !q3) return KB_OK;
    return KB_FAIL(e, KB_ERR_PARSE,
                   "%s is a baseline file (its header has q1_ms and q3_ms and no accuracy or "
                   "verdict column), not kbench results: pass it with --baseline",
                   path);
}

static kb_status on_row(void *ctx, size_t row, char *const *f, size_t n, long line, kb_err *e)
{
    read_ctx *c = ctx;
    if (row == 0) {
        KB_TRY(refuse_baseline(c->path, f, n, e));
        const char *names[NCOLS];
        for (size_t j = 0; j < NCOLS; j++) names[j] = cols[j].name;
        c->nheader = n;
        return kb_csv_map_header(c->path, line, f, n, names, NCOLS, NREQUIRED, c->idx, e);
    }
    if (n != c->nheader)
        return KB_FAIL(e, KB_ERR_PARSE,
                       "%s:%ld: %zu fields, the header has %zu (truncated or malformed row)",
                       c->path, line, n, c->nheader);
    kb_result x;
    memset(&x, 0, sizeof x);
    for (size_t j = 0; j < NCOLS; j++)
        KB_TRY(parse_value(c, &cols[j], j < NKEY, c->idx[j] >= 0 ? f[c->idx[j]] : "", line, &x, e));
    /* The report's byte and row counts of such a shape overflow int64. */
    if (kb_shape_too_large(x.M, x.N, x.K)) {
        char shape[72];
        kb_shape_format(shape, sizeof shape, x.M, x.N, x.K);
        return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: shape %s is larger than kbench runs (%s)",
                       c->path, line, shape, KB_SHAPE_LIMIT_TEXT);
    }
    return kb_results_push(c->r, &x, e);
}

kb_status kb_results_read_csv(const char *path, kb_results *r, kb_err *e)
{
    read_ctx c = {.path = path, .r = r};
    size_t n0 = r->n;
    kb_status st = kb_csv_read(path, on_row, &c, NULL, e);
    if (st != KB_OK) r->n = n0; /* all rows or none */
    return st;
}

/* ---- print -------------------------------------------------------------- */

void kb_result_print(FILE *f, const kb_result *x)
{
    char shape[72];
    kb_shape_format(shape, sizeof shape, x->M, x->N, x->K);
    fprintf(f, "%s %s %s %s:", x->benchmark, x->backend, x->dtype, shape);
    if (isfinite(x->median_ms)) {
        fprintf(f, " %.4f ms", x->median_ms);
        const char *sep = " (";
        if (isfinite(x->min_ms)) { fprintf(f, "%smin %.4f", sep, x->min_ms); sep = ", "; }
        if (isfinite(x->max_ms)) { fprintf(f, "%smax %.4f", sep, x->max_ms); sep = ", "; }
        if (isfinite(x->noise)) { fprintf(f, "%snoise %.1f%%", sep, 100.0 * x->noise); sep = ", "; }
        if (x->samples > 0) { fprintf(f, "%s%d samples", sep, x->samples); sep = ", "; }
        if (sep[0] == ',') fputc(')', f);
    }
    if (isfinite(x->gbps)) fprintf(f, "  %.1f GB/s", x->gbps);
    if (isfinite(x->tflops) && x->tflops > 0) fprintf(f, "  %.1f TFLOP/s", x->tflops);
    if (isfinite(x->sol_pct)) fprintf(f, "  %.1f%% SOL", x->sol_pct);
    if (isfinite(x->mix_sol_pct) && x->mix_sol_pct > 0)
        fprintf(f, " (%.1f%% mix SOL)", x->mix_sol_pct);
    if (x->accuracy != KB_ACC_NONE) {
        fprintf(f, "  accuracy %s", kb_acc_name(x->accuracy));
        if (x->accuracy == KB_ACC_FAIL && x->mismatches >= 0) {
            fprintf(f, " (%lld mismatches", (long long)x->mismatches);
            if (isfinite(x->max_err)) fprintf(f, ", max_err %.3g", x->max_err);
            fputc(')', f);
        }
    }
    if (isfinite(x->baseline_gbps)) fprintf(f, "  baseline %.1f GB/s", x->baseline_gbps);
    if (x->verdict[0]) fprintf(f, "%s%s", isfinite(x->baseline_gbps) ? " " : "  ", x->verdict);
    if (x->config[0]) fprintf(f, "  [%s]", x->config);
    if (x->kernels > 0) fprintf(f, "  kernels %d (%s)", x->kernels, x->kernel_names);
    if (x->message[0]) fprintf(f, "  -- %s", x->message);
    fputc('\n', f);
}
