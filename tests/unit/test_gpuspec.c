/* The resource spec the build hands to ctest: no GPU, one, several. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuspec.h"
#include "tmpfiles.h"
#include "unit.h"

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* The spec for gpus GPUs, which must format; in a static buffer that the
 * next call overwrites. */
static const char *spec_of(int gpus)
{
    static char buf[4096];
    kb_err e;
    ck_assert_int_eq(kb_gpuspec_format(gpus, buf, sizeof buf, &e), KB_OK);
    return buf;
}

START_TEST(no_gpu_is_a_placeholder_that_never_blocks)
{
    const char *buf = spec_of(0);
    ck_assert_ptr_nonnull(strstr(buf, "\"version\": {\"major\": 1, \"minor\": 0}"));
    ck_assert_ptr_nonnull(strstr(buf, "\"gpus\": ["));
    /* One resource with many slots: skipping cases may run side by side, and
     * none is left "Not Run" for want of a GPU. */
    ck_assert_int_eq(count(buf, "\"id\""), 1);
    ck_assert_ptr_nonnull(strstr(buf, "{\"id\": \"nogpu\", \"slots\": 4096}"));
}
END_TEST

START_TEST(one_gpu_one_slot)
{
    const char *buf = spec_of(1);
    ck_assert_int_eq(count(buf, "\"id\""), 1);
    ck_assert_ptr_nonnull(strstr(buf, "{\"id\": \"0\", \"slots\": 1}\n"));
}
END_TEST

START_TEST(several_gpus_each_one_slot)
{
    const char *spec = spec_of(8);
    ck_assert_int_eq(count(spec, "\"slots\": 1}"), 8);
    ck_assert_int_eq(count(spec, "\"slots\": 1},\n"), 7); /* valid JSON: no trailing comma */
    for (int i = 0; i < 8; i++) {
        char want[64];
        snprintf(want, sizeof want, "{\"id\": \"%d\", \"slots\": %d}", i, KB_GPUSPEC_SLOTS);
        ck_assert_ptr_nonnull(strstr(spec, want));
    }
    char buf[4096];
    kb_err e;
    ck_assert_int_eq(kb_gpuspec_format(-1, buf, sizeof buf, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_gpuspec_format(8, buf, 40, &e), KB_ERR_IO);
}
END_TEST

START_TEST(written_atomically)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/gpus.json", dir);
    kb_err e;
    ck_assert_int_eq(kb_gpuspec_write(path, 2, &e), KB_OK);
    char *text = kbt_read(path, NULL);
    ck_assert_int_eq(count(text, "\"slots\": 1}"), 2);
    free(text);
    ck_assert_int_eq(kb_gpuspec_write("/nonexistent-dir/gpus.json", 1, &e), KB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent-dir/gpus.json"));
    kbt_rm_rf(dir);
}
END_TEST

static void no_op(const char *path, void *arg)
{
    (void)path;
    (void)arg;
}

/* The temporary file's name has room for any path a file can have: at 1099
 * characters it was cut to the path itself (written in place, not
 * atomically), then refused; now written through PATH.PID.tmp, which goes.
 * A path no temporary name fits is an error naming it. */
START_TEST(long_paths)
{
    char dir[4096], path[4300];
    kbt_tmpdir(dir);
    kbt_long_path(path, sizeof path, dir, "gpus.json", 1099);
    kb_err e = {{0}};
    ck_assert_msg(kb_gpuspec_write(path, 2, &e) == KB_OK, "%s", e.msg);
    char *text = kbt_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, spec_of(2));
    free(text);
    ck_assert_int_eq(kbt_for_files(dir, ".tmp", no_op, NULL), 0); /* none left */
    kbt_long_path(path, sizeof path, dir, "gpus.json", 4200);
    ck_assert_int_eq(kb_gpuspec_write(path, 1, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "too long") != NULL, "%s", e.msg);
    kbt_rm_rf(dir);
}
END_TEST

/* Without libcuda.so.1 the runtime's "driver version is insufficient" is not
 * what is wrong: kbench and kbench-gpu-spec both say the driver is missing. */
START_TEST(no_gpu_says_what_is_missing)
{
    const char *insufficient = "CUDA driver version is insufficient for CUDA runtime version";
    kb_err e;
    ck_assert_int_eq(kb_no_gpu(cudaErrorInsufficientDriver, insufficient, 0, &e), KB_ERR_NODEV);
    ck_assert_str_eq(e.msg, "no CUDA driver/GPU on this machine (libcuda.so.1 not found)");
    ck_assert_int_eq(kb_no_gpu(cudaErrorInsufficientDriver, insufficient, 1, &e), KB_ERR_NODEV);
    ck_assert_ptr_nonnull(strstr(e.msg, "older than kbench's CUDA runtime"));
    ck_assert_ptr_nonnull(strstr(e.msg, insufficient));
    ck_assert_int_eq(kb_no_gpu(cudaSuccess, "no error", 1, &e), KB_ERR_NODEV);
    ck_assert_str_eq(e.msg, "no CUDA GPU on this machine (the driver sees 0 devices)");
    ck_assert_int_eq(kb_no_gpu(cudaErrorNoDevice, "no CUDA-capable device is detected", 1, &e),
                     KB_ERR_NODEV);
    ck_assert_str_eq(e.msg, "no CUDA GPU on this machine (no CUDA-capable device is detected)");
}
END_TEST

Suite *kb_suite_gpuspec(void)
{
    Suite *s = suite_create("gpuspec");
    TCase *t = tcase_create("spec");
    tcase_add_test(t, no_gpu_is_a_placeholder_that_never_blocks);
    tcase_add_test(t, one_gpu_one_slot);
    tcase_add_test(t, several_gpus_each_one_slot);
    tcase_add_test(t, written_atomically);
    tcase_add_test(t, long_paths);
    tcase_add_test(t, no_gpu_says_what_is_missing);
    suite_add_tcase(s, t);
    return s;
}
