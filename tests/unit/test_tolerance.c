/* assert_close semantics: defaults, boundaries, NaN/Inf, dtype rounding. */
#include <check.h>
#include <math.h>

#include "half.h"
#include "tolerance.h"
#include "unit.h"

START_TEST(defaults_follow_spec)
{
    kb_tol t = kb_tol_default(KB_BF16);
    ck_assert_double_eq(t.rtol, 1.6e-2);
    ck_assert_double_eq(t.atol, 1e-5);
    t = kb_tol_default(KB_FP16);
    ck_assert_double_eq(t.rtol, 1e-3);
    ck_assert_double_eq(t.atol, 1e-5);
    t = kb_tol_default(KB_FP32);
    ck_assert_double_eq(t.rtol, 1.3e-6);
    ck_assert_double_eq(t.atol, 1e-5);
}
END_TEST

START_TEST(boundary)
{
    /* allowed = 1e-5 + 1e-2*1 = 0.01001 */
    ck_assert(kb_close(1.01, 1.0, 1e-5, 1e-2));
    ck_assert(kb_close(1.0100099, 1.0, 1e-5, 1e-2));
    ck_assert(!kb_close(1.0101, 1.0, 1e-5, 1e-2));
    ck_assert(kb_close(-1.01, -1.0, 1e-5, 1e-2));
    /* near zero only atol counts */
    ck_assert(kb_close(9e-6, 0.0, 1e-5, 1e-2));
    ck_assert(!kb_close(2e-5, 0.0, 1e-5, 1e-2));
    ck_assert(kb_close(0.0, 0.0, 0.0, 0.0));
    ck_assert(!kb_close(1e-30, 0.0, 0.0, 0.0));
    ck_assert_double_eq_tol(kb_excess(1.02, 1.0, 0.01), 2.0, 1e-9);
}
END_TEST

START_TEST(nan_and_inf)
{
    ck_assert(!kb_close(NAN, 1.0, 1, 1));
    ck_assert(!kb_close(1.0, NAN, 1, 1));
    ck_assert(kb_close(NAN, NAN, 0, 0));
    ck_assert(kb_close(INFINITY, INFINITY, 0, 0));
    ck_assert(!kb_close(-INFINITY, INFINITY, 1, 1));
    ck_assert(!kb_close(INFINITY, 1e38, 1, 1));
    ck_assert(!kb_close(1e38, INFINITY, 1, 1));
    ck_assert(isinf(kb_excess(NAN, 0.0, 1.0)));
}
END_TEST

/* One bf16 ulp at 1.0 is 2^-7 = 0.0078: inside bf16's rtol 1.6e-2, so an
 * output off by one rounding step passes, two steps (0.0156 < 0.01601)
 * still pass, three fail. fp16's ulp at 1.0 is 2^-10 ~ 0.00098 < 1e-3. */
START_TEST(dtype_rounding_steps)
{
    kb_tol b = kb_tol_default(KB_BF16), h = kb_tol_default(KB_FP16);
    const double bulp = 1.0 / 128, hulp = 1.0 / 1024;
    ck_assert(kb_close(1.0 + bulp, 1.0, b.atol, b.rtol));
    ck_assert(kb_close(1.0 + 2 * bulp, 1.0, b.atol, b.rtol));
    ck_assert(!kb_close(1.0 + 3 * bulp, 1.0, b.atol, b.rtol));
    ck_assert(kb_close(1.0 + hulp, 1.0, h.atol, h.rtol));
    ck_assert(!kb_close(1.0 + 2 * hulp, 1.0, h.atol, h.rtol));
    /* A value rounded to bf16 is always within half an ulp: within tolerance. */
    for (float v = -3.0f; v < 3.0f; v += 0.0137f) {
        float r = kb_round_to(KB_BF16, v);
        ck_assert_msg(kb_close(r, v, b.atol, b.rtol), "%g -> %g", v, r);
        r = kb_round_to(KB_FP16, v);
        ck_assert_msg(kb_close(r, v, h.atol, h.rtol), "%g -> %g", v, r);
    }
}
END_TEST

/* k copies of v summed in sequence, and as 37-element chunks added up (another
 * order): the first k at which either differs from the exact k * v, or 0 when
 * none up to kmax does. */
static long first_inexact(float v, long kmax)
{
    float seq = 0.f, chunk = 0.f, chunks = 0.f;
    for (long k = 1; k <= kmax; k++) {
        seq += v;
        chunk += v;
        const double exact = (double)k * (double)v;
        if (k % 37 == 0) {
            chunks += chunk;
            chunk = 0.f;
        }
        if ((double)seq != exact || (k % 37 == 0 && (double)chunks != exact)) return k;
    }
    return 0;
}

/* The bounds the LayerNorm forward's exact mean uses: exact up to them for
 * values with every significant bit set (the worst case), in both orders, and
 * sum / k rounds back to the value; and not much further for some value, so a
 * bound raised by a factor 2 fails here. */
START_TEST(equal_values_sum_exactly_up_to_the_bound)
{
    /* fp16 and bf16 bit patterns with a full significand at several exponents. */
    const uint16_t h16[] = {0x3bff, 0x3fff, 0x57ff, 0x1bff, 0x0bff, 0x6bff};
    const uint16_t b16[] = {0x3f7f, 0x3fff, 0x447f, 0x387f, 0x4c7f, 0x0b7f};
    long worst16 = 0, worstb = 0;
    for (size_t i = 0; i < sizeof h16 / sizeof h16[0]; i++) {
        const float v = kb_fp16_to_float(h16[i]);
        const long k = first_inexact(v, 4L * KB_F32_EXACT_EQUAL_SUM_FP16);
        ck_assert_msg(k == 0 || k > KB_F32_EXACT_EQUAL_SUM_FP16, "fp16 %a: inexact at k = %ld", v, k);
        if (k && (!worst16 || k < worst16)) worst16 = k;
        const float s = (float)KB_F32_EXACT_EQUAL_SUM_FP16 * v; /* exact, as shown */
        ck_assert(fabsf((float)((double)s * (1.0 / KB_F32_EXACT_EQUAL_SUM_FP16)) - v) == 0.f);
    }
    for (size_t i = 0; i < sizeof b16 / sizeof b16[0]; i++) {
        const float v = kb_bf16_to_float(b16[i]);
        const long k = first_inexact(v, 4L * KB_F32_EXACT_EQUAL_SUM_BF16);
        ck_assert_msg(k == 0 || k > KB_F32_EXACT_EQUAL_SUM_BF16, "bf16 %a: inexact at k = %ld", v, k);
        if (k && (!worstb || k < worstb)) worstb = k;
    }
    /* The bounds are tight to within a factor 2: some full-significand value
     * turns inexact before twice the bound. */
    ck_assert_msg(worst16 > 0 && worst16 < 2L * KB_F32_EXACT_EQUAL_SUM_FP16, "fp16 worst k %ld", worst16);
    ck_assert_msg(worstb > 0 && worstb < 2L * KB_F32_EXACT_EQUAL_SUM_BF16, "bf16 worst k %ld", worstb);
    /* fp32 values with a full significand are inexact almost at once. */
    ck_assert_int_le(first_inexact(0x1.fffffep-1f, 16), 3);
}
END_TEST

Suite *kb_suite_tolerance(void)
{
    Suite *s = suite_create("tolerance");
    TCase *t = tcase_create("tolerance");
    tcase_add_test(t, defaults_follow_spec);
    tcase_add_test(t, boundary);
    tcase_add_test(t, nan_and_inf);
    tcase_add_test(t, dtype_rounding_steps);
    tcase_add_test(t, equal_values_sum_exactly_up_to_the_bound);
    suite_add_tcase(s, t);
    return s;
}
