/* The CPU reference's generic entry points (reference.h): the argument
 * checks every op's reference starts with, the saved statistics by the
 * descriptor's tensor bits, and the dispatch to the descriptor's ref_cpu.
 * No op's formulas live here: each op folder's reference.c has its own,
 * built from the shared row reductions of ref_rows.h. */
#include <inttypes.h>
#include <string.h>

#include "ref_rows.h"
#include "reference.h"
#include "registry.h"

/* The tensor bits that say what kb_ref_cpu_saved computes for b: its own,
 * or for a forward those of its family's backward (the saved statistics a
 * forward produces for it), when the registry holds one. */
static unsigned saved_bits(const kb_bench_info *bi)
{
    if (bi->backward) return bi->tensors;
    for (int k = 0; k < KB_NUM_BENCH; k++) {
        const kb_bench_info *o = kb_bench_info_get((kb_bench_id)k);
        if (o && o->backward && o->family && bi->family && !strcmp(o->family, bi->family))
            return o->tensors;
    }
    return bi->tensors;
}

/* What the forward saves for the backward, from x, by the tensor bits:
 * lse, softmax's y, LayerNorm's mean and rstd, or an rstd alone (RMSNorm's;
 * add_rmsnorm's, of h), the GPU reference's rule. */
void kb_ref_cpu_saved(kb_bench_id b, int64_t M, int64_t N, const float *x,
                      float *lse, float *mean, float *rstd, float *y)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    if (!bi || !x || M < 1 || N < 1) return;
    const unsigned t = saved_bits(bi);
    for (int64_t i = 0; i < M; i++) {
        const float *r = x + i * N;
        double mu, rs;
        if ((t & KB_T_LSE) && lse) lse[i] = (float)kb_ref_row_lse(r, N);
        if ((t & KB_T_Y) && y) kb_ref_row_softmax(r, N, y + i * N);
        if (t & KB_T_MEAN) {
            kb_ref_row_ln_stats(r, N, &mu, &rs);
            if (mean) mean[i] = (float)mu;
            if (rstd) rstd[i] = (float)rs;
        } else if ((t & KB_T_RSTD) && rstd) {
            rstd[i] = (float)kb_ref_row_rms_rstd(r, N);
        }
    }
}

kb_status kb_ref_cpu_check(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                           const kb_ref_out *out, kb_err *e)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    if (!bi) return KB_FAIL(e, KB_ERR_ARG, "cpu reference: unknown benchmark id %d", (int)b);
    const char *name = bi->name;
    if (M < 1 || N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": M and N must be >= 1", name, M, N);
    if (!in || !out || !out->out)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": inputs/outputs/out is NULL", name, M, N);
    /* What the benchmark reads and writes besides out (its descriptor). */
    const unsigned n = bi->ref_reads;
    const struct { unsigned bit; const void *p; const char *what; } req[] = {
        {KB_T_X, in->x, "x"}, {KB_T_DY, in->dy, "dy"}, {KB_T_W, in->w, "w"},
        {KB_T_DLOSS, in->dloss, "dloss"}, {KB_T_Y, in->y, "y (softmax output)"},
        {KB_T_TARGET, in->target, "target"}, {KB_T_LSE, in->lse, "saved lse"},
        {KB_T_MEAN, in->mean, "saved mean"}, {KB_T_RSTD, in->rstd, "saved rstd"},
        {KB_T_DW, out->dw, "dw"}, {KB_T_UP, in->up, "up"},
    };
    for (size_t k = 0; k < sizeof req / sizeof req[0]; k++)
        if ((n & req[k].bit) && !req[k].p)
            return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                           ": %s is NULL", name, M, N, req[k].what);
    if (n & KB_T_TARGET)
        for (int64_t i = 0; i < M; i++)
            if (in->target[i] < 0 || in->target[i] >= N)
                return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                               ": target[%" PRId64 "] = %" PRId64 " outside [0, %" PRId64 ")",
                               name, M, N, i, in->target[i], N);
    return KB_OK;
}

kb_status kb_ref_cpu3(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e)
{
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    if (!bi) return KB_FAIL(e, KB_ERR_ARG, "cpu reference: unknown benchmark id %d", (int)p->bench);
    if (!bi->ref_cpu)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s: the benchmark has no CPU reference "
                       "(its descriptor's ref_cpu is NULL)", bi->name);
    return bi->ref_cpu(p, in, out, e);
}

kb_status kb_ref_cpu(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                     kb_ref_out *out, kb_err *e)
{
    const kb_problem p = {b, KB_FP32, M, N, 0};
    return kb_ref_cpu3(&p, in, out, e);
}
