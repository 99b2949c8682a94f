/* kbench-report's command line (kb_report_main) as a user runs it: what it
 * refuses, and that a refused input prints no speedup line and leaves no
 * report folder behind. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"
#include "unit.h"

/* Results of one GPU: eager and fused on one shape, so that a run prints a
 * speedup line. */
static const char *const results_csv =
    "benchmark,backend,dtype,M,N,median_ms,noise,gbps,sol_gbps,accuracy,gpu,date,version\n"
    "softmax_forward,eager,bf16,32768,1024,0.1,0.01,1300,4000,PASS,NVIDIA H200,"
    "2025-06-02T08:00:00Z,0.1.0\n"
    "softmax_forward,fused,bf16,32768,1024,0.07,0.01,1900,4000,PASS,NVIDIA H200,"
    "2025-06-02T08:00:00Z,0.1.0\n";

/* A run of kbench-report: its exit status, what it printed on out
 * (speedup lines) and err (messages). */
typedef struct {
    int rc;
    char out[8192], err[8192];
} run_result;

static void slurp(FILE *f, char *buf, size_t len)
{
    rewind(f);
    const size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* kb_report_main over "kbench-report" and the NULL-terminated arguments. */
static run_result run(const char *first, ...)
{
    char *argv[32] = {(char *)"kbench-report", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
        ck_assert_int_lt(argc, 31);
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert(out && err);
    run_result r;
    r.rc = kb_report_main(argc, argv, out, err);
    slurp(out, r.out, sizeof r.out);
    slurp(err, r.err, sizeof r.err);
    return r;
}

/* A scratch folder holding results.csv; rep is DIR/rep (not made). */
typedef struct {
    char dir[4096], results[4200], rep[4200];
} scratch;

static void scratch_make(scratch *s)
{
    kbt_tmpdir(s->dir);
    snprintf(s->results, sizeof s->results, "%s/results.csv", s->dir);
    snprintf(s->rep, sizeof s->rep, "%s/rep", s->dir);
    kbt_write(s->results, results_csv);
}

/* A baseline file given as results is refused, named as one, with the
 * option it belongs to. */
START_TEST(baseline_given_as_results_is_refused)
{
    scratch s;
    scratch_make(&s);
    const char *base = FIX("baseline.csv");
    run_result r = run("--out", s.rep, "--no-plots", s.results, base, NULL);
    ck_assert_int_eq(r.rc, 1);
    char want[8192];
    snprintf(want, sizeof want,
             "kbench-report: %s is a baseline file (its header has q1_ms and q3_ms and no "
             "accuracy or verdict column), not kbench results: pass it with --baseline\n",
             base);
    ck_assert_str_eq(r.err, want);
    ck_assert_str_eq(r.out, "");
    /* the same file as the baseline is what it is for */
    r = run("--out", s.rep, "--no-plots", "--baseline", base, s.results, NULL);
    ck_assert_msg(r.rc == 0 || r.rc == 4, "exit %d: %s", r.rc, r.err);
    kbt_rm_rf(s.dir);
}
END_TEST

/* A --baseline that cannot judge the rows (malformed, a results file,
 * another GPU's) is refused before any speedup line is printed. */
START_TEST(bad_baseline_refused_before_any_output)
{
    scratch s;
    scratch_make(&s);
    char malformed[4200], other_gpu[4200];
    snprintf(malformed, sizeof malformed, "%s/malformed.csv", s.dir);
    kbt_write(malformed, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,"
                         "date,version\nsoftmax_forward,eager,bf16,32768,x,0.1,1000,0.01,200,,,"
                         "2025-05-01T00:00:00Z,0.1.0\n");
    snprintf(other_gpu, sizeof other_gpu, "%s/NVIDIA_A100.csv", s.dir);
    char *text = kbt_read(FIX("baseline.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    kbt_write(other_gpu, text);
    free(text);
    const char *bad[] = {malformed, KB_FIXTURES "/baseline/results_file.csv", other_gpu};
    const char *why[] = {"column 'N'", "looks like a results CSV", "is for GPU NVIDIA_A100"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = run("--out", s.rep, "--no-plots", "--baseline", bad[i], s.results, NULL);
        ck_assert_msg(r.rc == 1, "%s: exit %d", bad[i], r.rc);
        ck_assert_msg(strstr(r.err, why[i]), "%s: %s", bad[i], r.err);
        ck_assert_msg(r.out[0] == '\0', "%s: printed before the refusal: %s", bad[i], r.out);
    }
    /* The good run prints its speedup line: the test above can fail. */
    run_result r = run("--out", s.rep, "--no-plots", s.results, NULL);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    ck_assert_msg(strstr(r.out, "softmax_forward"), "%s", r.out);
    kbt_rm_rf(s.dir);
}
END_TEST

/* Whatever input is refused, --out's folder is not made; a good run makes
 * it, parents included. */
START_TEST(no_report_folder_for_bad_input)
{
    scratch s;
    scratch_make(&s);
    char missing[4200], deep[4300];
    snprintf(missing, sizeof missing, "%s/no_such.csv", s.dir);
    snprintf(deep, sizeof deep, "%s/a/b", s.rep);
    run_result r = run("--out", deep, s.results, FIX("baseline.csv"), NULL);
    ck_assert_int_eq(r.rc, 1);
    r = run("--out", deep, s.results, missing, NULL);
    ck_assert_int_eq(r.rc, 1);
    r = run("--out", deep, "--baseline", missing, s.results, NULL);
    ck_assert_int_eq(r.rc, 1);
    r = run("--out", deep, "--baseline", KB_FIXTURES "/baseline/results_file.csv", s.results,
            NULL);
    ck_assert_int_eq(r.rc, 1);
    r = run("--out", deep, "--reference", "nope", s.results, NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_msg(!kbt_exists(s.rep), "a refused run made %s", s.rep);
    /* a place where the folder cannot be made is refused up front */
    char file_parent[4300];
    snprintf(file_parent, sizeof file_parent, "%s/sub", s.results);
    r = run("--out", file_parent, s.results, NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_msg(strstr(r.err, "is not a folder"), "%s", r.err);
    r = run("--out", deep, "--no-plots", s.results, NULL);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char md[4400];
    snprintf(md, sizeof md, "%s/report.md", deep);
    ck_assert_msg(kbt_exists(md), "a good run wrote no %s", md);
    kbt_rm_rf(s.dir);
}
END_TEST

/* A --reference no row has names the series the input does have. */
START_TEST(reference_lists_the_series)
{
    scratch s;
    scratch_make(&s);
    run_result r = run("--out", s.rep, "--no-plots", "--reference", "torch_compile", s.results,
                       FIX("peers.csv"), NULL);
    ck_assert_msg(r.rc == 0 || r.rc == 4, "exit %d: %s", r.rc, r.err);
    r = run("--out", s.rep, "--no-plots", "--reference", "nope", s.results, FIX("peers.csv"), NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_msg(strstr(r.err, "--reference nope: no rows of that series in the input (its "
                                "series: eager, fused, torch_compile, liger)"),
                  "%s", r.err);
    kbt_rm_rf(s.dir);
}
END_TEST

Suite *kb_suite_report_cli(void)
{
    Suite *s = suite_create("report_cli");
    TCase *t = tcase_create("refusals");
    tcase_add_test(t, baseline_given_as_results_is_refused);
    tcase_add_test(t, bad_baseline_refused_before_any_output);
    tcase_add_test(t, no_report_folder_for_bad_input);
    tcase_add_test(t, reference_lists_the_series);
    suite_add_tcase(s, t);
    return s;
}
