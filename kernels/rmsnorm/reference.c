/* rmsnorm's CPU reference (C11, no CUDA): the norm rows of ref_rows.h with
 * ln = 0, every sum in double, only the stored results rounded to float
 * (rmsnorm_ref.h). */
#include "rmsnorm_ref.h"
#include "ref_rows.h"
#include "registry.h"

kb_status kb_rmsnorm_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out,
                             kb_err *e)
{
    KB_TRY(kb_ref_cpu_check(p->bench, p->M, p->N, in, out, e));
    kb_ref_norm(in, 0, kb_bench_info_get(p->bench)->backward, p->M, p->N, out->out, out->dw);
    return KB_OK;
}
