/* Results: CSV/JSON writers, CSV reader (ours and peers'), print line. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "csvio.h"
#include "results.h"
#include "rowfile.h"
#include "rows.h"
#include "tmpfiles.h"
#include "unit.h"

#define FIX(name) KB_FIXTURES "/results/" name

static kb_result mkres(void)
{
    kb_result x = kbt_result("softmax_forward", "eager", "bf16", 32768, 4096);
    x.median_ms = 0.1234;
    x.min_ms = 0.122;
    x.max_ms = 0.1301;
    x.noise = 0.004;
    x.gbps = 2175.3;
    x.sol_gbps = 4274.0;
    x.sol_pct = 50.9;
    x.samples = 57;
    x.accuracy = KB_ACC_PASS;
    x.mismatches = 0;
    x.max_err = 0.25;
    x.baseline_gbps = 2180.0;
    snprintf(x.verdict, sizeof x.verdict, "SAME");
    snprintf(x.gpu, sizeof x.gpu, "NVIDIA H200");
    snprintf(x.date, sizeof x.date, "2025-01-01T00:00:00Z");
    snprintf(x.version, sizeof x.version, "0.1.0");
    snprintf(x.env, sizeof x.env, "kbench 0.1.0 | CUDA runtime 13.0, driver 13.0");
    x.kernels = 2;
    snprintf(x.kernel_names, sizeof x.kernel_names, "fwd_reg<bfloat16, 8>;split_noop_kernel");
    snprintf(x.kernel_us, sizeof x.kernel_us, "12.5;1.75");
    x.sol_read_gbps = 4650.5;
    x.sol_write_gbps = 4400;
    x.mix_sol_gbps = 4274; /* softmax forward reads what it writes: the copy */
    x.mix_sol_pct = 50.9;
    x.tflops = x.peak_tflops = NAN; /* a memory-bound op */
    return x;
}

/* A case that was skipped: nothing measured. */
static kb_result mkskip(void)
{
    kb_result x = kbt_result("layernorm_backward", "tuned:big, \"x\"", "fp32", 1, 262144);
    x.median_ms = x.min_ms = x.max_ms = x.noise = NAN;
    x.gbps = x.sol_gbps = x.sol_pct = x.max_err = x.baseline_gbps = NAN;
    x.sol_read_gbps = x.sol_write_gbps = x.mix_sol_gbps = x.mix_sol_pct = NAN;
    x.tflops = x.peak_tflops = NAN;
    x.mismatches = -1;
    x.accuracy = KB_ACC_SKIP;
    snprintf(x.config, sizeof x.config, "threads=256,\ncluster=4");
    snprintf(x.message, sizeof x.message, "needs \"smem\"\t> limit");
    return x;
}

static void same_double(double got, double want)
{
    if (isnan(want)) ck_assert_float_nan(got);
    else ck_assert_double_eq(got, want);
}

static void same_result(const kb_result *g, const kb_result *w)
{
    ck_assert_str_eq(g->benchmark, w->benchmark);
    ck_assert_str_eq(g->backend, w->backend);
    ck_assert_str_eq(g->dtype, w->dtype);
    ck_assert_int_eq(g->M, w->M);
    ck_assert_int_eq(g->N, w->N);
    same_double(g->median_ms, w->median_ms);
    same_double(g->min_ms, w->min_ms);
    same_double(g->max_ms, w->max_ms);
    same_double(g->noise, w->noise);
    same_double(g->gbps, w->gbps);
    same_double(g->sol_gbps, w->sol_gbps);
    same_double(g->sol_pct, w->sol_pct);
    same_double(g->sol_read_gbps, w->sol_read_gbps);
    same_double(g->sol_write_gbps, w->sol_write_gbps);
    same_double(g->mix_sol_gbps, w->mix_sol_gbps);
    same_double(g->mix_sol_pct, w->mix_sol_pct);
    ck_assert_int_eq(g->samples, w->samples);
    ck_assert_int_eq(g->accuracy, w->accuracy);
    ck_assert_int_eq(g->mismatches, w->mismatches);
    same_double(g->max_err, w->max_err);
    same_double(g->baseline_gbps, w->baseline_gbps);
    ck_assert_str_eq(g->verdict, w->verdict);
    ck_assert_str_eq(g->gpu, w->gpu);
    ck_assert_str_eq(g->config, w->config);
    ck_assert_str_eq(g->date, w->date);
    ck_assert_str_eq(g->version, w->version);
    ck_assert_str_eq(g->env, w->env);
    ck_assert_int_eq(g->kernels, w->kernels);
    ck_assert_str_eq(g->kernel_names, w->kernel_names);
    ck_assert_str_eq(g->kernel_us, w->kernel_us);
}

START_TEST(push_grows)
{
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    kb_result x = mkres();
    for (int i = 0; i < 1000; i++) {
        x.M = i + 1;
        ck_assert_int_eq(kb_results_push(&r, &x, &e), KB_OK);
    }
    ck_assert_uint_eq(r.n, 1000);
    for (int i = 0; i < 1000; i++) ck_assert_int_eq(r.v[i].M, i + 1);
    kb_results_free(&r);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_ptr_null(r.v);
}
END_TEST

/* kb_grow: the growth policy of every row array. v back while there is
 * room; the capacity doubles from `first`; a size no size_t holds is out
 * of memory (NULL, array and capacity untouched), never a wrapped
 * allocation the caller would then overrun. */
START_TEST(grow_policy)
{
    size_t cap = 0;
    int *v = kb_grow(NULL, 0, &cap, sizeof *v, 4);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(cap, 4);
    ck_assert_ptr_eq(kb_grow(v, 3, &cap, sizeof *v, 4), v);
    ck_assert_uint_eq(cap, 4);
    for (int i = 0; i < 4; i++) v[i] = i + 1;
    int *w = kb_grow(v, 4, &cap, sizeof *w, 4);
    ck_assert_ptr_nonnull(w);
    ck_assert_uint_eq(cap, 8);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(w[i], i + 1); /* kept */
    size_t huge = SIZE_MAX / 16 + 1; /* doubled, times 16 bytes: past SIZE_MAX */
    ck_assert_ptr_null(kb_grow(w, huge, &huge, 16, 4));
    ck_assert_uint_eq(huge, SIZE_MAX / 16 + 1);
    size_t top = SIZE_MAX / 2 + 1; /* doubling itself would wrap */
    ck_assert_ptr_null(kb_grow(w, top, &top, 1, 4));
    ck_assert_uint_eq(top, SIZE_MAX / 2 + 1);
    free(w);
}
END_TEST

START_TEST(csv_round_trip_and_nan)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    kb_results r, back;
    kb_results_init(&r);
    kb_results_init(&back);
    kb_err e = {{0}};
    kb_result a = mkres(), s = mkskip();
    ck_assert_int_eq(kb_results_push(&r, &a, &e), KB_OK);
    ck_assert_int_eq(kb_results_push(&r, &s, &e), KB_OK);
    ck_assert_msg(kb_results_write_csv(&r, path, &e) == KB_OK, "%s", e.msg);

    char *text = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    const char *hdr = "benchmark,backend,dtype,M,N,median_ms,min_ms,max_ms,noise,gbps,sol_gbps,"
                      "sol_pct,samples,accuracy,mismatches,max_err,baseline_gbps,verdict,gpu,"
                      "config,date,version,env,kernels,kernel_names,kernel_us,sol_read_gbps,"
                      "sol_write_gbps,mix_sol_gbps,mix_sol_pct,K,tflops,peak_tflops,message\n";
    ck_assert_int_eq(strncmp(text, hdr, strlen(hdr)), 0);
    const char *row1 = "softmax_forward,eager,bf16,32768,4096,0.1234,0.122,0.1301,0.004,2175.3,"
                       "4274,50.9,57,PASS,0,0.25,2180,SAME,NVIDIA H200,,2025-01-01T00:00:00Z,"
                       "0.1.0,\"kbench 0.1.0 | CUDA runtime 13.0, driver 13.0\",2,"
                       "\"fwd_reg<bfloat16, 8>;split_noop_kernel\",12.5;1.75,4650.5,4400,4274,50.9,,,,\n";
    ck_assert_int_eq(strncmp(text + strlen(hdr), row1, strlen(row1)), 0);
    /* NaN numbers are empty fields, text needing it is quoted. */
    const char *row2 = "layernorm_backward,\"tuned:big, \"\"x\"\"\",fp32,1,262144,,,,,,,,,SKIP,,,,,,"
                       "\"threads=256,\ncluster=4\",,,,,,,,,,,,,,\"needs \"\"smem\"\"\t> limit\"\n";
    ck_assert_str_eq(text + strlen(hdr) + strlen(row1), row2);
    free(text);

    ck_assert_msg(kb_results_read_csv(path, &back, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(back.n, 2);
    same_result(&back.v[0], &a);
    same_result(&back.v[1], &s);
    ck_assert_str_eq(back.v[1].message, s.message); /* the reason survives the CSV */

    /* Appends to what is there. */
    ck_assert_int_eq(kb_results_read_csv(path, &back, &e), KB_OK);
    ck_assert_uint_eq(back.n, 4);
    same_result(&back.v[3], &s);
    kb_results_free(&r);
    kb_results_free(&back);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(json_output)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/r.json", dir);
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_results_write_json(&r, path, &e), KB_OK);
    char *text = kbt_read(path, NULL);
    ck_assert_str_eq(text, "[]\n");
    free(text);

    kb_result a = mkres(), s = mkskip();
    ck_assert_int_eq(kb_results_push(&r, &a, &e), KB_OK);
    ck_assert_int_eq(kb_results_push(&r, &s, &e), KB_OK);
    ck_assert_msg(kb_results_write_json(&r, path, &e) == KB_OK, "%s", e.msg);
    text = kbt_read(path, NULL);
    ck_assert_str_eq(
        text,
        "[\n"
        "  {\"benchmark\": \"softmax_forward\", \"backend\": \"eager\", \"dtype\": \"bf16\", "
        "\"M\": 32768, \"N\": 4096, \"median_ms\": 0.1234, \"min_ms\": 0.122, \"max_ms\": 0.1301, "
        "\"noise\": 0.004, \"gbps\": 2175.3, \"sol_gbps\": 4274, \"sol_pct\": 50.9, "
        "\"samples\": 57, \"accuracy\": \"PASS\", \"mismatches\": 0, \"max_err\": 0.25, "
        "\"baseline_gbps\": 2180, \"verdict\": \"SAME\", \"gpu\": \"NVIDIA H200\", "
        "\"config\": \"\", \"date\": \"2025-01-01T00:00:00Z\", \"version\": \"0.1.0\", "
        "\"env\": \"kbench 0.1.0 | CUDA runtime 13.0, driver 13.0\", \"kernels\": 2, "
        "\"kernel_names\": \"fwd_reg<bfloat16, 8>;split_noop_kernel\", \"kernel_us\": \"12.5;1.75\", "
        "\"sol_read_gbps\": 4650.5, \"sol_write_gbps\": 4400, \"mix_sol_gbps\": 4274, "
        "\"mix_sol_pct\": 50.9, \"K\": null, \"tflops\": null, \"peak_tflops\": null, "
        "\"message\": \"\"},\n"
        "  {\"benchmark\": \"layernorm_backward\", \"backend\": \"tuned:big, \\\"x\\\"\", "
        "\"dtype\": \"fp32\", \"M\": 1, \"N\": 262144, \"median_ms\": null, \"min_ms\": null, "
        "\"max_ms\": null, \"noise\": null, \"gbps\": null, \"sol_gbps\": null, "
        "\"sol_pct\": null, \"samples\": null, \"accuracy\": \"SKIP\", \"mismatches\": null, "
        "\"max_err\": null, \"baseline_gbps\": null, \"verdict\": \"\", \"gpu\": \"\", "
        "\"config\": \"threads=256,\\ncluster=4\", \"date\": \"\", \"version\": \"\", \"env\": \"\", "
        "\"kernels\": null, \"kernel_names\": \"\", \"kernel_us\": \"\", \"sol_read_gbps\": null, "
        "\"sol_write_gbps\": null, \"mix_sol_gbps\": null, \"mix_sol_pct\": null, \"K\": null, \"tflops\": null, \"peak_tflops\": null, \"message\": \"needs \\\"smem\\\"\\t> limit\"}\n"
        "]\n");
    free(text);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(read_peer_minimal)
{
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    ck_assert_msg(kb_results_read_csv(FIX("peer_min.csv"), &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_str_eq(r.v[0].benchmark, "softmax_forward");
    ck_assert_str_eq(r.v[0].backend, "torch_compile");
    ck_assert_int_eq(r.v[0].M, 32768);
    ck_assert_int_eq(r.v[0].N, 4096);
    ck_assert_double_eq(r.v[0].median_ms, 0.2);
    ck_assert_float_nan(r.v[0].gbps);
    ck_assert_float_nan(r.v[0].baseline_gbps);
    ck_assert_int_eq(r.v[0].samples, 0);
    ck_assert_int_eq(r.v[0].mismatches, -1);
    ck_assert_int_eq(r.v[0].accuracy, KB_ACC_NONE);
    ck_assert_float_nan(r.v[1].median_ms); /* empty */
    ck_assert_float_nan(r.v[2].median_ms); /* "nan" */
    ck_assert_int_eq(r.v[2].N, 1024);
    /* Files from before the kernel check: its columns read as not recorded. */
    ck_assert_int_eq(r.v[0].kernels, 0);
    ck_assert_str_eq(r.v[0].kernel_names, "");
    ck_assert_str_eq(r.v[0].kernel_us, "");
    kb_results_free(&r);
}
END_TEST

START_TEST(read_errors)
{
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    kb_result keep = mkres();
    ck_assert_int_eq(kb_results_push(&r, &keep, &e), KB_OK);

    ck_assert_int_eq(kb_results_read_csv(FIX("bad_number.csv"), &r, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "bad_number.csv:3:") && strstr(e.msg, "'gbps'"), "%s", e.msg);
    ck_assert_uint_eq(r.n, 1); /* nothing appended */

    ck_assert_int_eq(kb_results_read_csv(FIX("missing.csv"), &r, &e), KB_ERR_IO);

    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/x.csv", dir);
    kbt_write(path, "benchmark,backend,dtype,M,N,gbps\nsoftmax_forward,eager,bf16,1,2,3\n");
    ck_assert_int_eq(kb_results_read_csv(path, &r, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "x.csv:1:") && strstr(e.msg, "'median_ms'"), "%s", e.msg);

    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms\nsoftmax_forward,eager,bf16,1,2,3\n"
                    "softmax_forward,,bf16,1,2,3\n");
    ck_assert_int_eq(kb_results_read_csv(path, &r, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "x.csv:3:") && strstr(e.msg, "'backend'"), "%s", e.msg);

    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms\nsoftmax_forward,eager,bf16,1,2\n");
    ck_assert_int_eq(kb_results_read_csv(path, &r, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "x.csv:2:"), "%s", e.msg);
    ck_assert_uint_eq(r.n, 1);

    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* Reading the n bytes of text from path fails (KB_ERR_PARSE) with want in
 * the message, appending nothing. */
static void expect_read_error_n(const char *path, const char *text, size_t n, const char *want)
{
    kbt_write_n(path, text, n);
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_results_read_csv(path, &r, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, want) != NULL, "expected '%s' in: %s", want, e.msg);
    ck_assert_uint_eq(r.n, 0);
    kb_results_free(&r);
}

static void expect_read_error(const char *path, const char *text, const char *want)
{
    expect_read_error_n(path, text, strlen(text), want);
}

/* A NUL byte cut a field short without a word: "SAME<NUL>X" read as SAME
 * and "2175.3<NUL>9" as 2175.3. Now the row is refused, naming the field. */
START_TEST(read_rejects_nul_bytes)
{
    static const char text[] = "benchmark,backend,dtype,M,N,median_ms,gbps,verdict\n"
                               "softmax_forward,eager,bf16,1,2,3,2175.3\0009,SAME\n";
    char dir[4096], path[4200];
    kbt_tmpdir_file(dir, path, sizeof path, "nul.csv");
    expect_read_error_n(path, text, sizeof text - 1, "nul.csv:2: field 7 holds a NUL byte");
    kbt_rm_rf(dir);
}
END_TEST

/* A time or rate of 0 or less, or a negative noise, cannot have been
 * measured: the reader refuses the row, naming file, line, column and value
 * (before, -1 ms and 0 GB/s went into the report's geomeans and verdicts).
 * Empty and nan stay "not measured": an untimed row (--no-timing, SKIP, an
 * input-kind case) leaves them empty, as kbench writes them. */
START_TEST(read_rejects_unmeasurable_numbers)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/n.csv", dir);
    const char *head = "benchmark,backend,dtype,M,N,median_ms,min_ms,max_ms,noise,gbps,accuracy\n";
    static const struct {
        const char *row, *want;
    } bad[] = {
        {"softmax_forward,eager,bf16,1,2,0,,,,,PASS\n", "n.csv:3: column 'median_ms': 0 must be > 0"},
        {"softmax_forward,eager,bf16,1,2,-1,,,,,PASS\n", "n.csv:3: column 'median_ms': -1 must be > 0"},
        {"softmax_forward,eager,bf16,1,2,1,0,,,,PASS\n", "n.csv:3: column 'min_ms': 0 must be > 0"},
        {"softmax_forward,eager,bf16,1,2,1,,-2,,,PASS\n", "n.csv:3: column 'max_ms': -2 must be > 0"},
        {"softmax_forward,eager,bf16,1,2,1,,,,0,PASS\n", "n.csv:3: column 'gbps': 0 must be > 0"},
        {"softmax_forward,eager,bf16,1,2,1,,,-0.01,,PASS\n",
         "n.csv:3: column 'noise': -0.01 must be >= 0"},
    };
    char text[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%ssoftmax_forward,eager,bf16,1,1,1,1,1,0,1,PASS\n%s", head,
                 bad[i].row);
        expect_read_error(path, text, bad[i].want);
    }
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    /* Not measured: empty or nan; a zero noise is a quiet run. */
    snprintf(text, sizeof text,
             "%ssoftmax_forward,eager,bf16,1,1,,,,,,SKIP\nsoftmax_forward,eager,bf16,1,2,nan,nan,"
             "nan,nan,nan,PASS\nsoftmax_forward,eager,bf16,1,4,1,0.5,2,0,3,PASS\n",
             head);
    kbt_write(path, text);
    ck_assert_msg(kb_results_read_csv(path, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 3);
    ck_assert(isnan(r.v[0].median_ms) && isnan(r.v[1].gbps));
    ck_assert_double_eq(r.v[2].noise, 0);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* Counts cannot be negative: samples -3, mismatches -5 or kernels -2 were
 * read as they stood (and written back empty, as not measured). Empty and
 * 0 still read. */
/* A key with a line break (a quoted CSV field may hold one) split the plot's
 * data comment and the report's headings; it is refused, naming the column. */
START_TEST(read_rejects_control_characters_in_keys)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/k.csv", dir);
    expect_read_error(path,
                      "benchmark,backend,dtype,M,N,median_ms\n"
                      "softmax_forward,\"tu\nned\",bf16,1,2,1\n",
                      "k.csv:2: column 'backend' holds a control character (0x0a)");
    expect_read_error(path,
                      "benchmark,backend,dtype,M,N,median_ms\n"
                      "softmax\tforward,eager,bf16,1,2,1\n",
                      "k.csv:2: column 'benchmark' holds a control character (0x09)");
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(read_rejects_negative_counts)
{
    char dir[4096], path[4200], text[512];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/c.csv", dir);
    const char *head = "benchmark,backend,dtype,M,N,median_ms,samples,mismatches,kernels\n";
    static const struct {
        const char *row, *want;
    } bad[] = {
        {"softmax_forward,eager,bf16,1,2,1,-3,,\n", "c.csv:2: column 'samples': -3 must be >= 0"},
        {"softmax_forward,eager,bf16,1,2,1,,-5,\n",
         "c.csv:2: column 'mismatches': -5 must be >= 0"},
        {"softmax_forward,eager,bf16,1,2,1,,,-2\n", "c.csv:2: column 'kernels': -2 must be >= 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", head, bad[i].row);
        expect_read_error(path, text, bad[i].want);
    }
    snprintf(text, sizeof text, "%ssoftmax_forward,eager,bf16,1,2,1,,,\n"
                                "softmax_forward,eager,bf16,1,4,1,0,0,0\n", head);
    kbt_write(path, text);
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    ck_assert_msg(kb_results_read_csv(path, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.v[0].mismatches, -1); /* empty: not checked */
    ck_assert_int_eq(r.v[1].mismatches, 0);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* A row's shape is one kbench could run (kb_shape_too_large, the --shape
 * bound): M=2^63-1 overflowed the report's row and byte counts (kb_out_rows'
 * 2M) and the plot's N axis. The bound itself still reads. */
START_TEST(read_rejects_shapes_too_large)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/s.csv", dir);
    static const struct {
        const char *row, *want;
    } bad[] = {
        {"geglu_backward,eager,bf16,9223372036854775807,1,1.0,",
         "s.csv:2: shape 9223372036854775807x1 is larger than kbench runs"},
        {"geglu_backward,eager,bf16,1,4611686018427387905,1.0,",
         "s.csv:2: shape 1x4611686018427387905 is larger than kbench runs"},
        {"mlp_forward,eager,bf16,1,1,1.0,1152921504606846976",
         "s.csv:2: shape 1x1x1152921504606846976 is larger than kbench runs"},
    };
    const char *head = "benchmark,backend,dtype,M,N,median_ms,K\n";
    char text[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s\n", head, bad[i].row);
        expect_read_error(path, text, bad[i].want);
    }
    /* M*N and M*K, N*K at the bound: read */
    snprintf(text, sizeof text,
             "%sgeglu_backward,eager,bf16,2305843009213693951,1,1.0,\n"
             "mlp_forward,eager,bf16,1,1,1.0,576460752303423487\n",
             head);
    kbt_write(path, text);
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    ck_assert_msg(kb_results_read_csv(path, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.v[0].M, 2305843009213693951LL);
    ck_assert_int_eq(r.v[1].K, 576460752303423487LL);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* The verdict column holds a verdict kb_verdict_parse knows, or nothing:
 * "BOGUS" or "slower" used to be read and then dropped out of every count
 * of the report (no regression, no comparison) without a word. */
START_TEST(read_rejects_unknown_verdicts)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/v.csv", dir);
    static const char *const bad[] = {"BOGUS", "slower", "SLOWER "};
    char text[512], want[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text,
                 "benchmark,backend,dtype,M,N,median_ms,verdict\n"
                 "softmax_forward,eager,bf16,1,2,3,SAME\nsoftmax_forward,eager,bf16,1,4,3,\"%s\"\n",
                 bad[i]);
        snprintf(want, sizeof want,
                 "v.csv:3: column 'verdict': '%s' is not a verdict (NO_BASELINE, SAME, FASTER, "
                 "SLOWER, NOISY, FUSION_CHANGED, or empty when not checked)",
                 bad[i]);
        expect_read_error(path, text, want);
    }
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,verdict\n"
                    "softmax_forward,eager,bf16,1,2,3,SLOWER\nsoftmax_forward,eager,bf16,1,4,3,\n"
                    "softmax_forward,eager,bf16,1,8,3,FUSION_CHANGED\n");
    ck_assert_msg(kb_results_read_csv(path, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_str_eq(r.v[0].verdict, "SLOWER");
    ck_assert_str_eq(r.v[1].verdict, "");
    ck_assert_str_eq(r.v[2].verdict, "FUSION_CHANGED");
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* Accuracy is an enum inside; its file text is exactly PASS FAIL SKIP or
 * empty, both ways, and anything else in a CSV is an error naming the place. */
START_TEST(accuracy_state_text)
{
    const char *const text[] = {"", "PASS", "FAIL", "SKIP"};
    for (int a = 0; a < KB_NUM_ACC; a++) {
        ck_assert_str_eq(kb_acc_name((kb_acc)a), text[a]);
        kb_acc back = KB_NUM_ACC;
        kb_err e;
        ck_assert_int_eq(kb_acc_parse(text[a], &back, &e), KB_OK);
        ck_assert_int_eq(back, a);
    }
    ck_assert_int_eq(KB_ACC_NONE, 0); /* a zeroed result is "not checked" */
    kb_acc back;
    kb_err e;
    ck_assert_int_eq(kb_acc_parse("pass", &back, &e), KB_ERR_PARSE);
    ck_assert_int_eq(kb_acc_parse("PASSED", &back, &e), KB_ERR_PARSE);

    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/acc.csv", dir);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,accuracy\n"
                    "softmax_forward,liger,bf16,1,2,3,SKIP\nsoftmax_forward,liger,bf16,1,4,3,FAIL\n"
                    "softmax_forward,liger,bf16,1,8,3,\n");
    kb_results r;
    kb_results_init(&r);
    ck_assert_msg(kb_results_read_csv(path, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_int_eq(r.v[0].accuracy, KB_ACC_SKIP);
    ck_assert_int_eq(r.v[1].accuracy, KB_ACC_FAIL);
    ck_assert_int_eq(r.v[2].accuracy, KB_ACC_NONE);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,accuracy\n"
                    "softmax_forward,liger,bf16,1,2,3,ok\n");
    ck_assert_int_eq(kb_results_read_csv(path, &r, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "acc.csv:2: column 'accuracy': 'ok' is not an accuracy (PASS, "
                             "FAIL, SKIP or empty)"),
                  "%s", e.msg);
    ck_assert_uint_eq(r.n, 3); /* nothing appended */
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(write_failure_leaves_original)
{
    char dir[4096], path[4200], tmp[4400];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/out.json", dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    kbt_write(path, "old");
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    kb_result a = mkres();
    ck_assert_int_eq(kb_results_push(&r, &a, &e), KB_OK);
    ck_assert_int_eq(kb_results_write_json(&r, path, &e), KB_ERR_IO);
    ck_assert_int_eq(kb_results_write_csv(&r, path, &e), KB_ERR_IO);
    char *text = kbt_read(path, NULL);
    ck_assert_str_eq(text, "old");
    free(text);
    snprintf(path, sizeof path, "%s/none/out.csv", dir);
    ck_assert_int_eq(kb_results_write_csv(&r, path, &e), KB_ERR_IO);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

static char *print_to_string(const kb_result *x)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    kb_result_print(f, x);
    long n = ftell(f);
    ck_assert_int_gt(n, 0);
    char *s = calloc((size_t)n + 1, 1);
    rewind(f);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

/* Any byte string becomes valid UTF-8 JSON: well-formed sequences pass,
 * every other byte is \u00XX. */
START_TEST(json_escapes_invalid_utf8)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/s.json", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    /* Latin-1 byte, valid 2- and 4-byte sequences, a surrogate, an overlong
     * '/', a code point above U+10FFFF, a truncated sequence, DEL, a control */
    kb_json_string(f, "a\xff \xc3\xa9 \xf0\x9f\x98\x80 \xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80 "
                      "\xe2\x82\x7f\x01");
    fclose(f);
    char *text = kbt_read(path, NULL);
    ck_assert_str_eq(text, "\"a\\u00ff \xc3\xa9 \xf0\x9f\x98\x80 \\u00ed\\u00a0\\u0080 "
                           "\\u00c0\\u00af \\u00f4\\u0090\\u0080\\u0080 \\u00e2\\u0082\\u007f"
                           "\\u0001\"");
    free(text);
    kbt_rm_rf(dir);
}
END_TEST

static void write_rows(const char *csv, const char *json, int n, int commit)
{
    kb_rowfile c, j;
    kb_err e = {{0}};
    kb_result a = mkres();
    ck_assert_int_eq(kb_rowfile_init(&c, csv, KB_ROWS_CSV, &e), KB_OK);
    ck_assert_int_eq(kb_rowfile_init(&j, json, KB_ROWS_JSON, &e), KB_OK);
    for (int i = 0; i < n; i++) {
        a.N = 1024 << i;
        ck_assert_int_eq(kb_rowfile_add(&c, &a, &e), KB_OK);
        ck_assert_int_eq(kb_rowfile_add(&j, &a, &e), KB_OK);
    }
    if (commit) {
        ck_assert_msg(kb_rowfile_commit(&c, &e) == KB_OK, "%s", e.msg);
        ck_assert_msg(kb_rowfile_commit(&j, &e) == KB_OK, "%s", e.msg);
    }
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++) n++;
    return n;
}

/* A run killed after two cases: both rows are in the .partial files, whole
 * (the CSV reads back, the JSON array is closed); no final file appears. */
START_TEST(interrupted_run_keeps_rows)
{
    char dir[4096], csv[4200], json[4200], part[4300];
    kbt_tmpdir(dir);
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    snprintf(json, sizeof json, "%s/r.json", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        write_rows(csv, json, 2, 0);
        raise(SIGKILL); /* no commit, no exit handlers: as a kill -9 */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_ne(access(csv, F_OK), 0);
    ck_assert_int_ne(access(json, F_OK), 0);

    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    snprintf(part, sizeof part, "%s.partial", csv);
    ck_assert_msg(kb_results_read_csv(part, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.v[1].N, 2048);
    snprintf(part, sizeof part, "%s.partial", json);
    char *text = kbt_read(part, NULL);
    ck_assert_int_eq(strncmp(text, "[\n  {\"benchmark\"", 16), 0);
    ck_assert_int_eq(count(text, "{\"benchmark\""), 2);
    ck_assert_str_eq(text + strlen(text) - 4, "}\n]\n");
    free(text);

    /* A run that ends renames its files into place, .partial gone. */
    write_rows(csv, json, 3, 1);
    ck_assert_int_ne(access(part, F_OK), 0);
    kb_results_free(&r);
    ck_assert_msg(kb_results_read_csv(csv, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(r.n, 3);
    text = kbt_read(json, NULL);
    ck_assert_int_eq(count(text, "{\"benchmark\""), 3);
    ck_assert_int_eq(count(text, "},\n  {"), 2);
    ck_assert_str_eq(text + strlen(text) - 4, "}\n]\n");
    free(text);
    /* no rows at all: still a valid, empty file */
    write_rows(csv, json, 0, 1);
    text = kbt_read(json, NULL);
    ck_assert_str_eq(text, "[]\n");
    free(text);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(print_line)
{
    kb_result x = mkres();
    x.max_err = NAN;
    char *s = print_to_string(&x);
    ck_assert_str_eq(s, "softmax_forward eager bf16 32768x4096: 0.1234 ms (min 0.1220, max 0.1301, "
                        "noise 0.4%, 57 samples)  2175.3 GB/s  50.9% SOL (50.9% mix SOL)  accuracy PASS  "
                        "baseline 2180.0 GB/s SAME  kernels 2 (fwd_reg<bfloat16, 8>;split_noop_kernel)\n");
    free(s);

    kb_result k = mkskip();
    s = print_to_string(&k);
    ck_assert_str_eq(s, "layernorm_backward tuned:big, \"x\" fp32 1x262144:  accuracy SKIP  "
                        "[threads=256,\ncluster=4]  -- needs \"smem\"\t> limit\n");
    free(s);

    x = mkres();
    x.accuracy = KB_ACC_FAIL;
    x.mismatches = 12;
    x.max_err = 3.5;
    x.baseline_gbps = NAN;
    snprintf(x.verdict, sizeof x.verdict, "NO_BASELINE");
    x.min_ms = x.max_ms = NAN;
    x.samples = 0;
    snprintf(x.message, sizeof x.message, "worst at 7: 1.5 vs 1.0");
    x.kernels = 0; /* not recorded: not printed */
    x.mix_sol_pct = NAN; /* unknown mix SOL: not printed */
    s = print_to_string(&x);
    ck_assert_str_eq(s, "softmax_forward eager bf16 32768x4096: 0.1234 ms (noise 0.4%)  "
                        "2175.3 GB/s  50.9% SOL  accuracy FAIL (12 mismatches, max_err 3.5)  "
                        "NO_BASELINE  -- worst at 7: 1.5 vs 1.0\n");
    free(s);
}
END_TEST

Suite *kb_suite_results(void)
{
    Suite *s = suite_create("results");
    TCase *t = tcase_create("results");
    tcase_add_test(t, push_grows);
    tcase_add_test(t, grow_policy);
    tcase_add_test(t, csv_round_trip_and_nan);
    tcase_add_test(t, json_output);
    tcase_add_test(t, read_peer_minimal);
    tcase_add_test(t, read_errors);
    tcase_add_test(t, read_rejects_unmeasurable_numbers);
    tcase_add_test(t, read_rejects_unknown_verdicts);
    tcase_add_test(t, read_rejects_nul_bytes);
    tcase_add_test(t, read_rejects_negative_counts);
    tcase_add_test(t, read_rejects_control_characters_in_keys);
    tcase_add_test(t, read_rejects_shapes_too_large);
    tcase_add_test(t, accuracy_state_text);
    tcase_add_test(t, write_failure_leaves_original);
    tcase_add_test(t, print_line);
    tcase_add_test(t, json_escapes_invalid_utf8);
    tcase_add_test(t, interrupted_run_keeps_rows);
    suite_add_tcase(s, t);
    return s;
}
