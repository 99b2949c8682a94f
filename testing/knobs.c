/* Parsing of the test-only knobs (see knobs.h). */
#include "knobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* A knob's backend must be one kbench has: a misspelt one would match no
 * series, and the knob would measure nothing while the test using it passed. */
static kb_status check_backend(const char *var, const char *v, const char *backend, kb_err *e)
{
    if (kb_backend_index(backend) >= 0) return KB_OK;
    char names[128] = "";
    for (int i = 0; kb_backend_name(i); i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 kb_backend_name(i));
    return KB_FAIL(e, KB_ERR_ARG, "%s='%s': unknown backend '%s' (expected one of %s)", var, v,
                   backend, names);
}

static kb_status split(const char *var, const char *v, char *backend, size_t blen,
                       const char **rest, kb_err *e)
{
    const char *colon = strchr(v, ':');
    if (!colon || colon == v || !colon[1] || (size_t)(colon - v) >= blen)
        return KB_FAIL(e, KB_ERR_ARG, "%s='%s': expected <backend>:<value>", var, v);
    memcpy(backend, v, (size_t)(colon - v));
    backend[colon - v] = '\0';
    *rest = colon + 1;
    return check_backend(var, v, backend, e);
}

static kb_status number(const char *var, const char *s, double lo, double hi, double *out,
                        kb_err *e)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v > lo && v <= hi))
        return KB_FAIL(e, KB_ERR_ARG, "%s: '%s' is not a number in (%g, %g]", var, s, lo, hi);
    *out = v;
    return KB_OK;
}

static const char *const perturb_names[KB_NUM_PERTURB] = {
    "none", "skip_last", "scale", "write_past_end", "no_max_subtraction", "half_accumulation",
    "eps_1e-5"};

const char *kb_perturb_name(kb_perturb k)
{
    return (unsigned)k < KB_NUM_PERTURB ? perturb_names[k] : "?";
}

kb_status kb_knobs_parse(const char *extra_bytes, const char *extra_time, const char *perturb,
                         kb_knobs *k, kb_err *e)
{
    memset(k, 0, sizeof *k);
    const char *rest = NULL;
    if (extra_bytes && *extra_bytes) {
        KB_TRY(split("KBENCH_TEST_EXTRA_BYTES", extra_bytes, k->extra_backend,
                     sizeof k->extra_backend, &rest, e));
        KB_TRY(number("KBENCH_TEST_EXTRA_BYTES", rest, 0.0, 10.0, &k->extra_fraction, e));
    }
    if (extra_time && *extra_time) {
        KB_TRY(split("KBENCH_TEST_EXTRA_TIME", extra_time, k->slow_backend, sizeof k->slow_backend,
                     &rest, e));
        KB_TRY(number("KBENCH_TEST_EXTRA_TIME", rest, 0.0, 10.0, &k->slow_fraction, e));
    }
    if (perturb && *perturb) {
        KB_TRY(split("KBENCH_TEST_PERTURB", perturb, k->perturb_backend,
                     sizeof k->perturb_backend, &rest, e));
        if (strncmp(rest, "scale:", 6) == 0) {
            k->perturb = KB_PERTURB_SCALE;
            KB_TRY(number("KBENCH_TEST_PERTURB", rest + 6, 0.0, 10.0, &k->scale, e));
            return KB_OK;
        }
        for (int i = 1; i < KB_NUM_PERTURB; i++)
            if (i != KB_PERTURB_SCALE && strcmp(rest, perturb_names[i]) == 0)
                k->perturb = (kb_perturb)i;
        if (!k->perturb)
            return KB_FAIL(e, KB_ERR_ARG,
                           "KBENCH_TEST_PERTURB: unknown kind '%s' (skip_last, scale:<f>, "
                           "write_past_end, no_max_subtraction, half_accumulation or eps_1e-5)",
                           rest);
    }
    return KB_OK;
}

kb_status kb_knobs_parse_split(const char *split, kb_knobs *k, kb_err *e)
{
    k->split_backend[0] = '\0';
    if (!split || !*split) return KB_OK;
    KB_TRY(check_backend("KBENCH_TEST_SPLIT", split, split, e));
    snprintf(k->split_backend, sizeof k->split_backend, "%s", split);
    return KB_OK;
}

kb_status kb_knobs_parse_fault(const char *fault, kb_knobs *k, kb_err *e)
{
    static const char *const names[KB_NUM_FAULTS] = {"none", "hang", "illegal_address"};
    k->fault_backend[0] = '\0';
    k->fault = KB_FAULT_NONE;
    if (!fault || !*fault) return KB_OK;
    const char *rest = NULL;
    KB_TRY(split("KBENCH_TEST_FAULT", fault, k->fault_backend, sizeof k->fault_backend, &rest, e));
    for (int i = 1; i < KB_NUM_FAULTS; i++)
        if (strcmp(rest, names[i]) == 0) k->fault = (kb_fault)i;
    if (!k->fault)
        return KB_FAIL(e, KB_ERR_ARG, "KBENCH_TEST_FAULT: unknown kind '%s' (hang or "
                       "illegal_address)", rest);
    return KB_OK;
}

kb_status kb_knobs_from_env(kb_knobs *k, kb_err *e)
{
    KB_TRY(kb_knobs_parse(getenv("KBENCH_TEST_EXTRA_BYTES"), getenv("KBENCH_TEST_EXTRA_TIME"),
                          getenv("KBENCH_TEST_PERTURB"), k, e));
    KB_TRY(kb_knobs_parse_split(getenv("KBENCH_TEST_SPLIT"), k, e));
    return kb_knobs_parse_fault(getenv("KBENCH_TEST_FAULT"), k, e);
}

int kb_knob_applies(const char *knob_backend, const char *series)
{
    size_t n = strlen(knob_backend);
    return n && strncmp(knob_backend, series, n) == 0 && (series[n] == '\0' || series[n] == ':');
}
