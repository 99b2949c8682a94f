/* kbench --describe: the document is JSON throughout, names every
 * benchmark of the descriptor table, and its byte counts (listed, and as
 * terms evaluated for other shapes and dtypes) are kb_bytes_moved's.
 * A small reader below walks the text: it checks the grammar as it skips a
 * value, and finds members and items by walking, so a misplaced brace or
 * comma anywhere in the document fails. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "sol.h"
#include "tunekey.h"
#include "unit.h"

static const char *ws(const char *p)
{
    while (p && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* p at '"': past the closing quote, or NULL. */
static const char *skip_string(const char *p)
{
    if (*p++ != '"') return NULL;
    for (; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\' && !strchr("\"\\/bfnrtu", *++p)) return NULL;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *skip_value(const char *p);

/* p at '{' or '['; past the matching close, or NULL. */
static const char *skip_container(const char *p)
{
    const char close = *p == '{' ? '}' : ']';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            p = ws(skip_string(p));
            if (!p || *p++ != ':') return NULL;
        }
        p = ws(skip_value(p));
        if (!p) return NULL;
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
        p = ws(p);
    }
}

static const char *skip_value(const char *p)
{
    p = ws(p);
    if (!p) return NULL;
    if (*p == '{' || *p == '[') return skip_container(p);
    if (*p == '"') return skip_string(p);
    for (const char *lit = "true\0false\0null\0"; *lit; lit += strlen(lit) + 1)
        if (strncmp(p, lit, strlen(lit)) == 0) return p + strlen(lit);
    char *end;
    strtod(p, &end);
    return end > p && (*p == '-' || isdigit((unsigned char)*p)) ? end : NULL;
}

/* The value of member key of the object at obj, or NULL. */
static const char *member(const char *obj, const char *key)
{
    obj = ws(obj);
    if (!obj || *obj != '{') return NULL;
    const size_t n = strlen(key);
    const char *p = ws(obj + 1);
    while (*p == '"') {
        const char *k = p + 1, *v = ws(skip_string(p));
        if (!v || *v != ':') return NULL;
        v = ws(v + 1);
        if (strncmp(k, key, n) == 0 && k[n] == '"') return v;
        p = ws(skip_value(v));
        if (!p || *p != ',') return NULL;
        p = ws(p + 1);
    }
    return NULL;
}

/* Item i of the array at arr, or NULL. */
static const char *item(const char *arr, int i)
{
    arr = ws(arr);
    if (!arr || *arr != '[') return NULL;
    const char *p = ws(arr + 1);
    if (*p == ']') return NULL;
    for (; i > 0; i--) {
        p = ws(skip_value(p));
        if (!p || *p != ',') return NULL;
        p = ws(p + 1);
    }
    return p;
}

static int count(const char *arr)
{
    int n = 0;
    while (item(arr, n)) n++;
    return n;
}

static double number(const char *p)
{
    ck_assert_ptr_nonnull(p);
    char *end;
    const double v = strtod(p, &end);
    ck_assert_ptr_ne(end, p);
    return v;
}

static int is_string(const char *p, const char *s)
{
    const size_t n = strlen(s);
    return p && *p == '"' && strncmp(p + 1, s, n) == 0 && p[n + 1] == '"';
}

static char *describe(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_describe(f, &e), KB_OK);
    fclose(f);
    return buf;
}

static const char *find_bench(const char *doc, const char *name)
{
    const char *list = member(doc, "benchmarks");
    for (int i = 0; item(list, i); i++)
        if (is_string(member(item(list, i), "name"), name)) return item(list, i);
    return NULL;
}

START_TEST(reader_rejects_malformed)
{
    /* The reader can fail: otherwise the tests below would prove nothing. */
    static const char *const bad[] = {"{\"a\": [1,}", "{\"a\" 1}", "[1 2]", "{\"a\": tru}",
                                      "[\"x]", "{\"a\": 1,}", "[-]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *end = ws(skip_value(bad[i]));
        ck_assert_msg(!end || *end, "accepted '%s'", bad[i]);
    }
    const char *good = "{\"a\": [1, -2.5e3, \"s\\\"\"], \"b\": {\"c\": true}}";
    const char *end = ws(skip_value(good));
    ck_assert(end && !*end);
    ck_assert_double_eq(number(item(member(good, "a"), 1)), -2500.0);
    ck_assert_ptr_null(member(good, "c"));
}
END_TEST

START_TEST(document_is_json_naming_every_benchmark)
{
    char *doc = describe();
    const char *end = ws(skip_value(doc));
    ck_assert_msg(end && !*end, "not one JSON value: %.80s", end ? end : "(error)");
    const char *list = member(doc, "benchmarks");
    ck_assert_int_eq(count(list), KB_NUM_BENCH);
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const kb_bench_info *bi = kb_bench_info_get((kb_bench_id)b);
        const char *x = item(list, b);
        ck_assert(is_string(member(x, "name"), bi->name));
        ck_assert(is_string(member(x, "family"), bi->family));
        ck_assert(is_string(member(x, "direction"), bi->backward ? "backward" : "forward"));
    }
    ck_assert_double_eq(number(member(member(doc, "dtype_bytes"), "fp32")), 4.0);
    free(doc);
}
END_TEST

/* kb_bytes_moved of bench at M x N in dtype d. */
static double moved(kb_bench_id b, kb_dtype d, double M, double N, double K)
{
    const kb_problem p = {b, d, (int64_t)M, (int64_t)N, (int64_t)K};
    return kb_bytes_moved(&p);
}

START_TEST(softmax_backward_structure_and_bytes)
{
    char *doc = describe();
    const char *x = find_bench(doc, "softmax_backward");
    ck_assert_ptr_nonnull(x);
    /* reads dy and the saved y, writes out; x only makes y */
    const char *t = member(x, "tensors");
    static const char *const want[][2] = {{"x", "setup"}, {"dy", "read"}, {"y", "read"},
                                          {"out", "write"}};
    ck_assert_int_eq(count(t), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert(is_string(member(item(t, i), "name"), want[i][0]));
        ck_assert(is_string(member(item(t, i), "role"), want[i][1]));
        ck_assert(is_string(member(item(t, i), "elem_bytes"), "s"));
        ck_assert_int_eq(count(member(item(t, i), "shape")), 2);
    }
    ck_assert(is_string(member(member(x, "bytes"), "formula"), "3*M*N*s"));
    /* the listed count of the first default shape is kb_bytes_moved's */
    const char *s0 = item(member(member(member(x, "sets"), "default"), "shapes"), 0);
    const double M = number(member(s0, "M")), N = number(member(s0, "N"));
    ck_assert_double_eq(number(member(member(s0, "bytes"), "bf16")),
                        moved(KB_SOFTMAX_BWD, KB_BF16, M, N, 0));
    free(doc);
}
END_TEST

/* Every listed count, and the terms at a shape no set holds in every
 * dtype, equal kb_bytes_moved; every set lists kb_shapes' shapes. */
START_TEST(every_byte_count_is_kbenchs)
{
    static const char *const sets[] = {"default", "odd", "short", "inputs"};
    char *doc = describe();
    const char *dtb = member(doc, "dtype_bytes");
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const char *x = find_bench(doc, kb_bench_info_get((kb_bench_id)b)->name);
        const char *terms = member(member(x, "bytes"), "terms");
        for (int d = 0; d < KB_NUM_DTYPES; d++) {
            const double s = number(member(dtb, kb_dtype_name((kb_dtype)d))), M = 3, N = 7, K = 5;
            const double v = number(member(terms, "M*N*s")) * M * N * s +
                             number(member(terms, "M*s")) * M * s +
                             number(member(terms, "M")) * M + number(member(terms, "N")) * N +
                             number(member(terms, "N*K*s")) * N * K * s +
                             number(member(terms, "M*K*s")) * M * K * s;
            ck_assert_double_eq(v, moved((kb_bench_id)b, (kb_dtype)d, M, N, K));
        }
        for (int k = 0; k < 4; k++) {
            const char *set = member(member(x, "sets"), sets[k]);
            const char *list = member(set, "shapes");
            const kb_shape *reg;
            const size_t n = kb_shapes((kb_bench_id)b, (kb_shape_set)k, &reg);
            ck_assert_int_eq(count(list), (int)n);
            if (n) ck_assert_int_gt(count(member(set, "dtypes")), 0);
            for (int i = 0; i < (int)n; i++) {
                const char *sh = item(list, i);
                ck_assert_double_eq(number(member(sh, "M")), (double)reg[i].M);
                ck_assert_double_eq(number(member(sh, "N")), (double)reg[i].N);
                if (reg[i].K) ck_assert_double_eq(number(member(sh, "K")), (double)reg[i].K);
                for (int j = 0; item(member(set, "dtypes"), j); j++) {
                    kb_dtype d;
                    char name[8];
                    sscanf(item(member(set, "dtypes"), j), "\"%7[^\"]\"", name);
                    ck_assert_int_eq(kb_dtype_parse(name, &d, NULL), KB_OK);
                    ck_assert_double_eq(number(member(member(sh, "bytes"), name)),
                                        moved((kb_bench_id)b, d, reg[i].M, reg[i].N, reg[i].K));
                    /* the written part (sol.h) and the tuning bucket are kbench's */
                    const kb_problem p = {(kb_bench_id)b, d, reg[i].M, reg[i].N, reg[i].K};
                    ck_assert_double_eq(number(member(member(sh, "written"), name)),
                                        kb_bytes_written(&p));
                    char bucket[64];
                    kb_tune_bucket(d, reg[i].M, reg[i].N, reg[i].K, bucket, sizeof bucket);
                    /* a bucket where the tuned backend searches (rope's names its K);
                     * none for the MLP block, whose tuned backend takes no entries */
                    const kb_impl *tuned = kb_impl_get((kb_bench_id)b, "tuned");
                    if (!tuned || !tuned->tune_space)
                        ck_assert_ptr_null(member(sh, "tune_bucket"));
                    else
                        ck_assert(is_string(member(member(sh, "tune_bucket"), name), bucket));
                }
            }
        }
    }
    free(doc);
}
END_TEST

Suite *kb_suite_describe(void)
{
    Suite *s = suite_create("describe");
    TCase *tc = tcase_create("describe");
    tcase_add_test(tc, reader_rejects_malformed);
    tcase_add_test(tc, document_is_json_naming_every_benchmark);
    tcase_add_test(tc, softmax_backward_structure_and_bytes);
    tcase_add_test(tc, every_byte_count_is_kbenchs);
    suite_add_tcase(s, tc);
    return s;
}
