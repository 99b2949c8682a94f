/* The add_rmsnorm CPU reference against closed forms and a finite
 * difference: r = 0 is plain RMSNorm of x; a constant row; dy = 0 passes
 * dres through with dw = 0; dx is the gradient of sum(dy * y) with respect
 * to h (dres added); N = 1 and M = 1; argument errors name the shape; a
 * shape whose buffers overflow size_t SKIPs for memory. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "add_rmsnorm_ref.h"
#include "half.h"
#include "qfill.h"

#define AR_EPS ((double)KB_NORM_EPS)

static void ar_run(kb_bench_id b, kb_dtype d, int64_t M, int64_t N, const kb_ref_in *in,
                   float *out, float *dw)
{
    kb_err e = {{0}};
    const kb_problem p = {b, d, M, N, 0};
    kb_ref_out o = {out, dw};
    const kb_status st = kb_add_rmsnorm_ref_cpu(&p, in, &o, &e);
    ck_assert_msg(st == KB_OK, "kb_add_rmsnorm_ref_cpu failed: %s", e.msg);
}

/* y of plain RMSNorm from its definition, in double. */
static void ar_rmsnorm(int64_t M, int64_t N, const float *x, const float *w, double *y)
{
    for (int64_t i = 0; i < M; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < N; j++) s += (double)x[i * N + j] * x[i * N + j];
        const double rs = 1.0 / sqrt(s / (double)N + AR_EPS);
        for (int64_t j = 0; j < N; j++) y[i * N + j] = x[i * N + j] * rs * w[j];
    }
}

/* r = 0: h = x (x already a dtype value), y = RMSNorm(x). Every dtype. */
START_TEST(ar_zero_residual_is_rmsnorm)
{
    const int64_t M = 3, N = 7;
    for (int d = 0; d < KB_NUM_DTYPES; d++) {
        float *x = kb_qfill(M * N, 11), *w = kb_qfill(N, 12), *r = kb_qzeros(M * N);
        float *out = kb_qzeros(2 * M * N);
        double y[21];
        for (int64_t k = 0; k < M * N; k++) x[k] = kb_round_to((kb_dtype)d, x[k]); /* a dtype input */
        ar_run(KB_ADD_RMSNORM_FWD, (kb_dtype)d, M, N, &(kb_ref_in){.x = x, .res = r, .w = w}, out,
               NULL);
        ar_rmsnorm(M, N, x, w, y);
        for (int64_t k = 0; k < M * N; k++) {
            ck_assert_float_eq(out[k], x[k]);
            ck_assert_double_eq_tol(out[M * N + k], y[k], 1e-6 * (1.0 + fabs(y[k])));
        }
        free(x), free(w), free(r), free(out);
    }
}
END_TEST

/* x = r = c everywhere, w = 1: h = 2c, y = 2c / sqrt(4c^2 + eps) for every
 * element; with r = 0 instead, y = c / sqrt(c^2 + eps). */
START_TEST(ar_constant_row)
{
    const int64_t M = 2, N = 5;
    const float c = 0.75f;
    float x[10], r[10], w[5], out[20];
    for (int k = 0; k < 10; k++) x[k] = r[k] = c;
    for (int j = 0; j < 5; j++) w[j] = 1.0f;
    ar_run(KB_ADD_RMSNORM_FWD, KB_BF16, M, N, &(kb_ref_in){.x = x, .res = r, .w = w}, out, NULL);
    const double h = 2.0 * c, yc = h / sqrt(h * h + AR_EPS);
    for (int k = 0; k < 10; k++) {
        ck_assert_float_eq(out[k], (float)h);
        ck_assert_double_eq_tol(out[10 + k], yc, 1e-7);
    }
    memset(r, 0, sizeof r);
    ar_run(KB_ADD_RMSNORM_FWD, KB_FP32, M, N, &(kb_ref_in){.x = x, .res = r, .w = w}, out, NULL);
    for (int k = 0; k < 10; k++)
        ck_assert_double_eq_tol(out[10 + k], c / sqrt((double)c * c + AR_EPS), 1e-7);
}
END_TEST

/* h is x + r rounded to the dtype: 1 + 2^-9 is not a bf16 value (ties to
 * even: 1), is an fp16 and an fp32 one. */
START_TEST(ar_h_rounds_to_dtype)
{
    const float x[1] = {1.0f}, r[1] = {1.0f / 512.0f}, w[1] = {1.0f};
    float out[2];
    ar_run(KB_ADD_RMSNORM_FWD, KB_BF16, 1, 1, &(kb_ref_in){.x = x, .res = r, .w = w}, out, NULL);
    ck_assert_float_eq(out[0], 1.0f);
    ar_run(KB_ADD_RMSNORM_FWD, KB_FP16, 1, 1, &(kb_ref_in){.x = x, .res = r, .w = w}, out, NULL);
    ck_assert_float_eq(out[0], 1.0f + 1.0f / 512.0f);
    /* N = 1: y = h / sqrt(h^2 + eps) * w */
    const double h = 1.0 + 1.0 / 512.0;
    ck_assert_double_eq_tol(out[1], h / sqrt(h * h + AR_EPS), 1e-7);
}
END_TEST

/* dy = 0: dx = dres exactly, dw = 0. */
START_TEST(ar_backward_zero_dy)
{
    const int64_t M = 4, N = 9;
    float *h = kb_qfill(M * N, 21), *w = kb_qfill(N, 22), *dres = kb_qfill(M * N, 23);
    float *dy = kb_qzeros(M * N), *rstd = kb_qzeros(M), *dx = kb_qzeros(M * N), *dw = kb_qfill(N, 24);
    kb_add_rmsnorm_ref_cpu_rstd(M, N, h, rstd);
    ar_run(KB_ADD_RMSNORM_BWD, KB_BF16, M, N,
           &(kb_ref_in){.x = h, .w = w, .dy = dy, .dres = dres, .rstd = rstd}, dx, dw);
    for (int64_t k = 0; k < M * N; k++) ck_assert_float_eq(dx[k], dres[k]);
    for (int64_t j = 0; j < N; j++) ck_assert_float_eq(dw[j], 0.0f);
    free(h), free(w), free(dres), free(dy), free(rstd), free(dx), free(dw);
}
END_TEST

/* L(h, w) = sum dy * y(h, w) (fp32 forward math in double: r = 0, fp32, so
 * the stored h is the input) plus sum dres * h, whose gradients are dx and
 * dw; central differences with step 1e-3 in double. */
static double ar_loss(int64_t M, int64_t N, const double *h, const double *w, const float *dy,
                      const float *dres)
{
    double L = 0.0;
    for (int64_t i = 0; i < M; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < N; j++) s += h[i * N + j] * h[i * N + j];
        const double rs = 1.0 / sqrt(s / (double)N + AR_EPS);
        for (int64_t j = 0; j < N; j++)
            L += dy[i * N + j] * (h[i * N + j] * rs * w[j]) + dres[i * N + j] * h[i * N + j];
    }
    return L;
}

/* Central differences of ar_loss in each of the n elements of v (hd or wd:
 * the point, in double) against the reference's gradient got. */
static void ar_check_fd_of(const char *what, double *v, const float *got, int64_t n, int64_t M,
                           int64_t N, const double *hd, const double *wd, const float *dy,
                           const float *dres)
{
    const double step = 1e-3;
    for (int64_t k = 0; k < n; k++) {
        const double v0 = v[k];
        v[k] = v0 + step;
        const double lp = ar_loss(M, N, hd, wd, dy, dres);
        v[k] = v0 - step;
        const double lm = ar_loss(M, N, hd, wd, dy, dres);
        v[k] = v0;
        const double g = (lp - lm) / (2.0 * step);
        ck_assert_msg(fabs(got[k] - g) <= 1e-3 * (1.0 + fabs(g)), "%s[%lld] = %g, fd %g", what,
                      (long long)k, got[k], g);
    }
}

static void ar_check_fd(int64_t M, int64_t N, uint64_t seed)
{
    const int64_t MN = M * N;
    float *h = kb_qfill(MN, seed), *w = kb_qfill(N, seed + 1), *dy = kb_qfill(MN, seed + 2);
    float *dres = kb_qfill(MN, seed + 3), *rstd = kb_qzeros(M), *dx = kb_qzeros(MN),
          *dw = kb_qzeros(N);
    for (int64_t k = 0; k < MN; k++) h[k] += 0.5f; /* no all-zero row */
    kb_add_rmsnorm_ref_cpu_rstd(M, N, h, rstd);
    ar_run(KB_ADD_RMSNORM_BWD, KB_FP32, M, N,
           &(kb_ref_in){.x = h, .w = w, .dy = dy, .dres = dres, .rstd = rstd}, dx, dw);
    double *hd = malloc((size_t)MN * sizeof *hd), *wd = malloc((size_t)N * sizeof *wd);
    ck_assert_ptr_nonnull(hd);
    ck_assert_ptr_nonnull(wd);
    for (int64_t k = 0; k < MN; k++) hd[k] = h[k];
    for (int64_t j = 0; j < N; j++) wd[j] = w[j];
    ar_check_fd_of("dx", hd, dx, MN, M, N, hd, wd, dy, dres);
    ar_check_fd_of("dw", wd, dw, N, M, N, hd, wd, dy, dres);
    free(hd), free(wd), free(h), free(w), free(dy), free(dres), free(rstd), free(dx), free(dw);
}

START_TEST(ar_backward_finite_difference) { ar_check_fd(3, 5, 31); }
END_TEST

START_TEST(ar_backward_one_row_one_col)
{
    ar_check_fd(1, 6, 41); /* M = 1 */
    ar_check_fd(4, 1, 51); /* N = 1 */
    ar_check_fd(1, 1, 61);
}
END_TEST

/* N = 1 forward: y = h / sqrt(h^2 + eps) * w, per row. */
START_TEST(ar_forward_n1)
{
    const float x[3] = {0.5f, -1.25f, 2.0f}, r[3] = {0.25f, 0.5f, -2.0f}, w[1] = {-1.5f};
    float out[6];
    ar_run(KB_ADD_RMSNORM_FWD, KB_FP32, 3, 1, &(kb_ref_in){.x = x, .res = r, .w = w}, out, NULL);
    for (int i = 0; i < 3; i++) {
        const double h = (double)x[i] + r[i];
        ck_assert_float_eq(out[i], (float)h);
        ck_assert_double_eq_tol(out[3 + i], h / sqrt(h * h + AR_EPS) * w[0], 1e-6);
    }
}
END_TEST

START_TEST(ar_bad_arguments)
{
    kb_err e = {{0}};
    float a[8] = {0}, out[16];
    kb_ref_out o = {out, NULL};
    const kb_problem fwd = {KB_ADD_RMSNORM_FWD, KB_BF16, 2, 4, 0};
    ck_assert_int_ne(kb_add_rmsnorm_ref_cpu(&fwd, &(kb_ref_in){.x = NULL, .res = a, .w = a}, &o,
                                            &e),
                     KB_OK);
    ck_assert_msg(strstr(e.msg, "2x4") && strstr(e.msg, "x is NULL"), "%s", e.msg);
    const kb_problem bad_m = {KB_ADD_RMSNORM_FWD, KB_BF16, 0, 4, 0};
    ck_assert_int_eq(kb_add_rmsnorm_ref_cpu(&bad_m, &(kb_ref_in){.x = a, .res = a, .w = a}, &o,
                                            &e),
                     KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "0x4"), "%s", e.msg);
    const kb_problem bwd = {KB_ADD_RMSNORM_BWD, KB_FP16, 2, 4, 0};
    ck_assert_int_eq(kb_add_rmsnorm_ref_cpu(&bwd,
                                            &(kb_ref_in){.x = a, .w = a, .dy = a, .rstd = a},
                                            &(kb_ref_out){out, a}, &e),
                     KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "2x4") && strstr(e.msg, "dres"), "%s", e.msg);
}
END_TEST

/* Shapes --shape accepts (kb_shape_too_large bounds M*N) whose buffers hold
 * more bytes than size_t: fp32 2^30 x 2^30 (x and res 2^62 bytes, out, gold
 * and gold_scale 2^63 each: 2^65 in all) and bf16 922337203685477581 x 1
 * (20 bytes an element: just past 2^64). Their byte counts must not wrap
 * around to a size some device has free: the case SKIPs for memory, naming
 * the shape, instead of filling a small block with 2^60 elements. */
START_TEST(ar_huge_shapes_skip)
{
    const struct { const char *shape; kb_dtype d; } huge[] = {
        {"1073741824x1073741824", KB_FP32}, {"922337203685477581x1", KB_BF16}};
    const size_t free_b = (size_t)141 << 30; /* an H200's memory */
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
        for (int b = 0; b < 2; b++) {
            kb_shape sh;
            kb_err e = {{0}};
            ck_assert_int_eq(kb_shape_parse(huge[i].shape, &sh, &e), KB_OK);
            const kb_problem p = {b ? KB_ADD_RMSNORM_BWD : KB_ADD_RMSNORM_FWD, huge[i].d, sh.M,
                                  sh.N, 0};
            const size_t need = kb_buffers_bytes(&p, 0);
            ck_assert_msg(need >= kb_tensor_bytes(&p, KB_T_X) && need > free_b,
                          "%s %s: %zu bytes", huge[i].shape, b ? "backward" : "forward", need);
            ck_assert_int_eq(kb_buffers_fit(&p, need, free_b, &e), KB_ERR_DEVMEM);
            ck_assert_msg(strstr(e.msg, huge[i].shape) && strstr(e.msg, "skipped"), "%s", e.msg);
        }
    /* a shape that fits is counted as before: bf16 4096 x 4096 forward is
     * x, res, out (twice the size), gold, gold_scale (fp32, out's elements)
     * and w, each padded to 256 bytes and banded where guarded */
    const kb_problem ok = {KB_ADD_RMSNORM_FWD, KB_BF16, 4096, 4096, 0};
    const size_t mn = (size_t)4096 * 4096;
    const size_t tensors = 2 * mn * 2 + 2 * (2 * mn * 2) + 2 * mn * 4 + 4096 * 4;
    const size_t need = kb_buffers_bytes(&ok, 0);
    ck_assert_msg(need >= tensors && need < tensors + ((size_t)16 << 20), "%zu bytes", need);
}
END_TEST

Suite *kb_suite_add_rmsnorm(void)
{
    Suite *s = suite_create("add_rmsnorm");
    TCase *tc = tcase_create("reference");
    tcase_add_test(tc, ar_zero_residual_is_rmsnorm);
    tcase_add_test(tc, ar_constant_row);
    tcase_add_test(tc, ar_h_rounds_to_dtype);
    tcase_add_test(tc, ar_backward_zero_dy);
    tcase_add_test(tc, ar_backward_finite_difference);
    tcase_add_test(tc, ar_backward_one_row_one_col);
    tcase_add_test(tc, ar_forward_n1);
    tcase_add_test(tc, ar_bad_arguments);
    tcase_add_test(tc, ar_huge_shapes_skip);
    suite_add_tcase(s, tc);
    return s;
}
