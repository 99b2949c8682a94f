/* The CPU references' shared building blocks (C11, no CUDA): the row
 * reductions and row formulas more than one op folder computes, in double,
 * exactly reference.h's definitions. Every op folder's reference.c that
 * needs one includes this header, so each reduction is written once:
 *   row_lse         log(sum_j exp(x_j)), max-shifted (cross entropy, saved lse)
 *   row_softmax     exp(x - max) / sum exp(x - max)  (softmax, saved y)
 *   row_rms_rstd    1/sqrt(mean(x^2) + eps)          (RMSNorm)
 *   row_ln_stats    mean, 1/sqrt(var + eps), two passes (LayerNorm)
 *   row_norm_bwd    the norm backward's dx row (RMSNorm and LayerNorm)
 *   norm_dw         the norm backward's dw column sums
 * Only the stored results are rounded to float. */
#ifndef KB_REF_ROWS_H
#define KB_REF_ROWS_H

#include <math.h>
#include <stdint.h>

#include "reference.h"

#define KB_REF_EPS ((double)KB_NORM_EPS)

static inline double kb_ref_row_lse(const float *r, int64_t N)
{
    double m = r[0];
    for (int64_t j = 1; j < N; j++) m = fmax(m, r[j]);
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += exp(r[j] - m);
    return m + log(s);
}

static inline double kb_ref_row_rms_rstd(const float *r, int64_t N)
{
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += (double)r[j] * r[j];
    return 1.0 / sqrt(s / (double)N + KB_REF_EPS);
}

/* Two passes (mean, then squared deviations) so a large mean does not
 * cancel the variance away. */
static inline void kb_ref_row_ln_stats(const float *r, int64_t N, double *mean, double *rstd)
{
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += r[j];
    const double mu = s / (double)N;
    double v = 0.0;
    for (int64_t j = 0; j < N; j++) v += (r[j] - mu) * (r[j] - mu);
    *mean = mu;
    *rstd = 1.0 / sqrt(v / (double)N + KB_REF_EPS);
}

static inline void kb_ref_row_softmax(const float *r, int64_t N, float *y)
{
    double m = r[0];
    for (int64_t j = 1; j < N; j++) m = fmax(m, r[j]);
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += exp(r[j] - m);
    for (int64_t j = 0; j < N; j++) y[j] = (float)(exp(r[j] - m) / s);
}

/* RMSNorm (ln = 0) and LayerNorm (ln = 1) backward of row i: dx. RMSNorm
 * is LayerNorm without centring: mean 0 and no mean(g) term. */
static inline void kb_ref_row_norm_bwd(const kb_ref_in *in, int ln, int64_t i, int64_t N,
                                       float *dx)
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
static inline void kb_ref_norm_dw(const kb_ref_in *in, int ln, int64_t M, int64_t N, float *dw)
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

/* RMSNorm (ln = 0) and LayerNorm (ln = 1), the whole CPU reference of
 * either direction: y = (x - mean) * rstd * w row by row, or dx row by row
 * then dw. */
static inline void kb_ref_norm(const kb_ref_in *in, int ln, int backward, int64_t M, int64_t N,
                               float *o, float *dw)
{
    for (int64_t i = 0; i < M; i++) {
        const int64_t off = i * N;
        if (backward) {
            kb_ref_row_norm_bwd(in, ln, i, N, o + off);
            continue;
        }
        const float *x = in->x + off;
        double mu = 0.0, rs;
        if (ln) kb_ref_row_ln_stats(x, N, &mu, &rs);
        else rs = kb_ref_row_rms_rstd(x, N);
        for (int64_t j = 0; j < N; j++) o[off + j] = (float)((x[j] - mu) * rs * in->w[j]);
    }
    if (backward) kb_ref_norm_dw(in, ln, M, N, dw);
}

#endif
