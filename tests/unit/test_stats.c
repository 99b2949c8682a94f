/* Order statistics of timing samples. */
#include <check.h>
#include <math.h>

#include "stats.h"
#include "unit.h"

START_TEST(odd_and_even_counts)
{
    double a[] = {5, 1, 3, 2, 4};
    kb_timing t;
    kb_stats(a, 5, &t);
    ck_assert_double_eq(t.median_ms, 3);
    ck_assert_double_eq(t.min_ms, 1);
    ck_assert_double_eq(t.max_ms, 5);
    ck_assert_double_eq(t.mean_ms, 3);
    ck_assert_double_eq(t.q1_ms, 2);
    ck_assert_double_eq(t.q3_ms, 4);
    ck_assert_int_eq(t.samples, 5);
    /* MAD = 1 -> noise = 1.4826 / 3 */
    ck_assert_double_eq_tol(t.noise, 1.4826 / 3, 1e-12);
    double b[] = {4, 1, 2, 3};
    kb_stats(b, 4, &t);
    ck_assert_double_eq(t.median_ms, 2.5);
}
END_TEST

START_TEST(identical_samples_have_no_noise)
{
    double a[20];
    for (int i = 0; i < 20; i++) a[i] = 0.125;
    kb_timing t;
    kb_stats(a, 20, &t);
    ck_assert_double_eq(t.noise, 0);
    ck_assert_double_eq(t.median_ms, 0.125);
}
END_TEST

START_TEST(outliers_do_not_move_the_median)
{
    double a[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 100};
    kb_timing t;
    kb_stats(a, 10, &t);
    ck_assert_double_eq(t.median_ms, 1);
    ck_assert_double_eq(t.noise, 0);
    ck_assert_double_eq(t.max_ms, 100);
}
END_TEST

START_TEST(empty)
{
    kb_timing t;
    kb_stats(NULL, 0, &t);
    ck_assert(isnan(t.median_ms));
    ck_assert_int_eq(t.samples, 0);
}
END_TEST

/* The H200 case: the next case's probes ~9% slow while the driver scrubs the
 * previous case's memory, then back to normal: settled only after two calm
 * probes in a row, never on the slow ones. */
START_TEST(settle_waits_out_a_slow_spell)
{
    kb_settle st = {0, 0};
    ck_assert_int_eq(kb_settle_step(&st, 0.300, 0.03, 2), 0); /* first: the reference */
    ck_assert_int_eq(kb_settle_step(&st, 0.301, 0.03, 2), 1); /* within 3%: settled */
    st.calm = 0;                                              /* the next case */
    ck_assert_int_eq(kb_settle_step(&st, 0.327, 0.03, 2), 0);
    ck_assert_int_eq(kb_settle_step(&st, 0.302, 0.03, 2), 0); /* one calm probe */
    ck_assert_int_eq(kb_settle_step(&st, 0.327, 0.03, 2), 0); /* the run restarts */
    ck_assert_int_eq(st.calm, 0);
    ck_assert_int_eq(kb_settle_step(&st, 0.305, 0.03, 2), 0);
    ck_assert_int_eq(kb_settle_step(&st, 0.308, 0.03, 2), 1);
    ck_assert_double_eq(st.ref_ms, 0.300);
}
END_TEST

/* A session that starts during a slow spell takes its reference from the
 * first faster probe; a probe that reads nothing is not calm. */
START_TEST(settle_reference_is_the_fastest_probe)
{
    kb_settle st = {0, 0};
    ck_assert_int_eq(kb_settle_step(&st, 0.330, 0.03, 2), 0);
    ck_assert_int_eq(kb_settle_step(&st, 0.300, 0.03, 2), 1); /* new fastest: calm */
    ck_assert_double_eq(st.ref_ms, 0.300);
    ck_assert_int_eq(kb_settle_step(&st, 0, 0.03, 2), 0);
    ck_assert_int_eq(st.calm, 0);
    ck_assert_double_eq(st.ref_ms, 0.300);
    ck_assert_int_eq(kb_settle_step(&st, NAN, 0.03, 2), 0);
    ck_assert_double_eq(st.ref_ms, 0.300);
}
END_TEST

Suite *kb_suite_stats(void)
{
    Suite *s = suite_create("stats");
    TCase *t = tcase_create("stats");
    tcase_add_test(t, odd_and_even_counts);
    tcase_add_test(t, identical_samples_have_no_noise);
    tcase_add_test(t, outliers_do_not_move_the_median);
    tcase_add_test(t, empty);
    tcase_add_test(t, settle_waits_out_a_slow_spell);
    tcase_add_test(t, settle_reference_is_the_fastest_probe);
    suite_add_tcase(s, t);
    return s;
}
