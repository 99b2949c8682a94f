/* What kbench checks before any GPU work beyond the argument parse: its
 * environment variables (KBENCH_PERF_TOLERANCE and the rest a run reads,
 * the on/off switches), the output paths, the lock folder, an explicit
 * baseline and a named tuning cache; and the environment banner. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "knobs.h"
#include "dump.h"
#include "envinfo.h"
#include "run.h"
#include "tmpfiles.h"
#include "unit.h"

START_TEST(perf_tolerance_env)
{
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
    ck_assert_int_eq(kb_cli_env(NULL, &o, &e), KB_OK);
    ck_assert(isnan(o.perf_tolerance));
    ck_assert_int_eq(kb_cli_env("", &o, &e), KB_OK);
    ck_assert(isnan(o.perf_tolerance));
    ck_assert_int_eq(kb_cli_env("0.05", &o, &e), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 0.05);
    /* the flag wins over the environment */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--perf-tolerance", "0.2"), KB_OK);
    ck_assert_int_eq(kb_cli_env("0.05", &o, &e), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 0.2);
    ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
    ck_assert_int_eq(kb_cli_env("5%", &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_PERF_TOLERANCE"));
    ck_assert_int_eq(kb_cli_env("-0.1", &o, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_cli_env("nan", &o, &e), KB_ERR_ARG);
}
END_TEST

/* KBENCH_PERF_TOLERANCE is a run's: --help, --list, --list-cases (CMake's
 * case discovery), --describe and --self-test work whatever it holds; a run
 * or a --case still refuses a bad value, naming it. */
START_TEST(perf_tolerance_env_only_for_runs)
{
    static const char *const not_runs[] = {"--help", "--list", "--list-cases", "--describe",
                                           "--self-test"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof not_runs / sizeof not_runs[0]; i++) {
        ck_assert_int_eq(PARSE(&o, &e, not_runs[i]), KB_OK);
        ck_assert_msg(kb_cli_env("abc", &o, &e) == KB_OK, "%s: %s", not_runs[i], e.msg);
    }
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
    ck_assert_int_eq(kb_cli_env("abc", &o, &e), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "KBENCH_PERF_TOLERANCE 'abc': expected a fraction between 0 and 1, "
                            "exclusive (e.g. 0.05)");
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4"), KB_OK);
    ck_assert_int_eq(kb_cli_env("abc", &o, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_PERF_TOLERANCE 'abc'"));
}
END_TEST

/* Both spellings of the tolerance must lie in (0, 1): 0 flags every wobble,
 * 1 never flags anything. */
START_TEST(perf_tolerance_range)
{
    static const char *const bad[] = {"0", "0.0", "1", "1.0", "1.5", "10", "-0.05", "inf", "", "0.1x"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(PARSE(&o, &e, "--all"), KB_OK);
        ck_assert_msg(kb_cli_env(bad[i], &o, &e) == (*bad[i] ? KB_ERR_ARG : KB_OK), "env '%s'",
                      bad[i]);
        if (!*bad[i]) continue;
        ck_assert_msg(strstr(e.msg, bad[i]) != NULL, "message names '%s': %s", bad[i], e.msg);
        ck_assert_msg(PARSE(&o, &e, "--all", "--perf-tolerance", bad[i]) == KB_ERR_ARG, "flag '%s'",
                      bad[i]);
        ck_assert_msg(strstr(e.msg, "--perf-tolerance") && strstr(e.msg, bad[i]), "%s", e.msg);
    }
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--perf-tolerance", "0.999"), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 0.999);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--perf-tolerance=1e-3"), KB_OK);
    ck_assert_double_eq(o.perf_tolerance, 1e-3);
}
END_TEST

START_TEST(output_paths_checked_up_front)
{
    char dir[4096], path[4200], sub[4200];
    kbt_tmpdir(dir);
    kb_options o;
    kb_err e;
    snprintf(path, sizeof path, "%s/nodir/r.csv", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", path), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "does not exist"));
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--json", dir), KB_OK); /* a directory */
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "is a directory"));
    snprintf(path, sizeof path, "%s/r.csv", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", path, "--json", path), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    /* directories are made; KBENCH_RESULTS_DIR too, in --case mode */
    snprintf(sub, sizeof sub, "%s/results/deep", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4", "--csv", path), KB_OK);
    ck_assert_msg(kb_cli_check_outputs(&o, sub, &e) == KB_OK, "%s", e.msg);
    ck_assert_int_eq(access(sub, W_OK), 0);
    snprintf(sub, sizeof sub, "%s/r.csv/x", dir); /* under a file: cannot be made */
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--dump", sub), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "--dump"));
    kbt_rm_rf(dir);
}
END_TEST

/* A private folder (dir: 4096 bytes) holding one file, name, of text; its
 * path in path. */
static void tmp_file(char *dir, char *path, size_t len, const char *name, const char *text)
{
    kbt_tmpdir(dir);
    snprintf(path, len, "%s/%s", dir, name);
    kbt_write(path, text);
}

/* --csv and --json are compared as the files they name, not as text, and
 * neither may be the --baseline or --tune-cache file (the results would
 * overwrite what they are gated against); writability is probed by making
 * the FILE.partial the writer uses, since as root access() says yes to
 * /proc. The probe leaves nothing behind, and a .partial left by an earlier
 * run alone. */
START_TEST(output_paths_compared_as_files)
{
    char dir[4096], path[4200], other[4200], base[4200], partial[4300];
    kbt_tmpdir(dir);
    ck_assert_int_eq(chdir(dir), 0);
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", "a.csv", "--json", "./a.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--csv a.csv and --json ./a.csv name the same file"), "%s", e.msg);
    snprintf(path, sizeof path, "%s/sub/../a.csv", dir);
    ck_assert_int_eq(mkdir("sub", 0700), 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", path, "--json", "a.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    /* the baseline (through a link too) and the tuning cache */
    snprintf(base, sizeof base, "%s/base.csv", dir);
    kbt_write(base, "benchmark,backend,dtype,M,N,median_ms,gbps\n");
    ck_assert_int_eq(symlink(base, "link.csv"), 0);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--baseline", base, "--csv", "base.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--csv base.csv and --baseline"), "%s", e.msg);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--baseline", base, "--json", "link.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--json link.csv and --baseline"), "%s", e.msg);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--tune-cache", base, "--json", base), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--tune-cache"), "%s", e.msg);
    /* distinct files pass, and the probe leaves no .partial */
    snprintf(other, sizeof other, "%s/b.json", dir);
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--baseline", base, "--csv", "a.csv", "--json", other),
                     KB_OK);
    ck_assert_msg(kb_cli_check_outputs(&o, NULL, &e) == KB_OK, "%s", e.msg);
    ck_assert(!kbt_exists("a.csv.partial"));
    ck_assert(!kbt_exists("a.csv"));
    snprintf(partial, sizeof partial, "%s.partial", other);
    kbt_write(partial, "[kept]");
    ck_assert_msg(kb_cli_check_outputs(&o, NULL, &e) == KB_OK, "%s", e.msg);
    char *kept = kbt_read(partial, NULL);
    ck_assert_str_eq(kept, "[kept]");
    free(kept);
    /* a directory that exists but takes no file (as root, access() says it does) */
    ck_assert_int_eq(PARSE(&o, &e, "--all", "--csv", "/proc/x.csv"), KB_OK);
    ck_assert_int_eq(kb_cli_check_outputs(&o, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--csv /proc/x.csv: cannot write /proc/x.csv.partial in "
                                "directory /proc"),
                  "%s", e.msg);
    kbt_rm_rf(dir);
}
END_TEST

/* The variables a run reads where its cases use them are checked with
 * KBENCH_PERF_TOLERANCE, before any GPU work: a bad value was met per case
 * (KBENCH_TUNE_EVALS, KBENCH_TUNE_LOG inside the search), silently switched
 * something off (KBENCH_CUPTI_LIB: the kernel check SKIPped on a GPU) or
 * was read as "on" (anything but exact off/0), and on a machine without a
 * GPU the SKIP swallowed all of it. --help, --list, --describe ignore them. */
START_TEST(env_values_checked_up_front)
{
    char dir[4096], log[4200];
    kbt_tmpdir(dir);
    snprintf(log, sizeof log, "%s/tune-log.csv", dir);
    static const struct {
        const char *var, *value, *says;
    } bad[] = {
        {"KBENCH_TUNE_EVALS", "abc", "KBENCH_TUNE_EVALS='abc': expected a count 1..100000"},
        {"KBENCH_TUNE_EVALS", "0", "KBENCH_TUNE_EVALS='0'"},
        {"KBENCH_TUNE_EVALS", "100001", "KBENCH_TUNE_EVALS='100001'"},
        {"KBENCH_TUNE_LOG", "/nonexist/log", "KBENCH_TUNE_LOG /nonexist/log: directory /nonexist"},
        {"KBENCH_TUNE_LOG", "/proc/log", "KBENCH_TUNE_LOG /proc/log: cannot write /proc/log"},
        {"KBENCH_CUPTI_LIB", "/nonexist.so", "KBENCH_CUPTI_LIB='/nonexist.so': cannot be loaded"},
        {"KBENCH_CUPTI_LIB", "libm.so.6", "KBENCH_CUPTI_LIB='libm.so.6': not a CUPTI library"},
        {"KBENCH_PLAN_CACHE", "of", "KBENCH_PLAN_CACHE='of': expected on or off"},
        {"KBENCH_SERVER", "nope", "KBENCH_SERVER='nope': expected on or off"},
        {"KBENCH_LOCK_DIR", "/nonexist", "KBENCH_LOCK_DIR /nonexist: No such file"},
        {"KBENCH_LOCK_DIR", "/proc", "KBENCH_LOCK_DIR /proc: cannot create a file in it"},
    };
    static const char *const not_runs[] = {"--help", "--list", "--list-cases", "--describe"};
    kb_options o;
    kb_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i].var, bad[i].value, 1);
        ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
        ck_assert_msg(kb_cli_env(NULL, &o, &e) == KB_ERR_ARG, "%s=%s", bad[i].var, bad[i].value);
        ck_assert_msg(strstr(e.msg, bad[i].says), "%s: '%s' lacks '%s'", bad[i].var, e.msg,
                      bad[i].says);
        ck_assert_int_eq(PARSE(&o, &e, "--case", "softmax_forward.eager.bf16.4x4"), KB_OK);
        ck_assert_int_eq(kb_cli_env(NULL, &o, &e), KB_ERR_ARG);
        for (size_t m = 0; m < sizeof not_runs / sizeof not_runs[0]; m++) {
            ck_assert_int_eq(PARSE(&o, &e, not_runs[m]), KB_OK);
            ck_assert_msg(kb_cli_env(NULL, &o, &e) == KB_OK, "%s: %s", not_runs[m], e.msg);
        }
        unsetenv(bad[i].var);
    }
    /* good values pass; the log is not made by the check */
    static const char *const good[][2] = {
        {"KBENCH_TUNE_EVALS", "50"}, {"KBENCH_CUPTI_LIB", "none"}, {"KBENCH_PLAN_CACHE", "OFF"},
        {"KBENCH_PLAN_CACHE", "No"}, {"KBENCH_SERVER", "0"}, {"KBENCH_SERVER", "TRUE"},
        {"KBENCH_LOCK_DIR", "/tmp"}};
    setenv("KBENCH_TUNE_LOG", log, 1);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv(good[i][0], good[i][1], 1);
        ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
        ck_assert_msg(kb_cli_env(NULL, &o, &e) == KB_OK, "%s=%s: %s", good[i][0], good[i][1],
                      e.msg);
        unsetenv(good[i][0]);
    }
    ck_assert(!kbt_exists(log));
    unsetenv("KBENCH_TUNE_LOG");
    kbt_rm_rf(dir);
}
END_TEST

/* KBENCH_LOCK_DIR must be a directory a file can be made in: a lock folder
 * no server could use cost each --case 30 s of polling for a socket that
 * never came, and then a SKIP that said nothing of it. */
START_TEST(lock_dir_probed)
{
    char dir[4096], file[4200];
    tmp_file(dir, file, sizeof file, "afile", "x");
    kb_err e;
    setenv("KBENCH_LOCK_DIR", dir, 1);
    ck_assert_msg(kb_cli_check_lock_dir(&e) == KB_OK, "%s", e.msg);
    setenv("KBENCH_LOCK_DIR", file, 1);
    ck_assert_int_eq(kb_cli_check_lock_dir(&e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "KBENCH_LOCK_DIR") && strstr(e.msg, file) &&
                      strstr(e.msg, "not a directory"),
                  "%s", e.msg);
    unsetenv("KBENCH_LOCK_DIR"); /* the default, /tmp: named as the default */
    ck_assert_msg(kb_cli_check_lock_dir(&e) == KB_OK, "%s", e.msg);
    /* nothing of the probe is left: rmdir of a folder with a file fails */
    ck_assert_int_eq(unlink(file), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The on/off variables take a documented set, in any case; anything else is
 * refused rather than read as "on". */
START_TEST(env_switch_values)
{
    static const char *const off[] = {"0", "off", "OFF", "false", "False", "no", "NO"};
    static const char *const on[] = {"1", "on", "On", "true", "TRUE", "yes", "Yes"};
    static const char *const bad[] = {"of", "2", "none", "y", " off", "off "};
    kb_err e;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        int v = 1;
        ck_assert_int_eq(kb_env_switch("V", off[i], &v, &e), KB_OK);
        ck_assert_msg(v == 0, "%s", off[i]);
    }
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        int v = 0;
        ck_assert_int_eq(kb_env_switch("V", on[i], &v, &e), KB_OK);
        ck_assert_msg(v == 1, "%s", on[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v = 7;
        ck_assert_msg(kb_env_switch("KBENCH_X", bad[i], &v, &e) == KB_ERR_ARG, "'%s'", bad[i]);
        ck_assert_int_eq(v, 7);
        ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_X='"));
    }
    int v = 5; /* unset or empty: the caller's default */
    ck_assert_int_eq(kb_env_switch("V", NULL, &v, &e), KB_OK);
    ck_assert_int_eq(kb_env_switch("V", "", &v, &e), KB_OK);
    ck_assert_int_eq(v, 5);
}
END_TEST

/* An explicit --baseline is read (not only found) before the device opens:
 * a malformed file is the run's error on every machine, not swallowed by
 * the SKIP of one without a GPU. */
START_TEST(explicit_baseline_read_before_the_device)
{
    char dir[4096], path[4200];
    tmp_file(dir, path, sizeof path, "base.csv", "benchmark,backend\nsoftmax_forward\n");
    kb_options o;
    kb_err e;
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward", "--baseline", path), KB_OK);
    kb_session s;
    const kb_status st = kb_session_open(&s, &o, &kb_test_knob_hooks, &e);
    kb_session_close(&s);
    ck_assert_msg(st == KB_ERR_PARSE, "status %d: %s", st, e.msg);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    kbt_rm_rf(dir);
}
END_TEST

/* The banner (seed parity: versions first) from known facts. */
START_TEST(env_banner_text)
{
    kb_env env = {13000, 12080, 91400, 0, 1980, 3201};
    kb_device d;
    memset(&d, 0, sizeof d);
    d.ordinal = 1;
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    d.sm_count = 132;
    d.cc_major = 9;
    d.total_mem = (size_t)143771 << 20;
    char buf[640];
    kb_env_banner(&env, &d, buf, sizeof buf);
    ck_assert_str_eq(buf, "kbench " KB_VERSION " | CUDA runtime 13.0, driver 12.8 | cuDNN 9.14.0 | "
                          "GPU 1: NVIDIA H200 (sm_90, 132 SMs, 151 GB) | SM clock 1980 MHz, "
                          "memory clock 3201 MHz (peak)");
    kb_env_compact(&env, buf, sizeof buf);
    ck_assert_ptr_null(strstr(buf, "H200")); /* rows have a gpu column */
    ck_assert_ptr_nonnull(strstr(buf, "SM clock 1980 MHz"));
    kb_env none = {13000, 0, 0, 0, 0, 0};
    kb_env_banner(&none, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "kbench " KB_VERSION " | CUDA runtime 13.0, driver none | cuDNN not found | GPU: none");
}
END_TEST

/* A named tuning cache (--tune-cache, KBENCH_TUNE_CACHE) must exist unless
 * --tune starts it, checked before any GPU work: a mistyped path had the
 * tuned backend run its heuristic on every case without a word, which the
 * gate then read as a slowdown. The GPU's own file may be absent (a GPU
 * model not tuned yet). */
START_TEST(named_tune_cache_must_exist)
{
    char dir[4096], path[4200], got[4300];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/cache.txt", dir);
    kb_options o;
    memset(&o, 0, sizeof o);
    kb_err e;
    o.tune_cache = path;
    ck_assert_int_eq(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "--tune-cache names"));
    o.tune = 1; /* --tune writes it */
    ck_assert_int_eq(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), KB_OK);
    o.tune = 0;
    o.tune_cache = NULL;
    ck_assert_int_eq(kb_session_tune_cache_path(&o, path, NULL, got, sizeof got, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TUNE_CACHE names"));
    kbt_write(path, "# kbench tuned-backend launch configurations\n");
    ck_assert_int_eq(kb_session_tune_cache_path(&o, path, NULL, got, sizeof got, &e), KB_OK);
    ck_assert_str_eq(got, path);
    /* nothing named (an empty variable is none): the GPU's file, absent or not */
    ck_assert_int_eq(kb_session_tune_cache_path(&o, "", "NO_SUCH_GPU", got, sizeof got, &e),
                     KB_OK);
    ck_assert_ptr_nonnull(strstr(got, "/NO_SUCH_GPU.txt"));
    o.tune_cache = dir;
    ck_assert_int_eq(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "directory"));
    kbt_rm_rf(dir);
}
END_TEST

/* A path of 1100 characters into long_path (1101 bytes) whose first 1023
 * name a file that exists, in a fresh scratch folder dir (4096 bytes): cut
 * to the session's 1024-byte buffer, it named that other file, which was
 * read, or with --update-baseline or --tune written, in its place. */
static void path_cut_to_a_file(char *dir, char *long_path)
{
    kbt_tmpdir(dir);
    kbt_long_path(long_path, 1101, dir, "cache.txt", 1023);
    kbt_write(long_path, "# kbench tuned-backend launch configurations\n");
    memset(long_path + 1023, 'x', 77);
    long_path[1100] = '\0';
}

/* st is the refusal of a path too long for the session's buffer, the
 * message naming where it came from (who). */
static void expect_too_long(kb_status st, const kb_err *e, const char *who)
{
    ck_assert_msg(st == KB_ERR_ARG, "status %d: %s", st, e->msg);
    ck_assert_msg(strstr(e->msg, who) != NULL, "'%s' not in: %s", who, e->msg);
    ck_assert_msg(strstr(e->msg, "path longer than 1023 characters") != NULL, "%s", e->msg);
}

/* --baseline, --tune-cache and KBENCH_TUNE_CACHE longer than 1023 characters
 * are errors, not the file their first 1023 characters name. */
START_TEST(long_paths_refused_not_cut)
{
    char dir[4096], long_path[1101], got[1024];
    path_cut_to_a_file(dir, long_path);
    kb_options o;
    memset(&o, 0, sizeof o);
    kb_err e = {{0}};
    int missing = 0;
    o.baseline = long_path;
    expect_too_long(kb_session_baseline_path(&o, NULL, got, sizeof got, &missing, &e), &e,
                    "--baseline '");
    o.update_baseline = 1;
    expect_too_long(kb_session_baseline_path(&o, NULL, got, sizeof got, &missing, &e), &e,
                    "--baseline '");
    memset(&o, 0, sizeof o);
    o.tune_cache = long_path;
    expect_too_long(kb_session_tune_cache_path(&o, NULL, NULL, got, sizeof got, &e), &e,
                    "--tune-cache '");
    /* the environment's, as kb_session_open reads it */
    const char *was = getenv("KBENCH_TUNE_CACHE");
    char *saved = was ? strdup(was) : NULL;
    setenv("KBENCH_TUNE_CACHE", long_path, 1);
    ck_assert_int_eq(PARSE(&o, &e, "softmax_forward"), KB_OK);
    kb_session s;
    const kb_status st = kb_session_open(&s, &o, &kb_test_knob_hooks, &e);
    kb_session_close(&s);
    if (saved) setenv("KBENCH_TUNE_CACHE", saved, 1);
    else unsetenv("KBENCH_TUNE_CACHE");
    free(saved);
    expect_too_long(st, &e, "KBENCH_TUNE_CACHE '");
    kbt_rm_rf(dir);
}
END_TEST

/* --dump's case folder: cut to fit, it was another folder (a parent's
 * prefix), made and written. A fitting one is made; no tensors, no files. */
START_TEST(dump_folder_too_long)
{
    char dir[4096], dump[1200], sub[4200];
    kbt_tmpdir(dir);
    kb_buffers b;
    memset(&b, 0, sizeof b); /* no tensors: nothing copied from a device */
    kb_err e = {{0}};
    const char *name = "softmax_forward.eager.bf16.1x1";
    kbt_long_path(dump, sizeof dump, dir, "dump", 1090);
    ck_assert_int_eq(kb_dump_case(dump, name, &b, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "--dump '") && strstr(e.msg, "path longer than 1099 characters"),
                  "%s", e.msg);
    snprintf(sub, sizeof sub, "%s/dump", dir);
    ck_assert_msg(!kbt_exists(sub), "a folder was made at the cut path");
    snprintf(dump, sizeof dump, "%s/dump", dir);
    ck_assert_msg(kb_dump_case(dump, name, &b, &e) == KB_OK, "%s", e.msg);
    snprintf(sub, sizeof sub, "%s/%s", dump, name);
    ck_assert(kbt_exists(sub));
    kbt_rm_rf(dir);
}
END_TEST

Suite *kb_suite_cli_checks(void)
{
    Suite *s = suite_create("cli_checks");
    TCase *t = tcase_create("environment");
    tcase_add_test(t, perf_tolerance_env);
    tcase_add_test(t, perf_tolerance_env_only_for_runs);
    tcase_add_test(t, perf_tolerance_range);
    tcase_add_test(t, env_values_checked_up_front);
    tcase_add_test(t, env_switch_values);
    tcase_add_test(t, lock_dir_probed);
    tcase_add_test(t, env_banner_text);
    suite_add_tcase(s, t);
    t = tcase_create("files");
    tcase_add_test(t, output_paths_checked_up_front);
    tcase_add_test(t, output_paths_compared_as_files);
    tcase_add_test(t, explicit_baseline_read_before_the_device);
    tcase_add_test(t, named_tune_cache_must_exist);
    tcase_add_test(t, long_paths_refused_not_cut);
    tcase_add_test(t, dump_folder_too_long);
    suite_add_tcase(s, t);
    return s;
}
