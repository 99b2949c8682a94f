/* Baseline files: strict reading with file:line errors, upsert, sorted atomic
 * writes, path naming. Fixtures in tests/fixtures/baseline. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "baseline.h"
#include "tmpfiles.h"
#include "unit.h"

#define FIX(name) KB_FIXTURES "/baseline/" name

static kb_baseline_row mkrow(const char *bench, const char *backend, const char *dtype,
                             int64_t M, int64_t N, double gbps)
{
    kb_baseline_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.benchmark, sizeof r.benchmark, "%s", bench);
    snprintf(r.backend, sizeof r.backend, "%s", backend);
    snprintf(r.dtype, sizeof r.dtype, "%s", dtype);
    r.M = M;
    r.N = N;
    r.gbps = gbps;
    r.median_ms = 1.0;
    r.noise = 0.01;
    r.samples = 10;
    r.q1_ms = r.q3_ms = NAN;
    snprintf(r.date, sizeof r.date, "2025-01-01T00:00:00Z");
    snprintf(r.version, sizeof r.version, "0.1.0");
    return r;
}

/* Reads a malformed file: KB_ERR_PARSE, message names "<file>:<line>:" and
 * contains what, and the baseline passed in is left as it was. */
static void expect_parse_error(const char *path, const char *file_line, const char *what)
{
    kb_baseline b;
    kb_baseline_init(&b);
    kb_baseline_row keep = mkrow("softmax_forward", "eager", "bf16", 7, 7, 1.0);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_baseline_upsert(&b, &keep, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_read(path, &b, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, file_line) != NULL, "expected '%s' in: %s", file_line, e.msg);
    if (what) ck_assert_msg(strstr(e.msg, what) != NULL, "expected '%s' in: %s", what, e.msg);
    ck_assert_uint_eq(b.n, 1);
    ck_assert_int_eq(b.v[0].M, 7);
    kb_baseline_free(&b);
}

START_TEST(read_good)
{
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    ck_assert_msg(kb_baseline_read(FIX("good.csv"), &b, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(b.n, 3);

    const kb_baseline_row *r = kb_baseline_find(&b, "softmax_forward", "eager", "bf16", 32768, 4096, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->gbps, 2175.3);
    ck_assert_int_eq(r->kernels, 0); /* a file from before the kernel check */
    ck_assert_str_eq(r->kernel_names, "");
    ck_assert_double_eq(r->median_ms, 0.1234);
    ck_assert_double_eq(r->noise, 0.004);
    ck_assert_int_eq(r->samples, 57);
    ck_assert_double_eq(r->q1_ms, 0.123);
    ck_assert_double_eq(r->q3_ms, 0.124);
    ck_assert_str_eq(r->date, "2025-01-01T00:00:00Z");
    ck_assert_str_eq(r->version, "0.1.0"); /* last field: no '\r' left over */

    /* Quoted fields; the row after it spans two lines because of a newline
     * inside a quoted unknown column. */
    r = kb_baseline_find(&b, "rmsnorm_forward", "tuned:my cfg", "bf16", 1024, 8192, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->median_ms, 0.0112);
    ck_assert_double_eq(r->gbps, 3000.5);
    ck_assert_int_eq(r->samples, 100);
    ck_assert_float_nan(r->q1_ms);
    ck_assert_float_nan(r->q3_ms);
    ck_assert_str_eq(r->version, "0.1.0");

    r = kb_baseline_find(&b, "layernorm_backward", "eager", "fp32", 4096, 65536, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->samples, 0);
    ck_assert_double_eq(r->noise, 0.0);
    ck_assert_str_eq(r->date, "");

    ck_assert_ptr_null(kb_baseline_find(&b, "softmax_forward", "eager", "bf16", 4096, 32768, 0));
    ck_assert_ptr_null(kb_baseline_find(&b, "softmax_forward", "eager", "fp16", 32768, 4096, 0));
    kb_baseline_free(&b);
}
END_TEST

START_TEST(read_missing_file_is_empty)
{
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_baseline_read(FIX("no_such_gpu.csv"), &b, &e), KB_OK);
    ck_assert_uint_eq(b.n, 0);
    kb_baseline_free(&b);
}
END_TEST

/* Malformed fixtures: the file, where its error is reported, and what the
 * message says. */
static const struct {
    const char *path, *file_line, *what;
} bad_files[] = {
    {FIX("bad_header.csv"), "bad_header.csv:1:", "'gbps'"},
    /* The bad row spans lines 3-4: reported where it starts. */
    {FIX("field_count.csv"), "field_count.csv:3:", "9 fields, the header has 8"},
    /* Line 5: a quoted field spans lines 2-3 and line 4 is blank. */
    {FIX("non_numeric.csv"), "non_numeric.csv:5:", "'abc'"},
    {FIX("truncated.csv"), "truncated.csv:3:", "6 fields"},
    /* The quote opens on line 3 and runs to end of file (line 4). */
    {FIX("unterminated.csv"), "unterminated.csv:3:", "unterminated"},
    {FIX("stray_quote.csv"), "stray_quote.csv:3:", "malformed CSV"},
};

START_TEST(read_malformed_file)
{
    expect_parse_error(bad_files[_i].path, bad_files[_i].file_line, bad_files[_i].what);
}
END_TEST

/* A results CSV has every column a baseline needs; given as the baseline
 * (kbench-report --baseline results.csv baselines/<gpu>.csv) it was read as
 * one and every row matched itself. Its results-only columns give it away. */
START_TEST(read_results_file_is_refused)
{
    expect_parse_error(FIX("results_file.csv"), "results_file.csv:1:",
                       "column 'accuracy', which only results files have: this looks like a "
                       "results CSV, not a baseline");
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/b.csv", dir);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,verdict\n"
                    "softmax_forward,eager,bf16,1,2,1,100,0.01,SAME\n");
    expect_parse_error(path, "b.csv:1:", "column 'verdict'");
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(read_duplicate_key)
{
    expect_parse_error(FIX("duplicate.csv"), "duplicate.csv:4:", "first on line 2");
    /* a 2-D row's shape is MxN, not MxNx0 */
    expect_parse_error(FIX("duplicate.csv"), "duplicate.csv:4:",
                       "duplicate row for softmax_forward eager bf16 1x2 (first");
}
END_TEST

/* Several duplicates: the error names the pair the row-by-row check met
 * first, the earliest line that repeats an earlier row's key, with that
 * earlier row's line; not the first key in sort order, nor the key first
 * seen. A bad row or malformed CSV after the duplicate does not hide it;
 * one before it is reported instead. (The messages are those of the
 * quadratic check, kept when it became a sort.) */
static const struct {
    const char *rows, *error;
} dup_files[] = {
    {"softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"  /* 2: X */
     "softmax_forward,eager,bf16,3,4,0.5,10,0.01,\n"  /* 3: Y */
     "softmax_forward,tuned,bf16,5,6,0.5,10,0.01,\n"  /* 4: Z */
     "softmax_forward,tuned,bf16,5,6,0.5,10,0.01,\n"  /* 5: Z again */
     "softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"  /* 6: X again */
     "softmax_forward,eager,bf16,3,4,0.5,10,0.01,\n", /* 7: Y again */
     "dup.csv:5: duplicate row for softmax_forward tuned bf16 5x6 (first on line 4)"},
    {"softmax_forward,fused,bf16,9,9,0.5,10,0.01,\n"  /* 2: X */
     "softmax_forward,eager,fp16,8,8,0.5,10,0.01,\n"  /* 3: Y */
     "softmax_forward,fused,bf16,9,9,0.5,10,0.01,\n"  /* 4: X again */
     "softmax_forward,eager,fp16,8,8,0.5,10,0.01,\n"  /* 5: Y again */
     "softmax_forward,fused,bf16,9,9,0.5,10,0.01,\n", /* 6: X a third time */
     "dup.csv:4: duplicate row for softmax_forward fused bf16 9x9 (first on line 2)"},
    {"mlp_forward,eager,bf16,8,16,0.5,10,0.01,32\n"  /* 2: 3-D */
     "mlp_forward,eager,bf16,8,16,0.5,10,0.01,64\n"  /* 3: another K */
     "mlp_forward,eager,bf16,8,16,0.5,10,0.01,64\n", /* 4 */
     "dup.csv:4: duplicate row for mlp_forward eager bf16 8x16x64 (first on line 3)"},
    {"softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"
     "softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"  /* 3: duplicate */
     "softmax_forward,eager,bf16,12x,2,0.5,10,0.01,\n", /* 4: bad value after it */
     "dup.csv:3: duplicate row for softmax_forward eager bf16 1x2 (first on line 2)"},
    {"softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"
     "softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"  /* 3: duplicate */
     "softmax_forward,eager,\"bf16,1,2,0.5,10,0.01,\n", /* 4: unterminated quote */
     "dup.csv:3: duplicate row for softmax_forward eager bf16 1x2 (first on line 2)"},
    {"softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n"
     "softmax_forward,eager,bf16,1,2,0,10,0.01,\n"    /* 3: bad value first */
     "softmax_forward,eager,bf16,1,2,0.5,10,0.01,\n", /* 4: duplicate */
     "dup.csv:3: median_ms must be finite and > 0, got 0"},
};

START_TEST(read_duplicate_pair)
{
    char dir[4096], path[4200], text[1024], want[4400];
    kbt_tmpdir_file(dir, path, sizeof path, "dup.csv");
    snprintf(want, sizeof want, "%s/%s", dir, dup_files[_i].error);
    snprintf(text, sizeof text, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,K\n%s",
             dup_files[_i].rows);
    kbt_write(path, text);
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_baseline_read(path, &b, &e), KB_ERR_PARSE);
    ck_assert_str_eq(e.msg, want); /* the whole message: file, both lines, the key */
    ck_assert_uint_eq(b.n, 0);
    kb_baseline_free(&b);
    kbt_rm_rf(dir);
}
END_TEST

/* Bad values in a one-row file written on the fly: each is line 2, and the
 * message holds what, where given (the value named). */
static const struct {
    const char *row, *what;
} bad_rows[] = {
    {"softmax_forward,eager,bf16,12x,2,0.5,10,0.01", NULL},   /* partial integer */
    {"softmax_forward,eager,bf16,0,2,0.5,10,0.01", "got M 0, N 2"}, /* M < 1 */
    {"softmax_forward,eager,bf16,1,-3,0.5,10,0.01", "got M 1, N -3"}, /* N < 1 */
    {"softmax_forward,eager,bf16,1,2,0.5,inf,0.01", NULL},    /* not finite */
    {"softmax_forward,eager,bf16,1,2,0.5,0,0.01", NULL},      /* gbps must be > 0 */
    {"softmax_forward,eager,bf16,1,2,0.5,10,", NULL},         /* required value empty */
    {"softmax_forward,eager,bf16,1,2,0.5e,10,0.01", NULL},    /* partial double */
    {",eager,bf16,1,2,0.5,10,0.01", NULL},                    /* empty key */
    {"softmax_forward,eager,bfloat16_long,1,2,0.5,10,0.01", NULL}, /* too long for dtype */
    {"softmax_forward,eager,bf16,1,2,nan,10,0.01", NULL},     /* NaN median */
    {"softmax_forward,eager,bf16,1,2,0x10,10,0.01", NULL},    /* hex */
    /* a control character in a key: a line break split the report's headings */
    {"softmax_forward,\"ea\rger\",bf16,1,2,0.5,10,0.01",
     "column 'backend' holds a control character (0x0d)"},
    {"softmax_forward,eager,bf\x7f" "16,1,2,0.5,10,0.01", "column 'dtype' holds a control character (0x7f)"},
    /* larger than kbench runs (kb_shape_too_large): 2M overflowed */
    {"softmax_forward,eager,bf16,9223372036854775807,1,0.5,10,0.01",
     "bad.csv:2: shape 9223372036854775807x1 is larger than kbench runs"},
};

START_TEST(read_bad_values)
{
    char dir[4096], path[4200], text[512];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    snprintf(text, sizeof text, "benchmark,backend,dtype,M,N,median_ms,gbps,noise\n%s\n",
             bad_rows[_i].row);
    kbt_write(path, text);
    expect_parse_error(path, "bad.csv:2:", bad_rows[_i].what);
    kbt_rm_rf(dir);
}
END_TEST

/* A NUL byte in a field: before, the field was cut at it without a word, so
 * "100<NUL>junk" read as 100 GB/s and "soft<NUL>max_forward" as "soft". A
 * file saved as UTF-16 (every other byte NUL) is named as such. */
static const struct {
    const char *text;
    size_t len;
    const char *file_line, *what;
} nul_files[] = {
#define NUL_FILE(text, line, what) {text, sizeof text - 1, line, what}
    NUL_FILE("benchmark,backend,dtype,M,N,median_ms,gbps,noise\n"
             "softmax_forward,eager,bf16,4,4,0.5,100\0junk,0.01\n",
             "nul.csv:2:", "field 7 holds a NUL byte"),
    NUL_FILE("benchmark,backend,dtype,M,N,median_ms,gbps,noise\n"
             "soft\0max_forward,eager,bf16,4,4,0.5,100,0.01\n",
             "nul.csv:2:", "field 1 holds a NUL byte"),
    NUL_FILE("b\0e\0n\0c\0h\0m\0a\0r\0k\0\n\0", "nul.csv:1:", "UTF-16"),
#undef NUL_FILE
};

START_TEST(read_nul_byte)
{
    char dir[4096], path[4200];
    kbt_tmpdir_file(dir, path, sizeof path, "nul.csv");
    kbt_write_n(path, nul_files[_i].text, nul_files[_i].len);
    expect_parse_error(path, nul_files[_i].file_line, nul_files[_i].what);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(upsert_keeps_other_rows)
{
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    kb_baseline_row a = mkrow("softmax_forward", "eager", "bf16", 1, 2, 100);
    kb_baseline_row c = mkrow("softmax_forward", "eager", "bf16", 1, 4, 200);
    kb_baseline_row d = mkrow("rmsnorm_forward", "tuned", "bf16", 1, 2, 300);
    ck_assert_int_eq(kb_baseline_upsert(&b, &a, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_upsert(&b, &c, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_upsert(&b, &d, &e), KB_OK);
    ck_assert_uint_eq(b.n, 3);

    kb_baseline_row c2 = c;
    c2.gbps = 250;
    c2.samples = 99;
    ck_assert_int_eq(kb_baseline_upsert(&b, &c2, &e), KB_OK);
    ck_assert_uint_eq(b.n, 3);
    const kb_baseline_row *r = kb_baseline_find(&b, "softmax_forward", "eager", "bf16", 1, 4, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->gbps, 250);
    ck_assert_int_eq(r->samples, 99);
    r = kb_baseline_find(&b, "softmax_forward", "eager", "bf16", 1, 2, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->gbps, 100);
    r = kb_baseline_find(&b, "rmsnorm_forward", "tuned", "bf16", 1, 2, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->gbps, 300);

    kb_baseline_row bad = mkrow("softmax_forward", "eager", "bf16", 1, 8, 0.0);
    ck_assert_int_eq(kb_baseline_upsert(&b, &bad, &e), KB_ERR_ARG);
    bad = mkrow("softmax_forward", "eager", "bf16", 1, 8, 10);
    bad.noise = NAN;
    ck_assert_int_eq(kb_baseline_upsert(&b, &bad, &e), KB_ERR_ARG);
    bad = mkrow("softmax_forward", "eager", "bf16", INT64_MAX, 1, 10); /* kb_shape_too_large */
    ck_assert_int_eq(kb_baseline_upsert(&b, &bad, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "shape 9223372036854775807x1 is larger than kbench runs"), "%s",
                  e.msg);
    ck_assert_uint_eq(b.n, 3);
    kb_baseline_free(&b);
}
END_TEST

START_TEST(write_format_exact)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/NVIDIA_H200.csv", dir);
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    kb_baseline_row r = mkrow("softmax_forward", "eager", "bf16", 32768, 4096, 2175.3);
    r.median_ms = 0.1234;
    r.noise = 0.004;
    r.samples = 57;
    r.q1_ms = 0.1;
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    ck_assert_msg(kb_baseline_write(path, &b, &e) == KB_OK, "%s", e.msg);
    char *text = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text,
                     "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,version,"
                     "kernels,kernel_names\n"
                     "softmax_forward,eager,bf16,32768,4096,0.1234,2175.3,0.004,57,0.1,,"
                     "2025-01-01T00:00:00Z,0.1.0,,\n");
    free(text);
    snprintf(path + strlen(path), 64, ".%ld.tmp", (long)getpid());
    ck_assert(!kbt_exists(path));
    kb_baseline_free(&b);
    kbt_rm_rf(dir);
}
END_TEST

/* sm_mhz: written only when a row has a clock (after K, which is then
 * written too), read back; empty and absent mean "not recorded"; a negative
 * clock is refused. */
START_TEST(sm_mhz_column)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/b.csv", dir);
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    kb_baseline_row r = mkrow("softmax_forward", "eager", "bf16", 4, 8, 10.0);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    r = mkrow("mlp_forward", "tuned", "bf16", 8192, 4096, 120.0);
    r.K = 14336;
    r.sm_mhz = 1755;
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    ck_assert_msg(kb_baseline_write(path, &b, &e) == KB_OK, "%s", e.msg);
    char *text = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(text, "kernels,kernel_names,K,sm_mhz\n"));
    ck_assert_ptr_nonnull(strstr(text, ",14336,1755\n"));
    ck_assert_ptr_nonnull(strstr(text, "2025-01-01T00:00:00Z,0.1.0,,,,\n")); /* the 2-D row */
    free(text);
    kb_baseline back;
    kb_baseline_init(&back);
    ck_assert_msg(kb_baseline_read(path, &back, &e) == KB_OK, "%s", e.msg);
    const kb_baseline_row *m = kb_baseline_find(&back, "mlp_forward", "tuned", "bf16", 8192, 4096, 14336);
    const kb_baseline_row *s = kb_baseline_find(&back, "softmax_forward", "eager", "bf16", 4, 8, 0);
    ck_assert(m && s);
    ck_assert(m->sm_mhz == 1755);
    ck_assert(isnan(s->sm_mhz));
    kb_baseline_free(&back);
    /* no clock in any row: no column */
    b.v[0].sm_mhz = b.v[1].sm_mhz = 0;
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_OK);
    text = kbt_read(path, NULL);
    ck_assert_ptr_null(strstr(text, "sm_mhz"));
    ck_assert_ptr_nonnull(strstr(text, ",K\n"));
    free(text);
    b.v[0].sm_mhz = -5;
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "sm_mhz must be > 0 or empty"));
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,sm_mhz\n"
                    "softmax_forward,eager,bf16,4,8,1,10,0.01,-1\n");
    ck_assert_int_eq(kb_baseline_read(path, &back, &e), KB_ERR_PARSE);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,sm_mhz\n"
                    "softmax_forward,eager,bf16,4,8,1,10,0.01,0\n");
    ck_assert_int_eq(kb_baseline_read(path, &back, &e), KB_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(e.msg, "column 'sm_mhz'"));
    kb_baseline_free(&back);
    kb_baseline_free(&b);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(write_read_round_trip_sorted)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/rt.csv", dir);
    kb_baseline b, back;
    kb_baseline_init(&b);
    kb_baseline_init(&back);
    kb_err e = {{0}};
    /* Inserted out of order; M 10 after M 9 checks numeric (not text) order. */
    kb_baseline_row rows[5] = {
        mkrow("softmax_forward", "tuned", "bf16", 10, 4, 5),
        mkrow("softmax_forward", "tuned", "bf16", 9, 4, 4),
        mkrow("cross_entropy_forward", "eager", "fp32", 1, 1, 1),
        mkrow("softmax_forward", "eager", "fp16", 9, 4, 3),
        mkrow("softmax_forward", "eager", "bf16", 9, 4, 2),
    };
    snprintf(rows[3].backend, sizeof rows[3].backend, "eager, \"b\"");
    snprintf(rows[1].version, sizeof rows[1].version, " padded ");
    rows[2].median_ms = 0.1;
    rows[2].gbps = 1.0 / 3.0;
    rows[2].noise = 1e-300;
    rows[2].q1_ms = 0.09999999999999999;
    rows[2].q3_ms = 123456789.125;
    rows[3].samples = 0;
    rows[3].date[0] = '\0';
    for (int i = 0; i < 5; i++) ck_assert_int_eq(kb_baseline_upsert(&b, &rows[i], &e), KB_OK);
    ck_assert_msg(kb_baseline_write(path, &b, &e) == KB_OK, "%s", e.msg);
    ck_assert_msg(kb_baseline_read(path, &back, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(back.n, 5);

    /* File order is key order. */
    const int order[5] = {2, 4, 3, 1, 0};
    for (int i = 0; i < 5; i++) {
        const kb_baseline_row *w = &rows[order[i]], *g = &back.v[i];
        ck_assert_str_eq(g->benchmark, w->benchmark);
        ck_assert_str_eq(g->backend, w->backend);
        ck_assert_str_eq(g->dtype, w->dtype);
        ck_assert_int_eq(g->M, w->M);
        ck_assert_int_eq(g->N, w->N);
        ck_assert_double_eq(g->median_ms, w->median_ms); /* bit-exact */
        ck_assert_double_eq(g->gbps, w->gbps);
        ck_assert_double_eq(g->noise, w->noise);
        ck_assert_int_eq(g->samples, w->samples);
        if (isnan(w->q1_ms)) ck_assert_float_nan(g->q1_ms);
        else ck_assert_double_eq(g->q1_ms, w->q1_ms);
        if (isnan(w->q3_ms)) ck_assert_float_nan(g->q3_ms);
        else ck_assert_double_eq(g->q3_ms, w->q3_ms);
        ck_assert_str_eq(g->date, w->date);
        ck_assert_str_eq(g->version, w->version);
    }
    kb_baseline_free(&b);
    kb_baseline_free(&back);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(write_failure_leaves_original)
{
    char dir[4096], path[4200], tmp[4400];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/gpu.csv", dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    const char *original = "original contents\n";
    kbt_write(path, original);

    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    kb_baseline_row r = mkrow("softmax_forward", "eager", "bf16", 1, 2, 3);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);

    /* The temp file cannot be created: a directory is in its place. */
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_ERR_IO);
    ck_assert_msg(strstr(e.msg, tmp) != NULL, "%s", e.msg);
    char *text = kbt_read(path, NULL);
    ck_assert_str_eq(text, original);
    free(text);
    ck_assert_int_eq(rmdir(tmp), 0);

    /* The rename fails (target is a non-empty directory): no temp left. */
    char blocker[4300], inner[4400];
    snprintf(blocker, sizeof blocker, "%s/dir.csv", dir);
    snprintf(inner, sizeof inner, "%s/keep", blocker);
    ck_assert_int_eq(mkdir(blocker, 0700), 0);
    kbt_write(inner, "x");
    ck_assert_int_eq(kb_baseline_write(blocker, &b, &e), KB_ERR_IO);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", blocker, (long)getpid());
    ck_assert(!kbt_exists(tmp));
    ck_assert(kbt_exists(inner));

    /* The directory does not exist. */
    snprintf(path, sizeof path, "%s/no/such/dir/gpu.csv", dir);
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_ERR_IO);
    ck_assert(!kbt_exists(path));

    /* An invalid row writes nothing at all. */
    snprintf(path, sizeof path, "%s/gpu.csv", dir);
    b.v[0].gbps = -1;
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_ERR_ARG);
    text = kbt_read(path, NULL);
    ck_assert_str_eq(text, original);
    free(text);

    kb_baseline_free(&b);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(write_empty_then_read)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/empty.csv", dir);
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_read(path, &b, &e), KB_OK);
    ck_assert_uint_eq(b.n, 0);
    /* A zero-byte file has no header: an error, not an empty baseline. */
    kbt_write(path, "");
    expect_parse_error(path, "empty.csv:1:", "header");
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(path_naming)
{
    char buf[256];
    kb_baseline_path("baselines", "NVIDIA H200", buf, sizeof buf);
    ck_assert_str_eq(buf, "baselines/NVIDIA_H200.csv");
    kb_baseline_path("/a/b/", "NVIDIA H100 80GB HBM3", buf, sizeof buf);
    ck_assert_str_eq(buf, "/a/b/NVIDIA_H100_80GB_HBM3.csv");
    kb_baseline_path("d", "Weird/Name x", buf, sizeof buf);
    ck_assert_str_eq(buf, "d/Weird_Name_x.csv");
    kb_baseline_path(NULL, "NVIDIA H200", buf, sizeof buf);
    ck_assert_str_eq(buf, "NVIDIA_H200.csv");
    kb_baseline_path("d", "NVIDIA H200", buf, 8); /* truncated, still terminated */
    ck_assert_uint_lt(strlen(buf), 8);
}
END_TEST

/* Every committed baseline file parses and has rows. */
static void check_baseline_file(const char *path, void *arg)
{
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    ck_assert_msg(kb_baseline_read(path, &b, &e) == KB_OK, "%s", e.msg);
    ck_assert_msg(b.n > 0, "%s has no rows", path);
    kb_baseline_free(&b);
}

START_TEST(committed_baselines_parse)
{
    ck_assert_int_ge(kbt_for_files(KB_REPO_BASELINES, ".csv", check_baseline_file, NULL), 1);
}
END_TEST

/* A baseline path the user typed must exist (else nothing is gated); the
 * default per-GPU file may be absent; --update-baseline may start a file. */
START_TEST(missing_path_rules)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/NVIDIA_H200.csv", dir);
    kb_err e;
    int missing = -1;
    ck_assert_int_eq(kb_baseline_check_path(path, 1, 0, "the caller's hint", &missing, &e),
                     KB_ERR_ARG);
    ck_assert_int_eq(missing, 1);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "does not exist (the caller's hint)"));
    /* no hint: no options named, not another tool's */
    ck_assert_int_eq(kb_baseline_check_path(path, 1, 0, NULL, &missing, &e), KB_ERR_ARG);
    ck_assert_ptr_null(strstr(e.msg, "--"));
    ck_assert_int_eq(kb_baseline_check_path(path, 1, 1, NULL, &missing, &e), KB_OK);
    ck_assert_int_eq(missing, 1);
    ck_assert_int_eq(kb_baseline_check_path(path, 0, 0, NULL, &missing, &e), KB_OK);
    ck_assert_int_eq(missing, 1);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise\n");
    ck_assert_int_eq(kb_baseline_check_path(path, 1, 0, NULL, &missing, &e), KB_OK);
    ck_assert_int_eq(missing, 0);
    ck_assert_int_eq(kb_baseline_check_path(dir, 1, 0, NULL, &missing, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "directory"));
    kbt_rm_rf(dir);
}
END_TEST

Suite *kb_suite_baseline(void)
{
    Suite *s = suite_create("baseline");
    TCase *t = tcase_create("read");
    tcase_add_test(t, read_good);
    tcase_add_test(t, read_missing_file_is_empty);
    tcase_add_loop_test(t, read_malformed_file, 0, (int)(sizeof bad_files / sizeof bad_files[0]));
    tcase_add_test(t, read_duplicate_key);
    tcase_add_loop_test(t, read_duplicate_pair, 0, (int)(sizeof dup_files / sizeof dup_files[0]));
    tcase_add_test(t, read_results_file_is_refused);
    tcase_add_loop_test(t, read_bad_values, 0, (int)(sizeof bad_rows / sizeof bad_rows[0]));
    tcase_add_loop_test(t, read_nul_byte, 0, (int)(sizeof nul_files / sizeof nul_files[0]));
    suite_add_tcase(s, t);
    t = tcase_create("update");
    tcase_add_test(t, upsert_keeps_other_rows);
    tcase_add_test(t, write_format_exact);
    tcase_add_test(t, write_read_round_trip_sorted);
    tcase_add_test(t, write_failure_leaves_original);
    tcase_add_test(t, write_empty_then_read);
    tcase_add_test(t, path_naming);
    tcase_add_test(t, committed_baselines_parse);
    tcase_add_test(t, missing_path_rules);
    tcase_add_test(t, sm_mhz_column);
    suite_add_tcase(s, t);
    return s;
}
