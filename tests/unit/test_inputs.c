/* Input kinds: each kind's generator (the host copy of the formulas the GPU
 * generator runs, input_values.h) and the CPU reference on it, against the
 * semantics README states (PyTorch's). CPU only. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "reference.h"
#include "unit.h"

#define SEED 0x6b62656e6368ull

typedef struct {
    int64_t M, N;
    float *x, *dy, *w, *y, *out, *dw, *lse, *mean, *rstd, *dloss;
    int64_t *target;
} kcase;

static float *alloc_f(int64_t n)
{
    float *p = calloc((size_t)n, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* x and target of the kind, bf16-rounded unless d says otherwise; dy, w,
 * dloss deterministic and plain (a small LCG). */
static kcase make(kb_inputs k, kb_bench_id b, kb_dtype d, int64_t M, int64_t N)
{
    kcase c = {.M = M, .N = N};
    c.x = alloc_f(M * N);
    c.dy = alloc_f(M * N);
    c.w = alloc_f(N);
    c.y = alloc_f(M * N);
    c.out = alloc_f(M * N);
    c.dw = alloc_f(N);
    c.lse = alloc_f(M);
    c.mean = alloc_f(M);
    c.rstd = alloc_f(M);
    c.dloss = alloc_f(M);
    c.target = calloc((size_t)M, sizeof *c.target);
    ck_assert_ptr_nonnull(c.target);
    kb_inputs_host(k, b, d, SEED, M, N, c.x, c.target);
    uint64_t s = 12345;
    for (int64_t i = 0; i < M * N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        c.dy[i] = (float)((int)((s >> 33) % 512u) - 256) / 128.0f;
    }
    for (int64_t j = 0; j < N; j++) c.w[j] = 0.5f + (float)(j % 7) / 4.0f;
    for (int64_t i = 0; i < M; i++) c.dloss[i] = 1.0f + (float)(i % 3);
    kb_ref_cpu_saved(b, M, N, c.x, c.lse, c.mean, c.rstd, c.y);
    return c;
}

static void drop(kcase *c)
{
    float *f[] = {c->x, c->dy, c->w, c->y, c->out, c->dw, c->lse, c->mean, c->rstd, c->dloss};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(f[i]);
    free(c->target);
}

static void ref(kb_bench_id b, kcase *c)
{
    kb_err e = {{0}};
    const kb_ref_in in = {.x = c->x, .dy = c->dy, .w = c->w, .dloss = c->dloss, .y = c->y,
                          .target = c->target, .lse = c->lse, .mean = c->mean, .rstd = c->rstd};
    kb_ref_out o = {c->out, c->dw};
    ck_assert_msg(kb_ref_cpu(b, c->M, c->N, &in, &o, &e) == KB_OK, "%s", e.msg);
}

static double sd_of(const float *v, int64_t n)
{
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        s += v[i];
        s2 += (double)v[i] * v[i];
    }
    return sqrt(s2 / (double)n - (s / (double)n) * (s / (double)n));
}

/* ---- generators ----------------------------------------------------------- */
START_TEST(gen_randn_unchanged)
{
    kcase c = make(KB_INPUTS_RANDN, KB_SOFTMAX_FWD, KB_FP32, 16, 1000);
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 0.1, 0.005);
    drop(&c);
    c = make(KB_INPUTS_RANDN, KB_RMSNORM_FWD, KB_FP32, 16, 1000);
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 1.0, 0.05);
    drop(&c);
    c = make(KB_INPUTS_RANDN, KB_SWIGLU_BWD, KB_FP32, 16, 1000); /* GLU gate: randn */
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 1.0, 0.05);
    drop(&c);
}
END_TEST

START_TEST(gen_shifted)
{
    kcase c = make(KB_INPUTS_SHIFTED, KB_CE_FWD, KB_BF16, 8, 1000);
    for (int64_t i = 0; i < 8; i++) {
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t j = 0; j < 1000; j++) {
            const float v = c.x[i * 1000 + j];
            ck_assert(v >= 992.0f && v <= 1008.0f);
            ck_assert_float_eq(fmodf(v, 4.0f), 0.0f); /* bf16 spacing at 1000 */
            lo = fminf(lo, v);
            hi = fmaxf(hi, v);
        }
        ck_assert_msg(hi - lo >= 8.0f, "row %d keeps no spread", (int)i);
    }
    drop(&c);
}
END_TEST

START_TEST(gen_wide)
{
    kcase c = make(KB_INPUTS_WIDE, KB_SOFTMAX_FWD, KB_FP32, 16, 1000);
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 20.0, 1.0);
    drop(&c);
    c = make(KB_INPUTS_WIDE, KB_GEGLU_FWD, KB_BF16, 16, 1000); /* GLU gate: 20 randn */
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 20.0, 1.0);
    drop(&c);
    c = make(KB_INPUTS_WIDE, KB_LAYERNORM_FWD, KB_FP16, 16, 1000);
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 1000.0, 50.0);
    /* sums of squares far past fp16's largest finite value, 65504 */
    double s2 = 0;
    for (int64_t j = 0; j < 1000; j++) s2 += (double)c.x[j] * c.x[j];
    ck_assert_double_gt(s2, 1e8);
    drop(&c);
}
END_TEST

/* About half of each row -inf, never the target, never a whole row (N = 1:
 * nothing masked). */
START_TEST(gen_masked)
{
    const int64_t Ns[] = {1000, 2, 1};
    for (size_t n = 0; n < sizeof Ns / sizeof Ns[0]; n++) {
        const int64_t M = 64, N = Ns[n];
        kcase c = make(KB_INPUTS_MASKED, KB_CE_BWD, KB_BF16, M, N);
        for (int64_t i = 0; i < M; i++) {
            int64_t masked = 0;
            for (int64_t j = 0; j < N; j++) {
                const float v = c.x[i * N + j];
                ck_assert(isfinite(v) || (isinf(v) && v < 0));
                masked += isinf(v) != 0;
            }
            ck_assert(isfinite(c.x[i * N + c.target[i]]));
            ck_assert_int_lt(masked, N);
            if (N == 1000) ck_assert(masked > 400 && masked < 600);
        }
        drop(&c);
    }
}
END_TEST

START_TEST(gen_constant)
{
    kcase c = make(KB_INPUTS_CONSTANT, KB_RMSNORM_BWD, KB_BF16, 8, 37);
    for (int64_t i = 0; i < 8; i++) {
        for (int64_t j = 0; j < 37; j++) ck_assert_float_eq(c.x[i * 37 + j], c.x[i * 37]);
        if (i % 4 == 0)
            ck_assert_float_eq(c.x[i * 37], 0.0f);
        else
            ck_assert_float_ne(c.x[i * 37], 0.0f);
    }
    drop(&c);
}
END_TEST

START_TEST(gen_small)
{
    kcase c = make(KB_INPUTS_SMALL, KB_RMSNORM_FWD, KB_BF16, 16, 1000);
    ck_assert_double_eq_tol(sd_of(c.x, 16000), 1e-3, 5e-5);
    drop(&c);
}
END_TEST

/* ---- the CPU reference on each kind ---------------------------------------- */
/* Shifted: the exact result is the unshifted one (x - 1000 is exact in
 * float), while exp(x) itself overflows fp32. */
START_TEST(ref_shifted)
{
    const kb_bench_id bs[] = {KB_SOFTMAX_FWD, KB_CE_FWD, KB_CE_BWD, KB_SOFTMAX_BWD};
    for (size_t k = 0; k < sizeof bs / sizeof bs[0]; k++) {
        kcase a = make(KB_INPUTS_SHIFTED, bs[k], KB_BF16, 4, 1000);
        kcase b = make(KB_INPUTS_SHIFTED, bs[k], KB_BF16, 4, 1000);
        for (int64_t i = 0; i < 4000; i++) b.x[i] -= 1000.0f;
        kb_ref_cpu_saved(bs[k], 4, 1000, b.x, b.lse, b.mean, b.rstd, b.y);
        ref(bs[k], &a);
        ref(bs[k], &b);
        /* cross-entropy backward reads the saved fp32 lse: ~1007 there, ~7 here,
         * rounded to fp32 (2^-24 * 1024 absolute), which exp() turns into a
         * relative difference; that is the fp32 statistic, not the kind. */
        const double rel = bs[k] == KB_CE_BWD ? 2 * 1024 * 0x1p-24 : 1e-6;
        const int64_t n = bs[k] == KB_CE_FWD ? 4 : 4000;
        for (int64_t i = 0; i < n; i++)
            ck_assert_double_eq_tol(a.out[i], b.out[i], rel * fabs(b.out[i]) + 1e-9);
        ck_assert(isinf(expf(a.x[0])));
        drop(&a);
        drop(&b);
    }
}
END_TEST

/* Wide logits: near one-hot probabilities, losses far from log N. Wide
 * norm rows: the same output as the unscaled row (scale invariance; eps is
 * negligible next to 1e6). */
START_TEST(ref_wide)
{
    kcase c = make(KB_INPUTS_WIDE, KB_SOFTMAX_FWD, KB_BF16, 16, 1000);
    ref(KB_SOFTMAX_FWD, &c);
    int peaked = 0;
    for (int64_t i = 0; i < 16; i++) {
        float m = 0;
        for (int64_t j = 0; j < 1000; j++) m = fmaxf(m, c.out[i * 1000 + j]);
        peaked += m > 0.5f;
    }
    ck_assert_int_ge(peaked, 12);
    drop(&c);
    c = make(KB_INPUTS_WIDE, KB_CE_FWD, KB_BF16, 16, 1000);
    ref(KB_CE_FWD, &c);
    double mean = 0;
    for (int64_t i = 0; i < 16; i++) mean += c.out[i] / 16.0;
    ck_assert_double_gt(mean, 3 * log(1000.0));
    drop(&c);
    kcase w = make(KB_INPUTS_WIDE, KB_RMSNORM_FWD, KB_FP32, 4, 1000);
    kcase r = make(KB_INPUTS_RANDN, KB_RMSNORM_FWD, KB_FP32, 4, 1000);
    ref(KB_RMSNORM_FWD, &w);
    ref(KB_RMSNORM_FWD, &r);
    for (int64_t i = 0; i < 4000; i++)
        ck_assert_double_eq_tol(w.out[i], r.out[i], 1e-5 * (1 + fabs(r.out[i])));
    drop(&w);
    drop(&r);
}
END_TEST

/* Masked: probability and every gradient exactly 0 at -inf, rows of
 * probabilities sum to 1, losses finite, cross-entropy dx rows sum to 0. */
START_TEST(ref_masked)
{
    const kb_bench_id bs[] = {KB_SOFTMAX_FWD, KB_SOFTMAX_BWD, KB_CE_FWD, KB_CE_BWD};
    for (size_t k = 0; k < sizeof bs / sizeof bs[0]; k++) {
        const int64_t M = 8, N = 301;
        kcase c = make(KB_INPUTS_MASKED, bs[k], KB_BF16, M, N);
        ref(bs[k], &c);
        for (int64_t i = 0; i < M; i++) {
            if (bs[k] == KB_CE_FWD) {
                ck_assert(isfinite(c.out[i]) && c.out[i] >= 0);
                continue;
            }
            double s = 0;
            for (int64_t j = 0; j < N; j++) {
                const float o = c.out[i * N + j];
                ck_assert(isfinite(o));
                if (isinf(c.x[i * N + j])) ck_assert_float_eq(o, 0.0f);
                s += o;
            }
            if (bs[k] == KB_SOFTMAX_FWD) ck_assert_double_eq_tol(s, 1.0, 1e-5);
            if (bs[k] == KB_CE_BWD) ck_assert_double_eq_tol(s, 0.0, 1e-5 * c.dloss[i]);
        }
        drop(&c);
    }
}
END_TEST

/* Constant rows: variance 0, rstd = 1/sqrt(eps); LayerNorm y = 0 exactly
 * and dx = rstd*(g - mean g), finite; RMSNorm of a zero row y = 0 and
 * dx = rstd*g (x-hat is 0). */
START_TEST(ref_constant)
{
    const int64_t M = 8, N = 37;
    const double rs0 = 1.0 / sqrt((double)KB_NORM_EPS);
    kcase c = make(KB_INPUTS_CONSTANT, KB_LAYERNORM_FWD, KB_BF16, M, N);
    ref(KB_LAYERNORM_FWD, &c);
    for (int64_t i = 0; i < M * N; i++) ck_assert_float_eq(c.out[i], 0.0f);
    drop(&c);
    c = make(KB_INPUTS_CONSTANT, KB_LAYERNORM_BWD, KB_BF16, M, N);
    ref(KB_LAYERNORM_BWD, &c);
    for (int64_t i = 0; i < M; i++) {
        ck_assert_double_eq_tol(c.rstd[i], rs0, 1e-3);
        double mg = 0;
        for (int64_t j = 0; j < N; j++) mg += (double)c.dy[i * N + j] * c.w[j] / (double)N;
        for (int64_t j = 0; j < N; j++) {
            const double want = c.rstd[i] * ((double)c.dy[i * N + j] * c.w[j] - mg);
            ck_assert(isfinite(c.out[i * N + j]));
            ck_assert_double_eq_tol(c.out[i * N + j], want, 1e-6 * (1 + fabs(want)));
        }
    }
    drop(&c);
    c = make(KB_INPUTS_CONSTANT, KB_RMSNORM_BWD, KB_BF16, M, N);
    ref(KB_RMSNORM_BWD, &c);
    for (int64_t j = 0; j < N; j++) {
        const double want = rs0 * (double)c.dy[j] * c.w[j]; /* row 0 is a zero row */
        ck_assert_double_eq_tol(c.out[j], want, 1e-6 * (1 + fabs(want)));
    }
    drop(&c);
    c = make(KB_INPUTS_CONSTANT, KB_RMSNORM_FWD, KB_BF16, M, N);
    ref(KB_RMSNORM_FWD, &c);
    for (int64_t j = 0; j < N; j++) ck_assert_float_eq(c.out[j], 0.0f);
    drop(&c);
}
END_TEST

/* Small rows: variance ~1e-6 = eps, so eps = 1e-5 instead of 1e-6 changes
 * RMSNorm's output by a factor ~2, far beyond any tolerance. */
START_TEST(ref_small)
{
    const int64_t M = 4, N = 1000;
    kcase c = make(KB_INPUTS_SMALL, KB_RMSNORM_FWD, KB_BF16, M, N);
    ref(KB_RMSNORM_FWD, &c);
    for (int64_t i = 0; i < M; i++) {
        double ms = 0;
        for (int64_t j = 0; j < N; j++) ms += (double)c.x[i * N + j] * c.x[i * N + j] / (double)N;
        const double k = sqrt((ms + 1e-5) / (ms + (double)KB_NORM_EPS));
        ck_assert_double_gt(k, 1.5);
        for (int64_t j = 0; j < N; j++) {
            const double want = c.x[i * N + j] / sqrt(ms + (double)KB_NORM_EPS) * c.w[j];
            ck_assert_double_eq_tol(c.out[i * N + j], want, 1e-5 * (1 + fabs(want)));
        }
    }
    drop(&c);
}
END_TEST

Suite *kb_suite_inputs(void)
{
    Suite *s = suite_create("inputs");
    TCase *g = tcase_create("generators");
    tcase_add_test(g, gen_randn_unchanged);
    tcase_add_test(g, gen_shifted);
    tcase_add_test(g, gen_wide);
    tcase_add_test(g, gen_masked);
    tcase_add_test(g, gen_constant);
    tcase_add_test(g, gen_small);
    suite_add_tcase(s, g);
    TCase *r = tcase_create("reference");
    tcase_add_test(r, ref_shifted);
    tcase_add_test(r, ref_wide);
    tcase_add_test(r, ref_masked);
    tcase_add_test(r, ref_constant);
    tcase_add_test(r, ref_small);
    suite_add_tcase(s, r);
    return s;
}
