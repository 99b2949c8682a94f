/* Verdict rule; see gate.h for the statement users read in the README. */
#include "gate.h"

#include <math.h>
#include <string.h>

void kb_gate_defaults(kb_gate_opts *o)
{
    o->tolerance = 0.10;
    o->noise_k = 2.0;
    o->noise_limit = 0.05;
}

static const char *const names[] = {"", "NO_BASELINE", "SAME", "FASTER", "SLOWER", "NOISY"};

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

kb_verdict kb_verdict_decide(const kb_gate_opts *o, double base_gbps, double base_noise,
                             double now_gbps, double now_noise, double *change, double *band)
{
    *change = NAN;
    *band = NAN;
    if (!(base_gbps > 0)) return KB_VERDICT_NO_BASELINE;
    if (!(now_gbps > 0)) return KB_VERDICT_NONE;
    const double nb = isnan(base_noise) ? 0 : base_noise;
    const double nn = isnan(now_noise) ? 0 : now_noise;
    *change = now_gbps / base_gbps - 1.0;
    *band = o->tolerance + o->noise_k * sqrt(nb * nb + nn * nn);
    if (nn > o->noise_limit) return KB_VERDICT_NOISY;
    if (*change < -*band) return KB_VERDICT_SLOWER;
    if (*change > *band) return KB_VERDICT_FASTER;
    return KB_VERDICT_SAME;
}
