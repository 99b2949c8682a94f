/* softmax's CPU reference (C11, no CUDA): plain loops over host arrays,
 * every sum in double, only the stored results rounded to float
 * (softmax_ref.h; the forward row is ref_rows.h's, as the saved y is). */
#include "ref_rows.h"
#include "registry.h"
#include "softmax_ref.h"

kb_status kb_softmax_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                             kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    KB_TRY(kb_ref_cpu_check(p->bench, M, N, in, out, e));
    const int backward = kb_bench_info_get(p->bench)->backward;
    float *o = out->out;
    for (int64_t i = 0; i < M; i++) {
        const int64_t off = i * N;
        if (!backward) {
            kb_ref_row_softmax(in->x + off, N, o + off);
            continue;
        }
        const float *y = in->y + off, *dy = in->dy + off;
        double s = 0.0;
        for (int64_t j = 0; j < N; j++) s += (double)dy[j] * y[j];
        for (int64_t j = 0; j < N; j++) o[off + j] = (float)(y[j] * (dy[j] - s));
    }
    return KB_OK;
}
