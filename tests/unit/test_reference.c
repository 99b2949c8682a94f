/* The CPU reference (closed forms, finite-difference gradients, argument
 * errors) and the host bf16/fp16 conversions of base/half.h. CPU only. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glu_ref.h"
#include "half.h"
#include "qfill.h"
#include "reference.h"
#include "unit.h"

static void run(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in, float *out, float *dw)
{
    kb_err e = {{0}};
    kb_ref_out o = {out, dw};
    kb_status st = kb_ref_cpu(b, M, N, in, &o, &e);
    ck_assert_msg(st == KB_OK, "kb_ref_cpu(%d) failed: %s", (int)b, e.msg);
}

/* ---- closed forms ------------------------------------------------------------ */
START_TEST(test_softmax_constant_row)
{
    const int64_t M = 2, N = 5;
    float x[10], y[10];
    for (int i = 0; i < 10; i++) x[i] = i < 5 ? 3.7f : -1.25f;
    run(KB_SOFTMAX_FWD, M, N, &(kb_ref_in){.x = x}, y, NULL);
    for (int i = 0; i < 10; i++) ck_assert_double_eq_tol(y[i], 0.2, 1e-7);
}
END_TEST

START_TEST(test_rmsnorm_constant_row)
{
    const int64_t N = 6;
    const float c = 0.75f, w[6] = {1.0f, -2.0f, 0.5f, 3.0f, 0.0f, -0.125f};
    float x[6], y[6];
    for (int j = 0; j < N; j++) x[j] = c;
    run(KB_RMSNORM_FWD, 1, N, &(kb_ref_in){.x = x, .w = w}, y, NULL);
    const double k = c / sqrt((double)c * c + (double)KB_NORM_EPS);
    for (int j = 0; j < N; j++) ck_assert_double_eq_tol(y[j], k * w[j], 1e-6);
    /* and a tiny constant row, where eps matters: c = 1e-3 -> c/sqrt(c^2+1e-6) = 1/sqrt(2) */
    for (int j = 0; j < N; j++) x[j] = 1e-3f;
    run(KB_RMSNORM_FWD, 1, N, &(kb_ref_in){.x = x, .w = w}, y, NULL);
    const double k2 = 1e-3f / sqrt((double)1e-3f * 1e-3f + (double)KB_NORM_EPS);
    ck_assert_double_eq_tol(k2, 1.0 / sqrt(2.0), 1e-6);
    for (int j = 0; j < N; j++) ck_assert_double_eq_tol(y[j], k2 * w[j], 1e-6);
}
END_TEST

START_TEST(test_layernorm_constant_row)
{
    const int64_t M = 2, N = 7;
    float x[14], y[14], w[7];
    for (int i = 0; i < 14; i++) x[i] = i < 7 ? 0.3f : -123.5f;
    for (int j = 0; j < 7; j++) w[j] = 1.0f + (float)j;
    run(KB_LAYERNORM_FWD, M, N, &(kb_ref_in){.x = x, .w = w}, y, NULL);
    for (int i = 0; i < 14; i++) ck_assert_double_eq_tol(y[i], 0.0, 1e-6);
    /* mean 0, biased variance 1: x = +-1 alternating with even N */
    float x2[4] = {1, -1, 1, -1}, w2[4] = {1, 1, 1, 1}, y2[4];
    run(KB_LAYERNORM_FWD, 1, 4, &(kb_ref_in){.x = x2, .w = w2}, y2, NULL);
    const double k = 1.0 / sqrt(1.0 + (double)KB_NORM_EPS);
    for (int j = 0; j < 4; j++) ck_assert_double_eq_tol(y2[j], x2[j] * k, 1e-7);
    float mean = -1.0f, rstd = -1.0f;
    kb_ref_cpu_saved(KB_LAYERNORM_BWD, 1, 4, x2, NULL, &mean, &rstd, NULL);
    ck_assert_double_eq_tol(mean, 0.0, 1e-12);
    ck_assert_double_eq_tol(rstd, k, 1e-7);
    kb_ref_cpu_saved(KB_RMSNORM_BWD, 1, 4, x2, NULL, NULL, &rstd, NULL);
    ck_assert_double_eq_tol(rstd, k, 1e-7);
    float lse = 0.0f;
    kb_ref_cpu_saved(KB_CE_BWD, 1, 4, x2, &lse, NULL, NULL, NULL);
    ck_assert_double_eq_tol(lse, log(2.0 * exp(1.0) + 2.0 * exp(-1.0)), 1e-6);
}
END_TEST

START_TEST(test_ce_large_logit)
{
    const int64_t M = 2, N = 5;
    float x[10] = {0};
    x[3] = 30.0f;      /* row 0: the big logit is the target     */
    x[5 + 1] = 30.0f;  /* row 1: big logit at 1, target at 4 (0) */
    const int64_t target[2] = {3, 4};
    float loss[2];
    run(KB_CE_FWD, M, N, &(kb_ref_in){.x = x, .target = target}, loss, NULL);
    ck_assert_double_ge(loss[0], 0.0);
    ck_assert_double_lt(loss[0], 1e-10);
    ck_assert_double_eq_tol(loss[1], 30.0, 1e-5);
    /* uniform logits: log(N) */
    float u[5] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    int64_t t0 = 2;
    run(KB_CE_FWD, 1, 5, &(kb_ref_in){.x = u, .target = &t0}, loss, NULL);
    ck_assert_double_eq_tol(loss[0], log(5.0), 1e-6);
}
END_TEST

START_TEST(test_softmax_bwd_constant_dy)
{
    const int64_t M = 3, N = 9;
    float *x = kb_qfill(M * N, 7), *y = kb_qzeros(M * N), *dy = kb_qzeros(M * N), *dx = kb_qzeros(M * N);
    for (int64_t i = 0; i < M * N; i++) dy[i] = 0.7f * (float)(1 + i / N);
    kb_ref_cpu_saved(KB_SOFTMAX_BWD, M, N, x, NULL, NULL, NULL, y);
    run(KB_SOFTMAX_BWD, M, N, &(kb_ref_in){.dy = dy, .y = y}, dx, NULL);
    for (int64_t i = 0; i < M * N; i++) ck_assert_double_eq_tol(dx[i], 0.0, 1e-6);
    free(x); free(y); free(dy); free(dx);
}
END_TEST

START_TEST(test_ce_bwd_row_sums)
{
    const int64_t M = 4, N = 11;
    float *x = kb_qfill(M * N, 11), *dx = kb_qzeros(M * N), lse[4];
    const float dloss[4] = {1.0f, -0.5f, 2.25f, 0.0f};
    const int64_t target[4] = {0, 10, 5, 3};
    kb_ref_cpu_saved(KB_CE_BWD, M, N, x, lse, NULL, NULL, NULL);
    run(KB_CE_BWD, M, N,
        &(kb_ref_in){.x = x, .dloss = dloss, .target = target, .lse = lse}, dx, NULL);
    for (int64_t i = 0; i < M; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < N; j++) s += dx[i * N + j];
        ck_assert_double_eq_tol(s, 0.0, 1e-6 * (1.0 + fabs(dloss[i])));
        /* the target column is the only negative-for-positive-dloss one */
        if (dloss[i] > 0) ck_assert_double_lt(dx[i * N + target[i]], 0.0);
    }
    free(x); free(dx);
}
END_TEST

/* ---- finite differences ---------------------------------------------------------
 * L(x) = sum(c * forward(x)), c = dy (or dloss for CE). Central differences
 * with Richardson extrapolation (error O(h^4)), h = 2^-5 and 2^-6 so that
 * x +- h is exact in float; the forward's fp32 output rounding is the
 * remaining noise (~1e-7 / h). */
typedef struct {
    kb_bench_id fwd, bwd;
    int64_t M, N;
    float *x, *w, *c; /* c: dy [M,N] or dloss [M] */
    int64_t *target;
} fd_case;

static double loss_of(const fd_case *f)
{
    const int64_t nout = f->fwd == KB_CE_FWD ? f->M : f->M * f->N;
    float *out = kb_qzeros(nout);
    run(f->fwd, f->M, f->N, &(kb_ref_in){.x = f->x, .w = f->w, .target = f->target}, out, NULL);
    double L = 0.0;
    for (int64_t i = 0; i < nout; i++) L += (double)f->c[i] * out[i];
    free(out);
    return L;
}

static double fd_at(fd_case *f, float *v, double h)
{
    const float keep = *v;
    *v = keep + (float)h;
    const double lp = loss_of(f);
    *v = keep - (float)h;
    const double lm = loss_of(f);
    *v = keep;
    return (lp - lm) / (2.0 * h);
}

static double fd(fd_case *f, float *v)
{
    const double h = 1.0 / 32.0;
    return (4.0 * fd_at(f, v, h / 2.0) - fd_at(f, v, h)) / 3.0;
}

static void fd_check(kb_bench_id fwd, kb_bench_id bwd, int64_t M, int64_t N, uint64_t seed)
{
    fd_case f = {fwd, bwd, M, N, kb_qfill(M * N, seed), kb_qfill(N, seed + 1), NULL, NULL};
    const int ce = fwd == KB_CE_FWD;
    f.c = kb_qfill(ce ? M : M * N, seed + 2);
    int64_t *target = malloc((size_t)M * sizeof *target);
    ck_assert_ptr_nonnull(target);
    for (int64_t i = 0; i < M; i++) target[i] = (i * 7 + 3) % N;
    f.target = target;

    float *lse = kb_qzeros(M), *mean = kb_qzeros(M), *rstd = kb_qzeros(M), *y = kb_qzeros(M * N);
    float *dx = kb_qzeros(M * N), *dw = kb_qzeros(N);
    kb_ref_cpu_saved(bwd, M, N, f.x, lse, mean, rstd, y);
    const kb_ref_in in = {.x = f.x, .w = f.w, .target = target, .lse = lse, .mean = mean,
                          .rstd = rstd, .y = y, .dy = ce ? NULL : f.c, .dloss = ce ? f.c : NULL};
    const int norm = bwd == KB_RMSNORM_BWD || bwd == KB_LAYERNORM_BWD;
    run(bwd, M, N, &in, dx, norm ? dw : NULL);

    for (int64_t k = 0; k < M * N; k++) {
        const double g = fd(&f, &f.x[k]);
        const double err = fabs(g - dx[k]) / (2e-4 + 1e-3 * fabs(g));
        ck_assert_msg(err <= 1.0, "bench %d %ldx%ld: dx[%ld] = %.9g, finite difference %.9g",
                      (int)bwd, (long)M, (long)N, (long)k, (double)dx[k], g);
    }
    if (norm)
        for (int64_t j = 0; j < N; j++) {
            const double g = fd(&f, &f.w[j]);
            ck_assert_msg(fabs(g - dw[j]) <= 2e-4 + 1e-3 * fabs(g),
                          "bench %d %ldx%ld: dw[%ld] = %.9g, finite difference %.9g", (int)bwd,
                          (long)M, (long)N, (long)j, (double)dw[j], g);
        }
    free(f.x); free(f.w); free(f.c); free(target);
    free(lse); free(mean); free(rstd); free(y); free(dx); free(dw);
}

static const struct { kb_bench_id fwd, bwd; } fd_benches[] = {
    {KB_CE_FWD, KB_CE_BWD},
    {KB_SOFTMAX_FWD, KB_SOFTMAX_BWD},
    {KB_RMSNORM_FWD, KB_RMSNORM_BWD},
    {KB_LAYERNORM_FWD, KB_LAYERNORM_BWD},
};

START_TEST(test_finite_differences)
{
    fd_check(fd_benches[_i].fwd, fd_benches[_i].bwd, 3, 5, 100 + (uint64_t)_i);
    fd_check(fd_benches[_i].fwd, fd_benches[_i].bwd, 2, 16, 200 + (uint64_t)_i);
    fd_check(fd_benches[_i].fwd, fd_benches[_i].bwd, 4, 2, 300 + (uint64_t)_i);
}
END_TEST

/* A wrong formula must be caught: the check above would fail if dx were
 * off by the mean(g) term, which is what tells LayerNorm from RMSNorm. */
START_TEST(test_fd_detects_wrong_formula)
{
    const int64_t M = 2, N = 6;
    fd_case f = {KB_LAYERNORM_FWD, KB_LAYERNORM_BWD, M, N, kb_qfill(M * N, 5), kb_qfill(N, 6),
                 kb_qfill(M * N, 7), NULL};
    float rstd[2], *dx = kb_qzeros(M * N), *dw = kb_qzeros(N);
    kb_ref_cpu_saved(KB_RMSNORM_BWD, M, N, f.x, NULL, NULL, rstd, NULL);
    /* RMSNorm's backward applied to LayerNorm's forward: must disagree. */
    run(KB_RMSNORM_BWD, M, N, &(kb_ref_in){.x = f.x, .w = f.w, .dy = f.c, .rstd = rstd}, dx, dw);
    double worst = 0.0;
    for (int64_t k = 0; k < M * N; k++) {
        const double g = fd(&f, &f.x[k]);
        const double err = fabs(g - dx[k]) / (2e-4 + 1e-3 * fabs(g));
        if (err > worst) worst = err;
    }
    ck_assert_double_gt(worst, 10.0);
    free(f.x); free(f.w); free(f.c); free(dx); free(dw);
}
END_TEST

/* ---- GLU ----------------------------------------------------------------------------
 * Known values (torch.nn.functional.gelu(x, approximate="tanh") and silu in
 * double), the odd-part identity act(x) - act(-x) = x of both (tanh and the
 * sigmoid are odd about 0 / 1/2), act'(0) = 1/2, and saturation without
 * inf or NaN up to FLT_MAX. */
START_TEST(test_glu_closed_forms)
{
    ck_assert_double_eq_tol(kb_ref_glu_act(KB_ACT_GELU_TANH, 1.0), 0.8411919906082768, 1e-15);
    ck_assert_double_eq_tol(kb_ref_glu_act(KB_ACT_GELU_TANH, -1.0), -0.15880800939172324, 1e-15);
    ck_assert_double_eq_tol(kb_ref_glu_act(KB_ACT_GELU_TANH, 2.0), 1.954597694087775, 1e-15);
    ck_assert_double_eq_tol(kb_ref_glu_act(KB_ACT_SILU, 1.0), 0.7310585786300049, 1e-15);
    ck_assert_double_eq_tol(kb_ref_glu_act(KB_ACT_SILU, -2.0), -0.2384058440442351, 1e-15);
    ck_assert_double_eq_tol(kb_ref_glu_dact(KB_ACT_GELU_TANH, 1.0), 1.0829640837983767, 1e-8);
    ck_assert_double_eq_tol(kb_ref_glu_dact(KB_ACT_SILU, 1.0), 0.9276705117966522, 1e-8);
    const kb_glu_act acts[] = {KB_ACT_GELU_TANH, KB_ACT_SILU};
    for (int f = 0; f < 2; f++) {
        const kb_glu_act act = acts[f];
        ck_assert_double_eq(kb_ref_glu_act(act, 0.0), 0.0);
        ck_assert_double_eq_tol(kb_ref_glu_dact(act, 0.0), 0.5, 1e-15);
        for (double x = 0.125; x < 8.0; x *= 1.5) {
            ck_assert_double_eq_tol(kb_ref_glu_act(act, x) - kb_ref_glu_act(act, -x), x,
                                    1e-14 * x);
            ck_assert_double_eq_tol(kb_ref_glu_dact(act, x) + kb_ref_glu_dact(act, -x), 1.0,
                                    1e-14);
        }
        const double big[] = {100.0, 1000.0, 1e20, FLT_MAX};
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
            /* silu(-100) = -100 e^-100: tiny, not 0 */
            ck_assert_double_eq(kb_ref_glu_act(act, big[i]), big[i]);
            ck_assert_double_eq_tol(kb_ref_glu_act(act, -big[i]), 0.0, 1e-30);
            ck_assert_double_eq(kb_ref_glu_dact(act, big[i]), 1.0);
            ck_assert_double_eq_tol(kb_ref_glu_dact(act, -big[i]), 0.0, 1e-30);
        }
    }
}
END_TEST

/* act' against central differences of act over [-8, 8] (h = 2^-12: the
 * O(h^2) error ~1e-8, far below the check), and the backward's layout:
 * out = [dy * up * act'(x); dy * act(x)]. */
START_TEST(test_glu_derivatives_and_layout)
{
    const kb_glu_act acts[] = {KB_ACT_GELU_TANH, KB_ACT_SILU};
    for (int f = 0; f < 2; f++)
        for (double x = -8.0; x <= 8.0; x += 0.0625) {
            const double h = 0x1p-12;
            const double fd = (kb_ref_glu_act(acts[f], x + h) - kb_ref_glu_act(acts[f], x - h)) /
                              (2 * h);
            ck_assert_msg(fabs(fd - kb_ref_glu_dact(acts[f], x)) < 1e-6,
                          "act %d x %g: act' %.12g, finite difference %.12g", (int)acts[f], x,
                          kb_ref_glu_dact(acts[f], x), fd);
        }
    const int64_t M = 2, N = 3;
    float x[6] = {-3.0f, -0.5f, 0.0f, 0.25f, 1.0f, 20.0f}, up[6] = {1, -2, 3, 0.5f, -1, 2};
    float dy[6] = {0.5f, 1, -1, 2, 0.25f, -3}, out[12];
    const kb_bench_id fwd[] = {KB_GEGLU_FWD, KB_SWIGLU_FWD}, bwd[] = {KB_GEGLU_BWD, KB_SWIGLU_BWD};
    for (int f = 0; f < 2; f++) {
        run(fwd[f], M, N, &(kb_ref_in){.x = x, .up = up}, out, NULL);
        for (int i = 0; i < 6; i++)
            ck_assert_float_eq(out[i], (float)(kb_ref_glu_act(acts[f], x[i]) * up[i]));
        run(bwd[f], M, N, &(kb_ref_in){.x = x, .up = up, .dy = dy}, out, NULL);
        for (int i = 0; i < 6; i++) {
            ck_assert_float_eq(out[i], (float)((double)dy[i] * up[i] *
                                               kb_ref_glu_dact(acts[f], x[i])));
            ck_assert_float_eq(out[6 + i], (float)((double)dy[i] * kb_ref_glu_act(acts[f], x[i])));
        }
    }
    /* Each GLU benchmark's activation: GeGLU's GELU, SwiGLU's SiLU. */
    for (int f = 0; f < 2; f++) {
        ck_assert_int_eq(kb_glu_ref_act(fwd[f]), acts[f]);
        ck_assert_int_eq(kb_glu_ref_act(bwd[f]), acts[f]);
    }
    /* A wrong activation is caught: SiLU's values are not GELU's. */
    ck_assert_double_gt(fabs(kb_ref_glu_act(KB_ACT_GELU_TANH, 1.0) - kb_ref_glu_act(KB_ACT_SILU, 1.0)),
                        0.1);
}
END_TEST

/* ---- argument errors ------------------------------------------------------------- */
START_TEST(test_bad_arguments)
{
    float x[6] = {0}, out[6], dw[3], lse[2] = {0}, dloss[2] = {1, 1}, w[3] = {1, 1, 1};
    int64_t tgt[2] = {0, 1};
    kb_err e = {{0}};
    kb_ref_out o = {out, NULL};
    kb_ref_in in = {.x = x, .target = tgt, .lse = lse, .dloss = dloss};

    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 2, 3, &in, &o, &e), KB_OK);
    tgt[1] = 3; /* == N */
    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 2, 3, &in, &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "target[1] = 3"));
    ck_assert_int_eq(kb_ref_cpu(KB_CE_BWD, 2, 3, &in, &o, &e), KB_ERR_ARG);
    tgt[1] = -1;
    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 2, 3, &in, &o, NULL), KB_ERR_ARG);
    tgt[1] = 2;
    ck_assert_int_eq(kb_ref_cpu(KB_CE_BWD, 2, 3, &in, &o, &e), KB_OK);

    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 0, 3, &in, &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 2, 0, &in, &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_ref_cpu(KB_NUM_BENCH, 2, 3, &in, &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 2, 3, NULL, &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_ref_cpu(KB_CE_FWD, 2, 3, &in, NULL, &e), KB_ERR_ARG);

    in.lse = NULL; /* CE backward needs the saved lse */
    ck_assert_int_eq(kb_ref_cpu(KB_CE_BWD, 2, 3, &in, &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "lse"));

    kb_ref_in nin = {.x = x, .w = w}; /* norm backward: dy, rstd, dw missing */
    ck_assert_int_eq(kb_ref_cpu(KB_RMSNORM_FWD, 2, 3, &nin, &o, &e), KB_OK);
    ck_assert_int_eq(kb_ref_cpu(KB_RMSNORM_BWD, 2, 3, &nin, &o, &e), KB_ERR_ARG);
    nin.dy = x;
    nin.rstd = lse;
    ck_assert_int_eq(kb_ref_cpu(KB_RMSNORM_BWD, 2, 3, &nin, &o, &e), KB_ERR_ARG); /* dw */
    o.dw = dw;
    ck_assert_int_eq(kb_ref_cpu(KB_RMSNORM_BWD, 2, 3, &nin, &o, &e), KB_OK);
    ck_assert_int_eq(kb_ref_cpu(KB_LAYERNORM_BWD, 2, 3, &nin, &o, &e), KB_ERR_ARG); /* mean */
    nin.w = NULL;
    ck_assert_int_eq(kb_ref_cpu(KB_LAYERNORM_FWD, 2, 3, &nin, &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_ref_cpu(KB_SOFTMAX_BWD, 2, 3, &(kb_ref_in){.dy = x}, &o, &e), KB_ERR_ARG);
    /* GLU: up, and dy for the backward */
    ck_assert_int_eq(kb_ref_cpu(KB_GEGLU_FWD, 2, 3, &(kb_ref_in){.x = x}, &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "up is NULL"));
    float pair[12];
    kb_ref_out op = {pair, NULL};
    ck_assert_int_eq(kb_ref_cpu(KB_SWIGLU_FWD, 2, 3, &(kb_ref_in){.x = x, .up = x}, &op, &e), KB_OK);
    ck_assert_int_eq(kb_ref_cpu(KB_SWIGLU_BWD, 2, 3, &(kb_ref_in){.x = x, .up = x}, &op, &e),
                     KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "dy is NULL"));
}
END_TEST

/* ---- half.h ---------------------------------------------------------------------- */
static int is_even(uint16_t h) { return (h & 1u) == 0; }

START_TEST(test_half_specials)
{
    /* bf16 */
    ck_assert_uint_eq(kb_float_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(kb_float_to_bf16(-2.0f), 0xc000);
    ck_assert_uint_eq(kb_float_to_bf16(-0.0f), 0x8000);
    ck_assert_uint_eq(kb_float_to_bf16(INFINITY), 0x7f80);
    ck_assert_uint_eq(kb_float_to_bf16(-INFINITY), 0xff80);
    ck_assert_uint_eq(kb_float_to_bf16(FLT_MAX), 0x7f80);            /* rounds up to inf */
    ck_assert_uint_eq(kb_float_to_bf16(kb_bits_to_float(0x7f7f7fffu)), 0x7f7f);
    ck_assert_uint_eq(kb_float_to_bf16(kb_bits_to_float(0x7f7f8000u)), 0x7f80); /* tie -> even = inf */
    ck_assert_uint_eq(kb_float_to_bf16(1.0f + 0x1p-8f), 0x3f80);      /* tie -> even (down) */
    ck_assert_uint_eq(kb_float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);  /* tie -> even (up)   */
    ck_assert_uint_eq(kb_float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    ck_assert_uint_eq(kb_float_to_bf16(kb_bits_to_float(0x00008000u)), 0x0000); /* subnormal tie */
    ck_assert_uint_eq(kb_float_to_bf16(kb_bits_to_float(0x00018000u)), 0x0002);
    ck_assert_uint_eq(kb_float_to_bf16(kb_bits_to_float(0x00008001u)), 0x0001);
    ck_assert_uint_eq(kb_float_to_bits(kb_bf16_to_float(0x0001)), 0x00010000u);
    const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0xffc00001u, 0x7fffffffu, 0xff800001u};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        const uint16_t h = kb_float_to_bf16(kb_bits_to_float(nans[i]));
        ck_assert_msg(isnan(kb_bf16_to_float(h)), "bf16 of NaN 0x%08x gave 0x%04x", nans[i], h);
        ck_assert_msg(isnan(kb_fp16_to_float(kb_float_to_fp16(kb_bits_to_float(nans[i])))),
                      "fp16 of NaN 0x%08x is not NaN", nans[i]);
    }
    /* fp16 */
    ck_assert_uint_eq(kb_float_to_fp16(1.0f), 0x3c00);
    ck_assert_uint_eq(kb_float_to_fp16(-2.0f), 0xc000);
    ck_assert_uint_eq(kb_float_to_fp16(-0.0f), 0x8000);
    ck_assert_uint_eq(kb_float_to_fp16(65504.0f), 0x7bff);
    ck_assert_uint_eq(kb_float_to_fp16(nextafterf(65520.0f, 0.0f)), 0x7bff);
    ck_assert_uint_eq(kb_float_to_fp16(65520.0f), 0x7c00);           /* tie -> even = inf */
    ck_assert_uint_eq(kb_float_to_fp16(1e6f), 0x7c00);
    ck_assert_uint_eq(kb_float_to_fp16(-1e6f), 0xfc00);
    ck_assert_uint_eq(kb_float_to_fp16(INFINITY), 0x7c00);
    ck_assert_uint_eq(kb_float_to_fp16(-INFINITY), 0xfc00);
    ck_assert_uint_eq(kb_float_to_fp16(1.0f + 0x1p-11f), 0x3c00);     /* tie -> even (down) */
    ck_assert_uint_eq(kb_float_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02); /* tie -> even (up)   */
    ck_assert_uint_eq(kb_float_to_fp16(0x1p-24f), 0x0001);            /* smallest subnormal */
    ck_assert_uint_eq(kb_float_to_fp16(0x1p-25f), 0x0000);            /* tie -> 0           */
    ck_assert_uint_eq(kb_float_to_fp16(nextafterf(0x1p-25f, 1.0f)), 0x0001);
    ck_assert_uint_eq(kb_float_to_fp16(3 * 0x1p-25f), 0x0002);
    ck_assert_uint_eq(kb_float_to_fp16(-3 * 0x1p-25f), 0x8002);
    ck_assert_uint_eq(kb_float_to_fp16(0x1p-14f), 0x0400);            /* smallest normal    */
    ck_assert_uint_eq(kb_float_to_fp16(0x1p-14f - 0x1p-25f), 0x0400); /* tie across boundary */
    ck_assert_uint_eq(kb_float_to_fp16(1e-10f), 0x0000);
    ck_assert_uint_eq(kb_float_to_fp16(kb_bits_to_float(0x00000001u)), 0x0000);
    ck_assert_double_eq(kb_fp16_to_float(0x0001), 0x1p-24);
    ck_assert_double_eq(kb_fp16_to_float(0x03ff), 1023 * 0x1p-24);
    ck_assert_double_eq(kb_fp16_to_float(0x7bff), 65504.0);
    ck_assert_double_eq(kb_fp16_to_float(0xc000), -2.0);
    ck_assert(isinf(kb_fp16_to_float(0x7c00)) && kb_fp16_to_float(0x7c00) > 0);
    ck_assert(isinf(kb_fp16_to_float(0xfc00)) && kb_fp16_to_float(0xfc00) < 0);
    ck_assert(isnan(kb_fp16_to_float(0x7e00)) && isnan(kb_fp16_to_float(0x7c01)));
    ck_assert(signbit(kb_fp16_to_float(0x8000)) && kb_fp16_to_float(0x8000) == 0.0f);
    /* kb_round_to / kb_load_as_float */
    ck_assert_double_eq(kb_round_to(KB_FP32, 0.1f), 0.1f);
    ck_assert_double_eq(kb_round_to(KB_BF16, 1.0f + 0x1p-9f), 1.0);
    ck_assert_double_eq(kb_round_to(KB_FP16, 1.0f + 0x1p-12f), 1.0);
    const uint16_t hv[2] = {0x3c00, 0xc000};
    ck_assert_double_eq(kb_load_as_float(KB_FP16, hv, 1), -2.0);
    ck_assert_double_eq(kb_load_as_float(KB_BF16, hv, 1), -2.0);
}
END_TEST

typedef float (*to_f)(uint16_t);
typedef uint16_t (*from_f)(float);

/* Every finite value round-trips; every midpoint between neighbours goes
 * to the even one, and a float just above/below it to the upper/lower one
 * (both signs). inf: the first non-finite magnitude's bits. */
static void exhaustive(const char *name, to_f tof, from_f fromf, uint16_t inf)
{
    long bad = 0;
    char first[200] = "";
#define BAD(...)                                                                     \
    do {                                                                             \
        if (!bad++) snprintf(first, sizeof first, __VA_ARGS__);                      \
    } while (0)
    for (uint32_t h = 0; h < 0x10000u; h++) {
        const uint16_t mag = (uint16_t)(h & 0x7fffu);
        if (mag > inf) continue; /* NaN */
        if (fromf(tof((uint16_t)h)) != h) BAD("%s round trip 0x%04x", name, h);
    }
    for (uint16_t h = 0; h + 1 < inf; h++) {
        const float lo = tof(h), hi = tof((uint16_t)(h + 1));
        const float m = (float)(((double)lo + (double)hi) / 2.0);
        if ((double)m != ((double)lo + (double)hi) / 2.0) BAD("%s midpoint inexact 0x%04x", name, h);
        const uint16_t even = is_even(h) ? h : (uint16_t)(h + 1);
        for (int sg = 0; sg < 2; sg++) {
            const float s = sg ? -1.0f : 1.0f;
            const uint16_t sb = sg ? 0x8000u : 0u;
            if (fromf(s * m) != (uint16_t)(sb | even)) BAD("%s tie 0x%04x sign %d", name, h, sg);
            if (fromf(s * nextafterf(m, 0.0f)) != (uint16_t)(sb | h))
                BAD("%s below tie 0x%04x sign %d", name, h, sg);
            if (fromf(s * nextafterf(m, INFINITY)) != (uint16_t)(sb | (h + 1)))
                BAD("%s above tie 0x%04x sign %d", name, h, sg);
        }
    }
#undef BAD
    ck_assert_msg(bad == 0, "%ld mismatches, first: %s", bad, first);
}

START_TEST(test_half_exhaustive_bf16) { exhaustive("bf16", kb_bf16_to_float, kb_float_to_bf16, 0x7f80); }
END_TEST

START_TEST(test_half_exhaustive_fp16) { exhaustive("fp16", kb_fp16_to_float, kb_float_to_fp16, 0x7c00); }
END_TEST

Suite *kb_suite_reference(void)
{
    Suite *s = suite_create("reference");
    TCase *tc = tcase_create("cpu");
    tcase_add_test(tc, test_softmax_constant_row);
    tcase_add_test(tc, test_rmsnorm_constant_row);
    tcase_add_test(tc, test_layernorm_constant_row);
    tcase_add_test(tc, test_ce_large_logit);
    tcase_add_test(tc, test_softmax_bwd_constant_dy);
    tcase_add_test(tc, test_ce_bwd_row_sums);
    tcase_add_loop_test(tc, test_finite_differences, 0,
                        (int)(sizeof fd_benches / sizeof fd_benches[0]));
    tcase_add_test(tc, test_fd_detects_wrong_formula);
    tcase_add_test(tc, test_glu_closed_forms);
    tcase_add_test(tc, test_glu_derivatives_and_layout);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("half");
    tcase_add_test(th, test_half_specials);
    tcase_add_test(th, test_half_exhaustive_bf16);
    tcase_add_test(th, test_half_exhaustive_fp16);
    suite_add_tcase(s, th);
    return s;
}
