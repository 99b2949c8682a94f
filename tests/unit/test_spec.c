/* The registry's byte models, flops and error scales against the one table
 * that states them: docs/reference/spec.md's benchmark table (KB_SPEC_MD),
 * read here by a parser of its own, so the check stays independent of the
 * registry and a benchmark without a row fails by name. Nothing here lists
 * benchmarks: every registered one is walked, and every row must name one.
 *
 * The table's form (spec.md says it beside the table): a header row holding
 * the cells "benchmark", "bytes (s = dtype size)", "flops" and "error scale"
 * among others, a |---| row, then one row per benchmark, its name alone in
 * the first cell. Formulas are sums of products of whole numbers and M, N,
 * K, s, with U+00B7 (·) for times, '+' and parentheses. */
#include <check.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "unit.h"

#define SPEC_ROWS 64
#define SPEC_CELLS 16

typedef struct {
    char name[64];
    char bytes[128];
    char flops[128];
    char scale[32];
    int line;
} spec_row;

typedef struct {
    spec_row rows[SPEC_ROWS];
    int n;
} spec_table;

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* ---- formulas: sum := product {'+' product}; product := factor {'·' factor};
 * factor := digits | M | N | K | s | '(' sum ')' ------------------------- */

typedef struct {
    const char *p;
    double M, N, K, s;
    const char *bad; /* where it stopped making sense, or NULL */
} eval;

static void skip_spaces(eval *e)
{
    while (*e->p == ' ') e->p++;
}

static double eval_sum(eval *e);

static double eval_factor(eval *e)
{
    skip_spaces(e);
    const char c = *e->p;
    if (isdigit((unsigned char)c)) {
        double v = 0;
        while (isdigit((unsigned char)*e->p)) v = v * 10 + (*e->p++ - '0');
        return v;
    }
    const double *var = c == 'M' ? &e->M : c == 'N' ? &e->N : c == 'K' ? &e->K
                      : c == 's' ? &e->s : NULL;
    if (var) {
        e->p++;
        return *var;
    }
    if (c == '(') {
        e->p++;
        const double v = eval_sum(e);
        skip_spaces(e);
        if (*e->p != ')') {
            if (!e->bad) e->bad = e->p;
            return 0;
        }
        e->p++;
        return v;
    }
    if (!e->bad) e->bad = e->p;
    return 0;
}

static double eval_product(eval *e)
{
    double v = eval_factor(e);
    for (;;) {
        skip_spaces(e);
        if (strncmp(e->p, "\xC2\xB7", 2) != 0) return v;
        e->p += 2;
        v *= eval_factor(e);
    }
}

static double eval_sum(eval *e)
{
    double v = eval_product(e);
    for (;;) {
        skip_spaces(e);
        if (*e->p != '+') return v;
        e->p++;
        v += eval_product(e);
    }
}

/* 0 and *out: the formula's value; -1 and the text from where it fails. */
static int formula_eval(const char *f, double M, double N, double K, double s, double *out,
                        const char **bad)
{
    eval e = {f, M, N, K, s, NULL};
    *out = eval_sum(&e);
    skip_spaces(&e);
    if (!e.bad && *e.p) e.bad = e.p;
    *bad = e.bad;
    return e.bad ? -1 : 0;
}

/* ---- the table ------------------------------------------------------------ */

/* Splits "| a | b |" into trimmed cells (in place); the count, or -1. */
static int split_cells(char *line, char **cell)
{
    if (line[0] != '|') return -1;
    int n = 0;
    char *p = line + 1;
    for (char *bar; (bar = strchr(p, '|')); p = bar + 1) {
        *bar = 0;
        while (*p == ' ') p++;
        char *end = p + strlen(p);
        while (end > p && end[-1] == ' ') *--end = 0;
        if (n == SPEC_CELLS) return -1;
        cell[n++] = p;
    }
    while (*p == ' ') p++;
    return *p ? -1 : n; /* text after the last '|': not a table row */
}

static int find_col(char **cell, int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cell[i], want) == 0) return i;
    return -1;
}

static int copy_cell(char *dst, size_t len, const char *src)
{
    if (strlen(src) >= len) return -1;
    strcpy(dst, src);
    return 0;
}

static int valid_name(const char *s, const char *extra)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && !strchr(extra, *s))
            return 0;
    return 1;
}

/* One data row: cells as the header's, a benchmark name, formulas that
 * parse, a scale name, no second row of the same benchmark. */
static int parse_row(spec_table *t, char **cell, int n, int ncols, const int col[4], int line,
                     const char *file, char *why, size_t len)
{
    if (n != ncols) {
        say(why, len, "%s:%d: %d cells, the header has %d", file, line, n, ncols);
        return -1;
    }
    if (!valid_name(cell[col[0]], "_")) {
        say(why, len, "%s:%d: '%s' is not a benchmark name", file, line, cell[col[0]]);
        return -1;
    }
    if (t->n == SPEC_ROWS) {
        say(why, len, "%s:%d: more than %d rows", file, line, SPEC_ROWS);
        return -1;
    }
    spec_row *r = &t->rows[t->n];
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].name, cell[col[0]]) == 0) {
            say(why, len, "%s:%d: %s has a row already (line %d)", file, line, cell[col[0]],
                t->rows[i].line);
            return -1;
        }
    if (copy_cell(r->name, sizeof r->name, cell[col[0]]) ||
        copy_cell(r->bytes, sizeof r->bytes, cell[col[1]]) ||
        copy_cell(r->flops, sizeof r->flops, cell[col[2]]) ||
        copy_cell(r->scale, sizeof r->scale, cell[col[3]])) {
        say(why, len, "%s:%d: %s: a cell is too long", file, line, cell[col[0]]);
        return -1;
    }
    const char *what[2] = {"bytes", "flops"}, *f[2] = {r->bytes, r->flops};
    for (int i = 0; i < 2; i++) {
        double v;
        const char *bad;
        if (formula_eval(f[i], 1, 1, 1, 1, &v, &bad) != 0) {
            say(why, len, "%s:%d: %s: %s '%s' is not a formula (at '%s')", file, line, r->name,
                what[i], f[i], bad);
            return -1;
        }
    }
    if (!valid_name(r->scale, "_")) {
        say(why, len, "%s:%d: %s: '%s' is not an error scale name", file, line, r->name,
            r->scale);
        return -1;
    }
    r->line = line;
    t->n++;
    return 0;
}

/* Parses the benchmark table out of text (a copy is cut into lines): 0, or
 * -1 with why naming the file, the line and, where there is one, the
 * benchmark. */
static int spec_parse(const char *text, const char *file, spec_table *t, char *why, size_t len)
{
    char *buf = strdup(text);
    ck_assert_ptr_nonnull(buf);
    t->n = 0;
    int state = 0, ncols = 0, col[4] = {0}, rc = 0, line = 0; /* 0 before, 1 rule, 2 rows */
    for (char *save = NULL, *l = buf; l && rc == 0; line++) {
        char *nl = strchr(l, '\n');
        if (nl) *nl = 0;
        save = nl ? nl + 1 : NULL;
        /* A CRLF checkout: the '\r' after a row's last '|' made it "not a
         * table row", and the table was then not found at all. */
        const size_t ll = strlen(l);
        if (ll && l[ll - 1] == '\r') l[ll - 1] = 0;
        char *cell[SPEC_CELLS];
        const int n = split_cells(l, cell);
        if (state == 0 && n > 0 && strcmp(cell[0], "benchmark") == 0 &&
            find_col(cell, n, "error scale") >= 0) {
            const char *names[4] = {"benchmark", "bytes (s = dtype size)", "flops", "error scale"};
            for (int i = 0; i < 4; i++)
                if ((col[i] = find_col(cell, n, names[i])) < 0) {
                    say(why, len, "%s:%d: the benchmark table has no column '%s'", file,
                        line + 1, names[i]);
                    rc = -1;
                }
            ncols = n;
            state = 1;
        } else if (state == 1) {
            if (n != ncols || strncmp(cell[0], "---", 3) != 0) {
                say(why, len, "%s:%d: no |---| row under the benchmark table's header", file,
                    line + 1);
                rc = -1;
            }
            state = 2;
        } else if (state == 2) {
            if (l[0] != '|') break; /* the table's end */
            if (n < 0) {
                say(why, len, "%s:%d: not a table row (text after its last '|')", file, line + 1);
                rc = -1;
                break;
            }
            rc = parse_row(t, cell, n, ncols, col, line + 1, file, why, len);
        }
        l = save;
    }
    free(buf);
    if (rc == 0 && t->n == 0) {
        say(why, len, "%s: no benchmark table (a header row '| benchmark | ... | error scale |' "
                      "and rows under it)", file);
        rc = -1;
    }
    return rc;
}

static const spec_row *spec_find(const spec_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].name, name) == 0) return &t->rows[i];
    return NULL;
}

/* The error scales by the names the table uses (kb_err_scale). */
static const struct {
    const char *name;
    kb_err_scale scale;
} scales[] = {
    {"abs", KB_SCALE_ABS},           {"loss", KB_SCALE_LOSS},
    {"ce_grad", KB_SCALE_CE_GRAD},   {"softmax_grad", KB_SCALE_SOFTMAX_GRAD},
    {"norm_grad", KB_SCALE_NORM_GRAD}, {"centered", KB_SCALE_CENTERED},
    {"gemm", KB_SCALE_GEMM},         {"geglu", KB_SCALE_GEGLU},
    {"swiglu", KB_SCALE_SWIGLU},     {"terms", KB_SCALE_TERMS},
};

/* Shapes the models are compared at: M, N and K apart so that a swapped
 * size shows, 1x1x1 for the constant terms, the long and tall extremes. K
 * is set for the 2-D ops too: their models must not depend on it. */
static const kb_shape probe_shapes[] = {{32768, 4096, 3072}, {8192, 262144, 1}, {1, 1, 1},
                                        {1152000, 384, 11008}, {3, 50257, 5}};

static int differs(double got, double want)
{
    const double d = got - want;
    return (d < 0 ? -d : d) > (want < 0 ? -want : want) * 1e-12;
}

/* Every registered benchmark against its row, every row against a
 * registered benchmark: 0, or 1 with why naming the first that disagrees. */
static int spec_check(const spec_table *t, const char *file, char *why, size_t len)
{
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const kb_bench_info *bi = kb_bench_info_get((kb_bench_id)b);
        const spec_row *r = spec_find(t, bi->name);
        if (!r) {
            say(why, len, "%s: no row in %s's benchmark table", bi->name, file);
            return 1;
        }
        size_t k = 0;
        while (k < sizeof scales / sizeof scales[0] && strcmp(scales[k].name, r->scale)) k++;
        if (k == sizeof scales / sizeof scales[0] || scales[k].scale != bi->scale) {
            say(why, len, "%s: error scale '%s' (%s:%d) is not the registry's", bi->name,
                r->scale, file, r->line);
            return 1;
        }
        for (int d = 0; d < KB_NUM_DTYPES; d++)
            for (size_t i = 0; i < sizeof probe_shapes / sizeof probe_shapes[0]; i++) {
                const kb_shape *sh = &probe_shapes[i];
                const kb_problem p = {(kb_bench_id)b, (kb_dtype)d, sh->M, sh->N, sh->K};
                const double s = (double)kb_dtype_size((kb_dtype)d);
                double bytes, flops;
                const char *bad;
                ck_assert_int_eq(formula_eval(r->bytes, (double)sh->M, (double)sh->N,
                                              (double)sh->K, s, &bytes, &bad), 0);
                ck_assert_int_eq(formula_eval(r->flops, (double)sh->M, (double)sh->N,
                                              (double)sh->K, s, &flops, &bad), 0);
                if (differs(kb_bytes_moved(&p), bytes) || differs(kb_flops(&p), flops)) {
                    say(why, len, "%s %s %ldx%ldx%ld: registry %.17g bytes, %.17g flops; "
                                  "%s:%d says %s = %.17g, %s = %.17g", bi->name,
                        kb_dtype_name((kb_dtype)d), (long)sh->M, (long)sh->N, (long)sh->K,
                        kb_bytes_moved(&p), kb_flops(&p), file, r->line, r->bytes, bytes,
                        r->flops, flops);
                    return 1;
                }
            }
    }
    for (int i = 0; i < t->n; i++) {
        kb_bench_id b;
        kb_err e;
        if (kb_bench_find(t->rows[i].name, &b, &e) != KB_OK) {
            say(why, len, "%s:%d: %s is not a registered benchmark", file, t->rows[i].line,
                t->rows[i].name);
            return 1;
        }
    }
    return 0;
}

static char *read_spec(void)
{
    FILE *f = fopen(KB_SPEC_MD, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", KB_SPEC_MD);
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 4096 + 1 > cap) {
            cap = (cap + 4096 + 1) * 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
        got = fread(buf + n, 1, 4096, f);
        n += got;
    } while (got > 0);
    ck_assert(!ferror(f));
    fclose(f);
    buf[n] = 0;
    return buf;
}

START_TEST(registry_follows_spec)
{
    char *text = read_spec();
    static spec_table t;
    char why[512] = "";
    ck_assert_msg(spec_parse(text, KB_SPEC_MD, &t, why, sizeof why) == 0, "%s", why);
    ck_assert_msg(spec_check(&t, KB_SPEC_MD, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(t.n, KB_NUM_BENCH);
    free(text);
}
END_TEST

/* The spec's text with the first occurrence of from replaced by to. */
static char *edited(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "'%s' not in %s", from, KB_SPEC_MD);
    const size_t head = (size_t)(at - text), fl = strlen(from), tl = strlen(to);
    char *out = malloc(strlen(text) - fl + tl + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, text, head);
    memcpy(out + head, to, tl);
    strcpy(out + head + tl, at + fl);
    return out;
}

/* The check bites: the real table with one formula, one scale or one row
 * changed fails, naming the benchmark changed. */
START_TEST(spec_edits_fail_by_name)
{
    char *text = read_spec();
    const char *row = strstr(text, "\n| softmax_backward |");
    ck_assert_ptr_nonnull(row);
    const size_t rl = (size_t)(strchr(row + 1, '\n') - row);
    char *whole = strndup(row, rl);
    ck_assert_ptr_nonnull(whole);
    const struct {
        const char *from, *to, *says;
    } edits[] = {
        {"| 3·M·N·s | 0 | softmax_grad |", "| 4·M·N·s | 0 | softmax_grad |", "softmax_backward"},
        {"| 3·M·N·s + 8·N | 0 | norm_grad |", "| 3·M·N·s + 8·M | 0 | norm_grad |",
         "rmsnorm_backward"},
        {"| 6·M·N·K | gemm |", "| 6·M·N | gemm |", "mlp_forward"},
        {"| 0 | centered |", "| 0 | abs |", "layernorm_forward"},
        {whole, "", "softmax_backward: no row"},
        {"| geglu_forward |", "| geglu_forwards |", "geglu_forward"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *bad = edited(text, edits[i].from, edits[i].to);
        static spec_table t;
        char why[512] = "";
        ck_assert_msg(spec_parse(bad, KB_SPEC_MD, &t, why, sizeof why) == 0, "%s", why);
        ck_assert_msg(spec_check(&t, KB_SPEC_MD, why, sizeof why) == 1, "edit %zu passed", i);
        ck_assert_msg(strstr(why, edits[i].says) != NULL, "edit %zu: '%s' lacks '%s'", i, why,
                      edits[i].says);
        free(bad);
    }
    free(whole);
    free(text);
}
END_TEST

#define HEAD                                                                             \
    "text\n\n| benchmark | inputs | bytes (s = dtype size) | flops | error scale |\n" \
    "|---|---|---|---|---|\n"

START_TEST(parser_refuses_malformed_rows)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {HEAD "| softmax_forward | x | 2·M·N·q | 0 | abs |\n", "softmax_forward: bytes '2·M·N·q'"},
        {HEAD "| softmax_forward | x | 2·M·N·s + | 0 | abs |\n", "at ''"},
        {HEAD "| softmax_forward | x | 2 M·N·s | 0 | abs |\n", "at 'M·N·s'"},
        {HEAD "| softmax_forward | x | 2*M*N*s | 0 | abs |\n", "at '*M*N*s'"},
        {HEAD "| softmax_forward | x | (2·M·N·s | 0 | abs |\n", "not a formula"},
        {HEAD "| softmax_forward | x |  | 0 | abs |\n", "bytes ''"},
        {HEAD "| softmax_forward | x | 2·M·N·s | − | abs |\n", "flops '−'"},
        {HEAD "| softmax_forward | x | 2·M·N·s | 0 |\n", ":5: 4 cells, the header has 5"},
        {HEAD "| softmax_forward | x | 2·M·N·s | 0 | abs | more |\n", "6 cells"},
        {HEAD "| softmax_forward | x | 2·M·N·s | 0 | abs | trailing\n", ":5: not a table row"},
        {HEAD "| softmax_forward | x | 2·M·N·s | 0 | |\n", "'' is not an error scale"},
        {HEAD "| mlp_forward (M = T) | x | 2·M·N·s | 0 | gemm |\n", "is not a benchmark name"},
        {HEAD "| softmax_forward | x | 2·M·N·s | 0 | abs |\n"
              "| softmax_forward | y | 3·M·N·s | 0 | abs |\n",
         ":6: softmax_forward has a row already (line 5)"},
        {"| benchmark | bytes (s = dtype size) | flops | error scale |\n| softmax_forward |\n",
         "no |---| row"},
        {"| benchmark | bytes | flops | error scale |\n|---|---|---|---|\n", "no column 'bytes ("},
        {HEAD "\nno rows\n", "no benchmark table"},
        {"# nothing here\n", "no benchmark table"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static spec_table t;
        char why[512] = "";
        ck_assert_msg(spec_parse(bad[i].text, "t.md", &t, why, sizeof why) == -1,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(why, bad[i].says) != NULL, "case %zu: '%s' lacks '%s'", i, why,
                      bad[i].says);
        ck_assert_msg(strncmp(why, "t.md", 4) == 0, "case %zu: '%s' names no file", i, why);
    }
}
END_TEST

/* What the grammar means: precedence, parentheses, several digits. */
START_TEST(parser_evaluates)
{
    static spec_table t;
    char why[512] = "";
    ck_assert_msg(spec_parse(HEAD "| a | x | (M·N + 2·M)·s | 6·M·N·K | abs |\n"
                                  "| b | x | 2·M·N·s + 12·M + N·(K + 1) | 0 | loss |\nafter\n",
                             "t.md", &t, why, sizeof why) == 0,
                  "%s", why);
    ck_assert_int_eq(t.n, 2);
    ck_assert_int_eq(t.rows[1].line, 6);
    double v;
    const char *bad;
    ck_assert_int_eq(formula_eval(spec_find(&t, "a")->bytes, 3, 5, 7, 2, &v, &bad), 0);
    ck_assert(v == (3.0 * 5 + 2 * 3) * 2);
    ck_assert_int_eq(formula_eval(spec_find(&t, "a")->flops, 3, 5, 7, 2, &v, &bad), 0);
    ck_assert(v == 6.0 * 3 * 5 * 7);
    ck_assert_int_eq(formula_eval(spec_find(&t, "b")->bytes, 3, 5, 7, 2, &v, &bad), 0);
    ck_assert(v == 2.0 * 3 * 5 * 2 + 12 * 3 + 5 * 8);
    ck_assert_ptr_null(spec_find(&t, "after"));
}
END_TEST

/* The table read from a file with CRLF line ends: the same rows, the same
 * lines. */
START_TEST(parser_reads_crlf)
{
    static spec_table t;
    char why[512] = "";
    ck_assert_msg(spec_parse("text\r\n\r\n| benchmark | inputs | bytes (s = dtype size) | flops | "
                             "error scale |\r\n|---|---|---|---|---|\r\n"
                             "| a | x | 2·M·N·s | 0 | abs |\r\n| b | x | M·s | 0 | loss |\r\n",
                             "t.md", &t, why, sizeof why) == 0,
                  "%s", why);
    ck_assert_int_eq(t.n, 2);
    ck_assert_str_eq(t.rows[1].scale, "loss");
    ck_assert_int_eq(t.rows[1].line, 6);
}
END_TEST

Suite *kb_suite_spec(void)
{
    Suite *s = suite_create("spec");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, registry_follows_spec);
    tcase_add_test(tc, spec_edits_fail_by_name);
    tcase_add_test(tc, parser_refuses_malformed_rows);
    tcase_add_test(tc, parser_evaluates);
    tcase_add_test(tc, parser_reads_crlf);
    suite_add_tcase(s, tc);
    return s;
}
