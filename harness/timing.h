/* Timing with CUDA events, L2 flushed before every repetition.
 *
 * Stopping rule (nvbench-like): after a warm-up, take samples until at least
 * min_samples are taken and min_ms of kernel time is accumulated, then stop
 * as soon as the robust relative noise (1.4826 * MAD / median) divided by
 * sqrt(samples) -- the relative standard error of the median's estimate --
 * falls below target_rel_err, or when max_ms of wall time is spent. */
#ifndef KB_TIMING_H
#define KB_TIMING_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int warmup;            /* untimed runs first                       */
    int min_samples;       /* >= 10                                    */
    int max_samples;
    double min_ms;         /* total timed kernel ms before stopping    */
    double max_ms;         /* wall-clock budget                        */
    double target_rel_err; /* e.g. 0.005                               */
} kb_timing_opts;

typedef struct {
    double median_ms, min_ms, max_ms, mean_ms;
    double noise;  /* robust relative spread: 1.4826*MAD/median         */
    double q1_ms, q3_ms;
    int samples;
    int converged; /* 1: stopped on the noise rule, 0: on the budget    */
} kb_timing;

typedef kb_status (*kb_timed_fn)(void *arg, cudaStream_t s, kb_err *e);

void kb_timing_defaults(kb_timing_opts *o);

/* L2 flush buffer for the current device (>= 2x L2). */
typedef struct {
    void *buf;
    size_t bytes;
} kb_flusher;
kb_status kb_flusher_init(kb_flusher *f, kb_err *e);
void kb_flusher_free(kb_flusher *f);

kb_status kb_time_fn(kb_timed_fn fn, void *arg, const kb_timing_opts *o, kb_flusher *f,
                     cudaStream_t s, kb_timing *out, kb_err *e);

/* The launch-to-launch spread of an empty kernel timed exactly as cases are
 * (L2 flush, stream held, events around it), over `samples` samples:
 * *spread_ms = p99 - p1, *overhead_ms = the median (what an event pair
 * around nothing reads). The verdict's time floor is derived from it. */
kb_status kb_launch_jitter(kb_flusher *f, cudaStream_t s, int samples, double *spread_ms,
                           double *overhead_ms, kb_err *e);

/* SM clock of the current device in MHz, measured by a short kernel that
 * counts clock64() cycles against %globaltimer nanoseconds; *max_mhz is the
 * device's peak clock. A reading far below the peak right after timing means
 * the GPU throttled (power, heat) or was shared during the case. */
kb_status kb_sm_clock(cudaStream_t s, double *mhz, double *max_mhz, kb_err *e);

/* Statistics on samples (sorted in place); pure C, unit tested. */
void kb_stats(double *ms, int n, kb_timing *out);

#ifdef __cplusplus
}
#endif
#endif
