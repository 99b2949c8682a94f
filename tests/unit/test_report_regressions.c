/* kbench-report's regressions: the verdict of a row (the run's verdict
 * column, else the baseline file's), the regression table and its count,
 * a baseline of another GPU refused, nothing verified as an error, and
 * --baseline-diff. Fixtures: tests/fixtures/report/. */
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

/* r's rows modelled as kbench-report models them (*m, caller frees) and
 * judged against bl; the judged rows in m's order (caller frees). */
static kb_report_judged *judge_against(const kb_results *r, const kb_baseline *bl,
                                       kb_report_model *m)
{
    kb_report_opts o;
    kb_report_opts_init(&o);
    kb_err e = {""};
    ck_assert_int_eq(kb_report_model_build(m, r, &o, &e), KB_OK);
    kb_report_judged *j;
    ck_assert_int_eq(kb_report_judge_all(m, bl, &j, &e), KB_OK);
    return j;
}

/* judge_against with fixture csv's rows (into *r) and fixture baseline.csv
 * (into *bl); the caller frees all four. */
static kb_report_judged *judge_fixture(const char *csv, kb_results *r, kb_baseline *bl,
                                       kb_report_model *m)
{
    read_fixes(r, csv, NULL);
    kb_baseline_init(bl);
    kb_err e = {""};
    ck_assert_msg(kb_baseline_read(FIX("baseline.csv"), bl, &e) == KB_OK, "%s", e.msg);
    return judge_against(r, bl, m);
}

START_TEST(test_regressions_from_baseline)
{
    kb_results r;
    kb_baseline bl;
    kb_report_model m;
    kb_report_judged *j = judge_fixture(FIX("regress.csv"), &r, &bl, &m);
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
    char dir[4096];
    kbt_tmpdir(dir);
    kb_report_opts o = opts_into(dir, KB_REPORT_MD);
    o.baseline_path = FIX("baseline.csv");
    char *md = generate_md(&r, &o);
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
    md = generate_md(&r, &o);
    ck_assert_ptr_nonnull(strstr(md, "Baseline `no_such_baseline.csv` not found"));
    ck_assert_ptr_nonnull(strstr(md, "- **Regressions:** not checked"));
    free(md);
    kbt_rm_rf(dir);
    kb_results_free(&r);
}
END_TEST

/* A softmax_forward bf16 32768x1024 row at gbps (noise 0.5 %) that its run
 * could not judge: NO_BASELINE. */
static kb_result unjudged(const char *backend, double gbps)
{
    kb_result x = mk("softmax_forward", backend, "bf16", 32768, 1024, 0.1);
    x.gbps = gbps;
    x.noise = 0.005;
    snprintf(x.verdict, sizeof x.verdict, "NO_BASELINE");
    return x;
}

/* A cuDNN layernorm row failing accuracy on the inputs its config names. */
static kb_result accuracy_failure(const char *config)
{
    kb_result x = mk("layernorm_forward", "cudnn", "bf16", 4096, 1000, NAN);
    x.accuracy = KB_ACC_FAIL;
    snprintf(x.config, sizeof x.config, "%s", config);
    return x;
}

/* kb_report_generate under o, which must succeed; the regressions it
 * counted (set from an impossible 99, so an unset count fails). */
static size_t regressions_of(const kb_results *r, kb_report_opts o)
{
    size_t n = 99;
    o.regressions = &n;
    kb_err e = {""};
    ck_assert_int_eq(kb_report_generate(r, &o, &e), KB_OK);
    return n;
}

/* A row the run could not judge (NO_BASELINE: its baseline had no row) is
 * judged against the baseline given to the report; a slower one counts as a
 * regression (kbench-report exits 4 on it). A row without any baseline row
 * stays NO_BASELINE and is no regression. */
START_TEST(test_no_baseline_rows_are_judged)
{
    kb_results r;
    kb_results_init(&r);
    push(&r, unjudged("tuned", 2400));
    push(&r, unjudged("eager", 3000));
    push(&r, unjudged("fused", 1000)); /* no baseline row */
    kb_baseline bl;
    kb_baseline_init(&bl);
    kb_err e = {""};
    kb_baseline_row row = kbt_baseline_row("softmax_forward", "tuned", "bf16", 32768, 1024);
    row.gbps = 3000;
    row.noise = 0.005;
    row.median_ms = 0.08;
    ck_assert_int_eq(kb_baseline_upsert(&bl, &row, &e), KB_OK);
    snprintf(row.backend, sizeof row.backend, "eager");
    ck_assert_int_eq(kb_baseline_upsert(&bl, &row, &e), KB_OK);

    kb_report_model m;
    kb_report_judged *j = judge_against(&r, &bl, &m);
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
    kb_report_opts o = opts_into(dir, KB_REPORT_MD);
    o.baseline_path = path;
    ck_assert_int_eq(regressions_of(&r, o), 1);
    /* A library's known deviation failing accuracy is no regression; any
     * other accuracy failure is. */
    push(&r, accuracy_failure("inputs=constant cuDNN"));
    ck_assert_int_eq(regressions_of(&r, o), 1);
    push(&r, accuracy_failure("inputs=small cuDNN"));
    ck_assert_int_eq(regressions_of(&r, o), 2);
    /* Without a baseline nothing can be judged: no regression is claimed. */
    o.baseline_path = NULL;
    ck_assert_int_eq(regressions_of(&r, o), 1); /* the small-kind accuracy failure only */
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
    kb_baseline bl;
    kb_report_model m;
    kb_report_judged *j = judge_fixture(FIX("run.csv"), &r, &bl, &m);
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
    char dir[4096], csv[4200];
    kbt_tmpdir(dir);
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    kbt_write(csv,
              "benchmark,backend,dtype,M,N,median_ms,gbps,noise,baseline_gbps,verdict,message\n"
              "mlp_forward,tuned,bf16,8192,4096,3.5,113,0.018,128,NOISY,\"NOISY: 113.0 GB/s vs "
              "baseline 128.0 GB/s (-11.9%, band +-10.6%): SLOWER at face value, inside the band "
              "only at equal SM clocks (1768 MHz now, 1980 MHz in the baseline)\"\n"
              "softmax_forward,tuned,bf16,32768,1024,0.05,2400,0.01,3000,SLOWER,\n");
    kb_results r;
    read_fixes(&r, csv, NULL);
    const kb_report_opts o = opts_into(dir, KB_REPORT_MD);
    char *md = generate_md(&r, &o);
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

/* regress.csv's rows as another GPU's (gpu column), no verdicts. */
static void read_regress_as(kb_results *r, const char *gpu)
{
    read_fixes(r, FIX("regress.csv"), NULL);
    for (size_t i = 0; i < r->n; i++) snprintf(r->v[i].gpu, sizeof r->v[i].gpu, "%s", gpu);
}

/* Fixture baseline.csv copied to a and b. */
static void copy_baseline(const char *a, const char *b)
{
    char *text = kbt_read(FIX("baseline.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    kbt_write(a, text);
    kbt_write(b, text);
    free(text);
}

/* A baseline is one GPU's. Rows of an A100 judged against
 * baselines/NVIDIA_H200.csv passed as "no regression"; now refused, naming
 * both GPUs and the file. The H200's own rows pass; a baseline whose name is
 * not a GPU's cannot be checked and says so; rows with recorded verdicts are
 * not judged by the file and are not refused. */
START_TEST(test_baseline_of_another_gpu)
{
    char dir[4096], h200[4200], plain[4200];
    kbt_tmpdir(dir);
    snprintf(h200, sizeof h200, "%s/NVIDIA_H200.csv", dir);
    snprintf(plain, sizeof plain, "%s/old.csv", dir);
    copy_baseline(h200, plain);
    kb_results r;
    kb_report_outcome oc;
    kb_err e = {""};

    read_regress_as(&r, "NVIDIA A100-SXM4-80GB");
    ck_assert_int_eq(gen_md(&r, dir, h200, &oc, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, h200) && strstr(e.msg, "is for GPU NVIDIA_H200") &&
                      strstr(e.msg, "measured on NVIDIA A100-SXM4-80GB"),
                  "%s", e.msg);
    ck_assert(!out_exists(dir, "report.md")); /* refused: nothing written */

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
    copy_baseline(copy, nvl);
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
    read_fixes(&r, FIX("run.csv"), NULL);
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

Suite *kb_suite_report_regressions(void)
{
    Suite *s = suite_create("report_regressions");
    TCase *t = tcase_create("regressions");
    tcase_add_test(t, test_judge);
    tcase_add_test(t, test_regressions_from_baseline);
    tcase_add_test(t, test_verdict_column_wins);
    tcase_add_test(t, test_regression_says_why);
    tcase_add_test(t, test_no_baseline_rows_are_judged);
    tcase_add_test(t, test_baseline_of_another_gpu);
    tcase_add_test(t, test_floor_not_applied_says_so);
    tcase_add_test(t, test_nothing_verified_is_an_error);
    suite_add_tcase(s, t);
    t = tcase_create("baseline_diff");
    tcase_add_test(t, test_baseline_diff_names_shapes);
    tcase_add_test(t, test_baseline_diff_missing_file_names_its_option);
    suite_add_tcase(s, t);
    return s;
}
