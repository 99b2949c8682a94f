/* The MLP block's CPU reference (C11, no CUDA; mlp_math.h), in double:
 * O(T*D*H), for the small shapes of the unit tests and --self-test. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "mlp_ref.h"
#include "registry.h"

int kb_mlp_ref_act(kb_bench_id b) { return b == KB_MLP_SWIGLU_FWD ? KB_MLP_SILU : KB_MLP_GELU_TANH; }

kb_status kb_ref_cpu_mlp(int act, int64_t T, int64_t D, int64_t H, const float *x,
                         const float *wts, float *y, float *scale, kb_err *e)
{
    if (T < 1 || D < 1 || H < 1 || !x || !wts || !y)
        return KB_FAIL(e, KB_ERR_ARG,
                       "cpu reference mlp %" PRId64 "x%" PRId64 "x%" PRId64
                       ": sizes must be >= 1 and x, wts, y non-NULL", T, D, H);
    if (act != KB_MLP_GELU_TANH && act != KB_MLP_SILU)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference mlp: unknown activation %d", act);
    const float *Wg = wts, *Wu = wts + H * D, *Wd = wts + 2 * H * D;
    double *h = malloc((size_t)H * sizeof *h);
    if (!h) return KB_FAIL(e, KB_ERR_NOMEM, "cpu reference mlp: host malloc failed");
    for (int64_t t = 0; t < T; t++) {
        const float *xr = x + t * D;
        for (int64_t k = 0; k < H; k++) {
            double g = 0.0, u = 0.0;
            for (int64_t d = 0; d < D; d++) {
                g += (double)xr[d] * Wg[k * D + d];
                u += (double)xr[d] * Wu[k * D + d];
            }
            h[k] = kb_mlp_act(act, g) * u;
        }
        for (int64_t j = 0; j < D; j++) {
            double s = 0.0, q = 0.0;
            for (int64_t k = 0; k < H; k++) {
                const double v = h[k] * Wd[j * H + k];
                s += v;
                q += v * v;
            }
            y[t * D + j] = (float)s;
            if (scale) scale[t * D + j] = (float)sqrt(q);
        }
    }
    free(h);
    return KB_OK;
}

kb_status kb_mlp_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e)
{
    KB_TRY(kb_ref_cpu_check(p->bench, p->M, p->N, in, out, e));
    if (p->K < 1)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": a 3-D op (MxNxK) needs K >= 1", kb_bench_info_get(p->bench)->name,
                       p->M, p->N);
    return kb_ref_cpu_mlp(kb_mlp_ref_act(p->bench), p->M, p->N, p->K, in->x, in->wts, out->out,
                          out->scale, e);
}
