/* cross_entropy's CPU reference (C11, no CUDA): plain loops over host
 * arrays, every sum and intermediate in double, only the stored results
 * rounded to float (cross_entropy_ref.h; the row lse is ref_rows.h's). */
#include <math.h>

#include "cross_entropy_ref.h"
#include "ref_rows.h"
#include "registry.h"

kb_status kb_cross_entropy_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                                   kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    KB_TRY(kb_ref_cpu_check(p->bench, M, N, in, out, e));
    const int backward = kb_bench_info_get(p->bench)->backward;
    float *o = out->out;
    for (int64_t i = 0; i < M; i++) {
        const int64_t off = i * N;
        const float *x = in->x + off;
        if (!backward) {
            o[i] = (float)(kb_ref_row_lse(x, N) - x[in->target[i]]);
            continue;
        }
        const double lse = in->lse[i];
        for (int64_t j = 0; j < N; j++)
            o[off + j] = (float)(in->dloss[i] *
                                 (exp(x[j] - lse) - (j == in->target[i] ? 1.0 : 0.0)));
    }
    return KB_OK;
}
