/* The perf verdict of one case against its baseline row.
 *
 * change = GB/s now / GB/s baseline - 1. Both runs carry a robust relative
 * spread (1.4826*MAD/median of their samples). The band a change must leave
 * before it counts is
 *     band = tolerance + k * sqrt(noise_now^2 + noise_base^2)
 * (tolerance default 10 %, k = 2: about two standard deviations of the
 * difference of two noisy measurements).
 *     noise_now > noise_limit (default 5 %)  -> NOISY  (re-measured once with a
 *                                              longer budget by the runner)
 *     change < -band                         -> SLOWER (the case fails)
 *     change > +band                         -> FASTER (passes; refresh candidate)
 *     otherwise                              -> SAME
 * No baseline row -> NO_BASELINE (passes; accuracy is still checked). */
#ifndef KB_GATE_H
#define KB_GATE_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KB_VERDICT_NONE = 0, /* not checked (timing skipped, accuracy failed)    */
    KB_VERDICT_NO_BASELINE,
    KB_VERDICT_SAME,
    KB_VERDICT_FASTER,
    KB_VERDICT_SLOWER,
    KB_VERDICT_NOISY
} kb_verdict;

typedef struct {
    double tolerance;   /* relative, 0.10 = 10 %          */
    double noise_k;     /* widening per unit of noise     */
    double noise_limit; /* above: NOISY                   */
} kb_gate_opts;

void kb_gate_defaults(kb_gate_opts *o);
const char *kb_verdict_name(kb_verdict v);
kb_status kb_verdict_parse(const char *s, kb_verdict *v, kb_err *e);

/* base_gbps <= 0 or NaN: NO_BASELINE. NaN noise counts as 0. *change gets
 * the relative change (NaN without baseline), *band the band used. */
kb_verdict kb_verdict_decide(const kb_gate_opts *o, double base_gbps, double base_noise,
                             double now_gbps, double now_noise, double *change, double *band);

#ifdef __cplusplus
}
#endif
#endif
