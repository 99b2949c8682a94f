/* The perf verdict of one case against its baseline row.
 *
 * change = GB/s now / GB/s baseline - 1. Both runs carry a robust relative
 * spread (1.4826*MAD/median of their samples). The band a change must leave
 * before it counts is
 *     band = tolerance + k * sqrt(noise_now^2 + noise_base^2)
 * (tolerance default 10 %, k = 2: about two standard deviations of the
 * difference of two noisy measurements). noise_base counts at most
 * 2 * noise_limit: a noisy baseline must not widen the band until nothing
 * can be SLOWER.
 *     |median_now - median_base| <= floor_ms -> SAME  (launch jitter explains it;
 *                                              1 ns of slack for rounding)
 *     noise_now > noise_limit (default 5 %)  -> NOISY  (re-measured once with a
 *                                              longer budget by the runner)
 *     change < -band, and the fastest sample also more than tolerance below
 *       the baseline                         -> SLOWER (the case fails)
 *     change < -band, the fastest sample within tolerance
 *                                            -> NOISY  (re-measured once; see below)
 *     change > +band                         -> FASTER (passes; refresh candidate)
 *     otherwise                              -> SAME
 * No baseline row -> NO_BASELINE (passes; accuracy is still checked).
 *
 * The fastest-sample condition: slower code slows every sample, the fastest
 * too; a state of the machine (a bimodal GEMM case on the H200 whose
 * samples sat at two levels 13 % apart while the power-capped SM clock
 * stayed above the throttle rule's 75 %, the bandwidth lost while the
 * driver scrubs freed memory) slows the
 * samples taken in it and leaves the fastest at the code's speed. Such a
 * case is NOISY, with a message that says so, never SLOWER; a +10 % time
 * regression moves the fastest sample by 10 % and stays SLOWER (LNT, LLVM's
 * performance tracker, judges on the minimum sample for the same reason).
 *
 * The floor is an absolute time: cases of a few microseconds move by a
 * microsecond of launch jitter, which is 15 % of their GB/s. It is derived
 * per GPU from the launch-to-launch spread of an empty kernel timed the way
 * cases are timed (device.h), like nvbench's compare script's absolute
 * noise threshold; 0 disables it. */
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
    KB_VERDICT_NOISY,
    /* Not a time verdict: the case launched a different number of kernels
     * than its backend declares or its baseline row records (kernel_check.h).
     * It replaces the time verdict and fails the case. */
    KB_VERDICT_FUSION_CHANGED
} kb_verdict;

typedef struct {
    double tolerance;   /* relative, 0.10 = 10 %          */
    double noise_k;     /* widening per unit of noise     */
    double noise_limit; /* above: NOISY                   */
    double floor_ms;    /* time changes within: SAME      */
} kb_gate_opts;

/* One measurement as the verdict sees it. NaN noise counts as 0; NaN
 * median_ms disables the floor for this comparison; min_ms (the fastest
 * sample) NaN or <= 0 disables the fastest-sample condition. */
typedef struct {
    double gbps, noise, median_ms, min_ms;
} kb_perf;

void kb_gate_defaults(kb_gate_opts *o);
const char *kb_verdict_name(kb_verdict v);
kb_status kb_verdict_parse(const char *s, kb_verdict *v, kb_err *e);

/* The GB/s change of now's fastest sample, given the median's change:
 * (1 + change) * median_ms / min_ms - 1; -inf when now has no min_ms. */
double kb_best_change(const kb_perf *now, double change);

/* base->gbps <= 0 or NaN: NO_BASELINE. *change gets the relative GB/s
 * change (NaN without baseline), *band the band used. */
kb_verdict kb_verdict_decide(const kb_gate_opts *o, const kb_perf *base, const kb_perf *now,
                             double *change, double *band);

/* The runner's policy around a verdict, pure so that it is unit tested:
 *   - a case is measured once, and once more with 4x the budget when the
 *     first verdict is NOISY or SLOWER, or the GPU was throttled during it
 *     (a throttled run without a baseline has nothing to be judged against:
 *     no second run). A SLOWER is confirmed before it fails a case: slower
 *     code is slower in both rounds, while a state of the machine that held
 *     for one whole measurement window can pass (an H100, 2026-12: cuDNN
 *     LayerNorm backward 32768x2048 read -11.2 % with 0.6 % noise right
 *     after a baseline refresh and -0.3 to -0.7 % in three runs a minute
 *     later). The runner waits for the GPU to settle before the second
 *     round, and its message keeps what the first round read;
 *   - a SLOWER verdict from a throttled GPU is NOISY: not the code's fault;
 *   - a case fails on SLOWER and FUSION_CHANGED. */
int kb_policy_remeasure(kb_verdict first, int throttled);
kb_verdict kb_policy_final(kb_verdict v, int throttled);
int kb_policy_fails(kb_verdict v);

/* The runner's whole time-and-judge step as one pure function: the runner
 * times the case (a round), reads the SM clock right after the samples (the
 * GPU still busy), and asks kb_judge what the round means: measure again
 * (with 4x the budget) or the final verdict. No GPU, clock or file here, so
 * every branch is unit tested (tests/unit/test_gate.c).
 *   - throttled: the SM clock below 75 % of its peak (nvbench's rule): the
 *     numbers were taken on a throttled or shared GPU (peak 0: unknown,
 *     never throttled). A compute-bound case (the MLP block's GEMMs) runs
 *     at the SM clock's speed, so for it a clock more than the tolerance
 *     below the peak is already throttled: a sustained GEMM is power-capped
 *     late in a whole-suite run, every sample slow, while the clock stays
 *     above 75 % (docs/reference/verdicts.md). When the baseline row recorded its clock
 *     (sm_mhz) and this round read one, a compute-bound case is instead
 *     compared at equal clocks: its time is scaled by clock now / clock then
 *     (GB/s by the inverse) before the verdict, and the 75 % rule applies;
 *     the message says so. Only a lower clock is credited, a higher one
 *     never counted against the case: the probe reads the clock after the
 *     samples, when a power-capped GPU has already begun to clock up, so the
 *     reading may excuse a slowdown but never accuse (docs/reference/verdicts.md has the
 *     case that showed it). Nor does the credit acquit: a case SLOWER at
 *     face value that only the credit brings inside the band is NOISY (not
 *     judged, measured again, its message naming both clocks), one NOISY at
 *     face value stays NOISY with its own reason, and a FASTER that only the
 *     credit makes is the face-value verdict (H200, 2026-12-02, gate-quality:
 *     a planted +10 % slowdown passed as SAME on 9 of the 10 MLP cases
 *     through the credit when it could acquit);
 *   - the launch-jitter floor is per kernel (every kernel of a call brings
 *     its own launch gap), times the kernels one call launches: the
 *     baseline's recorded count, 1 when unknown;
 *   - round 0 is measured again when kb_policy_remeasure says so; round 1
 *     is final; the final verdict is kb_policy_final's, and the case fails
 *     when kb_policy_fails. */
typedef struct {
    double gbps, noise, median_ms; /* the baseline row; gbps NaN: no row */
    int kernels;                   /* kernels per call it records; <= 0: unknown */
    double sm_mhz;                 /* its SM clock; NaN or <= 0: not recorded */
} kb_judge_base;

typedef struct {
    kb_perf now;               /* this round's measurement */
    double sm_mhz, sm_max_mhz; /* SM clock after the samples, and its peak */
    int compute_bound;         /* a GEMM case: its time follows the SM clock */
} kb_judge_round;

typedef struct {
    int remeasure;      /* 1: time once more, 4x the budget, then kb_judge round 1 */
    kb_verdict verdict; /* this round's verdict; the final one when !remeasure */
    int throttled;
    double throttle_at; /* the clock fraction below which it is throttled */
    double clock_scale; /* min(1, clock now / baseline's), when compared at
                           equal clocks (compute-bound, both known); else NaN */
    int fails;          /* the case fails (only when !remeasure) */
    double change, band, floor_ms, tolerance; /* as kb_verdict_decide used them */
    char message[512];  /* what this round says; "": nothing (the runner keeps what the
                           case said before timing) */
} kb_judgement;

/* baseline_path names the file in the NO_BASELINE message. */
void kb_judge(const kb_gate_opts *g, const kb_judge_base *base, const kb_judge_round *m,
              int round, const char *baseline_path, kb_judgement *out);

#ifdef __cplusplus
}
#endif
#endif
