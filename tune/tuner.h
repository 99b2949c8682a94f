/* The tuned backend's launch-parameter selection: heuristic default, an
 * on-disk cache of search results keyed by GPU, and a coordinate-descent
 * search (move one parameter at a time, keep improvements: the method torch
 * inductor's coordinate_descent_tuning uses).
 *
 * Each tuned kernel file describes its search space with a kb_tune_space and
 * wires its kb_impl to the generic kb_tuned_* functions below. */
#ifndef KB_TUNER_H
#define KB_TUNER_H

#include "kbench.h"
#include "tunekey.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_TUNE_MAX_PARAMS 8
#define KB_TUNE_MAX_CHOICES 12

typedef struct {
    int v[KB_TUNE_MAX_PARAMS]; /* values in the order of kb_tune_space.names */
} kb_tune_cfg;

typedef struct kb_tune_space {
    const char *op; /* benchmark name, e.g. "softmax_forward" */
    int nparams;
    const char *names[KB_TUNE_MAX_PARAMS];  /* "threads", "rows", "cluster", ... */
    int nchoices[KB_TUNE_MAX_PARAMS];
    int choices[KB_TUNE_MAX_PARAMS][KB_TUNE_MAX_CHOICES];
    /* Default when no cache entry exists: must be valid for every problem. */
    void (*heuristic)(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out);
    /* 1 if the kernel can run c on p (instantiated, fits registers/smem);
     * NULL: every configuration can. */
    int (*valid)(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c);
    /* Scratch bytes the launch needs (may be NULL: none). */
    size_t (*workspace)(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c);
    kb_status (*launch)(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                        cudaStream_t s, kb_err *e);
    /* Kernels one launch of c enqueues (kb_impl.kernels); NULL: 1. */
    int (*kernels)(const kb_problem *p, const kb_tune_cfg *c);
    /* Resets parameters that do not matter for the rest of c to one
     * representative choice (the first, or the one whose kernel c runs), so
     * that two texts of one kernel are one configuration: parsed
     * texts (cache, --tuned-config) and the search's candidates pass through
     * it (no kernel timed twice, no config column naming a choice that did
     * not run). NULL: every parameter always matters. */
    void (*canon)(kb_tune_cfg *c);
} kb_tune_space;

/* "threads=256,rows=1" -> cfg; unknown keys, bad numbers, values not among
 * the choices: KB_ERR_ARG naming the key. Keys left out keep base's value.
 * The result is canonical (kb_tune_space.canon). */
kb_status kb_tune_parse(const kb_tune_space *sp, const char *text, const kb_tune_cfg *base,
                        kb_tune_cfg *out, kb_err *e);
void kb_tune_format(const kb_tune_space *sp, const kb_tune_cfg *c, char *buf, size_t len);

/* ---- building blocks, exposed for the unit tests --------------------------- */

/* kb_tune_bucket (the shape bucket of a cache key): tunekey.h. */

/* One cache entry's key. Fields must not contain '|' or line breaks (the GPU
 * name passes through kb_tune_key_gpu). */
typedef struct {
    const char *gpu, *op, *dtype, *bucket;
} kb_tune_key;
/* The key's GPU field for a device name (NULL or "": "unknown GPU"): '|'
 * and line breaks become '_'. */
void kb_tune_key_gpu(const char *name, char *buf, size_t len);

/* Look k up in the cache file at path. A missing file is not an error
 * (*found = 0); a malformed line is KB_ERR_PARSE naming path:line. The last
 * matching line wins. cfg receives the "key=val,..." text. */
kb_status kb_tune_cache_lookup(const char *path, const kb_tune_key *k, char *cfg, size_t cfg_len,
                               double *gbps, int *found, kb_err *e);
/* Every entry of the cache file at path, in file order (comments and blank
 * lines skipped): fn(arg, its key, its "key=val,..." text, its GB/s, its
 * line number). Blanks around a field and a UTF-8 byte order mark before
 * the first line are dropped. Stops at the first malformed line
 * (KB_ERR_PARSE naming path:line and why: among others a key that could
 * never match, its benchmark not registered, its dtype unknown or its bucket
 * not "N<=n[,unaligned],M<=m" with n, m powers of two) or at fn's first
 * status other than KB_OK, and returns it. A missing file has no entries.
 * kb_tune_cache_lookup is built on it. */
typedef kb_status (*kb_tune_entry_fn)(void *arg, const kb_tune_key *k, const char *cfg,
                                      double gbps, int lineno, kb_err *e);
kb_status kb_tune_cache_each(const char *path, kb_tune_entry_fn fn, void *arg, kb_err *e);
/* Insert or replace k's entry, keeping every other line (comments too);
 * creates the file (and its directory) with a comment header when missing.
 * Atomic: written to a temporary file, then renamed over path. */
kb_status kb_tune_cache_store(const char *path, const kb_tune_key *k, const char *cfg,
                              double gbps, kb_err *e);

/* Cost of one candidate, lower is better (the tuner passes milliseconds).
 * Set *cost to INFINITY for a candidate that cannot run; a status other than
 * KB_OK aborts the search. */
typedef kb_status (*kb_tune_cost_fn)(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e);

/* How the search checks and times a candidate. The tuner is handed one
 * (kb_setup_ctx.measurer) by the layer that runs cases, which owns the case
 * buffers, the reference and the timer (run/tune_measure.c): the tuner
 * calls down only, never into the harness. */
typedef struct kb_tune_bench kb_tune_bench; /* one problem's buffers, the measurer's */
typedef kb_status (*kb_tune_launch_fn)(void *arg, cudaStream_t s, kb_err *e);
typedef struct kb_tune_measurer {
    void *arg; /* handed to open */
    /* p's tensors with workspace_bytes of workspace, its inputs filled and
     * its reference computed on s: *b, and in *t the tensors a launch takes.
     * KB_ERR_DEVMEM when p does not fit (nothing is left allocated). */
    kb_status (*open)(void *arg, const kb_problem *p, size_t workspace_bytes, cudaStream_t s,
                      kb_tune_bench **b, kb_tensors *t, kb_err *e);
    /* Fills b's outputs so that an element a launch does not write fails the check. */
    kb_status (*poison)(kb_tune_bench *b, cudaStream_t s, kb_err *e);
    /* The outputs against the reference at p's default tolerance: *bad 0
     * when they pass, else 1 and what says what is wrong. */
    kb_status (*check)(kb_tune_bench *b, cudaStream_t s, int *bad, char *what, size_t len,
                       kb_err *e);
    /* Median milliseconds of fn(arg) on s, timed as cases are (L2 flushed
     * before each sample) to the precision ranking candidates needs. */
    kb_status (*time)(kb_tune_bench *b, kb_tune_launch_fn fn, void *arg, cudaStream_t s,
                      double *median_ms, kb_err *e);
    void (*close)(kb_tune_bench *b);
} kb_tune_measurer;

/* Configurations that move two or more parameters of c at once, each by
 * one step (to its nearest choice below or above): the 3^n - 1 neighbours
 * of c less the 2n one-parameter moves, in order of how many parameters
 * move (pairs first), then of parameter index. Only those sp->valid accepts
 * (pruned before any timing); one it refuses is walked further along its
 * own directions, one moved parameter at a time, nearest first, and the
 * first valid configuration found stands in for it (listed once). Writes
 * at most max into out; returns the count written. */
#define KB_TUNE_MAX_DIAGONALS 6561 /* 3^KB_TUNE_MAX_PARAMS */
int kb_tune_diagonals(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                      const kb_tune_cfg *c, kb_tune_cfg *out, int max);

/* Coordinate descent from start (which must be valid): for each parameter in
 * turn evaluate the nearest valid choice below and above the current value,
 * move to the better one if it beats the best cost by more than 1 %; repeat
 * until a full pass makes no move. Then try each parameter's first and last
 * choice (others unchanged); one that beats the best by more than 1 % is
 * taken and the descent restarts from it. Once neither finds a move, every
 * direction is checked (kb_tune_diagonals, as Inductor's
 * coordinate_descent_check_all_directions): the best of them, if it beats
 * the best by more than 1 %, is taken and the descent restarts. All of it
 * stops once max_evals distinct configurations have been evaluated. best/best_cost receive the winner; *evals (may be NULL)
 * the number of evaluations. */
kb_status kb_tune_search(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                         const kb_tune_cfg *start, kb_tune_cost_fn cost, void *arg,
                         int max_evals, kb_tune_cfg *best, double *best_cost, int *evals,
                         kb_err *e);

/* Generic kb_impl glue for tuned kernels. setup picks the configuration:
 * ctx->custom_config if given, else the cache entry for (GPU, op, dtype,
 * bucket: N and M classes, tunekey.h) in ctx->tune_cache, else the
 * heuristic; with ctx->tune it first runs the search and stores the winner
 * in the cache (the search measures through ctx->measurer: KB_ERR_ARG
 * without one). An entry naming a key or value this build does not have
 * runs the heuristic, the note saying so; one whose keys are all known but
 * incomplete is KB_ERR_PARSE naming path:line (with ctx->tune: the search
 * starts from the heuristic and replaces it). */
kb_status kb_tuned_setup(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                         void **state, size_t *workspace_bytes, kb_err *e);
kb_status kb_tuned_run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                       kb_err *e);
void kb_tuned_describe(const void *state, char *buf, size_t len);
void kb_tuned_teardown(void *state);
int kb_tuned_kernels(const kb_problem *p, const void *state);

/* Defines kb_<op>_tuned_<dir> from a kb_tune_space named space. */
#define KB_TUNED_IMPL(sym, bench_id, space)                                   \
    static kb_status sym##_setup(const kb_problem *p, const kb_setup_ctx *ctx, \
                                 void **state, size_t *ws, kb_err *e)         \
    {                                                                         \
        return kb_tuned_setup(&(space), p, ctx, state, ws, e);                \
    }                                                                         \
    KB_EXTERN_C const kb_impl sym = {"tuned", bench_id, sym##_setup, kb_tuned_run, \
                                     kb_tuned_describe, kb_tuned_teardown, kb_tuned_kernels, \
                                     &(space)};

#ifdef __cplusplus
#define KB_EXTERN_C extern "C"
#else
#define KB_EXTERN_C
#endif

#ifdef __cplusplus
}
#endif
#endif
