/* The normwise criterion (tolerance.h) and the guard-band scan (guard.h):
 * pure host functions, the same ones the GPU check calls on its sums and on
 * host copies of the bands; and the grid of the dw check's tolerance scale. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "half.h"
#include "reference.h"
#include "tolerance.h"
#include "unit.h"

START_TEST(unit_roundoffs)
{
    ck_assert_double_eq(kb_unit_roundoff(KB_BF16), 1.0 / 256);
    ck_assert_double_eq(kb_unit_roundoff(KB_FP16), 1.0 / 2048);
    ck_assert_double_eq(kb_unit_roundoff(KB_FP32), 1.0 / 16777216);
    ck_assert_double_eq(kb_normwise_bound(KB_BF16), KB_NORMWISE_C / 256);
}
END_TEST

/* ||gold|| = 2, no fp32 allowance (s = 0): the bf16 bound is 4 * 2^-8 * 2 =
 * 1/32 exactly, so ||out - gold|| = 1/32 (err2 = 2^-10) sits on the edge and
 * passes; a hair more (1e-15 relative: the square root halves it) fails. */
START_TEST(bound_edge)
{
    const double edge2 = 1.0 / 1024;
    ck_assert_double_eq(kb_normwise_excess(edge2, 4.0, 0.0, 0, KB_BF16), 1.0);
    ck_assert(kb_normwise_excess(edge2 * (1 + 1e-15), 4.0, 0.0, 0, KB_BF16) > 1.0);
    ck_assert(kb_normwise_excess(nextafter(edge2, 0.0), 4.0, 0.0, 0, KB_BF16) <= 1.0);
    /* fp16: 4 * 2^-11 * 2 = 2^-8 */
    ck_assert_double_eq(kb_normwise_excess(1.0 / 65536, 4.0, 0.0, 0, KB_FP16), 1.0);
    ck_assert(kb_normwise_excess(1.0 / 65536 * 1.000001, 4.0, 0.0, 0, KB_FP16) > 1.0);
}
END_TEST

/* The fp32 allowance adds KB_NORMWISE_C32 * 2^-24 * ||s||. */
START_TEST(fp32_allowance)
{
    /* fp32: (4 + 32) * 2^-24 with ||gold|| = ||s|| = 1 */
    const double edge = (KB_NORMWISE_C + KB_NORMWISE_C32) / 16777216.0;
    ck_assert_double_eq_tol(kb_normwise_excess(edge * edge, 1.0, 1.0, 0, KB_FP32), 1.0, 1e-12);
    ck_assert(kb_normwise_excess(edge * edge * 1.0001, 1.0, 1.0, 0, KB_FP32) > 1.0);
    /* a cancelling row: gold tiny, s large: the allowance carries it */
    ck_assert(kb_normwise_excess(1e-14, 1e-12, 1.0, 0, KB_BF16) <= 1.0);
    ck_assert(kb_normwise_excess(1e-10, 1e-12, 1.0, 0, KB_BF16) > 1.0);
}
END_TEST

/* A 3 % scale error fails a bf16 row whatever its magnitude (all below atol
 * included); 1 % passes in bf16 and fails in fp16. */
START_TEST(scale_errors)
{
    const double g2 = 4096 * 1e-8; /* 4096 values of 1e-4 */
    ck_assert(kb_normwise_excess(0.03 * 0.03 * g2, g2, g2, 0, KB_BF16) > 1.0);
    ck_assert(kb_normwise_excess(0.01 * 0.01 * g2, g2, g2, 0, KB_BF16) <= 1.0);
    ck_assert(kb_normwise_excess(0.01 * 0.01 * g2, g2, g2, 0, KB_FP16) > 1.0);
}
END_TEST

/* A softmax row of 10^6 fp16 values near 1e-6 is subnormal: two correct
 * roundings differ by the subnormal step 2^-24 on some elements. 1 in 250
 * elements one step apart (what a correct kernel showed on the H200) passes
 * with the subnormal allowance and fails without; a 30 % scale error still
 * fails; the allowance is nothing for normal rows (nsub = 0). */
START_TEST(subnormal_allowance)
{
    const double n = 1e6, g = 1e-6, step = 0x1p-24, g2 = n * g * g;
    const double e2 = n / 250 * step * step;
    ck_assert_double_eq(kb_subnormal_step(KB_FP16), step);
    ck_assert_double_eq(kb_min_normal(KB_FP16), 0x1p-14);
    ck_assert(kb_normwise_excess(e2, g2, g2, 0, KB_FP16) > 1.0);
    ck_assert(kb_normwise_excess(e2, g2, g2, n / 250, KB_FP16) <= 1.0);
    ck_assert(kb_normwise_excess(0.3 * 0.3 * g2, g2, g2, n, KB_FP16) > 1.0);
    /* bf16 and fp32 share fp32's exponent range: their step is negligible. */
    ck_assert(kb_normwise_excess(0.03 * 0.03 * 4096e-8, 4096e-8, 0, 4096, KB_BF16) > 1.0);
}
END_TEST

START_TEST(zero_rows)
{
    ck_assert_double_eq(kb_normwise_excess(0.0, 0.0, 0.0, 0, KB_BF16), 0.0);
    ck_assert(isnan(kb_normwise_excess(1e-12, 0.0, 0.0, 0, KB_BF16)));
    ck_assert_double_eq(kb_normwise_excess(0.0, 3.0, 0.0, 0, KB_BF16), 0.0);
}
END_TEST

/* A host buffer laid out as the device one: band, 10 bf16 elements, padding
 * to 32 bytes, band. */
typedef struct {
    unsigned char mem[KB_GUARD_BYTES + 32 + KB_GUARD_BYTES];
    kb_guard g;
} host_guarded;

static void host_guarded_init(host_guarded *h)
{
    memset(h->mem, KB_GUARD_PATTERN, sizeof h->mem);
    memset(h->mem + KB_GUARD_BYTES, 0, 20);
    h->g.name = "output";
    h->g.before = h->mem;
    h->g.after = h->mem + KB_GUARD_BYTES + 20;
    h->g.after_bytes = 12 + KB_GUARD_BYTES;
    h->g.elem_bytes = 2;
}

static int judge(host_guarded *h, char *msg, size_t len)
{
    return kb_guard_judge(&h->g, h->g.before, h->g.after, msg, len);
}

START_TEST(guard_intact)
{
    host_guarded h;
    char msg[256] = "";
    host_guarded_init(&h);
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 0);
    ck_assert_int_eq(kb_guard_first_after(h.g.after, h.g.after_bytes), -1);
    ck_assert_int_eq(kb_guard_first_before(h.g.before, KB_GUARD_BYTES), -1);
}
END_TEST

/* Element 1 past the end (bytes 2..3 after it, inside the alignment
 * padding): reported with its offset. */
START_TEST(guard_write_past_end)
{
    host_guarded h;
    char msg[256] = "";
    host_guarded_init(&h);
    unsigned char *data = h.mem + KB_GUARD_BYTES;
    data[20 + 2] = 0x12;
    data[20 + 3] = 0x34;
    data[20 + 100] = 0; /* further out: the first offset wins */
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 1);
    ck_assert_int_eq(kb_guard_first_after(h.g.after, h.g.after_bytes), 2);
    ck_assert_msg(strstr(msg, "output: written past its end") &&
                      strstr(msg, "offset 2 after the end") && strstr(msg, "element 1 past"),
                  "message: %s", msg);
    /* and a write at the far end of the band, beyond the padding */
    host_guarded_init(&h);
    h.mem[sizeof h.mem - 1] = 0;
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 1);
    ck_assert_int_eq(kb_guard_first_after(h.g.after, h.g.after_bytes), 12 + KB_GUARD_BYTES - 1);
}
END_TEST

START_TEST(guard_write_before_start)
{
    host_guarded h;
    char msg[256] = "";
    host_guarded_init(&h);
    h.mem[KB_GUARD_BYTES - 2] = 0; /* the second byte before the start */
    h.mem[10] = 0;
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 1);
    ck_assert_int_eq(kb_guard_first_before(h.g.before, KB_GUARD_BYTES), 2);
    ck_assert_msg(strstr(msg, "written before its start") && strstr(msg, " 2 bytes before") &&
                      strstr(msg, "element -1"),
                  "message: %s", msg);
}
END_TEST

/* ---- an fp32 implementation passes, on every input kind -------------------
 * Host "kernels" computing each formula in float with sequential fp32 sums
 * (worse than a GPU's tree), rounded once to the dtype, against the gold
 * (the double reference rounded to fp32 then to the dtype), judged row by
 * row with the normwise criterion and the s terms of run/accuracy.cu
 * written out again here. Near one-hot rows (wide) and zero-variance rows
 * (constant) are where the fp32 allowance carries the row: without it a
 * correct softmax backward fails hundreds of wide rows. */
typedef struct {
    double worst, worst_no_allowance;
    int judged;
} nw_tally;

/* One row's sums of squares, as the GPU kernel forms them. */
typedef struct {
    double e2, g2, s2;
} row_sums;

static void add_elem(row_sums *rs, double out, double gold, double s)
{
    rs->e2 += (out - gold) * (out - gold);
    rs->g2 += gold * gold;
    rs->s2 += s * s;
}

static void tally_row(nw_tally *t, row_sums rs, kb_dtype d)
{
    const double x = kb_normwise_excess(rs.e2, rs.g2, rs.s2, 0, d);
    const double xn = kb_normwise_excess(rs.e2, rs.g2, 0, 0, d);
    if (isnan(x)) return;
    t->judged++;
    if (x > t->worst) t->worst = x;
    if (xn > t->worst_no_allowance) t->worst_no_allowance = xn;
}

static float *host_f(int64_t n)
{
    float *p = calloc((size_t)n, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* dy [M,N] of the dtype: a fixed pattern in [-2.5, 2.5]. */
static void fill_dy(float *dy, int64_t n, kb_dtype d)
{
    for (int64_t i = 0; i < n; i++)
        dy[i] = kb_round_to(d, (float)((int)(((uint64_t)i * 2654435761u >> 7) % 2001) - 1000) / 400.f);
}

/* softmax backward: dx = y (dy - sum dy*y) */
static nw_tally softmax_bwd(kb_inputs k, kb_dtype d, int64_t M, int64_t N)
{
    float *x = host_f(M * N), *y = host_f(M * N), *dy = host_f(M * N);
    kb_inputs_host(k, KB_SOFTMAX_BWD, d, 1, M, N, x, NULL);
    kb_ref_cpu_saved(KB_SOFTMAX_BWD, M, N, x, NULL, NULL, NULL, y);
    fill_dy(dy, M * N, d);
    nw_tally t = {0, 0, 0};
    for (int64_t r = 0; r < M; r++) {
        float *yr = y + r * N, *dr = dy + r * N, sf = 0.f;
        double sd = 0, sa = 0;
        row_sums rs = {0, 0, 0};
        for (int64_t j = 0; j < N; j++) {
            yr[j] = kb_round_to(d, yr[j]); /* the saved y is stored in the dtype */
            sd += (double)dr[j] * yr[j];
            sa += fabs((double)dr[j]) * yr[j];
            sf += dr[j] * yr[j];
        }
        for (int64_t j = 0; j < N; j++) {
            const double g = kb_round_to(d, (float)(yr[j] * ((double)dr[j] - sd)));
            const double o = kb_round_to(d, yr[j] * (dr[j] - sf));
            add_elem(&rs, o, g, yr[j] * (fabs((double)dr[j]) + sa));
        }
        tally_row(&t, rs, d);
    }
    free(x), free(y), free(dy);
    return t;
}

/* cross-entropy backward: dx = dloss (exp(x - lse) - [j = target]), lse fp32 */
static nw_tally ce_bwd(kb_inputs k, kb_dtype d, int64_t M, int64_t N)
{
    float *x = host_f(M * N), *lse = host_f(M);
    int64_t *tg = calloc((size_t)M, sizeof *tg);
    ck_assert_ptr_nonnull(tg);
    kb_inputs_host(k, KB_CE_BWD, d, 1, M, N, x, tg);
    kb_ref_cpu_saved(KB_CE_BWD, M, N, x, lse, NULL, NULL, NULL);
    nw_tally t = {0, 0, 0};
    for (int64_t r = 0; r < M; r++) {
        const double dl = 1.0 + (double)(r % 3);
        row_sums rs = {0, 0, 0};
        for (int64_t j = 0; j < N; j++) {
            const double p = exp((double)x[r * N + j] - lse[r]), h = j == tg[r] ? 1.0 : 0.0;
            const double g = kb_round_to(d, (float)(dl * (p - h)));
            const double o = kb_round_to(d, (float)dl * (expf(x[r * N + j] - lse[r]) - (float)h));
            add_elem(&rs, o, g, dl * (p + h));
        }
        tally_row(&t, rs, d);
    }
    free(x), free(lse), free(tg);
    return t;
}

/* LayerNorm backward dx, saved fp32 mean/rstd, fp32 sums of g and g*xh */
static nw_tally ln_bwd(kb_inputs k, kb_dtype d, int64_t M, int64_t N)
{
    float *x = host_f(M * N), *dy = host_f(M * N), *w = host_f(N), *mean = host_f(M),
          *rstd = host_f(M);
    kb_inputs_host(k, KB_LAYERNORM_BWD, d, 1, M, N, x, NULL);
    kb_ref_cpu_saved(KB_LAYERNORM_BWD, M, N, x, NULL, mean, rstd, NULL);
    fill_dy(dy, M * N, d);
    for (int64_t j = 0; j < N; j++) w[j] = 0.5f + (float)(j % 7) / 4.0f;
    nw_tally t = {0, 0, 0};
    for (int64_t r = 0; r < M; r++) {
        const float *xr = x + r * N, *dr = dy + r * N, mu = mean[r], sd = rstd[r];
        double sg = 0, sgx = 0, A = 0, B = 0;
        row_sums rs = {0, 0, 0};
        float fg = 0, fgx = 0;
        for (int64_t j = 0; j < N; j++) {
            const double g = (double)dr[j] * w[j], xh = ((double)xr[j] - mu) * sd;
            sg += g, sgx += g * xh, A += fabs(g), B += fabs(g * xh);
            fg += dr[j] * w[j];
            fgx += dr[j] * w[j] * ((xr[j] - mu) * sd);
        }
        A /= (double)N, B /= (double)N;
        for (int64_t j = 0; j < N; j++) {
            const double g = (double)dr[j] * w[j], xh = ((double)xr[j] - mu) * sd;
            const double gold = kb_round_to(d, (float)(sd * (g - sg / N - xh * (sgx / N))));
            const float fxh = (xr[j] - mu) * sd;
            const double o =
                kb_round_to(d, sd * (dr[j] * w[j] - fg / (float)N - fxh * (fgx / (float)N)));
            add_elem(&rs, o, gold, sd * (fabs(g) + A + fabs(xh) * B));
        }
        tally_row(&t, rs, d);
    }
    free(x), free(dy), free(w), free(mean), free(rstd);
    return t;
}

static void expect_pass(const char *what, nw_tally t)
{
    ck_assert_msg(t.judged > 0, "%s: no row judged", what);
    ck_assert_msg(t.worst <= 0.5, "%s: a correct fp32 implementation reaches %.3g of the bound",
                  what, t.worst);
}

START_TEST(fp32_implementation_passes)
{
    const int64_t M = 512, N = 1000;
    nw_tally t = softmax_bwd(KB_INPUTS_WIDE, KB_BF16, M, N);
    expect_pass("softmax backward, wide, bf16", t);
    ck_assert_msg(t.worst_no_allowance > 1, "the allowance is not needed (%.3g)", t.worst_no_allowance);
    expect_pass("softmax backward, wide, fp16", softmax_bwd(KB_INPUTS_WIDE, KB_FP16, M, N));
    expect_pass("softmax backward, randn, bf16", softmax_bwd(KB_INPUTS_RANDN, KB_BF16, M, N));
    expect_pass("softmax backward, masked, bf16", softmax_bwd(KB_INPUTS_MASKED, KB_BF16, M, N));
    expect_pass("softmax backward, shifted, bf16", softmax_bwd(KB_INPUTS_SHIFTED, KB_BF16, M, N));
    expect_pass("softmax backward, randn, fp32", softmax_bwd(KB_INPUTS_RANDN, KB_FP32, M, N));
    expect_pass("cross-entropy backward, wide, bf16", ce_bwd(KB_INPUTS_WIDE, KB_BF16, M, N));
    expect_pass("cross-entropy backward, wide, fp16", ce_bwd(KB_INPUTS_WIDE, KB_FP16, M, N));
    expect_pass("cross-entropy backward, shifted, bf16", ce_bwd(KB_INPUTS_SHIFTED, KB_BF16, M, N));
    expect_pass("cross-entropy backward, masked, bf16", ce_bwd(KB_INPUTS_MASKED, KB_BF16, M, N));
    expect_pass("cross-entropy backward, randn, fp32", ce_bwd(KB_INPUTS_RANDN, KB_FP32, M, N));
    expect_pass("layernorm backward, constant, bf16", ln_bwd(KB_INPUTS_CONSTANT, KB_BF16, M, N));
    expect_pass("layernorm backward, small, bf16", ln_bwd(KB_INPUTS_SMALL, KB_BF16, M, N));
    expect_pass("layernorm backward, wide, fp16", ln_bwd(KB_INPUTS_WIDE, KB_FP16, M, N));
    expect_pass("layernorm backward, randn, fp32", ln_bwd(KB_INPUTS_RANDN, KB_FP32, M, N));
}
END_TEST

/* The dw tolerance scale's grid (kb_check_dw): 1024 rows a CTA row up to M =
 * 65535 * 1024, then enough rows that grid.y stays within CUDA's 65535 (with
 * 1024, add_rmsnorm_backward 67108865x1 launched 65537 and failed its check). */
START_TEST(dw_scale_grid)
{
    const int64_t edge = (int64_t)65535 * KB_DW_SCALE_ROWS;
    const int64_t ms[] = {1, 1023, 1024, 1025, edge, edge + 1, 67108865, (int64_t)1 << 40,
                          INT64_MAX / 4};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        const int64_t M = ms[i], rows = kb_dw_scale_rows(M), ys = (M + rows - 1) / rows;
        ck_assert_msg(rows >= KB_DW_SCALE_ROWS && ys >= 1 && ys <= 65535,
                      "M = %lld: %lld rows, grid.y %lld", (long long)M, (long long)rows,
                      (long long)ys);
        if (M <= edge) ck_assert_int_eq(rows, KB_DW_SCALE_ROWS);
    }
}
END_TEST

Suite *kb_suite_accuracy(void)
{
    Suite *s = suite_create("accuracy");
    TCase *n = tcase_create("normwise");
    tcase_add_test(n, unit_roundoffs);
    tcase_add_test(n, bound_edge);
    tcase_add_test(n, fp32_allowance);
    tcase_add_test(n, scale_errors);
    tcase_add_test(n, zero_rows);
    tcase_add_test(n, subnormal_allowance);
    tcase_add_test(n, dw_scale_grid);
    suite_add_tcase(s, n);
    TCase *g = tcase_create("guard");
    tcase_add_test(g, guard_intact);
    tcase_add_test(g, guard_write_past_end);
    tcase_add_test(g, guard_write_before_start);
    suite_add_tcase(s, g);
    TCase *f = tcase_create("fp32 implementation");
    tcase_set_timeout(f, 60);
    tcase_add_test(f, fp32_implementation_passes);
    suite_add_tcase(s, f);
    return s;
}
