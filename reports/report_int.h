/* What the report's files share: the deduplicated rows and the orders
 * (benchmarks, dtypes, series, shapes) every output walks in (model.c), so
 * the table, the CSV and the plots agree; the maths on them (maths.c); the
 * writers report.c drives. Not part of the public API. */
#ifndef KB_REPORT_INT_H
#define KB_REPORT_INT_H

#include <stdio.h>

#include "report.h"

/* A list of names pointing into the model's rows (which never move once
 * the model is built). */
typedef struct {
    const char **v;
    size_t n, cap;
} kb_names;

typedef struct {
    int64_t M, N, K; /* K = 0: a 2-D op */
} kb_mn;

/* GPU models side by side (gpus.c): per (benchmark, dtype, backend), sums
 * of logs over the timed cases every GPU of the input ran. */
#define KB_REPORT_GPUS_MAX 4
typedef struct {
    const kb_result *x; /* a row of the cell: its benchmark, dtype, backend */
    size_t cases, first; /* cases compared; input position of the cell's first */
    double log_sol[KB_REPORT_GPUS_MAX], log_gbps[KB_REPORT_GPUS_MAX];
} kb_report_gpu_row;

typedef struct {
    char gpu[KB_REPORT_GPUS_MAX][64]; /* in input order */
    size_t ngpu;
    int more; /* the input names more GPUs than are compared */
    kb_report_gpu_row *v;
    size_t n;
} kb_report_gpu_cmp;

/* A timed row's GB/s: its own column, else from the byte model and its
 * median (peers' rows may not carry it); NaN when untimed or unknown. */
double kb_report_row_gbps(const kb_result *x);

/* From the input rows before deduplication (r: they must outlive c);
 * c->n = 0 when fewer than two GPUs. */
kb_status kb_report_gpu_cmp_build(const kb_results *r, kb_report_gpu_cmp *c, kb_err *e);
void kb_report_gpu_cmp_free(kb_report_gpu_cmp *c);
double kb_report_gpu_cmp_sol(const kb_report_gpu_row *row, size_t g);
double kb_report_gpu_cmp_gbps(const kb_report_gpu_row *row, size_t g);
/* The section of report.md; nothing for fewer than two GPUs. */
void kb_report_write_gpu_cmp(FILE *f, const kb_report_gpu_cmp *c);

/* rows[0..n) sorted twice, for O(log n) lookups (index.c): by_cell by
 * (benchmark, dtype, backend, position), so a cell's rows are a run in
 * input order; by_key by (benchmark, dtype, backend, M, N, K, position). */
typedef struct {
    const kb_result *rows;
    size_t n;
    const kb_result **by_cell, **by_key;
} kb_report_index;

kb_status kb_report_index_build(kb_report_index *ix, const kb_result *rows, size_t n, kb_err *e);
void kb_report_index_free(kb_report_index *ix);
/* The rows of (benchmark, dtype, backend) in input order (backend NULL: of
 * any backend, grouped by backend), *count of them. */
const kb_result *const *kb_report_index_cell(const kb_report_index *ix, const char *bench,
                                             const char *dtype, const char *backend,
                                             size_t *count);
/* kb_report_find_row's answer (the first row with this key, any input
 * kind) in O(log n). */
const kb_result *kb_report_index_find(const kb_report_index *ix, const char *bench,
                                      const char *backend, const char *dtype, int64_t M,
                                      int64_t N, int64_t K);
/* kb_report_speedup over the indexed rows. */
double kb_report_index_speedup(const kb_report_index *ix, const char *bench, const char *dtype,
                               const char *ref, const char *backend, size_t *points);

/* A baseline's rows sorted by kb_baseline_find's key: kb_report_base_find
 * is kb_baseline_find(bl, x's key) in O(log n). bl may be NULL (empty). */
typedef struct {
    const kb_baseline_row **v;
    size_t n;
} kb_report_base_index;

kb_status kb_report_base_index_build(kb_report_base_index *ix, const kb_baseline *bl, kb_err *e);
void kb_report_base_index_free(kb_report_base_index *ix);
const kb_baseline_row *kb_report_base_find(const kb_report_base_index *ix, const kb_result *x);

typedef struct {
    kb_results rows;  /* deduplicated; gbps filled; sol_pct = % of SOL or NaN     */
    kb_report_index ix; /* of rows: kb_report_find, _has, _shapes, cells          */
    kb_names benches; /* registry order first, then as met in the input           */
    kb_names dtypes;  /* bf16 fp16 fp32, then others                               */
    kb_names series;  /* eager fused tuned cudnn, then as met (tuned:x, peers)     */
    double sol_gbps;  /* NaN when no row carries it and no override               */
    double peak_tflops; /* compute-bound ops' SOL: median of the rows' (NaN: none)   */
    double read_gbps, write_gbps; /* one-way streams: medians of the rows' (NaN: none) */
    char gpu[192];    /* title: opts->title, else every GPU of the input, joined  */
    kb_names gpus;    /* distinct gpu columns, as met (more than one: mixed input)  */
    kb_names versions; /* distinct kbench versions of kbench's (not peers') rows    */
    size_t replaced;  /* duplicate rows dropped                                   */
    double tol;
    const char *ref;  /* speedup denominator: opts->reference or "eager"          */
    const char *image_base; /* opts->image_base: plot links' prefix (NULL: none)   */
    kb_report_gpu_cmp gpu_cmp; /* GPU models side by side (points into the input)  */
} kb_report_model;

/* One (benchmark, dtype, backend) cell of the summary. */
typedef struct {
    size_t points;         /* timed shapes                                    */
    size_t speedup_points; /* shapes timed by both it and the reference      */
    double speedup;        /* geomean ref/backend; NaN without the reference */
    double gbps, sol_pct;  /* geomeans over its timed shapes; NaN if none    */
    double mix_sol_pct;    /* geomean % of the SOL for each shape's byte mix */
    kb_mn worst;           /* lowest GB/s                                     */
    double worst_gbps;     /* NaN when no timed shape                         */
    size_t fails, skips;
} kb_report_cell;

/* Regression judgement of one row (verdict column or baseline file). */
typedef struct {
    const kb_result *row;
    const char *verdict; /* SAME FASTER SLOWER NOISY NO_BASELINE */
    double base_gbps, change, noise;
} kb_report_judged;

kb_status kb_report_model_build(kb_report_model *m, const kb_results *r,
                                const kb_report_opts *o, kb_err *e);
void kb_report_model_free(kb_report_model *m);

/* The orders of r's benchmarks (registry order first), series (kbench's
 * backends first) and dtypes, then the rest as met; the model's, and the
 * stdout lines' (kb_report_print_speedups). On failure the lists hold what
 * was collected: free them all with kb_report_names_free. */
kb_status kb_report_orders(const kb_results *r, kb_names *benches, kb_names *series,
                           kb_names *dtypes, kb_err *e);
void kb_report_names_free(kb_names *s);

/* The input kind of a row: *kind points at it in x->config ("" for
 * randn), its length returned. Part of a row's key and its case name. */
size_t kb_report_inputs_of(const kb_result *x, const char **kind);
/* The first of rows[0..n) with this key, or NULL (any input kind): a scan;
 * kb_report_find and kb_report_index_find answer the same in O(log n). */
const kb_result *kb_report_find_row(const kb_result *rows, size_t n, const char *bench,
                                   const char *backend, const char *dtype, int64_t M,
                                   int64_t N, int64_t K);

/* Shapes of one (benchmark, dtype) in input order; caller frees *out. */
kb_status kb_report_shapes(const kb_report_model *m, const char *bench, const char *dtype,
                           kb_mn **out, size_t *n, kb_err *e);
/* The row for a key or NULL (of equal keys, the first: kb_report_find_row's
 * answer); through m->ix. */
const kb_result *kb_report_find(const kb_report_model *m, const char *bench,
                                const char *backend, const char *dtype, int64_t M,
                                int64_t N, int64_t K);
/* Does any row have this (benchmark, dtype) / (benchmark, dtype, backend)? */
int kb_report_has(const kb_report_model *m, const char *bench, const char *dtype,
                  const char *backend);
void kb_report_cell_get(const kb_report_model *m, const char *bench, const char *dtype,
                        const char *backend, kb_report_cell *c);

/* Judge every row against the verdict column or the baseline (bl may be
 * empty). *out is malloc'd, one entry per row, in row order. */
kb_status kb_report_judge_all(const kb_report_model *m, const kb_baseline *bl,
                              kb_report_judged **out, kb_err *e);

/* "<benchmark>.<backend>.<dtype>.<M>x<N>", the CTest case name. */
void kb_report_case_name(const kb_result *x, char *buf, size_t len);

/* Plot status, for report.md. */
typedef enum {
    KB_PLOTS_OFF = 0, /* not asked for                     */
    KB_PLOTS_DRAWN,   /* every image drawn                 */
    KB_PLOTS_NO_GNUPLOT,
    KB_PLOTS_FAILED /* gnuplot ran and failed on some    */
} kb_plot_state;

typedef struct {
    kb_plot_state state;
    char detail[512]; /* why, for report.md and stderr */
} kb_plot_result;

/* Writes <dir>/plots/<bench>_<dtype>.{dat,gp} for every (benchmark, dtype)
 * and runs gnuplot on each. I/O errors writing .dat/.gp are errors; gnuplot
 * missing or failing is recorded in *res. */
kb_status kb_report_plots(const kb_report_model *m, const char *dir, const char *gnuplot,
                          kb_plot_result *res, kb_err *e);
/* Does (benchmark, dtype) have a row with a GB/s to draw? Plots and the
 * links to them in report.md both ask this. */
int kb_report_plottable(const kb_report_model *m, const char *bench, const char *dtype);
/* The file stem of a plot, "<bench>_<dtype>" with anything but [A-Za-z0-9_-]
 * turned into '_'. */
void kb_report_plot_stem(const char *bench, const char *dtype, char *buf, size_t len);

/* report.md at md_path rendered to one self-contained HTML page (plots
 * inlined from dir/plots/<stem>.svg); html.c. */
kb_status kb_report_write_html(const char *md_path, const char *html_path, const char *dir,
                               const char *title, kb_err *e);

/* What report.md says about the baseline file the report judged rows with. */
typedef struct {
    const char *name;   /* the file's base name; NULL: none given (--baseline)     */
    int missing;        /* given but does not exist                                */
    size_t matched;     /* kbench rows it has a row for                            */
    char gpu_note[512]; /* why its GPU was not checked against the rows' ("": it
                           was, or nothing was judged with it)                     */
} kb_report_baseline_info;

/* report.md into f; always valid UTF-8 (a byte of the input that is not
 * becomes U+FFFD). */
kb_status kb_report_write_markdown(FILE *f, const kb_report_model *m,
                                   const kb_report_judged *j, const kb_report_baseline_info *bl,
                                   const kb_plot_result *plots, kb_err *e);
/* s[0..n) into f as UTF-8: a byte that starts no well-formed sequence is
 * written as U+FFFD. Report text comes from CSV fields (GPU names, peers'
 * messages) that promise no encoding; report.md and report.html must be
 * UTF-8 (GitHub, browsers), whatever they hold. */
void kb_report_put_utf8(FILE *f, const char *s, size_t n);
/* The "Kernels per call" section (reports/kernels.c); writes nothing when no
 * row carries a kernel count. */
int kb_report_has_kernels(const kb_report_model *m);
kb_status kb_report_write_kernels(FILE *f, const kb_report_model *m, kb_err *e);

/* Kernel time of rows[0..n) by kernel name (kernel_names / kernel_us lists),
 * largest first, at most cap names (the rest count in *total_us only).
 * Returns how many names were written. */
typedef struct {
    char name[128];
    double us;    /* summed over the rows */
    size_t calls; /* launches counted */
} kb_kernel_share;
size_t kb_report_kernel_split(const kb_result *const *rows, size_t n, kb_kernel_share *out,
                              size_t cap, double *total_us);

kb_status kb_report_write_summary_csv(const char *path, const kb_report_model *m, kb_err *e);

/* Peers are series measured outside kbench (torch_*, liger, quack, ...). */
int kb_report_is_peer(const char *backend);

#endif
