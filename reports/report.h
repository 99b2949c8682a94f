/* kbench-report: what a kernel engineer reads after a run.
 *
 * Input is one or more results CSVs (base/results.h), ours and peers'
 * (torch_eager, torch_compile, liger, quack: same schema, merged in as extra
 * series), optionally a baseline file (base/baseline.h). A series is the
 * backend column. A row appearing twice (same benchmark, backend, dtype, M,
 * N) keeps the later one, so a partial re-run listed last overrides.
 *
 * Output, all from kb_report_generate():
 *   stdout      per benchmark, PyTorch genai_layers' lines:
 *                 Geomean speedup for benchmark <benchmark>
 *                   eager <n> data points
 *                   <backend> <n> data points, <g>x speedup
 *               per (benchmark, dtype): "Geomean speedup for benchmark <b>
 *               (<dtype>)"; g = geomean of reference median_ms / backend
 *               median_ms over the (M, N) both timed, the same definition as
 *               report.md and summary.csv. The reference is eager unless
 *               opts->reference names another series. A backend with no such
 *               shape gets no line. Without reference rows the block prints
 *               "  no <ref> results: speedup not computed" instead.
 *   report.md   summary, per-shape GB/s, regressions, accuracy failures and
 *               skips; reads as a CI job summary or PR comment. No clock
 *               time in it: the same input gives the same bytes.
 *   report.html report.md as one self-contained page (CSS and plot SVGs
 *               inlined), for CI artifacts; written with report.md.
 *   summary.csv geomeans per (benchmark, backend, dtype).
 *   plots/      per (benchmark, dtype): <b>_<dtype>.dat + .gp (gnuplot),
 *               .png (pngcairo) and .svg. Without gnuplot the .dat/.gp are
 *               still written and report.md says the images are missing.
 *
 * Regressions: a row's verdict column wins when present (the run judged it
 * against its baseline). Otherwise, with a baseline file, the row is judged
 * by the gate's rule (base/gate.h: change = now/baseline - 1 in GB/s,
 * band = tolerance + 2*sqrt(noise_now^2 + noise_base^2), NOISY above 5 %
 * run noise), with the report's tolerance. kbench's launch-jitter time floor
 * is not applied: results rows do not record it (report.md says so).
 *
 * A baseline is one GPU's: kbench names it after the GPU
 * (kb_baseline_path: baselines/<gpu, blanks as _>.csv). A file whose name
 * is a GPU's (it begins like CUDA's names of NVIDIA GPUs: NVIDIA_, Tesla_,
 * Quadro_, GeForce_, TITAN_) judges only rows of that GPU: a row to be
 * judged by it (no verdict of its own, timed, a row in the file) from
 * another GPU is KB_ERR_ARG naming both GPUs and the file. A file with any
 * other name cannot say its GPU: stderr and report.md warn that the rows'
 * GPU was not checked, as they do for judged rows without a gpu column. */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include <stdio.h>

#include "baseline.h"
#include "kbench.h"
#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    KB_REPORT_STDOUT = 1u, /* speedup lines on opts->out            */
    KB_REPORT_MD = 2u,     /* <out_dir>/report.md                   */
    KB_REPORT_CSV = 4u,    /* <out_dir>/summary.csv                 */
    KB_REPORT_PLOTS = 8u,  /* <out_dir>/plots/                      */
    KB_REPORT_ALL = 15u
};

#define KB_REPORT_DEFAULT_TOL 0.10

typedef struct {
    const char *out_dir;       /* created if missing; required for MD/CSV/PLOTS */
    const char *baseline_path; /* NULL: only the verdict column is used          */
    const char *title;         /* GPU name for titles; NULL: results' gpu column */
    unsigned formats;          /* KB_REPORT_* bits                               */
    const char *gnuplot;       /* NULL: "gnuplot" on PATH, then /usr/bin/gnuplot */
    double sol_gbps;           /* <= 0: median of the results' sol_gbps          */
    double tolerance;          /* <= 0: KB_REPORT_DEFAULT_TOL                    */
    FILE *out;                 /* speedup lines; NULL: stdout                    */
    const char *image_base;    /* report.md's plot links under this URL (e.g.
                                  where CI publishes the report folder); NULL:
                                  relative "plots/..."                          */
    const char *reference;     /* speedup denominator series; NULL: "eager". With
                                  peers merged, "torch_eager" compares with the
                                  seed suite's numbers                          */
    size_t *regressions;       /* out: kbench rows judged SLOWER, FUSION_CHANGED
                                  or failing accuracy (peers' rows excluded);
                                  NULL: unused */
    struct kb_report_outcome *outcome; /* out: what was verified; NULL: unused */
} kb_report_opts;

/* What a report verified, for kbench-report's exit status. */
typedef struct kb_report_outcome {
    size_t regressions; /* as *opts->regressions                                     */
    size_t checked;     /* rows whose accuracy was checked (PASS or FAIL) or whose
                           speed was compared (SAME FASTER SLOWER NOISY
                           FUSION_CHANGED, recorded or judged here)                  */
    int baseline_given; /* opts->baseline_path was set                              */
    size_t baseline_matched; /* kbench rows (not peers') the baseline has a row for */
} kb_report_outcome;

void kb_report_opts_init(kb_report_opts *o);

/* kbench-report's exit status once the report is written: 1 when nothing
 * was verified (no row checked) or a baseline was given and no kbench row
 * matched it (a wrong file, or results of other cases): the report says why
 * but a caller must not read it as a pass; else 4 with a regression, else 0.
 * For 1, why gets the line for stderr (naming baseline_path). */
int kb_report_exit_status(const kb_report_outcome *oc, const char *baseline_path, char *why,
                          size_t len);

/* An input (results or baseline file) that is one of the files the report
 * writes under opts->out_dir (report.md, report.html, summary.csv, a plot's
 * .dat/.gp/.png/.svg), compared by device and inode (links, "./" and other
 * spellings included): KB_ERR_ARG naming it, before anything is read or
 * written, since the report would replace what it was made from. Inputs
 * that do not exist are left to their readers. */
kb_status kb_report_check_inputs(const kb_report_opts *o, const char *const *paths, size_t n,
                                 kb_err *e);

/* Everything above. Zero rows is KB_ERR_ARG. A failed or missing gnuplot is
 * not an error: stderr and report.md say so. */
kb_status kb_report_generate(const kb_results *r, const kb_report_opts *o, kb_err *e);

/* kbench-report's command line (its --help says what it takes): speedup
 * lines and --help on out, messages on err; returns the exit status. Every
 * input (results, --baseline, the --out folder's place) is checked before
 * anything is printed or written: a bad one prints no speedup line and
 * leaves no report folder behind. */
int kb_report_main(int argc, char **argv, FILE *out, FILE *err);

/* ---- the maths, pure and unit tested ------------------------------------ */

/* Geometric mean of n values; NaN when n == 0 or any value is not a finite
 * positive number. */
double kb_geomean(const double *v, size_t n);

/* A row counts as timed when median_ms is finite and > 0. */
int kb_report_timed(const kb_result *x);

/* Speedups eager/backend of `backend` over `ref` for one benchmark: one per
 * (dtype, M, N) where both have a timed row (dtype NULL: all dtypes). Writes
 * up to cap of them to out (may be NULL) and returns how many there are. Rows
 * are assumed unique per key (see kb_report_dedup). */
size_t kb_report_common_speedups(const kb_result *rows, size_t n, const char *benchmark,
                                 const char *dtype, const char *ref, const char *backend,
                                 double *out, size_t cap);

/* Geomean of the above; NaN when there is no common shape. *points (may be
 * NULL) gets the count. */
double kb_report_speedup(const kb_result *rows, size_t n, const char *benchmark,
                         const char *dtype, const char *ref, const char *backend,
                         size_t *points);

/* Verdict of a GB/s against a baseline by the gate's rule with tolerance
 * tol: "SLOWER", "FASTER", "SAME", "NOISY", "NO_BASELINE" (base not a
 * positive number), or NULL when now is not a positive number (nothing to
 * judge). *change (may be NULL) gets now/base - 1 or NaN. */
const char *kb_report_judge(double now_gbps, double now_noise, double base_gbps,
                            double base_noise, double tol, double *change);
/* The same for a results row, with the gate's fastest-sample condition:
 * x's median_ms and min_ms (NaN: unknown, the condition is off), so a row
 * whose fastest sample is within tol of the baseline is NOISY, not SLOWER,
 * as kbench itself would have judged it. */
const char *kb_report_judge_row(const kb_result *x, double base_gbps, double base_noise,
                                double tol, double *change);

/* Copy of in with one row per key, the later row winning; gbps filled from
 * the byte model where missing and the benchmark is known. Returns how many
 * rows were replaced in *replaced (may be NULL). */
kb_status kb_report_dedup(const kb_results *in, kb_results *out, size_t *replaced, kb_err *e);

/* The stdout block for every benchmark: registry order, then others as met;
 * series likewise (eager fused tuned cudnn, then tuned:x and peers). */
void kb_report_print_speedups(FILE *f, const kb_results *deduped, const char *reference);

/* Rows added and GB/s moved between two baseline files (ci/refresh-baselines).
 * A missing old file counts as empty. */
kb_status kb_baseline_diff(FILE *f, const char *old_path, const char *new_path, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
