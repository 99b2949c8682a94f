/* The on-disk plan cache (plancache.h): names, round trip, and every damaged
 * file read as a miss rather than handed to the library. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plancache.h"
#include "tmpfiles.h"
#include "unit.h"

static const kb_problem P = {KB_RMSNORM_BWD, KB_BF16, 2048, 128256, 0};

START_TEST(path_names_gpu_library_case)
{
    char buf[512];
    kb_err e;
    ck_assert_int_eq(kb_plan_cache_path("/b", "NVIDIA H200", "cudnn91400", &P, buf, sizeof buf, &e),
                     KB_OK);
    ck_assert_str_eq(buf, "/b/plans/NVIDIA_H200/cudnn91400-rmsnorm_backward-bf16-2048x128256.plan");
    ck_assert_int_eq(kb_plan_cache_path("/b", "NVIDIA H200", "cudnn91400", &P, buf, 20, &e),
                     KB_ERR_ARG);
}
END_TEST

START_TEST(round_trip_and_rewrite)
{
    char dir[4096], path[4300], meta[64], *pl = NULL;
    kbt_tmpdir(dir);
    kb_err e;
    ck_assert_int_eq(kb_plan_cache_path(dir, "GPU X", "lib1", &P, path, sizeof path, &e), KB_OK);
    size_t n = 0;
    int found = 1;
    char why[512];
    /* Absent: a miss with no complaint; the folders do not exist yet. */
    ck_assert_int_eq(kb_plan_cache_read(path, meta, sizeof meta, &pl, &n, &found, why, sizeof why,
                                        &e), KB_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_str_eq(why, "");
    const char json[] = "{\"a\": \"line one\\n\", \"b\": [1, 2]}\n{second line}";
    ck_assert_int_eq(kb_plan_cache_write(path, "engine=5 heur=A index=0", json, sizeof json - 1, &e),
                     KB_OK);
    ck_assert_int_eq(kb_plan_cache_read(path, meta, sizeof meta, &pl, &n, &found, why, sizeof why,
                                        &e), KB_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(meta, "engine=5 heur=A index=0");
    ck_assert_uint_eq(n, sizeof json - 1);
    ck_assert_mem_eq(pl, json, n);
    ck_assert_int_eq(pl[n], '\0');
    free(pl);
    /* Rewritten in place (a rebuilt plan replaces a refused one). */
    ck_assert_int_eq(kb_plan_cache_write(path, "engine=1 heur=FALLBACK index=3", "xy", 2, &e), KB_OK);
    ck_assert_int_eq(kb_plan_cache_read(path, meta, sizeof meta, &pl, &n, &found, NULL, 0, &e),
                     KB_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(meta, "engine=1 heur=FALLBACK index=3");
    ck_assert_uint_eq(n, 2);
    free(pl);
    /* Bad arguments are errors, not files. */
    ck_assert_int_eq(kb_plan_cache_write(path, "two\nlines", "x", 1, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_plan_cache_write(path, "m", "", 0, &e), KB_ERR_ARG);
    char long_meta[KB_PLAN_META_MAX + 2];
    memset(long_meta, 'm', sizeof long_meta - 1);
    long_meta[sizeof long_meta - 1] = '\0';
    ck_assert_int_eq(kb_plan_cache_write(path, long_meta, "x", 1, &e), KB_ERR_ARG);
    long_meta[KB_PLAN_META_MAX] = '\0'; /* the longest the reader takes back */
    ck_assert_int_eq(kb_plan_cache_write(path, long_meta, "x", 1, &e), KB_OK);
    ck_assert_int_eq(kb_plan_cache_read(path, meta, sizeof meta, &pl, &n, &found, NULL, 0, &e),
                     KB_OK);
    ck_assert_int_eq(found, 1);
    free(pl);
    kbt_rm_rf(dir);
}
END_TEST

/* Each damaged form is a miss that says why; the payload is never handed out. */
START_TEST(damaged_files_are_misses)
{
    char dir[4096], path[4300], meta[64], why[512], *pl = NULL;
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/x.plan", dir);
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "bad first line"},
        {"hello\n{}", "bad first line"},
        {"kbench-plan 1 bytes=2 m\n{}", "bad first line"}, /* the format before checksums */
        {"kbench-plan 2 bytes=10 fnv=0123456789abcdef m\n{}", "truncated"},
        {"kbench-plan 2 bytes=1 fnv=0123456789abcdef m\n{}", "longer than"},
        {"kbench-plan 2 bytes=0 fnv=0123456789abcdef m\n", "bad payload size"},
        {"kbench-plan 2 bytes=-3 fnv=0123456789abcdef m\n{}", "bad payload size"},
        {"kbench-plan 2 bytes=2x fnv=0123456789abcdef m\n{}", "bad payload size"},
        {"kbench-plan 2 bytes=99999999999 fnv=0123456789abcdef m\n{}", "bad payload size"},
        {"kbench-plan 2 bytes=2 fnv=0123456789abcdef no newline", "bad first line"},
        {"kbench-plan 2 bytes=2 m\n{}", "bad checksum field"},
        {"kbench-plan 2 bytes=2 fnv=12345 m\n{}", "bad checksum field"},
        /* a well-formed file whose payload is not what was hashed (two hosts
         * writing one file over NFS) */
        {"kbench-plan 2 bytes=2 fnv=0123456789abcdef m\n{}", "does not match its checksum"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kbt_write(path, bad[i].text);
        size_t n = 7;
        int found = 1;
        kb_err e;
        ck_assert_int_eq(kb_plan_cache_read(path, meta, sizeof meta, &pl, &n, &found, why,
                                            sizeof why, &e), KB_OK);
        ck_assert_msg(found == 0 && pl == NULL && n == 0, "case %zu read as a plan", i);
        ck_assert_msg(strstr(why, bad[i].why) && strstr(why, path), "case %zu: why '%s'", i, why);
    }
    kbt_rm_rf(dir);
}
END_TEST

/* Where the plans live: the user's cache before the build folder. */
START_TEST(cache_dir_order)
{
    static const char *const vars[] = {"KBENCH_CACHE_DIR", "XDG_CACHE_HOME", "HOME",
                                       "KBENCH_PLAN_CACHE"};
    char *saved[4];
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    /* Each step sets one variable (NULL value: none) and expects a folder,
     * given a buffer of len bytes. */
    static const struct {
        const char *var, *value, *want;
        size_t len;
    } steps[] = {
        {NULL, NULL, "/build", 512},
        {"HOME", "/home/u", "/home/u/.cache/kbench", 512},
        {"XDG_CACHE_HOME", "", "/home/u/.cache/kbench", 512}, /* empty: unset */
        {"XDG_CACHE_HOME", "/xdg", "/xdg/kbench", 512},
        {"KBENCH_CACHE_DIR", "/mine", "/mine", 512},
        {NULL, NULL, "/mine", 6},                      /* just fits */
        {"KBENCH_CACHE_DIR", "/mine/longer", "", 6}, /* cut short: no cache, not another folder */
        {"KBENCH_PLAN_CACHE", "off", "", 512},
        /* the documented set, in any case (kb_env_switch) */
        {"KBENCH_PLAN_CACHE", "on", "/mine/longer", 512},
        {"KBENCH_PLAN_CACHE", "FALSE", "", 512},
        {"KBENCH_PLAN_CACHE", "No", "", 512},
        {"KBENCH_PLAN_CACHE", "0", "", 512},
        {"KBENCH_PLAN_CACHE", "1", "/mine/longer", 512},
    };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        char buf[512];
        if (steps[i].var) setenv(steps[i].var, steps[i].value, 1);
        kb_plan_cache_dir("/build", buf, steps[i].len);
        ck_assert_msg(strcmp(buf, steps[i].want) == 0, "step %zu: '%s', want '%s'", i, buf,
                      steps[i].want);
    }
    for (int i = 0; i < 4; i++) {
        if (saved[i]) setenv(vars[i], saved[i], 1); else unsetenv(vars[i]);
        free(saved[i]);
    }
}
END_TEST

Suite *kb_suite_plancache(void)
{
    Suite *s = suite_create("plancache");
    TCase *t = tcase_create("plancache");
    tcase_add_test(t, path_names_gpu_library_case);
    tcase_add_test(t, round_trip_and_rewrite);
    tcase_add_test(t, damaged_files_are_misses);
    tcase_add_test(t, cache_dir_order);
    suite_add_tcase(s, t);
    return s;
}
