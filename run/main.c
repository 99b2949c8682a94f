/* kbench: the command-line driver. Parses options, then lists, runs one
 * CTest case, runs the reference self-test, or runs a selection of cases
 * and prints the geomean summary (and the report with --visualize). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "cli.h"
#include "describe.h"
#include "envinfo.h"
#include "knobs.h"
#include "reference.h"
#include "registry.h"
#include "report.h"
#include "run.h"
#include "server.h"

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static int exit_for(kb_status st)
{
    return st == KB_ERR_NODEV ? KB_EXIT_SKIP : st == KB_ERR_ARG ? EXIT_USAGE : EXIT_FAILED;
}

static void print_list(void)
{
    printf("%-24s %s\n", "benchmark", "backends");
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        printf("%-24s", kb_bench_info_get((kb_bench_id)b)->name);
        for (int be = 0; be < KB_NUM_BACKENDS; be++)
            if (kb_impl_get((kb_bench_id)b, kb_backend_name(be)))
                printf(" %s", kb_backend_name(be));
        printf("\n");
    }
}

static kb_status print_case(const kb_case *c, void *arg)
{
    char name[160], labels[256];
    kb_case_name(c, name, sizeof name);
    kb_case_labels(c, labels, sizeof labels);
    printf("%s %s\n", name, labels);
    return KB_OK;
}

/* ---- running a selection ------------------------------------------------- */
typedef struct {
    kb_session *s;
    int failed, passed, skipped;
    int expected; /* of the passed: known deviations failing as expected */
    int stop;     /* --exit-on-accuracy-failure hit */
} run_state;

/* --prepare: what was set up, in how long (nothing was measured). */
static void print_prepared(const run_state *rs, const kb_result *r, kb_outcome oc)
{
    char shape[72];
    kb_shape_format(shape, sizeof shape, r->M, r->N, r->K);
    const char *text = oc == KB_CASE_PASS ? r->config : r->message;
    printf("%s %s %s %s: %s in %.0f ms%s%s%s\n", r->benchmark, r->backend, r->dtype, shape,
           oc == KB_CASE_PASS ? "prepared" : oc == KB_CASE_SKIP ? "SKIP" : "FAILED",
           rs->s->phases.setup, text[0] ? " [" : "", text, text[0] ? "]" : "");
}

static void print_measured(const run_state *rs, const kb_result *r, kb_outcome oc)
{
    const int verbose = rs->s->o->print_result || rs->s->o->mode == KB_MODE_CASE;
    if (verbose || oc != KB_CASE_PASS) kb_result_print(stdout, r);
    if (verbose) {
        const kb_phases *ph = &rs->s->phases;
        printf("  wall %.0f ms: lock wait %.0f, setup %.0f, alloc %.0f, inputs+accuracy %.0f, "
               "timing %.0f, kernel check %.0f, teardown %.0f\n",
               ph->total, ph->lock, ph->setup, ph->alloc, ph->check, ph->timing, ph->kernels,
               ph->teardown);
    }
    else {
        char shape[72];
        kb_shape_format(shape, sizeof shape, r->M, r->N, r->K);
        /* Compute-bound (the op counts flops): TFLOP/s against the GEMM peak; a
         * 3-D shape alone (rope's kv heads) is still memory-bound. */
        if (isfinite(r->tflops) && r->tflops > 0)
            printf("%s %s %s %s: %.1f TFLOP/s (%.1f%% of GEMM peak), %.1f GB/s %s\n",
                   r->benchmark, r->backend, r->dtype, shape, r->tflops, r->sol_pct, r->gbps,
                   r->verdict);
        else
            printf("%s %s %s %s: %.1f GB/s (%.1f%% SOL, %.1f%% mix SOL) %s\n", r->benchmark,
                   r->backend, r->dtype, shape, r->gbps, r->sol_pct, r->mix_sol_pct,
                   r->verdict);
    }
}

static void report_case(run_state *rs, const kb_result *r, kb_outcome oc)
{
    if (rs->s->o->prepare) print_prepared(rs, r, oc);
    else print_measured(rs, r, oc);
    fflush(stdout);
    if (oc == KB_CASE_FAIL) rs->failed++;
    else if (oc == KB_CASE_SKIP) rs->skipped++;
    else rs->passed++;
    if (oc == KB_CASE_PASS && r->accuracy == KB_ACC_FAIL) rs->expected++;
    if (oc == KB_CASE_FAIL && r->accuracy == KB_ACC_FAIL &&
        rs->s->o->exit_on_accuracy_failure)
        rs->stop = 1;
}

static void run_one(run_state *rs, const kb_case *c)
{
    const kb_options *o = rs->s->o;
    kb_result r;
    if (rs->stop) return;
    report_case(rs, &r, kb_run_case(rs->s, c, NULL, &r));
    if (strcmp(c->backend, "tuned") != 0) return;
    for (int i = 0; i < o->ncustom && !rs->stop; i++)
        report_case(rs, &r, kb_run_case(rs->s, c, &o->custom[i], &r));
}

/* One case of the selection (kb_selection_foreach), or a --shape its
 * benchmark does not take: --shape names sizes for one kind of op (MxN or
 * MxNxK), and the other kind passes it over. */
static void run_selected(const kb_case *c, const kb_err *passed_over, void *arg)
{
    run_state *rs = arg;
    if (!passed_over) {
        run_one(rs, c);
        return;
    }
    printf("%s: passed over\n", kb_err_text(passed_over));
    rs->skipped++;
}

/* Under ci/gate every CTest case leaves its result in $KBENCH_RESULTS_DIR,
 * one CSV per case, for the report. */
static kb_status write_case_result(kb_session *s, kb_err *e)
{
    const char *dir = getenv("KBENCH_RESULTS_DIR");
    if (!dir || !*dir || !s->o->case_name) return KB_OK;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.csv", dir, s->o->case_name);
    return kb_results_write_csv(&s->results, path, e);
}

static int summarize(run_state *rs)
{
    const kb_options *o = rs->s->o;
    kb_err e = {{0}};
    int rc = rs->failed ? EXIT_FAILED : EXIT_PASS;
    if (kb_session_finish(rs->s, &e) != KB_OK) {
        fprintf(stderr, "Error: %s\n", kb_err_text(&e));
        rc = EXIT_FAILED;
    }
    if (o->mode != KB_MODE_CASE && rs->s->results.n && !o->prepare) {
        kb_report_opts ro;
        kb_report_opts_init(&ro);
        ro.formats = KB_REPORT_STDOUT;
        if (o->visualize) ro.formats = KB_REPORT_ALL;
        ro.out_dir = o->report_dir;
        ro.baseline_path = rs->s->baseline_path;
        ro.sol_gbps = rs->s->sol_gbps;
        ro.tolerance = rs->s->gate.tolerance;
        if (kb_report_generate(&rs->s->results, &ro, &e) != KB_OK) {
            fprintf(stderr, "Error: report: %s\n", kb_err_text(&e));
            rc = EXIT_FAILED;
        } else if (o->visualize)
            printf("report written to %s/report.md\n", o->report_dir);
    }
    if (o->mode != KB_MODE_CASE)
        printf("%d passed, %d failed, %d skipped\n", rs->passed, rs->failed, rs->skipped);
    if (o->mode != KB_MODE_CASE && rs->expected)
        printf("(%d of the passed are known deviations of a library, failing accuracy as "
               "expected)\n",
               rs->expected);
    else if (!o->prepare && write_case_result(rs->s, &e) != KB_OK) {
        fprintf(stderr, "Error: %s\n", kb_err_text(&e));
        rc = EXIT_FAILED;
    }
    if (rc == EXIT_PASS) rc = kb_cli_exit_code(o->mode, rs->passed, rs->failed, rs->skipped);
    if (rc == KB_EXIT_SKIP && o->mode != KB_MODE_CASE)
        printf("SKIP: no case of the selection ran (%d skipped)\n", rs->skipped);
    return rc;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* First on stdout, as the seed suite prints its versions: kbench, CUDA
 * runtime and driver, cuDNN, GPU, clocks. Without a usable GPU, what there is. */
static void print_banner(kb_session *s, kb_status open_status)
{
    char banner[640];
    if (open_status != KB_OK) kb_env_collect(s->dev.name[0] ? &s->dev : NULL, &s->env);
    kb_env_banner(&s->env, s->dev.name[0] ? &s->dev : NULL, banner, sizeof banner);
    printf("%s\n", banner);
    fflush(stdout);
}

static int run_cases(const kb_options *o)
{
    kb_err e = {{0}};
    kb_case one;
    if (o->mode == KB_MODE_CASE && kb_case_parse(o->case_name, &one, &e) != KB_OK) {
        kb_cli_error(stderr, KB_ERR_ARG, &e);
        return EXIT_USAGE;
    }
    kb_session s;
    const double t_open = wall_s();
    /* The test knobs (testing/knobs.h) wrap each use of a case: all off, the
     * backends as they are, unless a KBENCH_TEST_* variable is set. */
    kb_status st = kb_session_open(&s, o, &kb_test_knob_hooks, &e);
    print_banner(&s, st);
    if (st != KB_OK) {
        if (st == KB_ERR_NODEV) fprintf(stderr, "SKIP: %s\n", kb_err_text(&e));
        else kb_cli_error(stderr, st, &e); /* a missing --baseline file: usage */
        kb_session_close(&s);
        return exit_for(st);
    }
    printf("device %d: %s (PCI %s, %d SMs, sm_%d%d), SOL %.0f GB/s (copy; read-only %.0f, "
           "write-only %.0f), time floor %.2f us, baseline %s\n",
           s.dev.ordinal, s.dev.name, s.dev.pci, s.dev.sm_count, s.dev.cc_major, s.dev.cc_minor,
           s.sol_gbps, s.limits.read_gbps, s.limits.write_gbps, 1e3 * s.gate.floor_ms,
           s.baseline_path);
    printf("session ready in %.0f ms: device and CUDA context %.0f, baseline %.0f, L2 flush "
           "buffer and stream %.0f, SOL and time floor %.0f\n",
           1e3 * (wall_s() - t_open), s.open_ms[0], s.open_ms[1], s.open_ms[2], s.open_ms[3]);
    if (s.baseline_missing && !o->no_timing && !o->prepare)
        printf("WARNING: no baseline file for %s (%s): every case is NO_BASELINE, its speed is "
               "not gated%s\n",
               s.dev.name, s.baseline_path,
               o->update_baseline ? "; this run writes it" : " (record one with --update-baseline)");
    run_state rs = {&s, 0, 0, 0, 0, 0};
    /* Wall-clock span of the timed work, so a scheduler's serialisation of
     * cases on one GPU can be checked from the logs (ci/resource-check). */
    printf("span start %.3f\n", wall_s());
    fflush(stdout); /* a log read while the cases run shows they began */
    if (o->mode == KB_MODE_CASE) run_one(&rs, &one);
    else kb_selection_foreach(o, run_selected, &rs);
    printf("span end %.3f\n", wall_s());
    int rc = summarize(&rs);
    kb_session_close(&s);
    return rc;
}

static int self_test(const kb_options *o)
{
    kb_err e = {{0}};
    kb_device d;
    kb_status st = kb_device_open(o->device, &d, &e);
    if (st == KB_OK) st = kb_reference_selftest(stdout, &e);
    if (st == KB_OK) {
        printf("reference self-test passed on %s\n", d.name);
        return EXIT_PASS;
    }
    if (st == KB_ERR_ARG) kb_cli_error(stderr, st, &e); /* --device past the GPUs */
    else fprintf(stderr, "%s: %s\n", st == KB_ERR_NODEV ? "SKIP" : "FAIL", kb_err_text(&e));
    return exit_for(st);
}

/* Everything kbench does for one command line; the exit code. Run by main()
 * and, for CTest cases, by the per-GPU server (server.h). */
static int kb_main(int argc, char **argv)
{
    kb_options o;
    kb_err e = {{0}};
    if (argc < 2) {
        kb_cli_usage(stderr);
        return EXIT_USAGE;
    }
    if (kb_cli_parse(argc, argv, &o, &e) != KB_OK ||
        kb_cli_env(getenv("KBENCH_PERF_TOLERANCE"), &o, &e) != KB_OK ||
        ((o.mode == KB_MODE_RUN || o.mode == KB_MODE_CASE) &&
         kb_cli_check_outputs(&o, getenv("KBENCH_RESULTS_DIR"), &e) != KB_OK)) {
        kb_cli_error(stderr, KB_ERR_ARG, &e);
        return EXIT_USAGE;
    }
    switch (o.mode) {
    case KB_MODE_HELP: kb_cli_usage(stdout); return EXIT_PASS;
    case KB_MODE_LIST: print_list(); return EXIT_PASS;
    case KB_MODE_LIST_CASES: return kb_cases_foreach(print_case, NULL) == KB_OK ? 0 : 1;
    case KB_MODE_DESCRIBE:
        if (kb_describe(stdout, &e) == KB_OK) return EXIT_PASS;
        fprintf(stderr, "Error: %s\n", kb_err_text(&e));
        return EXIT_FAILED;
    case KB_MODE_SELF_TEST: return self_test(&o);
    case KB_MODE_CASE:
    case KB_MODE_RUN: return run_cases(&o);
    }
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* Before anything reads the registry: option parsing checks backends. */
    kb_err re = {{0}};
    if (kb_kernels_register(&re) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", kb_err_text(&re));
        return 1;
    }
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--serve") == 0)
        return kb_server_run(argv[2], argc == 4 ? atoi(argv[3]) : -1, kb_main);
    /* A CTest case goes to the GPU's server when one can be used; options
     * are checked here first so a usage error never starts one. */
    kb_options o;
    kb_err e = {{0}};
    if (argc >= 2 && kb_cli_parse(argc, argv, &o, &e) == KB_OK && o.mode == KB_MODE_CASE) {
        int rc = 0;
        if (kb_server_client(argc, argv, o.device, &rc)) return rc;
        /* In this process: GPU cases run one after another, so its exit is
         * on the suite's critical path. Everything is written and the
         * session closed when kb_main returns; the CUDA runtime's teardown
         * at exit adds nothing the driver does not do when the process ends. */
        rc = kb_main(argc, argv);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return kb_main(argc, argv);
}
