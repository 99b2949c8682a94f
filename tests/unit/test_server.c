/* The case server's protocol without a GPU: a server runs a stand-in for
 * kbench's main; a client hands it argv, environment, working directory and
 * its stdout/stderr, and gets the exit code back. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server.h"
#include "tmpfiles.h"
#include "unit.h"

/* What the server runs: echoes what it was given, exits 42. */
static int fake_main(int argc, char **argv)
{
    char cwd[PATH_MAX];
    printf("argc=%d argv1=%s cwd=%s\n", argc, argc > 1 ? argv[1] : "", getcwd(cwd, sizeof cwd));
    const char *x = getenv("KB_SERVER_TEST_X");
    fprintf(stderr, "env=%s\n", x ? x : "(unset)");
    return 42;
}

START_TEST(case_runs_in_the_server_with_the_clients_world)
{
    char exe[PATH_MAX], path[512], dir[4096], outp[4200], errp[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    kbt_tmpdir(dir);
    setenv("KBENCH_LOCK_DIR", dir, 1); /* the socket folder is made in it */
    unsetenv("XDG_RUNTIME_DIR");
    char rundir[512];
    kb_err ke = {{0}};
    ck_assert_msg(kb_runtime_dir(rundir, sizeof rundir, &ke) == KB_OK, "%s", ke.msg);
    ck_assert_ptr_nonnull(strstr(rundir, dir));
    ck_assert_int_eq(kb_server_socket_path(rundir, exe, 7, path, sizeof path), 0);
    ck_assert_ptr_nonnull(strstr(path, rundir));

    pid_t srv = fork();
    ck_assert_int_ge(srv, 0);
    if (srv == 0) _exit(kb_server_run(path, -1, fake_main));
    /* wait for the socket */
    for (int i = 0; i < 500 && access(path, F_OK) != 0; i++) {
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    ck_assert_int_eq(access(path, F_OK), 0);

    /* The client's stdout/stderr go to files, its cwd and environment differ
     * from the server's. */
    snprintf(outp, sizeof outp, "%s/out.txt", dir);
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    pid_t cl = fork();
    ck_assert_int_ge(cl, 0);
    if (cl == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(dir) != 0) _exit(90);
        setenv("KB_SERVER_TEST_X", "from-the-client", 1);
        char *argv[] = {"kbench", "--case", NULL};
        int rc = -1;
        if (!kb_server_client(2, argv, 7, &rc)) _exit(91);
        _exit(rc);
    }
    int status = 0;
    waitpid(cl, &status, 0);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 42);
    char *out = kbt_read(outp, NULL), *err = kbt_read(errp, NULL);
    char want[4300];
    snprintf(want, sizeof want, "argc=2 argv1=--case cwd=%s\n", dir);
    ck_assert_str_eq(out, want);
    ck_assert_str_eq(err, "env=from-the-client\n");
    free(out);
    free(err);
    /* Without a GPU the server leaves after its first case (a CUDA error). */
    waitpid(srv, &status, 0);
    ck_assert(WIFEXITED(status));
    ck_assert_int_ne(access(path, F_OK), 0); /* and takes its socket with it */
    unsetenv("KBENCH_LOCK_DIR");
    kbt_rm_rf(dir);
}
END_TEST

/* With var=value the client hands "kbench --case" to no server: it returns
 * 0 (run the case in this process) at once, rc untouched. */
static void expect_in_process(const char *var, const char *value)
{
    char *argv[] = {"kbench", "--case", NULL};
    int rc = -1;
    setenv(var, value, 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_msg(kb_server_client(2, argv, 0, &rc) == 0, "%s=%s", var, value);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    unsetenv(var);
    ck_assert_msg(t1.tv_sec - t0.tv_sec < 2, "%s=%s: %ld s", var, value,
                  (long)(t1.tv_sec - t0.tv_sec));
    ck_assert_int_eq(rc, -1);
}

START_TEST(opt_out_and_tools_run_in_process)
{
    expect_in_process("KBENCH_SERVER", "0");
    expect_in_process("CUDA_INJECTION64_PATH", "/opt/sanitizer/libinject.so");
}
END_TEST

/* A lock folder no server can use (missing, a file, /proc), or a
 * KBENCH_SERVER value that is neither on nor off, runs the case in this
 * process (where kb_cli_env says what is wrong, exit 2) at once: the client
 * spawned a server that could not open its lock file and polled 30 s for
 * its socket. */
START_TEST(unusable_settings_run_in_process_at_once)
{
    char file[4096];
    kbt_tmpdir(file);
    strcat(file, "/afile");
    kbt_write(file, "x");
    expect_in_process("KBENCH_LOCK_DIR", "/nonexistent/kbench-locks");
    expect_in_process("KBENCH_LOCK_DIR", "/proc");
    expect_in_process("KBENCH_LOCK_DIR", file);
    expect_in_process("KBENCH_SERVER", "nope");
    expect_in_process("KBENCH_SERVER", "OFF");
    *strrchr(file, '/') = '\0';
    kbt_rm_rf(file);
}
END_TEST

START_TEST(socket_names_differ_by_gpu_and_visible_devices)
{
    char exe[PATH_MAX], a[512], b[512], c[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    unsetenv("CUDA_VISIBLE_DEVICES");
    ck_assert_int_eq(kb_server_socket_path("/run/d", exe, 0, a, sizeof a), 0);
    ck_assert_int_eq(kb_server_socket_path("/run/d", exe, 1, b, sizeof b), 0);
    setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
    ck_assert_int_eq(kb_server_socket_path("/run/d", exe, 0, c, sizeof c), 0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    ck_assert_str_ne(a, b);
    ck_assert_str_ne(a, c);
    ck_assert_int_eq(strncmp(a, "/run/d/srv-", 11), 0);
    ck_assert_int_eq(kb_server_socket_path("/run/d", "/nonexistent/kbench", 0, a, sizeof a), -1);
    /* a folder whose socket names would not fit a Unix socket address */
    char deep[200];
    memset(deep, 'd', sizeof deep - 1);
    deep[0] = '/';
    deep[sizeof deep - 1] = '\0';
    ck_assert_int_eq(kb_server_socket_path(deep, exe, 0, a, sizeof a), -1);
}
END_TEST

Suite *kb_suite_server(void)
{
    Suite *s = suite_create("server");
    TCase *t = tcase_create("protocol");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, case_runs_in_the_server_with_the_clients_world);
    tcase_add_test(t, opt_out_and_tools_run_in_process);
    tcase_add_test(t, unusable_settings_run_in_process_at_once);
    tcase_add_test(t, socket_names_differ_by_gpu_and_visible_devices);
    suite_add_tcase(s, t);
    return s;
}
