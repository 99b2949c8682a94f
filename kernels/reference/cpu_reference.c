/* fp32 reference on the CPU: plain loops over host arrays, every sum and
 * every intermediate in double, exactly the formulas of reference.h; only
 * the stored results are rounded to float. Slow and obvious on purpose: the
 * unit tests check it against closed forms and finite differences, and the
 * GPU reference is checked against it on small shapes. */
#include <inttypes.h>
#include <math.h>

#include "glu_ref.h"
#include "reference.h"
#include "registry.h"

#define EPS ((double)KB_NORM_EPS)

static const char *bench_name(kb_bench_id b)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    return bi ? bi->name : "?";
}

static double row_lse(const float *r, int64_t N)
{
    double m = r[0];
    for (int64_t j = 1; j < N; j++) m = fmax(m, r[j]);
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += exp(r[j] - m);
    return m + log(s);
}

static double row_rms_rstd(const float *r, int64_t N)
{
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += (double)r[j] * r[j];
    return 1.0 / sqrt(s / (double)N + EPS);
}

/* Two passes (mean, then squared deviations) so a large mean does not
 * cancel the variance away. */
static void row_ln_stats(const float *r, int64_t N, double *mean, double *rstd)
{
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += r[j];
    const double mu = s / (double)N;
    double v = 0.0;
    for (int64_t j = 0; j < N; j++) v += (r[j] - mu) * (r[j] - mu);
    *mean = mu;
    *rstd = 1.0 / sqrt(v / (double)N + EPS);
}

static void row_softmax(const float *r, int64_t N, float *y)
{
    double m = r[0];
    for (int64_t j = 1; j < N; j++) m = fmax(m, r[j]);
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += exp(r[j] - m);
    for (int64_t j = 0; j < N; j++) y[j] = (float)(exp(r[j] - m) / s);
}

/* What the forward saves for the backward, from x: the shared reference's
 * families by family (a forward's statistics too, which nothing reads), an
 * op with its own reference by what its descriptor lists, by the GPU
 * reference's rule: lse, softmax's y, LayerNorm's mean and rstd, or an rstd
 * alone (RMSNorm's; add_rmsnorm's, of h). */
void kb_ref_cpu_saved(kb_bench_id b, int64_t M, int64_t N, const float *x,
                      float *lse, float *mean, float *rstd, float *y)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    if (!bi || !x || M < 1 || N < 1) return;
    const unsigned t = bi->tensors;
    for (int64_t i = 0; i < M; i++) {
        const float *r = x + i * N;
        double mu, rs;
        switch (bi->fam) {
        case KB_FAM_CROSS_ENTROPY:
            if (lse) lse[i] = (float)row_lse(r, N);
            break;
        case KB_FAM_SOFTMAX:
            if (y) row_softmax(r, N, y + i * N);
            break;
        case KB_FAM_RMSNORM:
            if (rstd) rstd[i] = (float)row_rms_rstd(r, N);
            break;
        case KB_FAM_LAYERNORM:
            row_ln_stats(r, N, &mu, &rs);
            if (mean) mean[i] = (float)mu;
            if (rstd) rstd[i] = (float)rs;
            break;
        case KB_FAM_GEGLU:
        case KB_FAM_SWIGLU: break; /* nothing saved */
        case KB_FAM_MLP: /* saves nothing */
        case KB_FAM_MLP_SWIGLU:
            break;
        case KB_FAM_OWN:
            if ((t & KB_T_LSE) && lse) lse[i] = (float)row_lse(r, N);
            if ((t & KB_T_Y) && y) row_softmax(r, N, y + i * N);
            if (t & KB_T_MEAN) {
                row_ln_stats(r, N, &mu, &rs);
                if (mean) mean[i] = (float)mu;
                if (rstd) rstd[i] = (float)rs;
            } else if ((t & KB_T_RSTD) && rstd) {
                rstd[i] = (float)row_rms_rstd(r, N);
            }
            break;
        }
    }
}

static kb_status check_args(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                            const kb_ref_out *out, kb_err *e)
{
    if (!kb_bench_info_get(b))
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference: unknown benchmark id %d", (int)b);
    const char *name = bench_name(b);
    if (M < 1 || N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": M and N must be >= 1", name, M, N);
    if (!in || !out || !out->out)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s %" PRId64 "x%" PRId64
                       ": inputs/outputs/out is NULL", name, M, N);
    /* What the benchmark reads and writes besides out (its descriptor). */
    const unsigned n = kb_bench_info_get(b)->ref_reads;
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

/* RMSNorm (ln = 0) and LayerNorm (ln = 1) backward of row i: dx. RMSNorm
 * is LayerNorm without centring: mean 0 and no mean(g) term. */
static void row_norm_bwd(const kb_ref_in *in, int ln, int64_t i, int64_t N, float *dx)
{
    const float *x = in->x + i * N, *dy = in->dy + i * N;
    const double mu = ln ? in->mean[i] : 0.0, rs = in->rstd[i];
    double sg = 0.0, sgx = 0.0;
    for (int64_t j = 0; j < N; j++) {
        const double g = (double)dy[j] * in->w[j], xh = (x[j] - mu) * rs;
        sg += g;
        sgx += g * xh;
    }
    const double mg = ln ? sg / (double)N : 0.0, mgx = sgx / (double)N;
    for (int64_t j = 0; j < N; j++) {
        const double g = (double)dy[j] * in->w[j], xh = (x[j] - mu) * rs;
        dx[j] = (float)(rs * (g - mg - xh * mgx));
    }
}

/* dw[j] = sum_i dy[i,j] * xh[i,j], column by column (no scratch needed). */
static void norm_dw(const kb_ref_in *in, int ln, int64_t M, int64_t N, float *dw)
{
    for (int64_t j = 0; j < N; j++) {
        double s = 0.0;
        for (int64_t i = 0; i < M; i++) {
            const double mu = ln ? in->mean[i] : 0.0;
            s += (double)in->dy[i * N + j] * ((in->x[i * N + j] - mu) * (double)in->rstd[i]);
        }
        dw[j] = (float)s;
    }
}

double kb_ref_glu_act(kb_family_id fam, double x) { return kb_glu_act_d(fam == KB_FAM_GEGLU, x); }

double kb_ref_glu_dact(kb_family_id fam, double x)
{
    return kb_glu_dact_d(fam == KB_FAM_GEGLU, x);
}

/* GLU over all M*N elements; the backward's dup follows dgate in out. */
static void glu_out(const kb_bench_info *bi, const kb_ref_in *in, int64_t MN, float *o)
{
    for (int64_t i = 0; i < MN; i++) {
        const double x = in->x[i], u = in->up[i];
        if (!bi->backward) {
            o[i] = (float)(kb_ref_glu_act(bi->fam, x) * u);
            continue;
        }
        const double dy = in->dy[i];
        o[i] = (float)(dy * u * kb_ref_glu_dact(bi->fam, x));
        o[MN + i] = (float)(dy * kb_ref_glu_act(bi->fam, x));
    }
}

/* Row i of out for each op: the one place the CPU reference picks per-op
 * math (by the descriptor's family and direction). */
static void out_row(const kb_bench_info *bi, const kb_ref_in *in, int64_t i, int64_t N, float *o)
{
    const int64_t off = i * N;
    const float *x = in->x ? in->x + off : NULL;
    const int ln = bi->fam == KB_FAM_LAYERNORM;
    double mu = 0.0, rs;
    switch (bi->fam) {
    case KB_FAM_CROSS_ENTROPY:
        if (!bi->backward) {
            o[i] = (float)(row_lse(x, N) - x[in->target[i]]);
            return;
        }
        const double lse = in->lse[i];
        for (int64_t j = 0; j < N; j++)
            o[off + j] = (float)(in->dloss[i] *
                                 (exp(x[j] - lse) - (j == in->target[i] ? 1.0 : 0.0)));
        return;
    case KB_FAM_SOFTMAX: {
        if (!bi->backward) {
            row_softmax(x, N, o + off);
            return;
        }
        const float *y = in->y + off, *dy = in->dy + off;
        double s = 0.0;
        for (int64_t j = 0; j < N; j++) s += (double)dy[j] * y[j];
        for (int64_t j = 0; j < N; j++) o[off + j] = (float)(y[j] * (dy[j] - s));
        return;
    }
    case KB_FAM_MLP: /* 3-D: kb_ref_cpu_mlp (kb_ref_cpu refuses it) */
    case KB_FAM_MLP_SWIGLU:
    case KB_FAM_OWN: /* kb_ref_cpu calls the op's own */
        return;
    case KB_FAM_RMSNORM:
    case KB_FAM_LAYERNORM:
        if (bi->backward) {
            row_norm_bwd(in, ln, i, N, o + off);
            return;
        }
        if (ln) row_ln_stats(x, N, &mu, &rs);
        else rs = row_rms_rstd(x, N);
        for (int64_t j = 0; j < N; j++) o[off + j] = (float)((x[j] - mu) * rs * in->w[j]);
        return;
    case KB_FAM_GEGLU:
    case KB_FAM_SWIGLU: return; /* elementwise: glu_out */
    }
}

kb_status kb_ref_cpu3(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e)
{
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    if (bi && bi->ref_cpu) return bi->ref_cpu(p, in, out, e);
    return kb_ref_cpu(p->bench, p->M, p->N, in, out, e);
}

kb_status kb_ref_cpu(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                     kb_ref_out *out, kb_err *e)
{
    const kb_bench_info *own = kb_bench_info_get(b);
    if (own && own->ref_cpu) {
        const kb_problem p = {b, KB_FP32, M, N, 0};
        return own->ref_cpu(&p, in, out, e);
    }
    KB_TRY(check_args(b, M, N, in, out, e));
    const kb_bench_info *bi = kb_bench_info_get(b);
    if (bi->fam == KB_FAM_GEGLU || bi->fam == KB_FAM_SWIGLU) {
        glu_out(bi, in, M * N, out->out);
        return KB_OK;
    }
    if (bi->dims == 3)
        return KB_FAIL(e, KB_ERR_ARG, "cpu reference %s: a 3-D op (MxNxK) has its own reference (the MLP block's)",
                       bi->name);
    for (int64_t i = 0; i < M; i++) out_row(bi, in, i, N, out->out);
    if (bi->ref_reads & KB_T_DW) norm_dw(in, bi->fam == KB_FAM_LAYERNORM, M, N, out->dw);
    return KB_OK;
}
