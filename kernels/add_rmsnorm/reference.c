/* Add + RMSNorm on the CPU: plain loops over host arrays, every sum and
 * intermediate in double, the formulas of add_rmsnorm_ref.h; only stored
 * results are rounded to float (and h to the problem's dtype first, as the
 * forward stores it). Slow and obvious on purpose: the unit tests check it
 * against closed forms and finite differences. Limits: any M, N >= 1. */
#include <inttypes.h>

#include "add_rmsnorm_ref.h"
#include "half.h"
#include "ref_rows.h" /* the RMS row statistic and the norms' dw column sums */

void kb_add_rmsnorm_ref_cpu_rstd(int64_t M, int64_t N, const float *h, float *rstd)
{
    if (!h || !rstd || M < 1 || N < 1) return;
    for (int64_t i = 0; i < M; i++) rstd[i] = (float)kb_ref_row_rms_rstd(h + i * N, N);
}

/* What the direction reads and writes, each named in the message when NULL. */
static kb_status check_args(const kb_problem *p, const kb_ref_in *in, const kb_ref_out *out,
                            kb_err *e)
{
    if (!p) return KB_FAIL(e, KB_ERR_ARG, "cpu reference add_rmsnorm: problem is NULL");
    const int bwd = p->bench == KB_ADD_RMSNORM_BWD;
    const char *name = bwd ? "add_rmsnorm_backward" : "add_rmsnorm_forward";
    if (p->bench != KB_ADD_RMSNORM_FWD && !bwd)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference add_rmsnorm: benchmark id %d is not an add_rmsnorm one",
                       (int)p->bench);
    if ((unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64 ": unknown dtype %d",
                       name, p->M, p->N, (int)p->dtype);
    if (p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": M and N must be >= 1", name, p->M, p->N);
    if (!in || !out || !out->out)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": inputs/outputs/out is NULL", name, p->M, p->N);
    const struct { int need; const void *ptr; const char *what; } req[] = {
        {1, in->x, bwd ? "x (saved h)" : "x"}, {1, in->w, "w"}, {!bwd, in->res, "res"},
        {bwd, in->dy, "dy"}, {bwd, in->dres, "dres"}, {bwd, in->rstd, "saved rstd"},
        {bwd, out->dw, "dw"},
    };
    for (size_t k = 0; k < sizeof req / sizeof req[0]; k++)
        if (req[k].need && !req[k].ptr)
            return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64 ": %s is NULL",
                           name, p->M, p->N, req[k].what);
    return KB_OK;
}

kb_status kb_add_rmsnorm_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                                 kb_err *e)
{
    KB_TRY(check_args(p, in, out, e));
    const int64_t M = p->M, N = p->N;
    if (p->bench == KB_ADD_RMSNORM_FWD) {
        float *h = out->out, *y = out->out + M * N;
        /* h first (x + res is exact in double, then rounded as the stored h) */
        for (int64_t k = 0; k < M * N; k++)
            h[k] = kb_round_to(p->dtype, (float)((double)in->x[k] + (double)in->res[k]));
        for (int64_t i = 0; i < M; i++) {
            const float *hr = h + i * N;
            const double rs = kb_ref_row_rms_rstd(hr, N);
            for (int64_t j = 0; j < N; j++) y[i * N + j] = (float)((double)hr[j] * rs * in->w[j]);
        }
        return KB_OK;
    }
    for (int64_t i = 0; i < M; i++) {
        const float *hr = in->x + i * N, *dy = in->dy + i * N, *dr = in->dres + i * N;
        const double rs = in->rstd[i];
        double sgx = 0.0;
        for (int64_t j = 0; j < N; j++) sgx += ((double)dy[j] * in->w[j]) * (hr[j] * rs);
        const double c = sgx / (double)N;
        for (int64_t j = 0; j < N; j++) {
            const double g = (double)dy[j] * in->w[j], xh = hr[j] * rs;
            out->out[i * N + j] = (float)(rs * (g - xh * c) + dr[j]);
        }
    }
    kb_ref_norm_dw(in, 0, M, N, out->dw); /* h as x, no mean */
    return KB_OK;
}
