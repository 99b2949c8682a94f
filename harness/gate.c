/* Verdict rule; see gate.h for the statement users read in the README. */
#include "gate.h"

#include <math.h>
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
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0) {
            *v = (kb_verdict)i;
            return KB_OK;
        }
    return KB_FAIL(e, KB_ERR_PARSE, "unknown verdict '%s'", s);
}

kb_verdict kb_verdict_decide(const kb_gate_opts *o, const kb_perf *base, const kb_perf *now,
                             double *change, double *band)
{
    *change = NAN;
    *band = NAN;
    if (!(base->gbps > 0)) return KB_VERDICT_NO_BASELINE;
    if (!(now->gbps > 0)) return KB_VERDICT_NONE;
    const double nb = isnan(base->noise) ? 0 : base->noise;
    const double nn = isnan(now->noise) ? 0 : now->noise;
    *change = now->gbps / base->gbps - 1.0;
    *band = o->tolerance + o->noise_k * sqrt(nb * nb + nn * nn);
    /* Below the floor the GB/s change is launch jitter, whatever its size. */
    if (o->floor_ms > 0 && base->median_ms > 0 && now->median_ms > 0 &&
        fabs(now->median_ms - base->median_ms) <= o->floor_ms)
        return KB_VERDICT_SAME;
    if (nn > o->noise_limit) return KB_VERDICT_NOISY;
    if (*change < -*band) return KB_VERDICT_SLOWER;
    if (*change > *band) return KB_VERDICT_FASTER;
    return KB_VERDICT_SAME;
}

int kb_policy_remeasure(kb_verdict first, int throttled)
{
    return first == KB_VERDICT_NOISY || (throttled && first != KB_VERDICT_NO_BASELINE);
}

kb_verdict kb_policy_final(kb_verdict v, int throttled)
{
    return throttled && v == KB_VERDICT_SLOWER ? KB_VERDICT_NOISY : v;
}

int kb_policy_fails(kb_verdict v)
{
    return v == KB_VERDICT_SLOWER || v == KB_VERDICT_FUSION_CHANGED;
}
