/* Command-line parsing: good and bad invocations, the selection they make,
 * usage errors and exit codes. The environment and the checks made before
 * any GPU work are test_cli_checks.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "unit.h"

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
/* An unknown --backend name lists the backends the selected benchmarks
 * have, wherever the benchmarks stand on the command line; all of them
 * with --all. */
START_TEST(unknown_backend_lists_the_selected_benchmarks_backends)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "mlp_forward", "--backend", "nope"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "Unknown backend 'nope': mlp_forward has eager, fused, tuned, "
                            "cublaslt_epilogue");
    ck_assert_int_eq(PARSE(&o, &e, "--backend", "eager,nope", "mlp_swiglu_forward"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "Unknown backend 'nope': mlp_swiglu_forward has eager, fused, tuned");
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "mlp_forward", "--backend", "nope"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "Unknown backend 'nope': the selected benchmarks have eager, fused, "
                            "tuned, cudnn, cublaslt_epilogue");
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--backend", "nope"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "Unknown backend 'nope': the selected benchmarks have eager, fused, "
                            "tuned, cudnn, cublaslt_epilogue");
}
END_TEST

START_TEST(backend_checked_against_selection)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--backend", "cublaslt_epilogue"), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--backend cublaslt_epilogue: no selected benchmark has it "
                            "(softmax_forward has eager, fused, tuned, cudnn)");
    ck_assert_int_eq(PARSE(&o, &e, "cross_entropy_forward", "geglu_forward", "--backend",
                           "cudnn,cublaslt_epilogue"),
                     KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "--backend cudnn,cublaslt_epilogue: no selected benchmark has it "
                            "(the selected benchmarks have eager, fused, tuned)");
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
                            "(mlp_forward takes randn; rmsnorm_forward takes randn, wide, "
                            "constant, small)");
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
    /* each alone, with no benchmark named */
    static const struct {
        const char *flag;
        kb_mode mode;
    } alone[] = {{"--list", KB_MODE_LIST},           {"--list-cases", KB_MODE_LIST_CASES},
                 {"--describe", KB_MODE_DESCRIBE},   {"--self-test", KB_MODE_SELF_TEST},
                 {"--help", KB_MODE_HELP}};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof alone / sizeof alone[0]; i++) {
        ck_assert_msg(PARSE(&o, &e, alone[i].flag) == KB_OK, "%s: %s", alone[i].flag, e.msg);
        ck_assert_int_eq(o.mode, alone[i].mode);
    }
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4"), KB_OK);
    ck_assert_int_eq(o.mode, KB_MODE_CASE);
    ck_assert_str_eq(o.case_name, "softmax_forward.eager.bf16.4x4");
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

/* o holds n named tuned configurations, the i-th name:text. */
static void expect_custom(const kb_options *o, int n, int i, const char *name, const char *text)
{
    ck_assert_int_eq(o->ncustom, n);
    ck_assert_str_eq(o->custom[i].name, name);
    ck_assert_str_eq(o->custom[i].text, text);
}

START_TEST(tuned_configs)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "wide:threads=512,rows=1",
                           "--tuned-config", "narrow:threads=64"),
                     KB_OK);
    expect_custom(&o, 2, 0, "wide", "threads=512,rows=1");
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
    expect_custom(&o, 1, 0, "wide", "threads=512,rows=2");
    /* beside a --tuned-config, in command-line order of kinds */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tuned-config", "a:threads=64",
                           "--custom-compile-options={\"db\":true}", "--custom-compile-name=b"),
                     KB_OK);
    expect_custom(&o, 2, 1, "b", "db=1");
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
    tcase_add_test(t, unknown_backend_lists_the_selected_benchmarks_backends);
    tcase_add_test(t, prepare_takes_nothing_that_records);
    tcase_add_test(t, inputs_checked_against_selection);
    tcase_add_test(t, empty_selection_is_an_error);
    tcase_add_test(t, exit_code_of_cases);
    tcase_add_test(t, usage_errors_get_the_hint_once);
    suite_add_tcase(s, t);
    return s;
}
