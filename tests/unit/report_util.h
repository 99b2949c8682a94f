/* What the kbench-report suites (test_report*.c) share: rows built in code or
 * read from tests/fixtures/report/, and reports generated into a scratch
 * folder and read back. */
#ifndef KB_REPORT_UTIL_H
#define KB_REPORT_UTIL_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "rows.h"
#include "tmpfiles.h"

#define FIX(name) KB_FIXTURES "/report/" name

/* A row of case bench.backend.dtype.MxN timed at ms (NaN: skipped, nothing
 * measured); every figure it does not give unknown. */
static inline kb_result mk(const char *bench, const char *backend, const char *dtype, int64_t M,
                           int64_t N, double ms)
{
    kb_result x = kbt_result(bench, backend, dtype, M, N);
    x.median_ms = ms;
    x.min_ms = x.max_ms = x.noise = x.gbps = x.sol_gbps = x.sol_pct = NAN;
    x.max_err = x.baseline_gbps = NAN;
    x.sol_read_gbps = x.sol_write_gbps = x.mix_sol_gbps = x.mix_sol_pct = NAN;
    x.mismatches = -1;
    x.accuracy = isnan(ms) ? KB_ACC_SKIP : KB_ACC_PASS;
    return x;
}

static inline void push(kb_results *r, kb_result x)
{
    kb_err e = {""};
    ck_assert_int_eq(kb_results_push(r, &x, &e), KB_OK);
}

static inline void read_fix(kb_results *r, const char *path)
{
    kb_err e = {""};
    kb_status st = kb_results_read_csv(path, r, &e);
    ck_assert_msg(st == KB_OK, "%s: %s", path, e.msg);
}

/* r emptied, then the rows of fixture a and, unless NULL, of b. */
static inline void read_fixes(kb_results *r, const char *a, const char *b)
{
    kb_results_init(r);
    read_fix(r, a);
    if (b) read_fix(r, b);
}

/* Options that write formats into dir, the rest as kbench-report's. */
static inline kb_report_opts opts_into(const char *dir, unsigned formats)
{
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = formats;
    return o;
}

/* The report's file dir/name, which must have been written (caller frees). */
static inline char *read_out(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = kbt_read(path, NULL);
    ck_assert_msg(text != NULL, "%s was not written", path);
    return text;
}

/* Each of the NULL-terminated needles is in text. */
static inline void assert_contains(const char *text, const char *const *needles)
{
    for (; *needles; needles++)
        ck_assert_msg(strstr(text, *needles), "'%s' not in:\n%s", *needles, text);
}
#define ASSERT_CONTAINS(text, ...) assert_contains((text), (const char *const[]){__VA_ARGS__, NULL})

/* None of the NULL-terminated needles is in text. */
static inline void assert_lacks(const char *text, const char *const *needles)
{
    for (; *needles; needles++)
        ck_assert_msg(!strstr(text, *needles), "'%s' in:\n%s", *needles, text);
}
#define ASSERT_LACKS(text, ...) assert_lacks((text), (const char *const[]){__VA_ARGS__, NULL})

/* Whether the report wrote dir/name. */
static inline int out_exists(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return kbt_exists(path);
}

/* kb_report_generate under o, which must succeed, and the report.md it
 * wrote (caller frees). */
static inline char *generate_md(const kb_results *r, const kb_report_opts *o)
{
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(r, o, &e) == KB_OK, "%s", e.msg);
    return read_out(o->out_dir, "report.md");
}

/* kb_report_generate into dir (report.md only) with the speedup lines
 * discarded; returns its status, *oc what it verified. */
static inline kb_status gen_md(const kb_results *r, const char *dir, const char *baseline,
                               kb_report_outcome *oc, kb_err *e)
{
    kb_report_opts o = opts_into(dir, KB_REPORT_MD);
    o.baseline_path = baseline;
    o.outcome = oc;
    return kb_report_generate(r, &o, e);
}

/* gen_md, which must succeed, and the report.md it wrote (caller frees). */
static inline char *md_of(const kb_results *r, const char *dir, const char *baseline,
                          kb_report_outcome *oc)
{
    kb_err e = {""};
    ck_assert_msg(gen_md(r, dir, baseline, oc, &e) == KB_OK, "%s", e.msg);
    return read_out(dir, "report.md");
}

#endif
