/* kbench-report: geomean maths, the only-common-shapes rule, missing eager,
 * empty and malformed input, regressions (verdict column and baseline file),
 * the Markdown and summary CSV pinned byte for byte by golden files, and the
 * plots with and without gnuplot. Fixtures: tests/fixtures/report/.
 * KB_UPDATE_GOLDEN=1 rewrites the golden files from the current output. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "report_int.h"
#include "tmpfiles.h"
#include "unit.h"

#define FIX(name) KB_FIXTURES "/report/" name

static kb_result mk(const char *bench, const char *backend, const char *dtype, int64_t M,
                    int64_t N, double ms)
{
    kb_result x;
    memset(&x, 0, sizeof x);
    snprintf(x.benchmark, sizeof x.benchmark, "%s", bench);
    snprintf(x.backend, sizeof x.backend, "%s", backend);
    snprintf(x.dtype, sizeof x.dtype, "%s", dtype);
    x.M = M;
    x.N = N;
    x.median_ms = ms;
    x.min_ms = x.max_ms = x.noise = x.gbps = x.sol_gbps = x.sol_pct = NAN;
    x.max_err = x.baseline_gbps = NAN;
    x.sol_read_gbps = x.sol_write_gbps = x.mix_sol_gbps = x.mix_sol_pct = NAN;
    x.mismatches = -1;
    x.accuracy = isnan(ms) ? KB_ACC_SKIP : KB_ACC_PASS;
    return x;
}

static void push(kb_results *r, kb_result x)
{
    kb_err e = {""};
    ck_assert_int_eq(kb_results_push(r, &x, &e), KB_OK);
}

static void read_fix(kb_results *r, const char *path)
{
    kb_err e = {""};
    kb_status st = kb_results_read_csv(path, r, &e);
    ck_assert_msg(st == KB_OK, "%s: %s", path, e.msg);
}

/* ---- geomean ------------------------------------------------------------ */

START_TEST(test_geomean)
{
    const double a[] = {2, 8};
    ck_assert_double_eq_tol(kb_geomean(a, 2), 4.0, 1e-12);
    const double b[] = {1.5, 1.5, 1.5};
    ck_assert_double_eq_tol(kb_geomean(b, 3), 1.5, 1e-12);
    const double c[] = {2, 4, 4}; /* 32^(1/3) */
    ck_assert_double_eq_tol(kb_geomean(c, 3), cbrt(32.0), 1e-12);
    const double big[] = {1e300, 1e300, 1e300}; /* a plain product would overflow */
    ck_assert_double_eq_tol(kb_geomean(big, 3) / 1e300, 1.0, 1e-9);
    ck_assert(isnan(kb_geomean(a, 0)));
    const double zero[] = {2, 0};
    ck_assert(isnan(kb_geomean(zero, 2)));
    const double neg[] = {2, -1};
    ck_assert(isnan(kb_geomean(neg, 2)));
    const double nan[] = {2, NAN};
    ck_assert(isnan(kb_geomean(nan, 2)));
}
END_TEST

/* ---- only shapes both timed --------------------------------------------- */

START_TEST(test_common_shapes)
{
    kb_results r;
    kb_results_init(&r);
    /* eager: A B C (C untimed); tuned: B C D (B in fp16 too). Only B bf16
     * is timed by both; D has no eager, C has no eager time. */
    push(&r, mk("softmax_forward", "eager", "bf16", 1, 100, 1.0));
    push(&r, mk("softmax_forward", "eager", "bf16", 1, 200, 4.0));
    push(&r, mk("softmax_forward", "eager", "bf16", 1, 300, NAN));
    push(&r, mk("softmax_forward", "tuned", "bf16", 1, 200, 1.0));
    push(&r, mk("softmax_forward", "tuned", "bf16", 1, 300, 1.0));
    push(&r, mk("softmax_forward", "tuned", "bf16", 1, 400, 1.0));
    push(&r, mk("softmax_forward", "tuned", "fp16", 1, 200, 1.0));
    /* Another benchmark's eager on the same shape must not be used. */
    push(&r, mk("softmax_backward", "eager", "fp16", 1, 200, 9.0));
    push(&r, mk("softmax_forward", "tuned", "bf16", 0, 0, 0.0)); /* zero time: untimed */

    double v[8];
    size_t n = kb_report_common_speedups(r.v, r.n, "softmax_forward", NULL, "eager", "tuned", v, 8);
    ck_assert_uint_eq(n, 1);
    ck_assert_double_eq_tol(v[0], 4.0, 1e-12);

    /* fp16 eager joins: both dtypes pooled when dtype is NULL, separate otherwise. */
    push(&r, mk("softmax_forward", "eager", "fp16", 1, 200, 2.0));
    size_t pts;
    ck_assert_double_eq_tol(kb_report_speedup(r.v, r.n, "softmax_forward", NULL, "eager", "tuned", &pts),
                            sqrt(8.0), 1e-12);
    ck_assert_uint_eq(pts, 2);
    ck_assert_double_eq_tol(kb_report_speedup(r.v, r.n, "softmax_forward", "fp16", "eager", "tuned", &pts),
                            2.0, 1e-12);
    ck_assert_uint_eq(pts, 1);
    /* The count is exact even when the caller's buffer is smaller. */
    ck_assert_uint_eq(kb_report_common_speedups(r.v, r.n, "softmax_forward", NULL, "eager", "tuned", v, 1), 2);
    /* A backend that shares no shape with eager: no speedup at all. */
    push(&r, mk("softmax_forward", "cudnn", "bf16", 7, 7, 1.0));
    ck_assert(isnan(kb_report_speedup(r.v, r.n, "softmax_forward", NULL, "eager", "cudnn", &pts)));
    ck_assert_uint_eq(pts, 0);
    kb_results_free(&r);
}
END_TEST

static char *print_lines(const kb_results *in)
{
    kb_results d;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_dedup(in, &d, NULL, &e), KB_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kb_report_print_speedups(f, &d, NULL);
    fclose(f);
    kb_results_free(&d);
    return buf;
}

/* The PyTorch suite's lines, per dtype as report.md counts them, numbers
 * worked out by hand from run.csv and peers.csv: bf16 tuned = geomean(4, 4),
 * fp16 tuned = 2; liger = geomean(1.6, 2) = sqrt(3.2), its skipped shape
 * left out. */
START_TEST(test_speedup_lines)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    read_fix(&r, FIX("peers.csv"));
    char *out = print_lines(&r);
    ck_assert_str_eq(out, "Geomean speedup for benchmark softmax_forward (bf16)\n"
                          "  eager 3 data points\n"
                          "  fused 3 data points, 2.00x speedup\n"
                          "  tuned 2 data points, 4.00x speedup\n"
                          "  torch_compile 2 data points, 4.00x speedup\n"
                          "  liger 2 data points, 1.79x speedup\n"
                          "Geomean speedup for benchmark softmax_forward (fp16)\n"
                          "  eager 1 data points\n"
                          "  tuned 1 data points, 2.00x speedup\n"
                          "Geomean speedup for benchmark rmsnorm_forward (bf16)\n"
                          "  no eager results: speedup not computed\n"
                          "Geomean speedup for benchmark layernorm_backward (bf16)\n"
                          "  eager 1 data points\n"
                          "  tuned 1 data points, 2.00x speedup\n");
    free(out);
    kb_results_free(&r);
}
END_TEST

/* --reference: another series as the denominator, everywhere the same. */
START_TEST(test_reference_series)
{
    kb_results r, d;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    kb_err e = {""};
    ck_assert_int_eq(kb_report_dedup(&r, &d, NULL, &e), KB_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kb_report_print_speedups(f, &d, "fused");
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "Geomean speedup for benchmark softmax_forward (bf16)\n"
                                      "  fused 3 data points\n"
                                      "  eager 3 data points, 0.50x speedup\n"
                                      "  tuned 2 data points, 2.00x speedup\n"));
    ck_assert_ptr_nonnull(strstr(buf, "Geomean speedup for benchmark softmax_forward (fp16)\n"
                                      "  no fused results: speedup not computed\n"));
    free(buf);
    kb_results_free(&d);

    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = KB_REPORT_MD;
    o.reference = "fused";
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(md, "Geomean over shapes of fused latency / backend latency"));
    ck_assert_ptr_nonnull(strstr(md, "| speedup vs fused |"));
    ck_assert_ptr_nonnull(strstr(md, "| softmax_forward | bf16 | tuned | 2 | 2.00x |"));
    free(md);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

START_TEST(test_missing_eager)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("noeager.csv"));
    size_t pts = 99;
    ck_assert(isnan(kb_report_speedup(r.v, r.n, "rmsnorm_backward", NULL, "eager", "tuned", &pts)));
    ck_assert_uint_eq(pts, 0);
    char *out = print_lines(&r);
    ck_assert_str_eq(out, "Geomean speedup for benchmark rmsnorm_backward (bf16)\n"
                          "  no eager results: speedup not computed\n");
    free(out);

    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = KB_REPORT_MD | KB_REPORT_CSV;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "No eager results for rmsnorm_backward bf16: speedups not computed."));
    ck_assert_ptr_nonnull(strstr(md, "| rmsnorm_backward | bf16 | tuned | 1 | \xe2\x80\x94 |"));
    free(md);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    char *csv = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(csv);
    /* No speedup: empty field, 0 speedup points. gbps from the byte model:
     * 3*32768*1024*2 + 8*1024 bytes in 0.05 ms. */
    ck_assert_ptr_nonnull(strstr(csv, "rmsnorm_backward,tuned,bf16,1,0,,4026.7,,32768x1024,4026.7,\n"));
    free(csv);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* Kernel counts and the split of kernel time; FUSION_CHANGED is a regression. */
START_TEST(test_kernels_section)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("kernels.csv"));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = KB_REPORT_MD;
    size_t nreg = 0;
    o.regressions = &nreg;
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(nreg, 1); /* FUSION_CHANGED makes kbench-report exit 4 */
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "## Kernels per call"));
    /* a<float> twice per call: 20 + 40 of 150 us over the two shapes */
    ck_assert_msg(strstr(md, "| rmsnorm_backward | bf16 | eager | 2 | 3 | b 60% \xc2\xb7" " "
                             "a&lt;float&gt; 40% |"), "%s", md);
    ck_assert_msg(strstr(md, "| rmsnorm_backward | bf16 | fused | 2 | 2\xe2\x80\x93" "3 (1 "
                             "FUSION_CHANGED) | bwd&lt;float&gt; 82% \xc2\xb7" " dw_reduce 16% "
                             "\xc2\xb7" " split_noop_kernel 1% |"), "%s", md);
    ck_assert_msg(strstr(md, "| softmax_forward | bf16 | tuned | 1 | 1 | \xe2\x80\x94 |"), "%s", md);
    /* eager softmax has no kernel columns: no row */
    const char *ks = strstr(md, "## Kernels per call"), *ke = strstr(ks, "## Regressions");
    const char *eg = strstr(ks, "| softmax_forward | bf16 | eager |");
    ck_assert(ke && (!eg || eg > ke));
    ck_assert_msg(strstr(md, "- **Regressions: 1** of 6 cases compared: 0 slower than the "
                             "baseline, 1 launching a different number of kernels"), "%s", md);
    ck_assert_msg(strstr(md, "| rmsnorm_backward.fused.bf16.32768x1024 | 3 | bwd&lt;float&gt;; "
                             "dw_reduce; split_noop_kernel |"), "%s", md);
    free(md);

    const kb_result *rows[2] = {&r.v[0], &r.v[1]};
    kb_kernel_share sh[1];
    double total = 0;
    /* cap 1: the first name met is kept, the others count in the total */
    ck_assert_uint_eq(kb_report_kernel_split(rows, 2, sh, 1, &total), 1);
    ck_assert_str_eq(sh[0].name, "a<float>");
    ck_assert_double_eq(sh[0].us, 60);
    ck_assert_uint_eq(sh[0].calls, 4);
    ck_assert_double_eq(total, 150);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

START_TEST(test_empty_input)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("empty.csv"));
    ck_assert_uint_eq(r.n, 0);
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "no results to report"));
    snprintf(path, sizeof path, "%s/report.md", dir);
    ck_assert(!kbt_exists(path));
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

START_TEST(test_malformed_csv)
{
    kb_results r;
    kb_results_init(&r);
    kb_err e = {""};
    ck_assert_int_eq(kb_results_read_csv(FIX("malformed.csv"), &r, &e), KB_ERR_PARSE);
    ck_assert_uint_eq(r.n, 0); /* all rows or none */
    /* The message names the file and the bad line (4: a field short). */
    const char *p = strstr(e.msg, "malformed.csv");
    ck_assert_msg(p != NULL, "%s", e.msg);
    ck_assert_msg(strstr(p, ":4:") != NULL || strstr(p, "line 4") != NULL, "%s", e.msg);
    kb_results_free(&r);
}
END_TEST

/* ---- regressions -------------------------------------------------------- */

START_TEST(test_judge)
{
    double c;
    ck_assert_str_eq(kb_report_judge(80, 0, 100, 0, 0.10, &c), "SLOWER");
    ck_assert_double_eq_tol(c, -0.2, 1e-12);
    ck_assert_str_eq(kb_report_judge(95, 0, 100, 0, 0.10, &c), "SAME");
    ck_assert_str_eq(kb_report_judge(120, 0, 100, 0, 0.10, &c), "FASTER");
    /* Noise widens the band: -15 % is inside 10 % + 2*sqrt(0.03^2+0.04^2). */
    ck_assert_str_eq(kb_report_judge(85, 0.03, 100, 0.04, 0.10, &c), "SAME");
    ck_assert_str_eq(kb_report_judge(85, 0.0, 100, 0.0, 0.10, &c), "SLOWER");
    /* A tighter tolerance catches a smaller change. */
    ck_assert_str_eq(kb_report_judge(95, 0, 100, 0, 0.02, &c), "SLOWER");
    /* Run noise above 5 % cannot be judged. */
    ck_assert_str_eq(kb_report_judge(50, 0.08, 100, 0, 0.10, &c), "NOISY");
    ck_assert_str_eq(kb_report_judge(50, 0, NAN, 0, 0.10, &c), "NO_BASELINE");
    ck_assert(isnan(c));
    ck_assert_ptr_null(kb_report_judge(NAN, 0, 100, 0, 0.10, &c));
    /* A row: the fastest-sample condition as the gate applies it. Median 13 %
     * slow, fastest sample at the baseline's speed: NOISY; fastest sample 9 %
     * slow too: SLOWER; min unknown: the median alone. */
    kb_result x;
    memset(&x, 0, sizeof x);
    x.gbps = 100.0 * 3.79 / 4.35;
    x.noise = 0.006;
    x.median_ms = 4.35;
    x.min_ms = 3.84;
    ck_assert_str_eq(kb_report_judge_row(&x, 100, 0.002, 0.05, &c), "NOISY");
    x.min_ms = 4.17;
    ck_assert_str_eq(kb_report_judge_row(&x, 100, 0.002, 0.05, &c), "SLOWER");
    x.min_ms = NAN;
    ck_assert_str_eq(kb_report_judge_row(&x, 100, 0.002, 0.05, &c), "SLOWER");
}
END_TEST

static const kb_report_judged *judged_for(const kb_report_judged *j, size_t n,
                                          const char *backend, int64_t N)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(j[i].row->backend, backend) == 0 && j[i].row->N == N) return &j[i];
    ck_abort_msg("no judged row for %s N=%lld", backend, (long long)N);
    return NULL;
}

START_TEST(test_regressions_from_baseline)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("regress.csv"));
    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_report_model m;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    kb_baseline bl;
    kb_baseline_init(&bl);
    ck_assert_msg(kb_baseline_read(FIX("baseline.csv"), &bl, &e) == KB_OK, "%s", e.msg);
    kb_report_judged *j;
    ck_assert_int_eq(kb_report_judge_all(&m, &bl, &j, &e), KB_OK);
    ck_assert_str_eq(judged_for(j, m.rows.n, "eager", 1024)->verdict, "FASTER");
    ck_assert_str_eq(judged_for(j, m.rows.n, "fused", 1024)->verdict, "SAME");
    const kb_report_judged *t = judged_for(j, m.rows.n, "tuned", 1024);
    ck_assert_str_eq(t->verdict, "SLOWER");
    ck_assert_double_eq_tol(t->change, -0.2, 1e-12);
    ck_assert_double_eq_tol(t->base_gbps, 3000, 1e-9);
    ck_assert_str_eq(judged_for(j, m.rows.n, "cudnn", 1024)->verdict, "NO_BASELINE");
    ck_assert_str_eq(judged_for(j, m.rows.n, "tuned", 2048)->verdict, "NOISY");
    free(j);
    kb_baseline_free(&bl);
    kb_report_model_free(&m);

    /* The same through the report: one regression, listed with its numbers. */
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    o.out_dir = dir;
    o.baseline_path = FIX("baseline.csv");
    o.formats = KB_REPORT_MD;
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "- **Regressions: 1** of 4 cases compared"));
    ck_assert_ptr_nonnull(
        strstr(md, "| softmax_forward.tuned.bf16.32768x1024 | 3000 | 2400 | -20.0% | 1.0% | SLOWER |"));
    ck_assert_ptr_nonnull(
        strstr(md, "| softmax_forward.tuned.bf16.32768x2048 | 2700 | 2700 | +0.0% | 8.0% | NOISY |"));
    ck_assert_ptr_nonnull(strstr(md, "4 compared: 1 slower, 1 faster, 1 same, 1 noisy; 1 without a baseline."));
    free(md);

    /* A missing baseline file is an empty baseline (a GPU without one yet),
     * and the report says so. */
    o.baseline_path = FIX("no_such_baseline.csv");
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(md, "Baseline `no_such_baseline.csv` not found"));
    ck_assert_ptr_nonnull(strstr(md, "- **Regressions:** not checked"));
    free(md);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* A row the run could not judge (NO_BASELINE: its baseline had no row) is
 * judged against the baseline given to the report; a slower one counts as a
 * regression (kbench-report exits 4 on it). A row without any baseline row
 * stays NO_BASELINE and is no regression. */
START_TEST(test_no_baseline_rows_are_judged)
{
    kb_results r;
    kb_results_init(&r);
    kb_result slow = mk("softmax_forward", "tuned", "bf16", 32768, 1024, 0.1);
    slow.gbps = 2400;
    slow.noise = 0.005;
    snprintf(slow.verdict, sizeof slow.verdict, "NO_BASELINE");
    kb_result same = mk("softmax_forward", "eager", "bf16", 32768, 1024, 0.1);
    same.gbps = 3000;
    same.noise = 0.005;
    snprintf(same.verdict, sizeof same.verdict, "NO_BASELINE");
    kb_result lone = mk("softmax_forward", "fused", "bf16", 32768, 1024, 0.1);
    lone.gbps = 1000;
    lone.noise = 0.005;
    snprintf(lone.verdict, sizeof lone.verdict, "NO_BASELINE");
    push(&r, slow);
    push(&r, same);
    push(&r, lone);
    kb_baseline bl;
    kb_baseline_init(&bl);
    kb_err e = {""};
    kb_baseline_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.benchmark, sizeof row.benchmark, "softmax_forward");
    snprintf(row.dtype, sizeof row.dtype, "bf16");
    row.M = 32768;
    row.N = 1024;
    row.gbps = 3000;
    row.noise = 0.005;
    row.median_ms = 0.08;
    snprintf(row.backend, sizeof row.backend, "tuned");
    ck_assert_int_eq(kb_baseline_upsert(&bl, &row, &e), KB_OK);
    snprintf(row.backend, sizeof row.backend, "eager");
    ck_assert_int_eq(kb_baseline_upsert(&bl, &row, &e), KB_OK);

    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_report_model m;
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    kb_report_judged *j;
    ck_assert_int_eq(kb_report_judge_all(&m, &bl, &j, &e), KB_OK);
    ck_assert_str_eq(judged_for(j, m.rows.n, "tuned", 1024)->verdict, "SLOWER");
    ck_assert_str_eq(judged_for(j, m.rows.n, "eager", 1024)->verdict, "SAME");
    ck_assert_str_eq(judged_for(j, m.rows.n, "fused", 1024)->verdict, "NO_BASELINE");
    free(j);
    kb_report_model_free(&m);

    /* Through kb_report_generate: the regression is counted. */
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/b.csv", dir);
    ck_assert_int_eq(kb_baseline_write(path, &bl, &e), KB_OK);
    size_t nreg = 99;
    o.out_dir = dir;
    o.baseline_path = path;
    o.formats = KB_REPORT_MD;
    o.regressions = &nreg;
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    ck_assert_int_eq(nreg, 1);
    /* A library's known deviation failing accuracy is no regression; any
     * other accuracy failure is. */
    kb_result dev = mk("layernorm_forward", "cudnn", "bf16", 4096, 1000, NAN);
    dev.accuracy = KB_ACC_FAIL;
    snprintf(dev.config, sizeof dev.config, "inputs=constant cuDNN");
    push(&r, dev);
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    ck_assert_int_eq(nreg, 1);
    kb_result bad = mk("layernorm_forward", "cudnn", "bf16", 4096, 1000, NAN);
    bad.accuracy = KB_ACC_FAIL;
    snprintf(bad.config, sizeof bad.config, "inputs=small cuDNN");
    push(&r, bad);
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    ck_assert_int_eq(nreg, 2);
    /* Without a baseline nothing can be judged: no regression is claimed. */
    o.baseline_path = NULL;
    ck_assert_int_eq(kb_report_generate(&r, &o, &e), KB_OK);
    ck_assert_int_eq(nreg, 1); /* the small-kind accuracy failure only */
    kbt_rm_rf(dir);
    kb_baseline_free(&bl);
    kb_results_free(&r);
}
END_TEST

/* The run's verdict column is what its gate decided; a baseline file given
 * to the report does not overrule it. */
START_TEST(test_verdict_column_wins)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_report_model m;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    kb_baseline bl;
    kb_baseline_init(&bl);
    ck_assert_msg(kb_baseline_read(FIX("baseline.csv"), &bl, &e) == KB_OK, "%s", e.msg);
    kb_report_judged *j;
    ck_assert_int_eq(kb_report_judge_all(&m, &bl, &j, &e), KB_OK);
    for (size_t i = 0; i < m.rows.n; i++) {
        const kb_result *x = j[i].row;
        if (strcmp(x->benchmark, "softmax_forward") == 0 && strcmp(x->backend, "tuned") == 0 &&
            strcmp(x->dtype, "bf16") == 0 && x->N == 1024) {
            ck_assert_str_eq(j[i].verdict, "SAME");          /* column, not the file's FASTER */
            ck_assert_double_eq_tol(j[i].base_gbps, 4150, 1e-9); /* the run's own figure */
        }
        if (strcmp(x->benchmark, "layernorm_backward") == 0 && strcmp(x->backend, "tuned") == 0)
            ck_assert_str_eq(j[i].verdict, "SLOWER");
        if (x->accuracy == KB_ACC_SKIP) ck_assert_ptr_null(j[i].verdict);
    }
    free(j);
    kb_baseline_free(&bl);
    kb_report_model_free(&m);
    kb_results_free(&r);
}
END_TEST

/* A recorded verdict's reason (the results CSV's message) is the regression
 * table's "why", without the verdict it repeats: a NOISY case tells why its
 * speed was not judged. */
START_TEST(test_regression_says_why)
{
    char dir[4096], csv[4200], path[4200];
    kbt_tmpdir(dir);
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    FILE *f = fopen(csv, "w");
    ck_assert_ptr_nonnull(f);
    fputs("benchmark,backend,dtype,M,N,median_ms,gbps,noise,baseline_gbps,verdict,message\n"
          "mlp_forward,tuned,bf16,8192,4096,3.5,113,0.018,128,NOISY,\"NOISY: 113.0 GB/s vs "
          "baseline 128.0 GB/s (-11.9%, band +-10.6%): SLOWER at face value, inside the band only "
          "at equal SM clocks (1768 MHz now, 1980 MHz in the baseline)\"\n"
          "softmax_forward,tuned,bf16,32768,1024,0.05,2400,0.01,3000,SLOWER,\n",
          f);
    ck_assert_int_eq(fclose(f), 0);
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, csv);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = KB_REPORT_MD;
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "| verdict | why |"));
    ck_assert_ptr_nonnull(strstr(md, "| NOISY | 113.0 GB/s vs baseline 128.0 GB/s (-11.9%, band "
                                     "+-10.6%): SLOWER at face value, inside the band only at "
                                     "equal SM clocks (1768 MHz now, 1980 MHz in the baseline) |"));
    ck_assert_ptr_nonnull(strstr(md, "| SLOWER | \xe2\x80\x94 |")); /* no reason recorded */
    free(md);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* ---- the model ---------------------------------------------------------- */

START_TEST(test_dedup_and_fill)
{
    kb_results r, d;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    size_t n0 = r.n;
    /* A re-run of one case, listed later, replaces it in place. */
    kb_result x = mk("softmax_forward", "fused", "bf16", 32768, 1024, 0.032);
    push(&r, x);
    size_t rep;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_dedup(&r, &d, &rep, &e), KB_OK);
    ck_assert_uint_eq(rep, 1);
    ck_assert_uint_eq(d.n, n0);
    ck_assert_str_eq(d.v[1].backend, "fused");
    ck_assert_double_eq_tol(d.v[1].median_ms, 0.032, 1e-15);
    /* GB/s from the byte model where the CSV left it empty: softmax forward
     * moves 2*M*N*2 bytes; 268435456 B in 0.256 ms. */
    ck_assert_double_eq_tol(d.v[3].gbps, 1048.576, 1e-9);
    kb_results_free(&d);
    kb_results_free(&r);

    /* Input-kind rows (config "inputs=<kind>") of one shape stay apart. */
    kb_results_init(&r);
    kb_result k1 = mk("softmax_forward", "eager", "bf16", 4096, 1000, NAN);
    kb_result k2 = k1;
    snprintf(k1.config, sizeof k1.config, "inputs=shifted");
    snprintf(k2.config, sizeof k2.config, "inputs=wide tile=4");
    push(&r, k1);
    push(&r, k2);
    push(&r, k1);
    ck_assert_int_eq(kb_report_dedup(&r, &d, &rep, &e), KB_OK);
    ck_assert_uint_eq(d.n, 2);
    ck_assert_uint_eq(rep, 1);
    char name[160];
    kb_report_case_name(&d.v[1], name, sizeof name);
    ck_assert_str_eq(name, "softmax_forward.eager.bf16.4096x1000.wide");
    /* a 3-D op's case is named with its K, as CTest names it */
    kb_result mlp = d.v[1];
    snprintf(mlp.benchmark, sizeof mlp.benchmark, "mlp_forward");
    mlp.config[0] = '\0';
    mlp.M = 8192, mlp.N = 4096, mlp.K = 11008;
    kb_report_case_name(&mlp, name, sizeof name);
    ck_assert_str_eq(name, "mlp_forward.eager.bf16.8192x4096x11008");
    kb_results_free(&d);
    kb_results_free(&r);

    /* % of SOL: the row's own, else the run's SOL for peers' rows. */
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    read_fix(&r, FIX("peers.csv"));
    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_report_model m;
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    ck_assert_double_eq_tol(m.sol_gbps, 4000, 1e-9);
    ck_assert_str_eq(m.gpu, "NVIDIA H200");
    const kb_result *tc = kb_report_find(&m, "softmax_forward", "torch_compile", "bf16", 32768, 1024, 0);
    ck_assert_ptr_nonnull(tc);
    ck_assert_double_eq_tol(tc->sol_pct, 100 * 2097.152 / 4000, 1e-9);
    kb_report_cell c;
    kb_report_cell_get(&m, "softmax_forward", "bf16", "fused", &c);
    ck_assert_uint_eq(c.points, 3);
    ck_assert_uint_eq(c.speedup_points, 3);
    ck_assert_double_eq_tol(c.speedup, 2.0, 1e-12);
    ck_assert_double_eq_tol(c.gbps, cbrt(2097.152 * 2097.152 * 2147.483648), 1e-6);
    ck_assert_int_eq(c.worst.N, 1024);
    kb_report_cell_get(&m, "softmax_forward", "bf16", "tuned", &c);
    ck_assert_uint_eq(c.points, 2);
    ck_assert_uint_eq(c.skips, 1);
    kb_report_cell_get(&m, "rmsnorm_forward", "bf16", "tuned", &c);
    ck_assert_uint_eq(c.fails, 1);
    kb_report_model_free(&m);

    /* An explicit SOL overrides every row's. */
    o.sol_gbps = 5000;
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    tc = kb_report_find(&m, "softmax_forward", "eager", "bf16", 32768, 1024, 0);
    ck_assert_double_eq_tol(tc->sol_pct, 100 * 1048.576 / 5000, 1e-9);
    kb_report_model_free(&m);
    kb_results_free(&r);
}
END_TEST

/* % mix SOL: a kbench row keeps its own; a peer's row gets the SOL of its
 * byte mix from the run's streams (medians of the rows'); without the
 * one-way streams only a 1:1 mix has one. */
START_TEST(test_mix_sol)
{
    kb_results r;
    kb_results_init(&r);
    /* softmax_backward 32768x4096 bf16: reads 2 x 256 MiB, writes 256 MiB. */
    const double moved = 3.0 * 32768 * 4096 * 2;
    kb_result k = mk("softmax_backward", "tuned", "bf16", 32768, 4096, moved / 4000e9 * 1e3);
    k.sol_gbps = 4000;
    k.sol_read_gbps = 4800;
    k.sol_write_gbps = 4400;
    k.mix_sol_gbps = 4400; /* as kbench wrote it: kept */
    push(&r, k);
    push(&r, mk("softmax_backward", "torch_compile", "bf16", 32768, 4096, moved / 4400e9 * 1e3));
    push(&r, mk("softmax_forward", "liger", "bf16", 32768, 4096, 0.1));
    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_report_model m;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    ck_assert_double_eq_tol(m.read_gbps, 4800, 1e-9);
    ck_assert_double_eq_tol(m.write_gbps, 4400, 1e-9);
    const kb_result *x = kb_report_find(&m, "softmax_backward", "tuned", "bf16", 32768, 4096, 0);
    ck_assert_double_eq_tol(x->sol_pct, 100, 1e-6);
    ck_assert_double_eq_tol(x->mix_sol_pct, 100 * 4000.0 / 4400, 1e-6);
    x = kb_report_find(&m, "softmax_backward", "torch_compile", "bf16", 32768, 4096, 0);
    const double mix = 3.0 / (2.0 / 4000 + 1.0 / 4800);
    ck_assert_double_eq_tol(x->sol_pct, 110, 1e-6);
    ck_assert_double_eq_tol(x->mix_sol_pct, 100 * 4400 / mix, 1e-6);
    ck_assert(x->mix_sol_pct < x->sol_pct); /* above copy SOL, below its own */
    x = kb_report_find(&m, "softmax_forward", "liger", "bf16", 32768, 4096, 0);
    ck_assert_double_eq_tol(x->mix_sol_pct, x->sol_pct, 1e-9); /* 1:1 is the copy */
    kb_report_cell c;
    kb_report_cell_get(&m, "softmax_backward", "bf16", "torch_compile", &c);
    ck_assert_double_eq_tol(c.mix_sol_pct, 100 * 4400 / mix, 1e-6);
    kb_report_model_free(&m);

    /* No one-way streams in the input: a 2:1 mix has no SOL, not the copy's. */
    r.v[0].sol_read_gbps = r.v[0].sol_write_gbps = NAN;
    ck_assert_int_eq(kb_report_model_build(&m, &r, &o, &e), KB_OK);
    x = kb_report_find(&m, "softmax_backward", "torch_compile", "bf16", 32768, 4096, 0);
    ck_assert(isnan(x->mix_sol_pct));
    kb_report_model_free(&m);
    kb_results_free(&r);
}
END_TEST

/* ---- golden output ------------------------------------------------------ */

static void check_golden(const char *got_path, const char *golden_path)
{
    size_t ng;
    char *got = kbt_read(got_path, &ng);
    ck_assert_ptr_nonnull(got);
    const char *upd = getenv("KB_UPDATE_GOLDEN");
    if (upd && *upd == '1') {
        FILE *f = fopen(golden_path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(got, 1, ng, f), ng);
        fclose(f);
    }
    size_t nw;
    char *want = kbt_read(golden_path, &nw);
    ck_assert_msg(want != NULL, "missing golden file %s", golden_path);
    if (ng != nw || memcmp(got, want, ng) != 0) {
        size_t i = 0;
        while (i < ng && i < nw && got[i] == want[i]) i++;
        ck_abort_msg("%s differs from %s at byte %zu: got \"%.60s\" want \"%.60s\"", got_path,
                     golden_path, i, got + i, want + i);
    }
    free(got);
    free(want);
}

START_TEST(test_golden_markdown)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    read_fix(&r, FIX("peers.csv"));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = KB_REPORT_MD | KB_REPORT_CSV; /* plots would depend on gnuplot */
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    snprintf(path, sizeof path, "%s/report.md", dir);
    check_golden(path, FIX("golden_report.md"));
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    check_golden(path, FIX("golden_summary.csv"));
    /* The same input twice gives the same bytes (no clock, no addresses). */
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    snprintf(path, sizeof path, "%s/report.md", dir);
    check_golden(path, FIX("golden_report.md"));
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* ---- plots -------------------------------------------------------------- */

START_TEST(test_no_gnuplot)
{
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.gnuplot = "/nonexistent/gnuplot";
    FILE *devnull = fopen("/dev/null", "w");
    o.out = devnull;
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    fclose(devnull);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "- **Plots:** not drawn: gnuplot not found"));
    ck_assert_ptr_null(strstr(md, ".png)")); /* no links to images that are not there */
    free(md);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    ck_assert(kbt_exists(path));
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.gp", dir);
    ck_assert(kbt_exists(path));
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.dat", dir);
    char *dat = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(dat);
    /* One row per shape (N, shape, highest GB/s), one column per series,
     * NaN for tuned's skip. */
    ck_assert_ptr_nonnull(strstr(dat, "\n262144 8192x262144 2147.5 1073.7 2147.5 NaN\n"));
    free(dat);
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.png", dir);
    ck_assert(!kbt_exists(path));
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* kb_report_generate into dir with the speedup lines discarded. */
static void gen_quiet(const kb_results *r, const char *dir, unsigned formats, const char *gnuplot,
                      const char *image_base)
{
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = formats;
    o.gnuplot = gnuplot;
    o.image_base = image_base;
    FILE *devnull = fopen("/dev/null", "w");
    o.out = devnull;
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(r, &o, &e) == KB_OK, "%s", e.msg);
    fclose(devnull);
}

/* Lines only through a fixed-M sweep, by N on a log2 axis; the odd list's
 * 32768x4095 (same M), other M and a lone shape are labelled points. */
START_TEST(test_plot_sweeps_and_points)
{
    kb_results r;
    kb_results_init(&r);
    static const int64_t n_sweep[] = {4096, 1024, 2048}; /* out of order on purpose */
    for (size_t i = 0; i < 3; i++) {
        push(&r, mk("softmax_forward", "eager", "bf16", 32768, n_sweep[i], 1.0));
        push(&r, mk("softmax_forward", "tuned", "bf16", 32768, n_sweep[i], 0.5));
    }
    push(&r, mk("softmax_forward", "eager", "bf16", 32768, 4095, 1.0));
    push(&r, mk("softmax_forward", "tuned", "bf16", 4096, 50257, 0.5));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    gen_quiet(&r, dir, KB_REPORT_PLOTS, "/nonexistent/gnuplot", NULL);
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.dat", dir);
    char *dat = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(dat);
    const char *sweep = strstr(dat, "\n1024 32768x1024 ");
    ck_assert_ptr_nonnull(sweep);
    ck_assert_ptr_nonnull(strstr(sweep, "\n2048 32768x2048 "));
    const char *points = strstr(dat, "\n\n\n"); /* block 1 after two blank lines */
    ck_assert_ptr_nonnull(points);
    ck_assert(strstr(sweep, "\n4096 32768x4096 ") < points);
    ck_assert_ptr_nonnull(strstr(points, "\n4095 32768x4095 "));
    ck_assert_ptr_nonnull(strstr(points, "\n50257 4096x50257 "));
    free(dat);
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.gp", dir);
    char *gp = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(gp, "set logscale x 2\n"));
    ck_assert_ptr_nonnull(strstr(gp, "index 0 using 1:4 with linespoints"));
    ck_assert_ptr_nonnull(strstr(gp, "index 1 using 1:4 with points"));
    ck_assert_ptr_nonnull(strstr(gp, "index 1 using 1:3:2 with labels"));
    ck_assert_ptr_nonnull(strstr(gp, "'1K' 1024"));
    free(gp);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* Long tables fold; plot links go under --image-base when given. */
START_TEST(test_fold_and_image_base)
{
    kb_results r;
    kb_results_init(&r);
    push(&r, mk("softmax_forward", "eager", "bf16", 4, 1024, 1.0));
    for (int i = 0; i < 21; i++) push(&r, mk("softmax_forward", "fused", "bf16", 4, 2048 + i, NAN));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    /* gnuplot runs and fails: links are written, images are not */
    gen_quiet(&r, dir, KB_REPORT_MD | KB_REPORT_PLOTS, "/bin/false",
              "https://ci.example/run/7/report");
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(md, "<details><summary>skipped or untimed cases (21 rows)</summary>"));
    ck_assert_ptr_nonnull(strstr(md, "](https://ci.example/run/7/report/plots/softmax_forward_bf16.png)"));
    ck_assert_ptr_null(strstr(md, "](plots/"));
    /* short tables stay open */
    ck_assert_ptr_null(strstr(md, "<details><summary>per backend"));
    free(md);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* report.html from report.md: tables with alignment, folds, headings with
 * GitHub's anchors, text escaped, the plot's SVG inlined (no asset). */
START_TEST(test_html_self_contained)
{
    char dir[4096], path[4200], md[4200], html[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/plots", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/plots/a_bf16.svg", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"10\"><g/></svg>\n", f);
    fclose(f);
    snprintf(md, sizeof md, "%s/report.md", dir);
    f = fopen(md, "w");
    ck_assert_ptr_nonnull(f);
    fputs("# kbench report: GPU <1>\n\n- **Accuracy:** ok ([details](#accuracy-failures))\n\n"
          "![a bf16](plots/a_bf16.png)\n\n<details><summary>t</summary>\n\n"
          "| case | n |\n|---|--:|\n| x\\|y | 3 |\n\n</details>\n\n## Accuracy failures\n\n"
          "None with `code` & more.\n",
          f);
    fclose(f);
    snprintf(html, sizeof html, "%s/report.html", dir);
    kb_err e = {""};
    ck_assert_msg(kb_report_write_html(md, html, dir, "t", &e) == KB_OK, "%s", e.msg);
    char *h = kbt_read(html, NULL);
    ck_assert_ptr_nonnull(strstr(h, "<h1 id=\"kbench-report-gpu-1\">kbench report: GPU &lt;1&gt;</h1>"));
    ck_assert_ptr_nonnull(strstr(h, "<li><strong>Accuracy:</strong> ok (<a href=\"#accuracy-failures\">details</a>)</li>"));
    ck_assert_ptr_nonnull(strstr(h, "<figure><svg width=\"10\"><g/></svg>"));
    ck_assert_ptr_null(strstr(h, "<?xml"));
    ck_assert_ptr_null(strstr(h, "<img"));
    ck_assert_ptr_nonnull(strstr(h, "<details><summary>t</summary>\n<table><thead><tr><th>case</th><th>n</th>"));
    ck_assert_ptr_nonnull(strstr(h, "<tr><td style=\"text-align:left\">x|y</td><td style=\"text-align:right\">3</td></tr>"));
    ck_assert_ptr_nonnull(strstr(h, "</tbody></table>\n</details>"));
    ck_assert_ptr_nonnull(strstr(h, "<h2 id=\"accuracy-failures\">"));
    ck_assert_ptr_nonnull(strstr(h, "<p>None with <code>code</code> &amp; more.</p>"));
    free(h);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(test_plots_drawn)
{
    if (access("/usr/bin/gnuplot", X_OK) != 0) {
        fprintf(stderr, "test_plots_drawn: /usr/bin/gnuplot missing, not checked\n");
        return;
    }
    kb_results r;
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    read_fix(&r, FIX("peers.csv"));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.gnuplot = "/usr/bin/gnuplot";
    o.formats = KB_REPORT_MD | KB_REPORT_PLOTS;
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.png", dir);
    size_t n;
    char *png = kbt_read(path, &n);
    ck_assert_ptr_nonnull(png);
    ck_assert_uint_gt(n, 1000);
    ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
    free(png);
    snprintf(path, sizeof path, "%s/plots/softmax_forward_fp16.svg", dir);
    char *svg = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(svg);
    ck_assert_ptr_nonnull(strstr(svg, "<svg"));
    ck_assert_ptr_nonnull(strstr(svg, "softmax_forward fp16 on NVIDIA H200"));
    free(svg);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(md, "![softmax_forward bf16: GB/s by shape](plots/softmax_forward_bf16.png)"));
    ck_assert_ptr_null(strstr(md, "**Plots:**")); /* nothing to warn about */
    free(md);

    /* A gnuplot that fails is reported, not fatal. */
    o.gnuplot = "/bin/false";
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(strstr(md, "- **Plots:** gnuplot failed on 4 of 4 plots"));
    free(md);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* kb_report_generate into dir (report.md only) with the speedup lines
 * discarded; returns its status, *oc what it verified. */
static kb_status gen_md(const kb_results *r, const char *dir, const char *baseline,
                        kb_report_outcome *oc, kb_err *e)
{
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    o.formats = KB_REPORT_MD;
    o.baseline_path = baseline;
    o.outcome = oc;
    return kb_report_generate(r, &o, e);
}

/* gen_md, which must succeed, and the report.md it wrote (caller frees). */
static char *md_of(const kb_results *r, const char *dir, const char *baseline,
                   kb_report_outcome *oc)
{
    kb_err e = {""};
    ck_assert_msg(gen_md(r, dir, baseline, oc, &e) == KB_OK, "%s", e.msg);
    char path[4200];
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(md);
    return md;
}

/* regress.csv's rows as another GPU's (gpu column), no verdicts. */
static void read_regress_as(kb_results *r, const char *gpu)
{
    kb_results_init(r);
    read_fix(r, FIX("regress.csv"));
    for (size_t i = 0; i < r->n; i++) snprintf(r->v[i].gpu, sizeof r->v[i].gpu, "%s", gpu);
}

/* A baseline is one GPU's. Rows of an A100 judged against
 * baselines/NVIDIA_H200.csv passed as "no regression"; now refused, naming
 * both GPUs and the file. The H200's own rows pass; a baseline whose name is
 * not a GPU's cannot be checked and says so; rows with recorded verdicts are
 * not judged by the file and are not refused. */
START_TEST(test_baseline_of_another_gpu)
{
    char dir[4096], h200[4200], plain[4200], md_path[4200];
    kbt_tmpdir(dir);
    snprintf(h200, sizeof h200, "%s/NVIDIA_H200.csv", dir);
    snprintf(plain, sizeof plain, "%s/old.csv", dir);
    snprintf(md_path, sizeof md_path, "%s/report.md", dir);
    char *text = kbt_read(FIX("baseline.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    kbt_write(h200, text);
    kbt_write(plain, text);
    free(text);
    kb_results r;
    kb_report_outcome oc;
    kb_err e = {""};

    read_regress_as(&r, "NVIDIA A100-SXM4-80GB");
    ck_assert_int_eq(gen_md(&r, dir, h200, &oc, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, h200) && strstr(e.msg, "is for GPU NVIDIA_H200") &&
                      strstr(e.msg, "measured on NVIDIA A100-SXM4-80GB"),
                  "%s", e.msg);
    ck_assert(!kbt_exists(md_path)); /* refused: nothing written */

    /* The same rows with their own verdicts: the file judges none of them. */
    for (size_t i = 0; i < r.n; i++) snprintf(r.v[i].verdict, sizeof r.v[i].verdict, "SAME");
    free(md_of(&r, dir, h200, &oc));
    kb_results_free(&r);

    /* The H200's rows against the H200's file: judged, no warning. */
    read_regress_as(&r, "NVIDIA H200");
    char *md = md_of(&r, dir, h200, &oc);
    ck_assert_ptr_null(strstr(md, "**Warning:**"));
    free(md);

    /* A copy kept under the GPU's name and a suffix is that GPU's; one
     * named for another GPU whose name only begins the same is not. */
    char copy[4200], nvl[4200];
    snprintf(copy, sizeof copy, "%s/NVIDIA_H200-old.csv", dir);
    snprintf(nvl, sizeof nvl, "%s/NVIDIA_H200_NVL.csv", dir);
    text = kbt_read(FIX("baseline.csv"), NULL);
    kbt_write(copy, text);
    kbt_write(nvl, text);
    free(text);
    md = md_of(&r, dir, copy, &oc);
    ck_assert_ptr_null(strstr(md, "**Warning:**"));
    free(md);
    ck_assert_int_eq(gen_md(&r, dir, nvl, &oc, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "is for GPU NVIDIA_H200_NVL"), "%s", e.msg);

    /* A file named otherwise: judged, with the warning in the report. */
    md = md_of(&r, dir, plain, &oc);
    ck_assert_msg(strstr(md, "**Warning:** the GPU of baseline old.csv is unknown") &&
                      strstr(md, "4 row(s) measured on NVIDIA H200 are judged against it"),
                  "%s", md);
    free(md);

    /* Judged rows without a gpu column cannot be checked either. */
    for (size_t i = 0; i < r.n; i++) r.v[i].gpu[0] = '\0';
    md = md_of(&r, dir, h200, &oc);
    ck_assert_msg(strstr(md, "**Warning:** 4 row(s) judged against baseline NVIDIA_H200.csv name "
                             "no GPU"),
                  "%s", md);
    free(md);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* The report judges rows without kbench's launch-jitter floor (results
 * files do not record it); report.md says so in one line, and only when it
 * judged against a baseline file. */
START_TEST(test_floor_not_applied_says_so)
{
    char dir[4096];
    kbt_tmpdir(dir);
    kb_results r;
    read_regress_as(&r, "NVIDIA H200");
    kb_report_outcome oc;
    char *md = md_of(&r, dir, FIX("baseline.csv"), &oc);
    ck_assert_ptr_nonnull(strstr(md, "kbench's launch-jitter time floor is not applied here "
                                     "(results files do not record it)"));
    free(md);
    md = md_of(&r, dir, NULL, &oc);
    ck_assert_ptr_null(strstr(md, "time floor"));
    free(md);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* Nothing passes vacuously: every row SKIP (nothing checked), or a
 * --baseline that matches no kbench row, used to exit 0 with "Accuracy: no
 * failures" / "not checked (no baseline ...)" though one was given. Now the
 * exit status is 1, the report is still written and says why, and names the
 * baseline. A gate-like input (verdicts, accuracy-only input-kind rows, a
 * skip) is unaffected. */
START_TEST(test_nothing_verified_is_an_error)
{
    char dir[4096], why[512];
    kbt_tmpdir(dir);
    kb_results r;
    kb_results_init(&r);
    push(&r, mk("softmax_forward", "eager", "bf16", 32768, 1024, NAN));
    push(&r, mk("softmax_forward", "tuned", "bf16", 32768, 1024, NAN));
    kb_report_outcome oc;
    char *md = md_of(&r, dir, NULL, &oc);
    ck_assert_uint_eq(oc.checked, 0);
    ck_assert_int_eq(kb_report_exit_status(&oc, NULL, why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, "nothing was verified"));
    ck_assert_ptr_nonnull(strstr(md, "- **Nothing verified:**"));
    ck_assert_ptr_nonnull(strstr(md, "- **Accuracy:** not checked (no row has PASS or FAIL)"));
    ck_assert_ptr_null(strstr(md, "no failures"));
    free(md);
    kb_results_free(&r);

    /* A baseline no kbench row matches (peers' rows aside): 1, and the
     * overview names it. */
    kb_results_init(&r);
    kb_result x = mk("rmsnorm_forward", "eager", "bf16", 32768, 1024, 0.1);
    x.gbps = 1000;
    push(&r, x);
    kb_result peer = mk("softmax_forward", "eager", "bf16", 32768, 1024, 0.1);
    snprintf(peer.backend, sizeof peer.backend, "torch_eager");
    push(&r, peer);
    md = md_of(&r, dir, FIX("baseline.csv"), &oc);
    ck_assert(oc.baseline_given);
    ck_assert_uint_eq(oc.baseline_matched, 0);
    ck_assert_uint_gt(oc.checked, 0); /* accuracy PASS: checked, still an error */
    ck_assert_int_eq(kb_report_exit_status(&oc, FIX("baseline.csv"), why, sizeof why), 1);
    ck_assert_msg(strstr(why, "baseline.csv has no row for any kbench case"), "%s", why);
    ck_assert_msg(strstr(md, "- **Regressions:** not checked: `baseline.csv` has no row for any "
                             "kbench case in the results"),
                  "%s", md);
    free(md);
    /* Matched: the overview names the baseline it compared with. */
    push(&r, mk("softmax_forward", "eager", "bf16", 32768, 1024, 0.1));
    r.v[r.n - 1].gbps = 1000;
    md = md_of(&r, dir, FIX("baseline.csv"), &oc);
    ck_assert_uint_eq(oc.baseline_matched, 1);
    ck_assert_int_eq(kb_report_exit_status(&oc, FIX("baseline.csv"), why, sizeof why), 0);
    ck_assert_str_eq(why, "");
    ck_assert_msg(strstr(md, "- **Regressions: none** (1 cases compared with the baseline "
                             "`baseline.csv`)."),
                  "%s", md);
    free(md);
    kb_results_free(&r);

    /* ci/gate's input: verdicts, a skip, an input-kind row checked for
     * accuracy only; no --baseline. 4 for its SLOWER row, as before. */
    kb_results_init(&r);
    read_fix(&r, FIX("run.csv"));
    kb_result kind = mk("softmax_forward", "eager", "bf16", 4096, 1000, NAN);
    kind.accuracy = KB_ACC_PASS;
    snprintf(kind.config, sizeof kind.config, "inputs=shifted");
    push(&r, kind);
    free(md_of(&r, dir, NULL, &oc));
    ck_assert_int_eq(kb_report_exit_status(&oc, NULL, why, sizeof why), 4);
    for (size_t i = 0; i < r.n; i++)
        if (strcmp(r.v[i].verdict, "SLOWER") == 0) snprintf(r.v[i].verdict, 16, "SAME");
    for (size_t i = 0; i < r.n; i++)
        if (r.v[i].accuracy == KB_ACC_FAIL) r.v[i].accuracy = KB_ACC_PASS;
    free(md_of(&r, dir, NULL, &oc));
    ck_assert_int_eq(kb_report_exit_status(&oc, NULL, why, sizeof why), 0);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* An input that is one of the report's outputs (kbench-report --out ow
 * ow/summary.csv read it, then replaced it) is refused before anything is
 * read: by device and inode, so another spelling or a link is caught; a
 * plot file under <out>/plots too. Outputs not asked for do not count. */
START_TEST(test_input_is_an_output)
{
    char dir[4096], sum[4200], other[4200], link[4200], spelt[4200], plots[4200], dat[4200];
    kbt_tmpdir(dir);
    snprintf(sum, sizeof sum, "%s/summary.csv", dir);
    snprintf(other, sizeof other, "%s/results.csv", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    snprintf(spelt, sizeof spelt, "%s/./summary.csv", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    snprintf(dat, sizeof dat, "%s/plots/softmax_forward_bf16.dat", dir);
    kbt_write(sum, "benchmark,backend,dtype,M,N,median_ms\n");
    kbt_write(other, "benchmark,backend,dtype,M,N,median_ms\n");
    ck_assert_int_eq(symlink(sum, link), 0);
    ck_assert_int_eq(mkdir(plots, 0777), 0);
    kbt_write(dat, "x\n");
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = dir;
    kb_err e = {""};
    const char *ok[] = {other, NULL, "/nonexistent/x.csv"};
    ck_assert_msg(kb_report_check_inputs(&o, ok, 3, &e) == KB_OK, "%s", e.msg);
    const char *bad[] = {sum, link, spelt};
    for (size_t i = 0; i < 3; i++) {
        const char *in[] = {other, bad[i]};
        ck_assert_int_eq(kb_report_check_inputs(&o, in, 2, &e), KB_ERR_ARG);
        ck_assert_msg(strstr(e.msg, bad[i]) && strstr(e.msg, "is the report's own") &&
                          strstr(e.msg, "summary.csv"),
                      "%s", e.msg);
    }
    const char *in_plots[] = {dat};
    ck_assert_int_eq(kb_report_check_inputs(&o, in_plots, 1, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "plots"), "%s", e.msg);
    /* summary.csv and the plots are not written: no clash. */
    o.formats = KB_REPORT_MD;
    ck_assert_msg(kb_report_check_inputs(&o, bad, 3, &e) == KB_OK, "%s", e.msg);
    ck_assert_msg(kb_report_check_inputs(&o, in_plots, 1, &e) == KB_OK, "%s", e.msg);
    kbt_rm_rf(dir);
}
END_TEST

/* Merged input from two GPUs and two kbench versions: the header names every
 * one (it showed the first row's only). */
START_TEST(test_mixed_gpus_and_versions)
{
    char dir[4096];
    kbt_tmpdir(dir);
    kb_results r;
    kb_results_init(&r);
    kb_result a = mk("softmax_forward", "eager", "bf16", 32768, 1024, 0.1);
    a.accuracy = KB_ACC_PASS;
    snprintf(a.gpu, sizeof a.gpu, "NVIDIA H200");
    snprintf(a.version, sizeof a.version, "0.1.0");
    kb_result b = a;
    b.N = 2048;
    snprintf(b.gpu, sizeof b.gpu, "NVIDIA A100-SXM4-80GB");
    snprintf(b.version, sizeof b.version, "0.2.0");
    kb_result c = b;
    c.N = 4096;
    push(&r, a);
    push(&r, b);
    push(&r, c);
    kb_report_outcome oc;
    char *md = md_of(&r, dir, NULL, &oc);
    ck_assert_msg(strstr(md, "# kbench report: NVIDIA H200, NVIDIA A100-SXM4-80GB\n") &&
                      strstr(md, "- **GPUs:** the input mixes 2: NVIDIA H200 (1 row), NVIDIA "
                                 "A100-SXM4-80GB (2 rows)") &&
                      strstr(md, "- **Input:** kbench 0.1.0, 0.2.0 (mixed)"),
                  "%s", md);
    free(md);
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* Whether s[0..n) is well-formed UTF-8. */
static int valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        const size_t k = kb_utf8_len(s + i);
        if (!k || k > n - i) return 0;
        i += k;
    }
    return 1;
}

/* A field with a byte that is no UTF-8 (0xFF in a GPU name, a peer's
 * message) made report.md and report.html invalid UTF-8; it is written as
 * U+FFFD, the rest unchanged. */
START_TEST(test_report_is_utf8)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_results r;
    kb_results_init(&r);
    kb_result x = mk("softmax_forward", "eager", "bf16", 32768, 1024, NAN);
    snprintf(x.gpu, sizeof x.gpu, "GPU \xff" "A");
    snprintf(x.message, sizeof x.message, "why \xc3 \xe2\x80\x94 ok");
    push(&r, x);
    kb_result p = mk("softmax_forward", "peer\xfe", "bf16", 32768, 1024, 0.1);
    push(&r, p);
    gen_quiet(&r, dir, KB_REPORT_MD, NULL, NULL);
    static const char *const names[] = {"report.md", "report.html"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t n;
        char *t = kbt_read(path, &n);
        ck_assert_ptr_nonnull(t);
        ck_assert_msg(valid_utf8(t, n), "%s is not UTF-8", names[i]);
        ck_assert_ptr_nonnull(strstr(t, "GPU \xef\xbf\xbd" "A"));
        ck_assert_ptr_nonnull(strstr(t, "why \xef\xbf\xbd \xe2\x80\x94 ok"));
        ck_assert_ptr_nonnull(strstr(t, "peer\xef\xbf\xbd"));
        free(t);
    }
    kb_results_free(&r);
    kbt_rm_rf(dir);
}
END_TEST

/* kbench-report --baseline-diff: moved rows named like cases (MxN, and
 * MxNxK where two mlp rows differ only in K). */
START_TEST(test_baseline_diff_names_shapes)
{
    char dir[4096], a[4200], b[4200], out[4200];
    kbt_tmpdir(dir);
    snprintf(a, sizeof a, "%s/old.csv", dir);
    snprintf(b, sizeof b, "%s/new.csv", dir);
    snprintf(out, sizeof out, "%s/diff.txt", dir);
    const char *head = "benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,date,"
                       "version,kernels,kernel_names,K\n";
    char text[1024];
    snprintf(text, sizeof text,
             "%ssoftmax_forward,eager,bf16,1,2,0.5,100,0.01,,,,,,,,\n"
             "mlp_forward,eager,bf16,8192,4096,1,100,0.01,,,,,,,,11008\n"
             "mlp_forward,eager,bf16,8192,4096,1,100,0.01,,,,,,,,14336\n",
             head);
    kbt_write(a, text);
    snprintf(text, sizeof text,
             "%ssoftmax_forward,eager,bf16,1,2,0.5,110,0.01,,,,,,,,\n"
             "mlp_forward,eager,bf16,8192,4096,1,120,0.01,,,,,,,,11008\n"
             "mlp_forward,eager,bf16,8192,4096,1,100,0.01,,,,,,,,14336\n",
             head);
    kbt_write(b, text);
    FILE *f = fopen(out, "w");
    ck_assert_ptr_nonnull(f);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_baseline_diff(f, a, b, &e), KB_OK);
    fclose(f);
    char *txt = kbt_read(out, NULL);
    ck_assert_msg(strstr(txt, "+20.0%  mlp_forward eager bf16 8192x4096x11008\n") != NULL, "%s", txt);
    ck_assert_msg(strstr(txt, "+10.0%  softmax_forward eager bf16 1x2\n") != NULL, "%s", txt);
    ck_assert_msg(strstr(txt, "x14336") == NULL, "%s", txt); /* unchanged: not listed */
    free(txt);
    kbt_rm_rf(dir);
}
END_TEST

/* kbench-report --baseline-diff with a missing file names its own option,
 * not kbench's --baseline/--update-baseline (kbench-report has no
 * --update-baseline). */
START_TEST(test_baseline_diff_missing_file_names_its_option)
{
    char dir[4096], a[4200];
    kbt_tmpdir(dir);
    snprintf(a, sizeof a, "%s/old.csv", dir);
    kbt_write(a, "benchmark,backend,dtype,M,N,median_ms,gbps,noise\n");
    kb_err e = {{0}};
    ck_assert_int_eq(kb_baseline_diff(stdout, "/nonexistent.csv", a, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "/nonexistent.csv does not exist") && strstr(e.msg, "--baseline-diff") &&
                      !strstr(e.msg, "--update-baseline"),
                  "%s", e.msg);
    ck_assert_int_eq(kb_baseline_diff(stdout, a, "/nonexistent.csv", &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--baseline-diff") && !strstr(e.msg, "--update-baseline"), "%s",
                  e.msg);
    kbt_rm_rf(dir);
}
END_TEST

Suite *kb_suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *t = tcase_create("maths");
    tcase_add_test(t, test_geomean);
    tcase_add_test(t, test_common_shapes);
    tcase_add_test(t, test_judge);
    suite_add_tcase(s, t);
    t = tcase_create("input");
    tcase_add_test(t, test_speedup_lines);
    tcase_add_test(t, test_missing_eager);
    tcase_add_test(t, test_reference_series);
    tcase_add_test(t, test_empty_input);
    tcase_add_test(t, test_kernels_section);
    tcase_add_test(t, test_malformed_csv);
    tcase_add_test(t, test_input_is_an_output);
    tcase_add_test(t, test_dedup_and_fill);
    suite_add_tcase(s, t);
    t = tcase_create("regressions");
    tcase_add_test(t, test_regressions_from_baseline);
    tcase_add_test(t, test_verdict_column_wins);
    tcase_add_test(t, test_regression_says_why);
    tcase_add_test(t, test_no_baseline_rows_are_judged);
    tcase_add_test(t, test_baseline_of_another_gpu);
    tcase_add_test(t, test_floor_not_applied_says_so);
    tcase_add_test(t, test_nothing_verified_is_an_error);
    suite_add_tcase(s, t);
    t = tcase_create("output");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_mix_sol);
    tcase_add_test(t, test_golden_markdown);
    tcase_add_test(t, test_no_gnuplot);
    tcase_add_test(t, test_plots_drawn);
    tcase_add_test(t, test_plot_sweeps_and_points);
    tcase_add_test(t, test_fold_and_image_base);
    tcase_add_test(t, test_html_self_contained);
    tcase_add_test(t, test_mixed_gpus_and_versions);
    tcase_add_test(t, test_report_is_utf8);
    tcase_add_test(t, test_baseline_diff_names_shapes);
    tcase_add_test(t, test_baseline_diff_missing_file_names_its_option);
    suite_add_tcase(s, t);
    return s;
}
