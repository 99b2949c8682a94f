/* CTest resource-group parsing: which GPU a case runs on. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device.h"
#include "files.h"
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

START_TEST(gpu_file_names)
{
    char buf[64];
    kb_gpu_file_name("NVIDIA H200", buf, sizeof buf);
    ck_assert_str_eq(buf, "NVIDIA_H200");
    kb_gpu_file_name("A/B\\C\tD", buf, sizeof buf);
    ck_assert_str_eq(buf, "A_B_C_D");
    kb_gpu_file_name("", buf, sizeof buf);
    ck_assert_str_eq(buf, "unknown_gpu");
    kb_gpu_file_name("NVIDIA H200", buf, 7);
    ck_assert_str_eq(buf, "NVIDIA");
}
END_TEST

START_TEST(mkdir_p_makes_parents)
{
    char dir[] = "/tmp/kb_mkdir_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128], file[160];
    kb_err e;
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    ck_assert_int_eq(kb_mkdir_p(path, &e), KB_OK);
    ck_assert_int_eq(kb_mkdir_p(path, &e), KB_OK); /* existing: fine */
    snprintf(file, sizeof file, "%s/x/y/f.csv", dir);
    ck_assert_int_eq(kb_mkdir_parent(file, &e), KB_OK);
    snprintf(file, sizeof file, "%s/x/y", dir);
    struct stat st;
    ck_assert_int_eq(stat(file, &st), 0);
    snprintf(file, sizeof file, "%s/x/y/f.csv", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(kb_mkdir_p(file, &e), KB_ERR_IO); /* a file, not a directory */
    ck_assert_ptr_nonnull(strstr(e.msg, "not a directory"));
}
END_TEST

Suite *kb_suite_resources(void)
{
    Suite *s = suite_create("resources");
    TCase *t = tcase_create("resources");
    tcase_add_test(t, no_allocation);
    tcase_add_test(t, good_values);
    tcase_add_test(t, missing_and_malformed);
    tcase_add_test(t, gpu_file_names);
    tcase_add_test(t, mkdir_p_makes_parents);
    suite_add_tcase(s, t);
    return s;
}
