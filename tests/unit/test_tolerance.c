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

Suite *kb_suite_tolerance(void)
{
    Suite *s = suite_create("tolerance");
    TCase *t = tcase_create("tolerance");
    tcase_add_test(t, defaults_follow_spec);
    tcase_add_test(t, boundary);
    tcase_add_test(t, nan_and_inf);
    tcase_add_test(t, dtype_rounding_steps);
    suite_add_tcase(s, t);
    return s;
}
