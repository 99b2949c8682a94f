/* Command-line parsing: good and bad invocations. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "envinfo.h"
#include "knobs.h"
#include "run.h"
#include "tmpfiles.h"
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

/* --prepare measures nothing, so nothing that records a measurement goes
 * with it. */
START_TEST(prepare_takes_nothing_that_records)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "rmsnorm_backward", "--backend", "cudnn", "--prepare"), KB_OK);
    ck_assert_int_eq(o.prepare, 1);
    ck_assert_int_eq(PARSE(&o, &e, "--case", "rmsnorm_backward.cudnn.bf16.4096x1", "--prepare"),
                     KB_OK);
    ck_assert_int_eq(o.prepare, 1);
    ck_assert_int_eq(PARSE(&o, &e, "rmsnorm_backward", "--prepare", "--update-baseline"),
                     KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--prepare measures nothing"));
    ck_assert_int_eq(PARSE(&o, &e, "rmsnorm_backward", "--prepare", "--csv", "x.csv"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--prepare", "--tune"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--prepare", "--json", "x.json"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--prepare", "--visualize"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--list", "--prepare"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "not with --list"));
    ck_assert_int_eq(PARSE(&o, &e, "--self-test", "--prepare"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--prepare", "--tuned-config", "a:threads=128"),
                     KB_ERR_ARG);
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

/* A --shape that no selected benchmark takes is a usage error before any GPU
 * work; one that some selected benchmark takes passes the others over. */
START_TEST(shape_dims_checked_against_selection)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "mlp_forward", "--shape", "3x4"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--shape: mlp_forward takes three sizes MxNxK, got '3x4'");
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--shape", "3x4x5"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--shape: softmax_forward takes two sizes MxN, got '3x4x5'");
    ck_assert_int_eq(PARSE(&o, &e, "mlp_forward", "mlp_swiglu_forward", "--shape", "8x8"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--shape 8x8: no selected benchmark takes two sizes");
    /* the second shape is the bad one */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--shape", "4x4", "--shape", "4x4x4"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--shape: softmax_forward takes two sizes MxN, got '4x4x4'");
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--shape", "4x4"), KB_OK);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--shape", "4x4x4"), KB_OK);
    ck_assert_int_eq(PARSE(&o, &e, "mlp_forward", "softmax_forward", "--shape", "4x4x4"), KB_OK);
}
END_TEST

/* A --backend that no selected benchmark has is a usage error, not a run of
 * nothing; one that some selected benchmark has runs those. */
START_TEST(backend_checked_against_selection)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--backend", "cublaslt_epilogue"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--backend cublaslt_epilogue: no selected benchmark has it (--list "
                            "shows each one's backends)");
    ck_assert_int_eq(PARSE(&o, &e, "cross_entropy_forward", "geglu_forward", "--backend",
                           "cudnn,cublaslt_epilogue"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--backend cudnn,cublaslt_epilogue: no selected benchmark has it "
                            "(--list shows each one's backends)");
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--backend", "cublaslt_epilogue"),
                     KB_OK);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "cudnn"), KB_OK);
    ck_assert_int_eq(PARSE(&o, &e, "cross_entropy_forward"), KB_OK);
    /* each is taken by some benchmark, but none takes both: a run of nothing */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--backend",
                           "cublaslt_epilogue", "--shape", "4x4"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--backend and --shape select no case together: mlp_forward takes "
                            "three sizes MxNxK, got '4x4', and no selected benchmark that takes "
                            "the shape has the backend (--list shows each one's backends)");
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "cublaslt_epilogue", "--shape", "4x4"),
                     KB_ERR_ARG);
    /* one benchmark taking both is enough; the others are passed over */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--backend",
                           "cublaslt_epilogue", "--shape", "4x4", "--shape", "4x4x4"),
                     KB_OK);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "eager", "--shape", "4x4"), KB_OK);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "cublaslt_epilogue", "--shape", "4x4x4"),
                     KB_OK);
    /* a named tuned configuration adds the tuned backend first */
    ck_assert_int_eq(PARSE(&o, &e, "cross_entropy_forward", "--backend", "cudnn", "--tuned-config",
                           "a:threads=128"),
                     KB_OK);
}
END_TEST

static void count_passed_over(const kb_case *c, const kb_err *passed_over, void *arg)
{
    (void)c;
    if (passed_over) ++*(int *)arg;
}

static void count_not_rmsnorm_small(const kb_case *c, const kb_err *passed_over, void *arg)
{
    if (passed_over || c->p.bench != KB_RMSNORM_FWD || c->inputs != KB_INPUTS_SMALL)
        ++*(int *)arg;
}

/* An --inputs kind that applies to none of the selected benchmarks is a usage
 * error naming the kind, the benchmarks and the kinds they take (it used to
 * run nothing and pass); one that applies to some runs there. */
START_TEST(inputs_checked_against_selection)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--inputs", "small"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--inputs small: the kind applies to none of the selected benchmarks "
                            "(softmax_forward takes randn, shifted, wide, masked)");
    ck_assert_int_eq(PARSE(&o, &e, "mlp_forward", "--inputs", "wide"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--inputs wide: the kind applies to none of the selected benchmarks "
                            "(mlp_forward takes randn)");
    ck_assert_int_eq(PARSE(&o, &e, "mlp_forward", "rmsnorm_forward", "--inputs", "randn,masked"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--inputs masked: the kind applies to none of the selected benchmarks "
                            "(rmsnorm_forward takes randn, wide, constant, small; mlp_forward "
                            "takes randn)");
    /* applies to one of two: that one runs its cases */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "rmsnorm_forward", "--inputs", "small"), KB_OK);
    int not_rms_small = 0;
    ck_assert_int_gt(kb_selection_foreach(&o, count_not_rmsnorm_small, &not_rms_small), 0);
    ck_assert_int_eq(not_rms_small, 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--inputs", "shifted,small"), KB_OK);
    ck_assert_int_gt(kb_selection_foreach(&o, NULL, NULL), 0);
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--inputs", "randn"), KB_OK);
}
END_TEST

/* A selection that holds no case for any other reason is refused too: each
 * option is taken by some benchmark, but no benchmark takes them together. */
START_TEST(empty_selection_is_an_error)
{
    static const char *const want = "the selection holds no case: no selected benchmark has the "
                                    "--backend, --inputs kind and --shape given together (--list "
                                    "shows each one's backends, --describe its input kinds and "
                                    "sizes)";
    kb_options o;
    kb_err e;
    /* shifted: softmax only; cublaslt_epilogue: mlp_forward only */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--inputs", "shifted",
                           "--backend", "cublaslt_epilogue"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, want);
    /* shifted: softmax only; 4x4x4: mlp_forward only (softmax passes it over) */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--inputs", "shifted",
                           "--shape", "4x4x4"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, want);
    /* with randn as well, mlp_forward runs 4x4x4 and softmax passes it over */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--inputs", "shifted,randn",
                           "--shape", "4x4x4"),
                     KB_OK);
    int over = 0;
    ck_assert_int_eq(kb_selection_foreach(&o, count_passed_over, &over),
                     kb_selection_foreach(&o, NULL, NULL));
    ck_assert_int_gt(kb_selection_foreach(&o, NULL, NULL), 0);
    ck_assert_int_gt(over, 0);
}
END_TEST

/* A run none of whose cases ran (all skipped) is not a pass; a skipped
 * --case is a skip; a failure is a failure. */
START_TEST(exit_code_of_cases)
{
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_RUN, 3, 0, 1), 0);
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_RUN, 3, 1, 0), 1);
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_RUN, 0, 0, 4), KB_EXIT_SKIP);
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_RUN, 0, 0, 0), KB_EXIT_SKIP);
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_CASE, 1, 0, 0), 0);
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_CASE, 0, 0, 1), KB_EXIT_SKIP);
    ck_assert_int_eq(kb_cli_exit_code(KB_MODE_CASE, 0, 1, 0), 1);
}
END_TEST

/* Every usage error ends with the one hint line, whatever option its
 * message names (--list=3 lost it); other errors get none. */
START_TEST(usage_errors_get_the_hint_once)
{
    kb_options o;
    kb_err e;
    char *text = NULL;
    size_t len = 0;
    ck_assert_int_eq(PARSE(&o, &e, "--list=3"), KB_ERR_ARG);
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    kb_cli_error(f, KB_ERR_ARG, &e);
    /* --case names are checked with the options, before any GPU work */
    ck_assert_int_eq(PARSE(&o, &e, "--case", "foo"), KB_ERR_ARG);
    kb_cli_error(f, KB_ERR_ARG, &e);
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4.small"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "case 'softmax_forward.eager.bf16.4x4.small': input kind small does "
                            "not apply to softmax_forward");
    e = (kb_err){{0}};
    snprintf(e.msg, sizeof e.msg, "cannot write x.csv");
    kb_cli_error(f, KB_ERR_IO, &e);
    fclose(f);
    ck_assert_str_eq(text, "Error: option '--list=3': unknown, or takes no value\n"
                           "Run 'kbench --help' for usage.\n"
                           "Error: malformed case name 'foo': expected "
                           "<benchmark>.<backend>.<dtype>.<M>x<N>[.<inputs>]\n"
                           "Run 'kbench --help' for usage.\n"
                           "Error: cannot write x.csv\n");
    free(text);
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
    ck_assert_int_eq(PARSE(&o, &e, "--describe"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_DESCRIBE);
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
    ck_assert_ptr_nonnull(strstr(e.msg, "unknown or ambiguous option"));
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
    /* the GLU kernels' cache-operator and register-cap keys */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "plain:threads=256,hint=2,uncap=1"),
                     KB_OK);
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

/* KBENCH_PERF_TOLERANCE is a run's: --help, --list, --list-cases (CMake's
 * case discovery), --describe and --self-test work whatever it holds; a run
 * or a --case still refuses a bad value, naming it. */
START_TEST(perf_tolerance_env_only_for_runs)
{
    static const char *const not_runs[] = {"--help", "--list", "--list-cases", "--describe",
                                           "--self-test"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof not_runs / sizeof not_runs[0]; i++) {
        ck_assert_int_eq(PARSE(&o, &e, not_runs[i]), KB_OK);
        ck_assert_msg(kb_cli_env("abc", &o, &e) == KB_OK, "%s: %s", not_runs[i], e.msg);
    }
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
    ck_assert_int_eq(kb_cli_env("abc", &o, &e), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "KBENCH_PERF_TOLERANCE 'abc': expected a fraction between 0 and 1, "
                            "exclusive (e.g. 0.05)");
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4"), KB_OK);
    ck_assert_int_eq(kb_cli_env("abc", &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_PERF_TOLERANCE 'abc'"));
}
END_TEST

/* Both spellings of the tolerance must lie in (0, 1): 0 flags every wobble,
 * 1 never flags anything. */
START_TEST(perf_tolerance_range)
{
    static const char *const bad[] = {"0", "0.0", "1", "1.0", "1.5", "10", "-0.05", "inf", "", "0.1x"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
        ck_assert_msg(kb_cli_env(bad[i], &o, &e) == (*bad[i] ? KB_ERR_ARG : KB_OK), "env '%s'",
                      bad[i]);
        if (!*bad[i]) continue;
        ck_assert_msg(strstr(e.msg, bad[i]) != NULL, "message names '%s': %s", bad[i], e.msg);
        ck_assert_msg(PARSE(&o, &e, "--all", "--perf-tolerance", bad[i]) == KB_ERR_ARG, "flag '%s'",
                      bad[i]);
        ck_assert_msg(strstr(e.msg, "--perf-tolerance") && strstr(e.msg, bad[i]), "%s", e.msg);
    }
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--perf-tolerance", "0.999"), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 0.999);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--perf-tolerance=1e-3"), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 1e-3);
}
END_TEST

START_TEST(equals_forms)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--tolerance=0.1", "--csv=r.csv", "--json=r.json",
                           "--backend=eager,tuned", "--shape=4x8", "--dtype=fp32", "--device=1",
                           "--sweep=odd", "--report-dir=rep", "softmax_forward"),
                     KB_OK);
    ck_assert_double_eq(o.tolerance, 0.1);
    ck_assert_str_eq(o.csv, "r.csv");
    ck_assert_str_eq(o.json, "r.json");
    ck_assert(o.backend[0] && o.backend[2] && !o.backend[1]);
    ck_assert_int_eq(o.nshapes, 1);
    ck_assert_int_eq(o.shapes[0].N, 8);
    ck_assert(o.dtype[KB_FP32] && !o.dtype[KB_BF16]);
    ck_assert_int_eq(o.device, 1);
    ck_assert(o.sweep_odd);
    ck_assert_str_eq(o.report_dir, "rep");
    ck_assert(o.bench[KB_SOFTMAX_FWD]);
    /* a flag takes no value; an empty value is no value */
    ck_assert_int_eq(PARSE(&o, &e, "--all=1"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--all=1"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv="), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--csv"));
    /* no "see --help" inside the message: main adds that line once */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--frobnicate"), KB_ERR_ARG);
    ck_assert_ptr_null(strstr(e.msg, "--help"));
}
END_TEST

START_TEST(double_dash_ends_options)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--backend", "eager", "--", "softmax_forward", "rmsnorm_forward"),
                     KB_OK);
    ck_assert(o.bench[KB_SOFTMAX_FWD] && o.bench[KB_RMSNORM_FWD] && !o.bench[KB_CE_FWD]);
    /* after --, an option-looking word is a benchmark name (and unknown) */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--", "--csv"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "Unknown benchmark '--csv'"));
    /* benchmarks may precede options */
    ck_assert_int_eq(PARSE(&o, &e, "softmax_backward", "--csv", "x.csv"), KB_OK);
    ck_assert(o.bench[KB_SOFTMAX_BWD]);
    ck_assert_str_eq(o.csv, "x.csv");
}
END_TEST

START_TEST(repeats)
{
    static const char *const singular[] = {"--csv", "--json", "--tolerance", "--perf-tolerance",
                                           "--sweep", "--device", "--baseline", "--dump",
                                           "--report-dir", "--budget-ms", "--tune-cache",
                                           "--compile-mode"};
    static const char *const value[] = {"a", "b", "0.1", "0.1", "odd", "0", "b.csv", "d", "r",
                                        "100", "t.txt", "cache"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof singular / sizeof singular[0]; i++) {
        ck_assert_msg(PARSE(&o, &e, "--all", singular[i], value[i]) == KB_OK, "%s: %s",
                      singular[i], e.msg);
        ck_assert_msg(PARSE(&o, &e, "--all", singular[i], value[i], singular[i], value[i]) ==
                          KB_ERR_ARG,
                      "%s twice accepted", singular[i]);
        ck_assert_msg(strstr(e.msg, singular[i]) && strstr(e.msg, "twice"), "%s", e.msg);
    }
    /* lists, shapes and named configurations add up */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--dtype", "bf16", "--dtype", "fp16", "--backend",
                           "eager", "--backend", "fused", "--shape", "1x1", "--shape", "2x2"),
                     KB_OK);
    ck_assert(o.dtype[KB_BF16] && o.dtype[KB_FP16] && o.backend[0] && o.backend[1]);
    ck_assert_int_eq(o.nshapes, 2);
    /* conflicting modes */
    ck_assert_int_eq(PARSE(&o, &e, "--list", "--self-test"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--list"));
    ck_assert_int_eq(PARSE(&o, &e, "--describe", "--list-cases"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--describe and --list-cases cannot be combined"));
    ck_assert_int_eq(PARSE(&o, &e, "--case", "a", "--case", "b"), KB_ERR_ARG);
}
END_TEST

START_TEST(bad_lists)
{
    static const char *const bad[] = {"bf16,,fp16", ",bf16", "bf16,", ",", "bf16,fp8"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(PARSE(&o, &e, "--all", "--dtype", bad[i]) == KB_ERR_ARG, "--dtype '%s'", bad[i]);
        ck_assert_msg(strstr(e.msg, i < 4 ? bad[i] : "fp8") != NULL, "%s", e.msg);
    }
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "eager,,tuned"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "empty element"));
}
END_TEST

START_TEST(tuned_config_values)
{
    static const char *const bad[] = {"x:threads", "x:threads=", "x:=4", "x:threds=256",
                                      "x:threads=abc", "x:threads=-1", "x:threads=1,,rows=2",
                                      "x:threads=1,threads=2", "x:threads=2.5"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(PARSE(&o, &e, "--all", "--tuned-config", bad[i]) == KB_ERR_ARG, "'%s'",
                      bad[i]);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "x:threds=256"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "'threds'"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "x:threads=1", "--tuned-config",
                           "x:rows=2"),
                     KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "used twice"));
}
END_TEST

START_TEST(compile_mode)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
    ck_assert_int_eq(o.compile_mode, KB_COMPILE_CACHE);
    ck_assert_int_eq(o.tune, 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--compile-mode", "heuristic"), KB_OK);
    ck_assert_int_eq(o.compile_mode, KB_COMPILE_HEURISTIC);
    ck_assert_int_eq(o.tune, 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--compile-mode=autotune"), KB_OK);
    ck_assert_int_eq(o.compile_mode, KB_COMPILE_AUTOTUNE);
    ck_assert_int_eq(o.tune, 1);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tune"), KB_OK);
    ck_assert_int_eq(o.compile_mode, KB_COMPILE_AUTOTUNE);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tune", "--compile-mode", "heuristic"), KB_ERR_ARG);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--compile-mode", "max-autotune"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "'max-autotune'"));
}
END_TEST

/* The seed's --custom-compile-name/--custom-compile-options pair becomes the
 * same named series as --tuned-config NAME:k=v,... */
START_TEST(custom_compile_maps_to_tuned_config)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-name", "wide",
                           "--custom-compile-options", "{\"threads\": 512, \"rows\": \"2\"}"),
                     KB_OK);
    ck_assert_int_eq(o.ncustom, 1);
    ck_assert_str_eq(o.custom[0].name, "wide");
    ck_assert_str_eq(o.custom[0].text, "threads=512,rows=2");
    /* beside a --tuned-config, in command-line order of kinds */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "a:threads=64",
                           "--custom-compile-options={\"db\":true}", "--custom-compile-name=b"),
                     KB_OK);
    ck_assert_int_eq(o.ncustom, 2);
    ck_assert_str_eq(o.custom[1].name, "b");
    ck_assert_str_eq(o.custom[1].text, "db=1");
    /* the name is required with the options, and the options with the name */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-options", "{\"threads\": 64}"),
                     KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--custom-compile-name"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-name", "x"), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--custom-compile-options"));
    /* keys are checked as --tuned-config's are */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-name", "x", "--custom-compile-options",
                           "{\"max_autotune\": true}"),
                     KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "'max_autotune'"));
    /* a bad key or value is the options' (the name was fine) */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-name", "x", "--custom-compile-options",
                           "{\"bogus\": 1}"),
                     KB_ERR_ARG);
    ck_assert_msg(strncmp(e.msg, "--custom-compile-options: unknown key 'bogus'", 44) == 0, "%s",
                  e.msg);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-name", "x", "--custom-compile-options",
                           "{\"threads\": 99999}"),
                     KB_ERR_ARG);
    ck_assert_msg(strncmp(e.msg, "--custom-compile-options: threads='99999'", 40) == 0, "%s",
                  e.msg);
    /* and a bad name the name's */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--custom-compile-name", "a b", "--custom-compile-options",
                           "{\"threads\": 64}"),
                     KB_ERR_ARG);
    ck_assert_msg(strncmp(e.msg, "--custom-compile-name: name 'a b'", 33) == 0, "%s", e.msg);
}
END_TEST

START_TEST(json_config)
{
    static const char *const bad[] = {"", "{}", "[1]", "{\"threads\": 1.5}", "{\"threads\" 1}",
                                      "{\"threads\": 1,}", "{\"threads\": 1} x", "{threads: 1}",
                                      "{\"a\\\"b\": 1}", "{\"threads\": 1", "{\"threads\": null}"};
    char out[128];
    kb_err e;
    ck_assert_int_eq(kb_cli_json_config(" { \"threads\" :256 ,\n\"rows\":\"4\", \"reload\": false } ",
                                        out, sizeof out, &e),
                     KB_OK);
    ck_assert_str_eq(out, "threads=256,rows=4,reload=0");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(kb_cli_json_config(bad[i], out, sizeof out, &e) == KB_ERR_ARG, "'%s'", bad[i]);
        ck_assert_ptr_nonnull(strstr(e.msg, "--custom-compile-options"));
    }
}
END_TEST

START_TEST(output_paths_checked_up_front)
{
    char dir[] = "/tmp/kb_cli_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], sub[256];
    kb_options o;
    kb_err e;
    snprintf(path, sizeof path, "%s/nodir/r.csv", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", path), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "does not exist"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--json", dir), KB_OK); /* a directory */
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "is a directory"));
    snprintf(path, sizeof path, "%s/r.csv", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", path, "--json", path), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    /* directories are made; KBENCH_RESULTS_DIR too, in --case mode */
    snprintf(sub, sizeof sub, "%s/results/deep", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4", "--csv", path), KB_OK);
    ck_assert_msg(kb_cli_check_outputs(&o, sub, &e) == KB_OK, "%s", e.msg);
    ck_assert_int_eq(access(sub, W_OK), 0);
    snprintf(sub, sizeof sub, "%s/r.csv/x", dir); /* under a file: cannot be made */
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--dump", sub), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--dump"));
    remove(path);
    snprintf(sub, sizeof sub, "%s/results/deep", dir);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/results", dir);
    rmdir(sub);
    rmdir(dir);
}
END_TEST

/* A private folder (dir: 4096 bytes) holding one file, name, of text; its
 * path in path. */
static void tmp_file(char *dir, char *path, size_t len, const char *name, const char *text)
{
    kbt_tmpdir(dir);
    snprintf(path, len, "%s/%s", dir, name);
    kbt_write(path, text);
}

/* --csv and --json are compared as the files they name, not as text, and
 * neither may be the --baseline or --tune-cache file (the results would
 * overwrite what they are gated against); writability is probed by making
 * the FILE.partial the writer uses, since as root access() says yes to
 * /proc. The probe leaves nothing behind, and a .partial left by an earlier
 * run alone. */
START_TEST(output_paths_compared_as_files)
{
    char dir[4096], path[4200], other[4200], base[4200], partial[4300];
    kbt_tmpdir(dir);
    ck_assert_int_eq(chdir(dir), 0);
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", "a.csv", "--json", "./a.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--csv a.csv and --json ./a.csv name the same file"), "%s", e.msg);
    snprintf(path, sizeof path, "%s/sub/../a.csv", dir);
    ck_assert_int_eq(mkdir("sub", 0700), 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", path, "--json", "a.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    /* the baseline (through a link too) and the tuning cache */
    snprintf(base, sizeof base, "%s/base.csv", dir);
    kbt_write(base, "benchmark,backend,dtype,M,N,median_ms,gbps\n");
    ck_assert_int_eq(symlink(base, "link.csv"), 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--baseline", base, "--csv", "base.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--csv base.csv and --baseline"), "%s", e.msg);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--baseline", base, "--json", "link.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--json link.csv and --baseline"), "%s", e.msg);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tune-cache", base, "--json", base), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--tune-cache"), "%s", e.msg);
    /* distinct files pass, and the probe leaves no .partial */
    snprintf(other, sizeof other, "%s/b.json", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--baseline", base, "--csv", "a.csv", "--json", other),
                     KB_OK);
    ck_assert_msg(kb_cli_check_outputs(&o, NULL, &e) == KB_OK, "%s", e.msg);
    ck_assert(!kbt_exists("a.csv.partial"));
    ck_assert(!kbt_exists("a.csv"));
    snprintf(partial, sizeof partial, "%s.partial", other);
    kbt_write(partial, "[kept]");
    ck_assert_msg(kb_cli_check_outputs(&o, NULL, &e) == KB_OK, "%s", e.msg);
    char *kept = kbt_read(partial, NULL);
    ck_assert_str_eq(kept, "[kept]");
    free(kept);
    /* a directory that exists but takes no file (as root, access() says it does) */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", "/proc/x.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--csv /proc/x.csv: cannot write /proc/x.csv.partial in "
                                "directory /proc"),
                  "%s", e.msg);
    kbt_rm_rf(dir);
}
END_TEST

/* The variables a run reads where its cases use them are checked with
 * KBENCH_PERF_TOLERANCE, before any GPU work: a bad value was met per case
 * (KBENCH_TUNE_EVALS, KBENCH_TUNE_LOG inside the search), silently switched
 * something off (KBENCH_CUPTI_LIB: the kernel check SKIPped on a GPU) or
 * was read as "on" (anything but exact off/0), and on a machine without a
 * GPU the SKIP swallowed all of it. --help, --list, --describe ignore them. */
START_TEST(env_values_checked_up_front)
{
    char dir[4096], log[4200];
    kbt_tmpdir(dir);
    snprintf(log, sizeof log, "%s/tune-log.csv", dir);
    static const struct {
        const char *var, *value, *says;
    } bad[] = {
        {"KBENCH_TUNE_EVALS", "abc", "KBENCH_TUNE_EVALS='abc': expected a count 1..100000"},
        {"KBENCH_TUNE_EVALS", "0", "KBENCH_TUNE_EVALS='0'"},
        {"KBENCH_TUNE_EVALS", "100001", "KBENCH_TUNE_EVALS='100001'"},
        {"KBENCH_TUNE_LOG", "/nonexist/log", "KBENCH_TUNE_LOG /nonexist/log: directory /nonexist"},
        {"KBENCH_TUNE_LOG", "/proc/log", "KBENCH_TUNE_LOG /proc/log: cannot write /proc/log"},
        {"KBENCH_CUPTI_LIB", "/nonexist.so", "KBENCH_CUPTI_LIB='/nonexist.so': cannot be loaded"},
        {"KBENCH_CUPTI_LIB", "libm.so.6", "KBENCH_CUPTI_LIB='libm.so.6': not a CUPTI library"},
        {"KBENCH_PLAN_CACHE", "of", "KBENCH_PLAN_CACHE='of': expected on or off"},
        {"KBENCH_SERVER", "nope", "KBENCH_SERVER='nope': expected on or off"},
        {"KBENCH_LOCK_DIR", "/nonexist", "KBENCH_LOCK_DIR /nonexist: No such file"},
        {"KBENCH_LOCK_DIR", "/proc", "KBENCH_LOCK_DIR /proc: cannot create a file in it"},
    };
    static const char *const not_runs[] = {"--help", "--list", "--list-cases", "--describe"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i].var, bad[i].value, 1);
        ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
        ck_assert_msg(kb_cli_env(NULL, &o, &e) == KB_ERR_ARG, "%s=%s", bad[i].var, bad[i].value);
        ck_assert_msg(strstr(e.msg, bad[i].says), "%s: '%s' lacks '%s'", bad[i].var, e.msg,
                      bad[i].says);
        ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4"), KB_OK);
        ck_assert_int_eq(kb_cli_env(NULL, &o, &e), KB_ERR_ARG);
        for (size_t m = 0; m < sizeof not_runs / sizeof not_runs[0]; m++) {
            ck_assert_int_eq(PARSE(&o, &e, not_runs[m]), KB_OK);
            ck_assert_msg(kb_cli_env(NULL, &o, &e) == KB_OK, "%s: %s", not_runs[m], e.msg);
        }
        unsetenv(bad[i].var);
    }
    /* good values pass; the log is not made by the check */
    static const char *const good[][2] = {
        {"KBENCH_TUNE_EVALS", "50"}, {"KBENCH_CUPTI_LIB", "none"}, {"KBENCH_PLAN_CACHE", "OFF"},
        {"KBENCH_PLAN_CACHE", "No"}, {"KBENCH_SERVER", "0"}, {"KBENCH_SERVER", "TRUE"},
        {"KBENCH_LOCK_DIR", "/tmp"}};
    setenv("KBENCH_TUNE_LOG", log, 1);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv(good[i][0], good[i][1], 1);
        ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
        ck_assert_msg(kb_cli_env(NULL, &o, &e) == KB_OK, "%s=%s: %s", good[i][0], good[i][1],
                      e.msg);
        unsetenv(good[i][0]);
    }
    ck_assert(!kbt_exists(log));
    unsetenv("KBENCH_TUNE_LOG");
    kbt_rm_rf(dir);
}
END_TEST

/* KBENCH_LOCK_DIR must be a directory a file can be made in: a lock folder
 * no server could use cost each --case 30 s of polling for a socket that
 * never came, and then a SKIP that said nothing of it. */
START_TEST(lock_dir_probed)
{
    char dir[4096], file[4200];
    tmp_file(dir, file, sizeof file, "afile", "x");
    kb_err e;
    setenv("KBENCH_LOCK_DIR", dir, 1);
    ck_assert_msg(kb_cli_check_lock_dir(&e) == KB_OK, "%s", e.msg);
    setenv("KBENCH_LOCK_DIR", file, 1);
    ck_assert_int_eq(kb_cli_check_lock_dir(&e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "KBENCH_LOCK_DIR") && strstr(e.msg, file) &&
                      strstr(e.msg, "not a directory"),
                  "%s", e.msg);
    unsetenv("KBENCH_LOCK_DIR"); /* the default, /tmp: named as the default */
    ck_assert_msg(kb_cli_check_lock_dir(&e) == KB_OK, "%s", e.msg);
    /* nothing of the probe is left: rmdir of a folder with a file fails */
    ck_assert_int_eq(unlink(file), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The on/off variables take a documented set, in any case; anything else is
 * refused rather than read as "on". */
START_TEST(env_switch_values)
{
    static const char *const off[] = {"0", "off", "OFF", "false", "False", "no", "NO"};
    static const char *const on[] = {"1", "on", "On", "true", "TRUE", "yes", "Yes"};
    static const char *const bad[] = {"of", "2", "none", "y", " off", "off "};
    kb_err e;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        int v = 1;
        ck_assert_int_eq(kb_env_switch("V", off[i], &v, &e), KB_OK);
        ck_assert_msg(v == 0, "%s", off[i]);
    }
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        int v = 0;
        ck_assert_int_eq(kb_env_switch("V", on[i], &v, &e), KB_OK);
        ck_assert_msg(v == 1, "%s", on[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v = 7;
        ck_assert_msg(kb_env_switch("KBENCH_X", bad[i], &v, &e) == KB_ERR_ARG, "'%s'", bad[i]);
        ck_assert_int_eq(v, 7);
        ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_X='"));
    }
    int v = 5; /* unset or empty: the caller's default */
    ck_assert_int_eq(kb_env_switch("V", NULL, &v, &e), KB_OK);
    ck_assert_int_eq(kb_env_switch("V", "", &v, &e), KB_OK);
    ck_assert_int_eq(v, 5);
}
END_TEST

/* The test knobs' backend must be one kbench has, as KBENCH_TEST_SPLIT's
 * is: nosuch:0.5 matched no series, and the knob measured nothing. */
START_TEST(knob_backends_checked)
{
    kb_knobs k;
    kb_err e;
    ck_assert_int_eq(kb_knobs_parse("nosuch:0.5", NULL, NULL, &k, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "KBENCH_TEST_EXTRA_BYTES='nosuch:0.5': unknown backend 'nosuch'"),
                  "%s", e.msg);
    ck_assert_int_eq(kb_knobs_parse(NULL, "nosuch:0.5", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_EXTRA_TIME='nosuch:0.5'"));
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, "nosuch:skip_last", &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_PERTURB='nosuch:skip_last'"));
    ck_assert_int_eq(kb_knobs_parse("cublaslt_epilogue:0.5", "cudnn:0.1", "eager:skip_last", &k,
                                    &e),
                     KB_OK);
}
END_TEST

/* An explicit --baseline is read (not only found) before the device opens:
 * a malformed file is the run's error on every machine, not swallowed by
 * the SKIP of one without a GPU. */
START_TEST(explicit_baseline_read_before_the_device)
{
    char dir[4096], path[4200];
    tmp_file(dir, path, sizeof path, "base.csv", "benchmark,backend\nsoftmax_forward\n");
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--baseline", path), KB_OK);
    kb_session s;
    const kb_status st = kb_session_open(&s, &o, &e);
    kb_session_close(&s);
    ck_assert_msg(st == KB_ERR_PARSE, "status %d: %s", st, e.msg);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    kbt_rm_rf(dir);
}
END_TEST

/* The banner (seed parity: versions first) from known facts. */
START_TEST(env_banner_text)
{
    kb_env env = {13000, 12080, 91400, 0, 1980, 3201};
    kb_device d;
    memset(&d, 0, sizeof d);
    d.ordinal = 1;
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    d.sm_count = 132;
    d.cc_major = 9;
    d.total_mem = (size_t)143771 << 20;
    char buf[640];
    kb_env_banner(&env, &d, buf, sizeof buf);
    ck_assert_str_eq(buf, "kbench " KB_VERSION " | CUDA runtime 13.0, driver 12.8 | cuDNN 9.14.0 | "
                          "GPU 1: NVIDIA H200 (sm_90, 132 SMs, 151 GB) | SM clock 1980 MHz, "
                          "memory clock 3201 MHz (peak)");
    kb_env_compact(&env, buf, sizeof buf);
    ck_assert_ptr_null(strstr(buf, "H200")); /* rows have a gpu column */
    ck_assert_ptr_nonnull(strstr(buf, "SM clock 1980 MHz"));
    kb_env none = {13000, 0, 0, 0, 0, 0};
    kb_env_banner(&none, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "kbench " KB_VERSION " | CUDA runtime 13.0, driver none | cuDNN not found | GPU: none");
}
END_TEST

/* A named tuning cache (--tune-cache, KBENCH_TUNE_CACHE) must exist unless
 * --tune starts it, checked before any GPU work: a mistyped path had the
 * tuned backend run its heuristic on every case without a word, which the
 * gate then read as a slowdown. The GPU's own file may be absent (a GPU
 * model not tuned yet). */
START_TEST(named_tune_cache_must_exist)
{
    char dir[4096], path[4200], got[4300];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/cache.txt", dir);
    kb_options o;
    memset(&o, 0, sizeof o);
    kb_err e;
    o.tune_cache = path;
    ck_assert_int_eq(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "--tune-cache names"));
    o.tune = 1; /* --tune writes it */
    ck_assert_int_eq(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), KB_OK);
    o.tune = 0;
    o.tune_cache = NULL;
    ck_assert_int_eq(kb_session_tune_cache_path(&o, path, NULL, got, sizeof got, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TUNE_CACHE names"));
    kbt_write(path, "# kbench tuned-backend launch configurations\n");
    ck_assert_int_eq(kb_session_tune_cache_path(&o, path, NULL, got, sizeof got, &e), KB_OK);
    ck_assert_str_eq(got, path);
    /* nothing named (an empty variable is none): the GPU's file, absent or not */
    ck_assert_int_eq(kb_session_tune_cache_path(&o, "", "NO_SUCH_GPU", got, sizeof got, &e),
                     KB_OK);
    ck_assert_ptr_nonnull(strstr(got, "/NO_SUCH_GPU.txt"));
    o.tune_cache = dir;
    ck_assert_int_eq(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "directory"));
    kbt_rm_rf(dir);
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
    tcase_add_test(t, perf_tolerance_range);
    tcase_add_test(t, equals_forms);
    tcase_add_test(t, double_dash_ends_options);
    tcase_add_test(t, repeats);
    tcase_add_test(t, bad_lists);
    tcase_add_test(t, tuned_config_values);
    tcase_add_test(t, compile_mode);
    tcase_add_test(t, custom_compile_maps_to_tuned_config);
    tcase_add_test(t, json_config);
    tcase_add_test(t, shape_dims_checked_against_selection);
    tcase_add_test(t, backend_checked_against_selection);
    tcase_add_test(t, output_paths_checked_up_front);
    tcase_add_test(t, env_banner_text);
    tcase_add_test(t, prepare_takes_nothing_that_records);
    tcase_add_test(t, perf_tolerance_env_only_for_runs);
    tcase_add_test(t, inputs_checked_against_selection);
    tcase_add_test(t, empty_selection_is_an_error);
    tcase_add_test(t, exit_code_of_cases);
    tcase_add_test(t, usage_errors_get_the_hint_once);
    tcase_add_test(t, named_tune_cache_must_exist);
    tcase_add_test(t, output_paths_compared_as_files);
    tcase_add_test(t, env_values_checked_up_front);
    tcase_add_test(t, lock_dir_probed);
    tcase_add_test(t, env_switch_values);
    tcase_add_test(t, knob_backends_checked);
    tcase_add_test(t, explicit_baseline_read_before_the_device);
    suite_add_tcase(s, t);
    return s;
}
