/* kbench's command line, parsed into a plain struct (unit tested). */
#ifndef KB_CLI_H
#define KB_CLI_H

#include <stdio.h>

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_MAX_SHAPES 64
#define KB_MAX_CUSTOM 8

typedef enum { KB_MODE_RUN = 0, KB_MODE_LIST, KB_MODE_LIST_CASES, KB_MODE_CASE,
               KB_MODE_SELF_TEST, KB_MODE_HELP, KB_MODE_DESCRIBE } kb_mode;

typedef struct {
    char name[48];  /* series is "tuned:<name>" */
    char text[208]; /* "threads=256,rows=2"     */
} kb_custom_config;

/* --compile-mode (the seed suite's flag), mapped onto how the tuned backend
 * picks its launch configuration. */
typedef enum {
    KB_COMPILE_CACHE = 0, /* tuning cache entry, else the heuristic (default) */
    KB_COMPILE_HEURISTIC, /* the heuristic only: the cache is not read        */
    KB_COMPILE_AUTOTUNE   /* search now and store the winner (= --tune)       */
} kb_compile_mode;

typedef struct {
    kb_mode mode;
    const char *case_name;
    int bench[KB_NUM_BENCH];          /* selected benchmarks (1/0)        */
    int backend[KB_NUM_BACKENDS];     /* selected backends; all 0 = all   */
    int dtype[KB_NUM_DTYPES];         /* all 0 = the registered sweep     */
    kb_shape shapes[KB_MAX_SHAPES];
    int nshapes;                      /* 0 = registered shapes            */
    int sweep_odd, sweep_short;       /* --sweep: add odd / short lists   */
    int inputs[KB_NUM_INPUTS];        /* --inputs; all 0 = randn only     */
    double tolerance;                 /* NaN = per-dtype defaults         */
    double perf_tolerance;            /* NaN = gate default               */
    double budget_ms;                 /* NaN = default timing budget      */
    int exit_on_accuracy_failure, print_result, update_baseline, tune, no_timing;
    kb_compile_mode compile_mode;     /* tune == (compile_mode == AUTOTUNE) */
    int update_baseline_kernels;      /* only the kernel columns of rows  */
    int prepare;                      /* set each case up and tear it down
                                         (plan caches), nothing else      */
    int visualize;                    /* write report + plots after run   */
    const char *report_dir;
    const char *baseline, *csv, *json, *dump_dir, *tune_cache;
    kb_custom_config custom[KB_MAX_CUSTOM];
    int ncustom;
    int device;                       /* -1 = CTest allocation or 0       */
    char unknown_backend[32];         /* the first --backend name no
                                         benchmark has: refused once the
                                         benchmarks are known, naming theirs */
} kb_options;

/* getopt_long conventions: "--opt value" and "--opt=value", "--" ends the
 * options, benchmarks anywhere. Options that take one value may be given
 * once; --shape, --tuned-config, --backend, --dtype and benchmark names add
 * up. KB_ERR_ARG with a message naming the bad option or value for anything
 * malformed (no "see --help" in it: kb_cli_error adds that line once) and
 * exits 2. A run's selection must hold a case (kb_selection_foreach) and
 * every --inputs kind apply to a selected benchmark; a --case NAME must
 * parse (kb_case_parse). argv may be permuted. */
kb_status kb_cli_parse(int argc, char **argv, kb_options *o, kb_err *e);
void kb_cli_usage(FILE *f);
/* "Error: <message>" on f, and for a usage error (KB_ERR_ARG, exit 2) the
 * one line "Run 'kbench --help' for usage." after it. */
void kb_cli_error(FILE *f, kb_status st, const kb_err *e);
/* KBENCH_PERF_TOLERANCE (value passed in, NULL/empty: unset) sets the
 * --perf-tolerance default of a run or --case, so ci/gate can give every
 * CTest case its tolerance; the command-line flag wins. Malformed or outside
 * (0, 1): KB_ERR_ARG. A run or --case also checks the other variables it
 * reads (kb_cli_check_env). Other modes (--help, --list, --list-cases,
 * --describe, --self-test) gate nothing and ignore them all: KB_OK. */
kb_status kb_cli_env(const char *perf_tolerance, kb_options *o, kb_err *e);
/* Before any GPU work, the environment variables a run reads where its
 * cases use them (so that a bad value is not first met in a case, or
 * swallowed by a SKIP on a machine without a GPU), read with getenv:
 * KBENCH_TUNE_EVALS (kb_env_tune_evals), KBENCH_TUNE_LOG (a file that can be
 * made or appended to), KBENCH_CUPTI_LIB (a library that loads, or "none"),
 * KBENCH_PLAN_CACHE and KBENCH_SERVER (kb_env_switch) and the lock folder
 * (kb_cli_check_lock_dir). KB_ERR_ARG naming the variable and its value. */
kb_status kb_cli_check_env(kb_err *e);
/* kb_lock_dir (gpulock.h) exists, is a folder and a file can be made in it
 * (made and removed: as root, access() says yes to /proc). KB_ERR_ARG naming
 * KBENCH_LOCK_DIR, or the default folder, and why. */
kb_status kb_cli_check_lock_dir(kb_err *e);
/* An on/off variable (var names it in the message): 1, on, true, yes or 0,
 * off, false, no, in any case, into *on; NULL or empty leaves *on as it is
 * (the caller's default); anything else is KB_ERR_ARG. */
kb_status kb_env_switch(const char *var, const char *v, int *on, kb_err *e);
/* KBENCH_TUNE_EVALS: a count 1..100000 into *out; NULL or empty leaves *out
 * (the tuner's cap). Here so that the tuner and kb_cli_check_env read it
 * alike. */
kb_status kb_env_tune_evals(const char *v, int *out, kb_err *e);
/* Every case a run's selection holds (benchmarks x backends x input kinds x
 * dtypes x shapes, in run order), as fn(case, NULL, arg); a --shape a
 * benchmark does not take comes as fn(case, why, arg), passed over (fn may
 * be NULL: only count). Returns the number of cases, passed over ones not
 * counted. */
typedef void (*kb_selection_fn)(const kb_case *c, const kb_err *passed_over, void *arg);
int kb_selection_foreach(const kb_options *o, kb_selection_fn fn, void *arg);
/* What a run selects must run something (kb_cli_parse asks, for a run): a
 * --backend some selected benchmark has, a --shape one takes, both together,
 * --inputs kinds that apply, and at least one case. KB_ERR_ARG saying which
 * and why (selection.c). */
kb_status kb_cli_check_selection(const kb_options *o, kb_err *e);
/* The backends the selected benchmarks have, for messages about --backend:
 * "mlp_forward has eager, fused, tuned, cublaslt_epilogue" for one benchmark,
 * "the selected benchmarks have ..." for several, "the backends are ..." (every
 * registered one) when none is selected. */
void kb_selection_backends(const kb_options *o, char *buf, size_t len);
/* The exit status of cases that ran without an error of kbench's own: 1 when
 * one failed; 77 (KB_EXIT_SKIP) when a --case skipped, or when no case of a
 * run passed (all skipped: nothing was measured); else 0. */
int kb_cli_exit_code(kb_mode mode, int passed, int failed, int skipped);
/* Before any GPU work: --csv/--json name a file in an existing directory
 * (and not a directory) where their FILE.partial can be made (made and
 * removed: as root, access() says yes to /proc); they name two files (as
 * resolved: "a.csv" and "./a.csv" are one), neither the --baseline nor the
 * --tune-cache file; --dump, --report-dir (with --visualize) and results_dir
 * (KBENCH_RESULTS_DIR in --case mode; NULL/empty: none) are created when
 * missing and must be writable. KB_ERR_ARG naming the path. */
kb_status kb_cli_check_outputs(const kb_options *o, const char *results_dir, kb_err *e);
/* --custom-compile-options' JSON object {"key": value, ...} (values integers,
 * or strings holding one) -> "key=value,..." for a --tuned-config series.
 * Exposed for the unit tests. */
kb_status kb_cli_json_config(const char *json, char *out, size_t len, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
