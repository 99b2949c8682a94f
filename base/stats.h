/* Timing statistics and the settle rule, pure C (stats.c, unit tested): what
 * the run layer's timer (run/timing.h) computes its results and its wait
 * before a case with. */
#ifndef KB_STATS_H
#define KB_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double median_ms, min_ms, max_ms, mean_ms;
    double noise;  /* robust relative spread: 1.4826*MAD/median         */
    double q1_ms, q3_ms;
    int samples;
    int converged; /* 1: stopped on the noise rule, 0: on the budget    */
} kb_timing;

/* Statistics on samples (sorted in place). */
void kb_stats(double *ms, int n, kb_timing *out);

/* The settle rule (run/timing.h, kb_settle_wait, says why a case waits):
 * probes are timed until `need` in a row are within `tol` of the session's
 * fastest. */
typedef struct {
    double ref_ms; /* fastest probe of the session; 0 before the first */
    int calm;      /* probes in a row within tol of ref_ms             */
} kb_settle;

/* One probe into the rule; 1 once `need` probes in a row are calm. A probe
 * faster than every earlier one becomes the reference (and is calm). Pure C,
 * unit tested. */
int kb_settle_step(kb_settle *st, double probe_ms, double tol, int need);
#define KB_SETTLE_NEED 2 /* calm probes in a row before a case is timed */

#ifdef __cplusplus
}
#endif
#endif
