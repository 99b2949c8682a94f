/* GeGLU's and SwiGLU's CPU reference (C11, no CUDA): elementwise over all
 * M*N elements in double, only the stored results rounded to float
 * (glu_ref.h has the activations). */
#include "glu_ref.h"
#include "registry.h"

kb_glu_act kb_glu_ref_act(kb_bench_id b)
{
    return b == KB_GEGLU_FWD || b == KB_GEGLU_BWD ? KB_ACT_GELU_TANH : KB_ACT_SILU;
}

double kb_ref_glu_act(kb_glu_act act, double x) { return kb_glu_act_d(act == KB_ACT_GELU_TANH, x); }

double kb_ref_glu_dact(kb_glu_act act, double x)
{
    return kb_glu_dact_d(act == KB_ACT_GELU_TANH, x);
}

/* The backward's dup follows dgate in out. */
kb_status kb_glu_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e)
{
    KB_TRY(kb_ref_cpu_check(p->bench, p->M, p->N, in, out, e));
    const kb_glu_act act = kb_glu_ref_act(p->bench);
    const int backward = kb_bench_info_get(p->bench)->backward;
    const int64_t MN = p->M * p->N;
    float *o = out->out;
    for (int64_t i = 0; i < MN; i++) {
        const double x = in->x[i], u = in->up[i];
        if (!backward) {
            o[i] = (float)(kb_ref_glu_act(act, x) * u);
            continue;
        }
        const double dy = in->dy[i];
        o[i] = (float)(dy * u * kb_ref_glu_dact(act, x));
        o[MN + i] = (float)(dy * kb_ref_glu_act(act, x));
    }
    return KB_OK;
}
