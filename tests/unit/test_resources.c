/* CTest resource-group parsing: which GPU a case runs on. */
#include <check.h>
#include <string.h>

#include "device.h"
#include "unit.h"

START_TEST(no_allocation)
{
    int d = 5;
    kb_err e;
    ck_assert_int_eq(kb_resource_parse(NULL, NULL, &d, &e), KB_OK);
    ck_assert_int_eq(d, -1);
}
END_TEST

START_TEST(good_values)
{
    int d = -1;
    kb_err e;
    ck_assert_int_eq(kb_resource_parse("1", "id:0,slots:1", &d, &e), KB_OK);
    ck_assert_int_eq(d, 0);
    ck_assert_int_eq(kb_resource_parse("1", "id:7,slots:1", &d, &e), KB_OK);
    ck_assert_int_eq(d, 7);
    ck_assert_int_eq(kb_resource_parse("1", "id:3,slots:2;id:4,slots:1", &d, &e), KB_OK);
    ck_assert_int_eq(d, 3);
}
END_TEST

START_TEST(missing_and_malformed)
{
    int d;
    kb_err e;
    ck_assert_int_eq(kb_resource_parse("1", NULL, &d, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "CTEST_RESOURCE_GROUP_0_GPUS"));
    ck_assert_int_eq(kb_resource_parse("1", "", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("0", "id:0,slots:1", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("x", "id:0,slots:1", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "0", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "id:a,slots:1", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "id:1", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "id:1,slots:0", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "id:-1,slots:1", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "gpu:1,slots:1", &d, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_resource_parse("1", "id:1,slots:1x", &d, &e), KB_ERR_ARG);
}
END_TEST

Suite *kb_suite_resources(void)
{
    Suite *s = suite_create("resources");
    TCase *t = tcase_create("resources");
    tcase_add_test(t, no_allocation);
    tcase_add_test(t, good_values);
    tcase_add_test(t, missing_and_malformed);
    suite_add_tcase(s, t);
    return s;
}
