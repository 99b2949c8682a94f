/* Verdict rule; see gate.h for the statement users read in the README. */
#include "gate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void kb_gate_defaults(kb_gate_opts *o)
{
    o->tolerance = 0.10;
    o->noise_k = 2.0;
    o->noise_limit = 0.05;
    o->floor_ms = 0;
}

static const char *const names[] = {"",       "NO_BASELINE", "SAME",          "FASTER",
                                    "SLOWER", "NOISY",       "FUSION_CHANGED"};

const char *kb_verdict_name(kb_verdict v)
{
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

kb_status kb_verdict_parse(const char *s, kb_verdict *v, kb_err *e)
{
    const int i = kb_name_index(names, (int)(sizeof names / sizeof names[0]), s);
    if (i >= 0) {
        *v = (kb_verdict)i;
        return KB_OK;
    }
    return KB_FAIL(e, KB_ERR_PARSE, "unknown verdict '%s'", s);
}

double kb_best_change(const kb_perf *now, double change)
{
    if (!(now->min_ms > 0) || !(now->median_ms > 0)) return -INFINITY;
    return (1.0 + change) * now->median_ms / now->min_ms - 1.0;
}

kb_verdict kb_verdict_decide(const kb_gate_opts *o, const kb_perf *base, const kb_perf *now,
                             double *change, double *band)
{
    *change = NAN;
    *band = NAN;
    if (!(base->gbps > 0)) return KB_VERDICT_NO_BASELINE;
    if (!(now->gbps > 0)) return KB_VERDICT_NONE;
    /* The baseline's noise widens the band, so a baseline recorded on a noisy
     * machine could switch the gate off: noise 0.6 gives a band of 10 % +
     * 2*0.6 = 130 %, and nothing can be SLOWER. A run that noisy would have
     * been NOISY (above noise_limit) and re-measured, never trusted, so the
     * baseline is credited at most twice the limit a run may have (10 % by
     * default: the band stays below 10 % + 2*sqrt(0.1^2 + 0.05^2), 33 %). */
    const double nb = isnan(base->noise) ? 0 : fmin(base->noise, 2 * o->noise_limit);
    const double nn = isnan(now->noise) ? 0 : now->noise;
    *change = now->gbps / base->gbps - 1.0;
    *band = o->tolerance + o->noise_k * sqrt(nb * nb + nn * nn);
    /* Below the floor the GB/s change is launch jitter, whatever its size.
     * The medians come from fp32 event times and the floor from a decimal
     * text, so a change of exactly the floor can read a few ulp above it
     * (H200, ci/gate: 8.832 - 7.808 us against a 2 x 0.512 us floor
     * read SLOWER): the floor holds within kFloorSlackMs, far below any
     * time a timer resolves. */
    const double kFloorSlackMs = 1e-6; /* 1 ns */
    if (o->floor_ms > 0 && base->median_ms > 0 && now->median_ms > 0 &&
        fabs(now->median_ms - base->median_ms) <= o->floor_ms + kFloorSlackMs)
        return KB_VERDICT_SAME;
    if (nn > o->noise_limit) return KB_VERDICT_NOISY;
    if (*change < -*band)
        return kb_best_change(now, *change) >= -o->tolerance ? KB_VERDICT_NOISY
                                                             : KB_VERDICT_SLOWER;
    if (*change > *band) return KB_VERDICT_FASTER;
    return KB_VERDICT_SAME;
}

int kb_policy_remeasure(kb_verdict first, int throttled)
{
    return first == KB_VERDICT_NOISY || first == KB_VERDICT_SLOWER ||
           (throttled && first != KB_VERDICT_NO_BASELINE);
}

kb_verdict kb_policy_final(kb_verdict v, int throttled)
{
    return throttled && v == KB_VERDICT_SLOWER ? KB_VERDICT_NOISY : v;
}

int kb_policy_fails(kb_verdict v)
{
    return v == KB_VERDICT_SLOWER || v == KB_VERDICT_FUSION_CHANGED;
}

/* The message of a round: the verdict's when it has one, else the throttle's.
 * noisy: the noise limit alone made the verdict NOISY (then the fastest
 * sample is not the reason, and the message gives the noise). */
static void judge_message(const kb_judge_base *base, const kb_judge_round *m, int kernels,
                          const char *baseline_path, kb_judgement *j, kb_verdict v, int noisy)
{
    const size_t len = sizeof j->message;
    j->message[0] = '\0';
    const double best = kb_best_change(&m->now, j->change);
    if (v == KB_VERDICT_NOISY && !noisy && j->change < -j->band && best >= -j->tolerance)
        snprintf(j->message, len,
                 "NOISY: median %.1f GB/s vs baseline %.1f GB/s (%+.1f%%, band +-%.1f%%), but the "
                 "fastest sample is %+.1f%% (%.4f ms against a median of %.4f ms): part of the "
                 "samples ran in a slow state of the machine; slower code would slow them all",
                 m->now.gbps, base->gbps, 100 * j->change, 100 * j->band, 100 * best,
                 m->now.min_ms, m->now.median_ms);
    else if (v == KB_VERDICT_SLOWER || v == KB_VERDICT_FASTER || v == KB_VERDICT_NOISY)
        snprintf(j->message, len,
                 "%s: %.1f GB/s vs baseline %.1f GB/s (%+.1f%%, band +-%.1f%%, noise %.1f%% now, "
                 "%.1f%% baseline)",
                 kb_verdict_name(v), m->now.gbps, base->gbps, 100 * j->change, 100 * j->band,
                 100 * m->now.noise, 100 * base->noise);
    else if (v == KB_VERDICT_SAME && isfinite(j->change) && fabs(j->change) > j->band)
        snprintf(j->message, len,
                 "SAME: %.2f us vs baseline %.2f us, within the %.2f us launch-jitter floor "
                 "of %d kernel(s) (%+.1f%% GB/s)",
                 1e3 * m->now.median_ms, 1e3 * base->median_ms, 1e3 * j->floor_ms, kernels,
                 100 * j->change);
    else if (v == KB_VERDICT_NO_BASELINE)
        snprintf(j->message, len, "NO_BASELINE: %s has no row for this case: its speed is not gated",
                 baseline_path);
    else if (j->throttled)
        snprintf(j->message, len,
                 "SM clock %.0f MHz after timing, below %.0f%% of the %.0f MHz peak: %s",
                 m->sm_mhz, 100 * j->throttle_at, m->sm_max_mhz,
                 m->compute_bound ? "power-capped or shared GPU, and this compute-bound case's "
                                    "time follows the clock"
                                  : "throttled or shared GPU");
}

static int j_has_room(const kb_judgement *j) { return strlen(j->message) + 80 < sizeof j->message; }

void kb_judge(const kb_gate_opts *g, const kb_judge_base *base, const kb_judge_round *m,
              int round, const char *baseline_path, kb_judgement *out)
{
    memset(out, 0, sizeof *out);
    /* A compute-bound case against a row that knows its clock: compared at
     * equal clocks (gate.h). */
    out->clock_scale = m->compute_bound && base->sm_mhz > 0 && m->sm_mhz > 0
                           ? fmin(1.0, m->sm_mhz / base->sm_mhz)
                           : NAN;
    const int at_equal_clock = out->clock_scale > 0;
    out->throttle_at = m->compute_bound && !at_equal_clock ? 1.0 - g->tolerance : 0.75;
    out->throttled = m->sm_max_mhz > 0 && m->sm_mhz < out->throttle_at * m->sm_max_mhz;
    const int kernels = base->kernels > 0 ? base->kernels : 1;
    kb_gate_opts o = *g;
    o.floor_ms *= kernels;
    out->floor_ms = o.floor_ms;
    out->tolerance = o.tolerance;
    const kb_perf b = {base->gbps, base->noise, base->median_ms, NAN};
    kb_judge_round mm = *m;
    if (at_equal_clock) {
        mm.now.gbps /= out->clock_scale;
        mm.now.median_ms *= out->clock_scale;
        mm.now.min_ms *= out->clock_scale;
    }
    kb_verdict v = kb_verdict_decide(&o, &b, &mm.now, &out->change, &out->band);
    /* The clock credit may excuse, never decide (gate.h): a verdict that only
     * the credit makes is not one. SLOWER at face value but not at equal
     * clocks: NOISY, not judged, saying so; NOISY at face value (noise, or
     * slow samples beside a fast one) stays NOISY with its own reason; FASTER
     * only at equal clocks: the face value. */
    int credited = 0, face_value = 0;
    double scaled_change = out->change;
    if (at_equal_clock && out->clock_scale < 1) {
        double raw_change, raw_band;
        const kb_verdict raw = kb_verdict_decide(&o, &b, &m->now, &raw_change, &raw_band);
        if (raw == KB_VERDICT_SLOWER && v != KB_VERDICT_SLOWER) {
            credited = 1;
            v = KB_VERDICT_NOISY;
        } else if ((raw == KB_VERDICT_NOISY && v != KB_VERDICT_NOISY) ||
                   (v == KB_VERDICT_FASTER && raw != KB_VERDICT_FASTER)) {
            face_value = 1;
            v = raw;
            mm = *m;
        }
        if (credited || face_value) {
            out->change = raw_change;
            out->band = raw_band;
        }
    }
    if (credited)
        snprintf(out->message, sizeof out->message,
                 "NOISY: %.1f GB/s vs baseline %.1f GB/s (%+.1f%%, band +-%.1f%%) at face value, "
                 "%+.1f%% at equal SM clocks (%.0f MHz now, %.0f MHz in the baseline): the clock "
                 "may explain it, so its speed is not judged",
                 m->now.gbps, base->gbps, 100 * out->change, 100 * out->band, 100 * scaled_change,
                 m->sm_mhz, base->sm_mhz);
    else
        judge_message(base, &mm, kernels, baseline_path, out, v, m->now.noise > o.noise_limit);
    if (at_equal_clock && !credited && !face_value && j_has_room(out) &&
        (v == KB_VERDICT_SLOWER || v == KB_VERDICT_FASTER || v == KB_VERDICT_NOISY)) {
        const size_t n = strlen(out->message);
        snprintf(out->message + n, sizeof out->message - n,
                 " [at equal SM clocks: %.0f MHz now, %.0f MHz in the baseline]", m->sm_mhz,
                 base->sm_mhz);
    }
    out->remeasure = round == 0 && kb_policy_remeasure(v, out->throttled);
    out->verdict = out->remeasure ? v : kb_policy_final(v, out->throttled);
    out->fails = !out->remeasure && kb_policy_fails(out->verdict);
    /* A SLOWER the throttle turned into NOISY says so: its message is the
     * final verdict's, with the clock that excused it. */
    if (out->verdict == KB_VERDICT_NOISY && v == KB_VERDICT_SLOWER)
        snprintf(out->message, sizeof out->message,
                 "NOISY: %.1f GB/s vs baseline %.1f GB/s (%+.1f%%, band +-%.1f%%), SLOWER on a "
                 "GPU whose SM clock read %.0f MHz after timing, below %.0f%% of its %.0f MHz "
                 "peak (%s): its speed is not judged%s",
                 mm.now.gbps, base->gbps, 100 * out->change, 100 * out->band, m->sm_mhz,
                 100 * out->throttle_at, m->sm_max_mhz,
                 m->compute_bound ? "power-capped or shared; this compute-bound case's time "
                                    "follows the clock"
                                  : "throttled or shared",
                 at_equal_clock ? " [GB/s at equal SM clocks]" : "");
}
