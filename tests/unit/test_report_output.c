/* kbench-report's files: report.md and summary.csv pinned byte for byte by
 * golden files, the plots with and without gnuplot, folds and image links,
 * report.html, the header of a mixed input, and UTF-8 throughout.
 * Fixtures: tests/fixtures/report/. KB_UPDATE_GOLDEN=1 rewrites the golden
 * files from the current output. */
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

/* ---- golden output ------------------------------------------------------ */

/* The report's file dir/name is golden_path byte for byte (after rewriting
 * golden_path from it under KB_UPDATE_GOLDEN=1). */
static void check_golden(const char *dir, const char *name, const char *golden_path)
{
    char got_path[4200];
    snprintf(got_path, sizeof got_path, "%s/%s", dir, name);
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
    read_fixes(&r, FIX("run.csv"), FIX("peers.csv"));
    char dir[4096];
    kbt_tmpdir(dir);
    /* plots would depend on gnuplot */
    const kb_report_opts o = opts_into(dir, KB_REPORT_MD | KB_REPORT_CSV);
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    check_golden(dir, "report.md", FIX("golden_report.md"));
    check_golden(dir, "summary.csv", FIX("golden_summary.csv"));
    /* The same input twice gives the same bytes (no clock, no addresses). */
    ck_assert_msg(kb_report_generate(&r, &o, &e) == KB_OK, "%s", e.msg);
    check_golden(dir, "report.md", FIX("golden_report.md"));
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* ---- plots -------------------------------------------------------------- */

/* kb_report_generate into dir, which must succeed, with the speedup lines
 * discarded. */
static void gen_quiet(const kb_results *r, const char *dir, unsigned formats, const char *gnuplot,
                      const char *image_base)
{
    kb_report_opts o = opts_into(dir, formats);
    o.gnuplot = gnuplot;
    o.image_base = image_base;
    FILE *devnull = fopen("/dev/null", "w");
    o.out = devnull;
    kb_err e = {""};
    ck_assert_msg(kb_report_generate(r, &o, &e) == KB_OK, "%s", e.msg);
    fclose(devnull);
}

START_TEST(test_no_gnuplot)
{
    kb_results r;
    read_fixes(&r, FIX("run.csv"), NULL);
    char dir[4096];
    kbt_tmpdir(dir);
    gen_quiet(&r, dir, KB_REPORT_ALL, "/nonexistent/gnuplot", NULL);
    char *md = read_out(dir, "report.md");
    ck_assert_ptr_nonnull(strstr(md, "- **Plots:** not drawn: gnuplot not found"));
    ck_assert_ptr_null(strstr(md, ".png)")); /* no links to images that are not there */
    free(md);
    ck_assert(out_exists(dir, "summary.csv"));
    ck_assert(out_exists(dir, "plots/softmax_forward_bf16.gp"));
    char *dat = read_out(dir, "plots/softmax_forward_bf16.dat");
    /* One row per shape (N, shape, highest GB/s), one column per series,
     * NaN for tuned's skip. */
    ck_assert_ptr_nonnull(strstr(dat, "\n262144 8192x262144 2147.5 1073.7 2147.5 NaN\n"));
    free(dat);
    ck_assert(!out_exists(dir, "plots/softmax_forward_bf16.png"));
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

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
    char dir[4096];
    kbt_tmpdir(dir);
    gen_quiet(&r, dir, KB_REPORT_PLOTS, "/nonexistent/gnuplot", NULL);
    char *dat = read_out(dir, "plots/softmax_forward_bf16.dat");
    const char *sweep = strstr(dat, "\n1024 32768x1024 ");
    ck_assert_ptr_nonnull(sweep);
    ck_assert_ptr_nonnull(strstr(sweep, "\n2048 32768x2048 "));
    const char *points = strstr(dat, "\n\n\n"); /* block 1 after two blank lines */
    ck_assert_ptr_nonnull(points);
    ck_assert(strstr(sweep, "\n4096 32768x4096 ") < points);
    ck_assert_ptr_nonnull(strstr(points, "\n4095 32768x4095 "));
    ck_assert_ptr_nonnull(strstr(points, "\n50257 4096x50257 "));
    free(dat);
    char *gp = read_out(dir, "plots/softmax_forward_bf16.gp");
    ASSERT_CONTAINS(gp, "set logscale x 2\n", "index 0 using 1:4 with linespoints",
                    "index 1 using 1:4 with points", "index 1 using 1:3:2 with labels", "'1K' 1024");
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
    char dir[4096];
    kbt_tmpdir(dir);
    /* gnuplot runs and fails: links are written, images are not */
    gen_quiet(&r, dir, KB_REPORT_MD | KB_REPORT_PLOTS, "/bin/false",
              "https://ci.example/run/7/report");
    char *md = read_out(dir, "report.md");
    ASSERT_CONTAINS(md, "<details><summary>skipped or untimed cases (21 rows)</summary>",
                    "](https://ci.example/run/7/report/plots/softmax_forward_bf16.png)");
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
    kbt_write(path, "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"10\"><g/></svg>\n");
    snprintf(md, sizeof md, "%s/report.md", dir);
    kbt_write(md, "# kbench report: GPU <1>\n\n- **Accuracy:** ok ([details](#accuracy-failures))\n\n"
                  "![a bf16](plots/a_bf16.png)\n\n<details><summary>t</summary>\n\n"
                  "| case | n |\n|---|--:|\n| x\\|y | 3 |\n\n</details>\n\n## Accuracy failures\n\n"
                  "None with `code` & more.\n");
    snprintf(html, sizeof html, "%s/report.html", dir);
    kb_err e = {""};
    ck_assert_msg(kb_report_write_html(md, html, dir, "t", &e) == KB_OK, "%s", e.msg);
    char *h = read_out(dir, "report.html");
    ASSERT_CONTAINS(h, "<h1 id=\"kbench-report-gpu-1\">kbench report: GPU &lt;1&gt;</h1>",
                    "<li><strong>Accuracy:</strong> ok (<a href=\"#accuracy-failures\">details</a>)</li>",
                    "<figure><svg width=\"10\"><g/></svg>",
                    "<details><summary>t</summary>\n<table><thead><tr><th>case</th><th>n</th>",
                    "<tr><td style=\"text-align:left\">x|y</td><td style=\"text-align:right\">3</td></tr>",
                    "</tbody></table>\n</details>", "<h2 id=\"accuracy-failures\">",
                    "<p>None with <code>code</code> &amp; more.</p>");
    ASSERT_LACKS(h, "<?xml", "<img"); /* the SVG inlined (no <img>), its XML prolog dropped */
    free(h);
    kbt_rm_rf(dir);
}
END_TEST

/* Text from the results (a benchmark name, a peer's message) lands in
 * report.md as written; report.html passed any line starting with '<' on
 * as raw HTML, the fold's summary with a benchmark name in it included,
 * and made any [text](url) a link, javascript: URLs too. Now only the
 * fold's own tags are markup, and a link is an anchor, http(s) or a
 * relative path; the rest is shown as text. */
START_TEST(test_html_input_text_is_not_markup)
{
    char dir[4096], md[4200], html[4200];
    kbt_tmpdir(dir);
    snprintf(md, sizeof md, "%s/report.md", dir);
    kbt_write(md, "# kbench report: x\n\n"
                  "<details><summary><img src=x onerror=alert(1)> bf16: GB/s per "
                  "shape</summary>\n\n"
                  "| shape | eager |\n|---|--:|\n| 4x4 | 1 |\n\n</details>\n\n"
                  "<script>alert(2)</script>\n\n"
                  "- [a](javascript:alert(3)) [b](JAVASCRIPT:x) [c](data:text/html,x) "
                  "[d](#accuracy-failures) [e](plots/a.svg) [f](https://example.com/r)\n");
    snprintf(html, sizeof html, "%s/report.html", dir);
    kb_err e = {""};
    ck_assert_msg(kb_report_write_html(md, html, dir, "t", &e) == KB_OK, "%s", e.msg);
    char *h = read_out(dir, "report.html");
    ASSERT_CONTAINS(h,
                    "<details><summary>&lt;img src=x onerror=alert(1)&gt; bf16: GB/s per "
                    "shape</summary>\n<table>",
                    "</tbody></table>\n</details>\n",
                    "<p>&lt;script&gt;alert(2)&lt;/script&gt;</p>",
                    "[a](javascript:alert(3))", "[b](JAVASCRIPT:x)", "[c](data:text/html,x)",
                    "<a href=\"#accuracy-failures\">d</a>", "<a href=\"plots/a.svg\">e</a>",
                    "<a href=\"https://example.com/r\">f</a>");
    ASSERT_LACKS(h, "<img", "<script", "href=\"javascript", "href=\"JAVASCRIPT", "href=\"data");
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
    read_fixes(&r, FIX("run.csv"), FIX("peers.csv"));
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_report_opts o = opts_into(dir, KB_REPORT_MD | KB_REPORT_PLOTS);
    o.gnuplot = "/usr/bin/gnuplot";
    char *md = generate_md(&r, &o);
    snprintf(path, sizeof path, "%s/plots/softmax_forward_bf16.png", dir);
    size_t n;
    char *png = kbt_read(path, &n);
    ck_assert_ptr_nonnull(png);
    ck_assert_uint_gt(n, 1000);
    ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
    free(png);
    char *svg = read_out(dir, "plots/softmax_forward_fp16.svg");
    ck_assert_ptr_nonnull(strstr(svg, "<svg"));
    ck_assert_ptr_nonnull(strstr(svg, "softmax_forward fp16 on NVIDIA H200"));
    free(svg);
    ck_assert_ptr_nonnull(strstr(md, "![softmax_forward bf16: GB/s by shape](plots/softmax_forward_bf16.png)"));
    ck_assert_ptr_null(strstr(md, "**Plots:**")); /* nothing to warn about */
    free(md);

    /* A gnuplot that fails is reported, not fatal. */
    o.gnuplot = "/bin/false";
    md = generate_md(&r, &o);
    ck_assert_ptr_nonnull(strstr(md, "- **Plots:** gnuplot failed on 4 of 4 plots"));
    free(md);
    kbt_rm_rf(dir);
    kb_results_free(&r);
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

/* Two GPU models side by side: per (benchmark, dtype, backend), over the
 * cases both timed, the geomean % of each GPU's own SOL and GB/s and their
 * ratio; a case only one GPU ran, an input-kind case and an untimed one are
 * left out; a GPU's later row of a case is the one compared. */
static kb_result on_gpu(const char *gpu, const char *backend, int64_t N, double gbps, double sol)
{
    kb_result x = mk("softmax_forward", backend, "bf16", 32768, N, 0.1);
    snprintf(x.gpu, sizeof x.gpu, "%s", gpu);
    x.gbps = gbps;
    x.sol_gbps = sol;
    return x;
}

START_TEST(test_gpus_side_by_side)
{
    char dir[4096];
    kbt_tmpdir(dir);
    kb_results r;
    kb_results_init(&r);
    const char *h200 = "NVIDIA H200", *h100 = "NVIDIA H100 80GB HBM3";
    push(&r, on_gpu(h200, "tuned", 1024, 4000, 4000));  /* 100 % */
    push(&r, on_gpu(h200, "tuned", 2048, 1000, 4000));  /* replaced by the next row */
    push(&r, on_gpu(h200, "tuned", 2048, 2000, 4000));  /* 50 % */
    push(&r, on_gpu(h200, "tuned", 4096, 3000, 4000));  /* the H100 lacks it */
    kb_result kind = on_gpu(h200, "tuned", 8192, 10, 4000);
    snprintf(kind.config, sizeof kind.config, "inputs=wide");
    push(&r, kind);
    push(&r, on_gpu(h200, "eager", 1024, 1000, 4000)); /* untimed on the H100 */
    push(&r, on_gpu(h100, "tuned", 1024, 3000, 3000));  /* 100 % */
    push(&r, on_gpu(h100, "tuned", 2048, 750, 3000));   /* 25 % */
    kind.gbps = 1;
    snprintf(kind.gpu, sizeof kind.gpu, "%s", h100);
    push(&r, kind);
    kb_result untimed = on_gpu(h100, "eager", 1024, NAN, 3000);
    untimed.median_ms = NAN;
    untimed.accuracy = KB_ACC_SKIP;
    push(&r, untimed);
    kb_report_outcome oc;
    char *md = md_of(&r, dir, NULL, &oc);
    /* geomeans: % SOL sqrt(100*50) = 70.7 and sqrt(100*25) = 50.0; GB/s
     * sqrt(4000*2000) = 2828 and sqrt(3000*750) = 1500; ratio 0.53 */
    ASSERT_CONTAINS(md, "## GPU models side by side\n",
                    "| benchmark | dtype | backend | cases | % SOL NVIDIA H200 | % SOL NVIDIA H100 "
                    "80GB HBM3 | GB/s NVIDIA H200 | GB/s NVIDIA H100 80GB HBM3 | NVIDIA H100 80GB "
                    "HBM3 / NVIDIA H200 |\n|---|---|---|--:|--:|--:|--:|--:|--:|\n",
                    "| softmax_forward | bf16 | tuned | 2 | 70.7% | 50.0% | 2828 | 1500 | 0.53x |\n");
    const char *sec = strstr(md, "## GPU models side by side"), *end = strstr(md, "## Summary");
    ck_assert(sec && end && sec < end);
    const char *eager = strstr(sec, "| softmax_forward | bf16 | eager |");
    ck_assert_msg(!eager || eager > end, "%s", md);
    free(md);
    /* one GPU: no section */
    kb_results_free(&r);
    kb_results_init(&r);
    push(&r, on_gpu(h200, "tuned", 1024, 4000, 4000));
    md = md_of(&r, dir, NULL, &oc);
    ck_assert_msg(!strstr(md, "side by side"), "%s", md);
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

Suite *kb_suite_report_output(void)
{
    Suite *s = suite_create("report_output");
    TCase *t = tcase_create("output");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_golden_markdown);
    tcase_add_test(t, test_no_gnuplot);
    tcase_add_test(t, test_plots_drawn);
    tcase_add_test(t, test_plot_sweeps_and_points);
    tcase_add_test(t, test_fold_and_image_base);
    tcase_add_test(t, test_html_self_contained);
    tcase_add_test(t, test_html_input_text_is_not_markup);
    tcase_add_test(t, test_mixed_gpus_and_versions);
    tcase_add_test(t, test_gpus_side_by_side);
    tcase_add_test(t, test_report_is_utf8);
    suite_add_tcase(s, t);
    return s;
}
