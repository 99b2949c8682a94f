/* Command-line parsing: good and bad invocations. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "unit.h"

static kb_status parse(kb_options *o, kb_err *e, const char *const *args, int n)
{
    char *argv[32];
    argv[0] = (char *)"kbench";
    for (int i = 0; i < n; i++) argv[i + 1] = (char *)args[i];
    return kb_cli_parse(n + 1, argv, o, e);
}
#define PARSE(o, e, ...)                                                      \
    parse(o, e, (const char *const[]){__VA_ARGS__},                           \
          (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)))

START_TEST(no_arguments_is_an_error)
{
    kb_options o;
    kb_err e;
    char *argv[] = {(char *)"kbench"};
    ck_assert_int_eq(kb_cli_parse(1, argv, &o, &e), KB_ERR_ARG);
}
END_TEST

START_TEST(unknown_benchmark_suggests_list)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "nosuch"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "Unknown benchmark 'nosuch'"));
    ck_assert_ptr_nonnull(strstr(e.msg, "--list"));
}
END_TEST

START_TEST(benchmarks_and_all)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "softmax_backward"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_RUN);
    ck_assert_int_eq(o.bench[KB_SOFTMAX_FWD] + o.bench[KB_SOFTMAX_BWD], 2);
    ck_assert_int_eq(o.bench[KB_CE_FWD], 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
    for (int b = 0; b < KB_NUM_BENCH; b++) ck_assert_int_eq(o.bench[b], 1);
    ck_assert(isnan(o.tolerance));
    ck_assert_int_eq(o.device, -1);
}
END_TEST

START_TEST(parity_flags)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tolerance", "0.01", "--exit-on-accuracy-failure",
                           "--print-benchmark-result", "--visualize", "--backend", "eager,tuned",
                           "--shape", "4x50257", "--shape", "1x1", "--dtype", "fp16,fp32",
                           "--csv", "r.csv", "--json", "r.json", "--dump", "d", "--baseline",
                           "b.csv", "--update-baseline"),
                     KB_OK);
    ck_assert_double_eq(o.tolerance, 0.01);
    ck_assert(o.exit_on_accuracy_failure && o.print_result && o.visualize && o.update_baseline);
    ck_assert(o.backend[0] && !o.backend[1] && o.backend[2] && !o.backend[3]);
    ck_assert_int_eq(o.nshapes, 2);
    ck_assert_int_eq(o.shapes[0].N, 50257);
    ck_assert(!o.dtype[KB_BF16] && o.dtype[KB_FP16] && o.dtype[KB_FP32]);
    ck_assert_str_eq(o.csv, "r.csv");
    ck_assert_str_eq(o.json, "r.json");
    ck_assert_str_eq(o.dump_dir, "d");
    ck_assert_str_eq(o.baseline, "b.csv");
    ck_assert_str_eq(o.report_dir, "kbench-report");
}
END_TEST

START_TEST(modes)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--list"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_LIST);
    ck_assert_int_eq(PARSE(&o, &e, "--list-cases"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_LIST_CASES);
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_CASE);
    ck_assert_str_eq(o.case_name, "softmax_forward.eager.bf16.4x4");
    ck_assert_int_eq(PARSE(&o, &e, "--self-test"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_SELF_TEST);
    ck_assert_int_eq(PARSE(&o, &e, "--help"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_HELP);
}
END_TEST

START_TEST(bad_values)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--shape", "0x5"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--shape", "12"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--shape", "-1x3"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--shape"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "needs a value"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "magic"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "Unknown backend"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", ","), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--dtype", "fp8"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tolerance", "abc"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tolerance", "-1"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tolerance", "nan"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--device", "1.5"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--frobnicate"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "unknown option"));
    ck_assert_int_eq(PARSE(&o, &e, "--tolerance", "0.1"), KB_ERR_ARG); /* no benchmark */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--sweep", "weird"), KB_ERR_ARG);
}
END_TEST

START_TEST(tuned_configs)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "wide:threads=512,rows=1",
                           "--tuned-config", "narrow:threads=64"),
                     KB_OK);
    ck_assert_int_eq(o.ncustom, 2);
    ck_assert_str_eq(o.custom[0].name, "wide");
    ck_assert_str_eq(o.custom[0].text, "threads=512,rows=1");
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "noconfig"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", ":threads=1"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "a b:threads=1"), KB_ERR_ARG);
    /* --backend eager plus a custom config still runs the tuned series. */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "eager", "--tuned-config", "x:threads=64"),
                     KB_OK);
    ck_assert(o.backend[2]);
}
END_TEST

START_TEST(perf_tolerance_env)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
    ck_assert_int_eq(kb_cli_env(NULL, &o, &e), KB_OK);
    ck_assert(isnan(o.perf_tolerance));
    ck_assert_int_eq(kb_cli_env("", &o, &e), KB_OK);
    ck_assert(isnan(o.perf_tolerance));
    ck_assert_int_eq(kb_cli_env("0.05", &o, &e), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 0.05);
    /* the flag wins over the environment */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--perf-tolerance", "0.2"), KB_OK);
    ck_assert_int_eq(kb_cli_env("0.05", &o, &e), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 0.2);
    ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
    ck_assert_int_eq(kb_cli_env("5%", &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_PERF_TOLERANCE"));
    ck_assert_int_eq(kb_cli_env("-0.1", &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_cli_env("nan", &o, &e), KB_ERR_ARG);
}
END_TEST

Suite *kb_suite_cli(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("cli");
    tcase_add_test(t, no_arguments_is_an_error);
    tcase_add_test(t, unknown_benchmark_suggests_list);
    tcase_add_test(t, benchmarks_and_all);
    tcase_add_test(t, parity_flags);
    tcase_add_test(t, modes);
    tcase_add_test(t, bad_values);
    tcase_add_test(t, tuned_configs);
    tcase_add_test(t, perf_tolerance_env);
    suite_add_tcase(s, t);
    return s;
}
