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
#include "stats.h"

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

/* kb_timing (one case's timing statistics), kb_stats and the settle rule
 * are base/stats.h's: pure C. */

typedef kb_status (*kb_timed_fn)(void *arg, cudaStream_t s, kb_err *e);

void kb_timing_defaults(kb_timing_opts *o);

/* The L2 flush: a read-only pass over a buffer of >= 2x L2 that is written
 * once, at init, so the L2 it leaves holds only clean lines of no tensor.
 * Not a memset: a memset leaves up to an L2's worth of dirty lines, and the
 * timed kernel, evicting them, pays their write-back to HBM (1.9-5.7 us a
 * call on an H200, 10-15 % of a 30-40 us call: docs/reference/timing.md). The
 * pass's own evictions (the previous sample's outputs) are written back
 * before the timed region starts. */
typedef struct {
    void *buf;
    size_t bytes; /* read by the pass: buf's size less its last 16 bytes, the
                     pass's sink (stored to only if the XOR is impossible; inside
                     buf: one allocation, as before the read pass, so the cases'
                     tensors land where they did) */
    int grid;     /* blocks of the pass (timing.cu) that fill every SM */
} kb_flusher;
kb_status kb_flusher_init(kb_flusher *f, kb_err *e);
void kb_flusher_free(kb_flusher *f);
/* Enqueues the flush on s. */
kb_status kb_flush(const kb_flusher *f, cudaStream_t s, kb_err *e);

/* A read-only pass over n 16-byte words (stream_read.cu): 128-bit loads
 * XOR-reduced into a value stored to *sink only if the data could never
 * produce it, so no load can be dropped and nothing but loads reach DRAM.
 * The L2 flush and the read-only SOL stream. *grid: blocks of `block`
 * threads that fill sm_count SMs. */
kb_status kb_stream_read(const void *buf, size_t n, void *sink, int grid, int block,
                         cudaStream_t s, kb_err *e);
kb_status kb_stream_read_grid(int sm_count, int block, int *grid, kb_err *e);

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

/* Settling before a case is timed. Freeing device memory is not free for
 * the GPU: the driver scrubs (zeroes) freed pages in the background with a
 * copy engine, and that traffic takes HBM bandwidth from whatever runs next.
 * After a 30-50 GB case is freed, the next case's kernels ran ~9% slower for
 * ~0.1 s on an H200 -- long enough to hold a whole short case's timing (the
 * 576000x384 norms after the 8192x262144 ones: a wrong baseline, and a 10%
 * regression not seen). So before timing, a probe (back-to-back memsets of
 * the flush buffer) is timed until `need` probes in a row are within `tol`
 * of the session's fastest probe. */


/* Probes until kb_settle_step says calm or max_ms of wall time pass. On the
 * time limit the last probe becomes the reference: a GPU that stays slower
 * is the new normal, and later cases do not wait for it again. */
typedef struct {
    double waited_ms;  /* wall time spent                                  */
    double first_slow; /* first probe's excess over the reference (0.09: 9%) */
    int probes;
    int gave_up;       /* the time limit ended it                          */
} kb_settle_report;
kb_status kb_settle_wait(kb_flusher *f, cudaStream_t s, kb_settle *st, double max_ms,
                         kb_settle_report *rep, kb_err *e);


#ifdef __cplusplus
}
#endif
#endif
