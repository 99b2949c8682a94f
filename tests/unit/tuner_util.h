/* The synthetic search space the tuner suites (test_tuner*.c) search and
 * set up: threads x rows x cluster for softmax_forward, a heuristic, a
 * validity rule and a launch that is never made. */
#ifndef KB_TUNER_UTIL_H
#define KB_TUNER_UTIL_H

#include <string.h>

#include "registry.h"
#include "tuner.h"

static inline void heur(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    memset(out, 0, sizeof *out);
    out->v[0] = 128;
    out->v[1] = 1;
    out->v[2] = 1;
}

/* threads * rows <= 512 and cluster <= N / 16384 (>= 1). */
static inline int valid(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    const int64_t max_cluster = p->N / 16384 > 1 ? p->N / 16384 : 1;
    return c->v[0] * c->v[1] <= 512 && c->v[2] <= max_cluster;
}

static inline kb_status no_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                                  cudaStream_t s, kb_err *e)
{
    return KB_FAIL(e, KB_ERR_UNSUPPORTED, "not launched in unit tests");
}

static const kb_tune_space space = {
    "softmax_forward",
    3,
    {"threads", "rows", "cluster"},
    {5, 4, 5},
    {{32, 64, 128, 256, 512}, {1, 2, 4, 8}, {1, 2, 4, 8, 16}},
    heur,
    valid,
    NULL,
    no_launch,
    NULL,
};

static const kb_problem prob = {KB_SOFTMAX_FWD, KB_BF16, 1024, 262144};

static inline kb_tune_cfg cfg3(int a, int b, int c)
{
    kb_tune_cfg r;
    memset(&r, 0, sizeof r);
    r.v[0] = a;
    r.v[1] = b;
    r.v[2] = c;
    return r;
}

#endif
