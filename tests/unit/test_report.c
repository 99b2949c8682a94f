/* kbench-report's model of its input: geomean maths, the only-common-shapes
 * rule, the speedup lines (also against another series), missing eager, the
 * kernels section, empty, malformed and self-overwriting input, and the
 * dedup and filled-in figures (GB/s, % SOL, % mix SOL). Regressions are
 * test_report_regressions.c's, the files written test_report_output.c's.
 * Fixtures: tests/fixtures/report/. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "report_int.h"
#include "report_util.h"
#include "tmpfiles.h"
#include "unit.h"

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

/* The speedup lines kbench-report prints for in's rows (deduplicated as it
 * does), against reference (NULL: eager); caller frees. */
static char *print_lines(const kb_results *in, const char *reference)
{
    kb_results d;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_dedup(in, &d, NULL, &e), KB_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kb_report_print_speedups(f, &d, reference);
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
    read_fixes(&r, FIX("run.csv"), FIX("peers.csv"));
    char *out = print_lines(&r, NULL);
    /* benchmarks in kbench's order (the op folders'), dtypes within */
    ck_assert_str_eq(out, "Geomean speedup for benchmark layernorm_backward (bf16)\n"
                          "  eager 1 data points\n"
                          "  tuned 1 data points, 2.00x speedup\n"
                          "Geomean speedup for benchmark rmsnorm_forward (bf16)\n"
                          "  no eager results: speedup not computed\n"
                          "Geomean speedup for benchmark softmax_forward (bf16)\n"
                          "  eager 3 data points\n"
                          "  fused 3 data points, 2.00x speedup\n"
                          "  tuned 2 data points, 4.00x speedup\n"
                          "  torch_compile 2 data points, 4.00x speedup\n"
                          "  liger 2 data points, 1.79x speedup\n"
                          "Geomean speedup for benchmark softmax_forward (fp16)\n"
                          "  eager 1 data points\n"
                          "  tuned 1 data points, 2.00x speedup\n");
    free(out);
    kb_results_free(&r);
}
END_TEST

/* --reference: another series as the denominator, everywhere the same. */
START_TEST(test_reference_series)
{
    kb_results r;
    read_fixes(&r, FIX("run.csv"), NULL);
    char *buf = print_lines(&r, "fused");
    ck_assert_ptr_nonnull(strstr(buf, "Geomean speedup for benchmark softmax_forward (bf16)\n"
                                      "  fused 3 data points\n"
                                      "  eager 3 data points, 0.50x speedup\n"
                                      "  tuned 2 data points, 2.00x speedup\n"));
    ck_assert_ptr_nonnull(strstr(buf, "Geomean speedup for benchmark softmax_forward (fp16)\n"
                                      "  no fused results: speedup not computed\n"));
    free(buf);

    char dir[4096];
    kbt_tmpdir(dir);
    kb_report_opts o = opts_into(dir, KB_REPORT_MD);
    o.reference = "fused";
    char *md = generate_md(&r, &o);
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
    read_fixes(&r, FIX("noeager.csv"), NULL);
    size_t pts = 99;
    ck_assert(isnan(kb_report_speedup(r.v, r.n, "rmsnorm_backward", NULL, "eager", "tuned", &pts)));
    ck_assert_uint_eq(pts, 0);
    char *out = print_lines(&r, NULL);
    ck_assert_str_eq(out, "Geomean speedup for benchmark rmsnorm_backward (bf16)\n"
                          "  no eager results: speedup not computed\n");
    free(out);

    char dir[4096];
    kbt_tmpdir(dir);
    const kb_report_opts o = opts_into(dir, KB_REPORT_MD | KB_REPORT_CSV);
    char *md = generate_md(&r, &o);
    ck_assert_ptr_nonnull(strstr(md, "No eager results for rmsnorm_backward bf16: speedups not computed."));
    ck_assert_ptr_nonnull(strstr(md, "| rmsnorm_backward | bf16 | tuned | 1 | \xe2\x80\x94 |"));
    free(md);
    char *csv = read_out(dir, "summary.csv");
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
    read_fixes(&r, FIX("kernels.csv"), NULL);
    char dir[4096];
    kbt_tmpdir(dir);
    kb_report_opts o = opts_into(dir, KB_REPORT_MD);
    size_t nreg = 0;
    o.regressions = &nreg;
    char *md = generate_md(&r, &o);
    ck_assert_uint_eq(nreg, 1); /* FUSION_CHANGED makes kbench-report exit 4 */
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
    read_fixes(&r, FIX("empty.csv"), NULL);
    ck_assert_uint_eq(r.n, 0);
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    const kb_report_opts o = opts_into(dir, KB_REPORT_ALL);
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

/* ---- the model ---------------------------------------------------------- */

START_TEST(test_dedup_and_fill)
{
    kb_results r, d;
    read_fixes(&r, FIX("run.csv"), NULL);
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
    read_fixes(&r, FIX("run.csv"), FIX("peers.csv"));
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
    kb_report_opts o = opts_into(dir, KB_REPORT_ALL);
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

Suite *kb_suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *t = tcase_create("maths");
    tcase_add_test(t, test_geomean);
    tcase_add_test(t, test_common_shapes);
    suite_add_tcase(s, t);
    t = tcase_create("input");
    tcase_add_test(t, test_speedup_lines);
    tcase_add_test(t, test_missing_eager);
    tcase_add_test(t, test_reference_series);
    tcase_add_test(t, test_empty_input);
    tcase_add_test(t, test_kernels_section);
    tcase_add_test(t, test_malformed_csv);
    tcase_add_test(t, test_input_is_an_output);
    suite_add_tcase(s, t);
    t = tcase_create("model");
    tcase_add_test(t, test_dedup_and_fill);
    tcase_add_test(t, test_mix_sol);
    suite_add_tcase(s, t);
    return s;
}
