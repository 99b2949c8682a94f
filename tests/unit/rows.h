/* Result and baseline rows for the unit tests: the case's key filled in and
 * every other field zero, for the test to set what it is about. */
#ifndef KB_ROWS_H
#define KB_ROWS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "baseline.h"
#include "results.h"

/* kb_result and kb_baseline_row name the key fields alike; a macro serves
 * both types. */
#define KBT_ZERO_WITH_KEY(r, bench_, backend_, dtype_, M_, N_)          \
    do {                                                                \
        memset(&(r), 0, sizeof(r));                                     \
        snprintf((r).benchmark, sizeof(r).benchmark, "%s", (bench_));   \
        snprintf((r).backend, sizeof(r).backend, "%s", (backend_));     \
        snprintf((r).dtype, sizeof(r).dtype, "%s", (dtype_));           \
        (r).M = (M_);                                                   \
        (r).N = (N_);                                                   \
    } while (0)

static inline kb_result kbt_result(const char *bench, const char *backend, const char *dtype,
                                   int64_t M, int64_t N)
{
    kb_result x;
    KBT_ZERO_WITH_KEY(x, bench, backend, dtype, M, N);
    return x;
}

static inline kb_baseline_row kbt_baseline_row(const char *bench, const char *backend,
                                               const char *dtype, int64_t M, int64_t N)
{
    kb_baseline_row r;
    KBT_ZERO_WITH_KEY(r, bench, backend, dtype, M, N);
    return r;
}

#endif
