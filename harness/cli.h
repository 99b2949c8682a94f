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
               KB_MODE_SELF_TEST, KB_MODE_HELP } kb_mode;

typedef struct {
    char name[48];  /* series is "tuned:<name>" */
    char text[208]; /* "threads=256,rows=2"     */
} kb_custom_config;

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
    int visualize;                    /* write report + plots after run   */
    const char *report_dir;
    const char *baseline, *csv, *json, *dump_dir, *tune_cache;
    kb_custom_config custom[KB_MAX_CUSTOM];
    int ncustom;
    int device;                       /* -1 = CTest allocation or 0       */
} kb_options;

/* KB_ERR_ARG with a message for anything malformed; the caller prints it
 * and exits 2. */
kb_status kb_cli_parse(int argc, char **argv, kb_options *o, kb_err *e);
void kb_cli_usage(FILE *f);
/* KBENCH_PERF_TOLERANCE (value passed in, NULL/empty: unset) sets the
 * --perf-tolerance default, so ci/gate can give every CTest case its
 * tolerance; the command-line flag wins. Malformed: KB_ERR_ARG. */
kb_status kb_cli_env(const char *perf_tolerance, kb_options *o, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
