/* The per-GPU lock: two processes, one waits and says so; re-entry; the
 * lock dies with its holder. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpulock.h"
#include "tmpfiles.h"
#include "unit.h"

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

START_TEST(path_from_pci_bus_id)
{
    char p[512];
    kb_gpu_lock_path("/var/lock", "0000:19:00.0", p, sizeof p);
    ck_assert_str_eq(p, "/var/lock/kbench-gpu-0000_19_00.0.lock");
    kb_gpu_lock_path("/x", "", p, sizeof p);
    ck_assert_str_eq(p, "/x/kbench-gpu-unknown.lock");
    setenv("KBENCH_LOCK_DIR", "/from/env", 1);
    kb_gpu_lock_path(NULL, "0000:01:00.0", p, sizeof p);
    ck_assert_str_eq(p, "/from/env/kbench-gpu-0000_01_00.0.lock");
    unsetenv("KBENCH_LOCK_DIR");
    kb_gpu_lock_path(NULL, "0000:01:00.0", p, sizeof p);
    ck_assert_str_eq(p, "/tmp/kbench-gpu-0000_01_00.0.lock");
}
END_TEST

/* The child takes the lock and holds it 0.4 s; the parent, started once the
 * child holds it, must wait at least ~0.3 s, print the waiting line naming
 * the holder, and then get it. */
START_TEST(second_process_waits)
{
    char dir[4096], path[4200], logp[4200];
    kbt_tmpdir(dir);
    kb_gpu_lock_path(dir, "0000:aa:00.0", path, sizeof path);
    snprintf(logp, sizeof logp, "%s/log.txt", dir);
    int ready[2];
    ck_assert_int_eq(pipe(ready), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        kb_gpu_lock l;
        kb_err e;
        kb_gpu_lock_init(&l);
        if (kb_gpu_lock_acquire(&l, path, "softmax_forward.tuned.bf16.8x8", NULL, &e) != KB_OK)
            _exit(3);
        char c = 'x';
        if (write(ready[1], &c, 1) != 1) _exit(4);
        sleep_s(0.4);
        kb_gpu_lock_release(&l);
        _exit(0);
    }
    char c;
    ck_assert_int_eq(read(ready[0], &c, 1), 1);
    FILE *log = fopen(logp, "w");
    ck_assert_ptr_nonnull(log);
    kb_gpu_lock l;
    kb_err e;
    kb_gpu_lock_init(&l);
    const double t0 = now_s();
    ck_assert_int_eq(kb_gpu_lock_acquire(&l, path, "second", log, &e), KB_OK);
    const double waited = now_s() - t0;
    fclose(log);
    ck_assert_msg(waited > 0.25, "waited only %.3f s", waited);
    ck_assert(l.waited_s > 0.25);
    char *text = kbt_read(logp, NULL);
    ck_assert_ptr_nonnull(strstr(text, "second: waiting for the GPU lock"));
    ck_assert_ptr_nonnull(strstr(text, "softmax_forward.tuned.bf16.8x8"));
    ck_assert_ptr_nonnull(strstr(text, "got the GPU lock after waiting"));
    free(text);
    /* Held now: the holder note names this process. */
    char *note = kbt_read(path, NULL);
    char want[64];
    snprintf(want, sizeof want, "pid %ld second", (long)getpid());
    ck_assert_ptr_nonnull(strstr(note, want));
    free(note);
    kb_gpu_lock_release(&l);
    int status = 0;
    waitpid(child, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    kbt_rm_rf(dir);
}
END_TEST

/* No wait and no message when the lock is free; re-acquiring a held lock is
 * a no-op; a holder killed with SIGKILL leaves the lock free. */
START_TEST(free_lock_reentry_and_dead_holder)
{
    char dir[4096], path[4200];
    kbt_tmpdir(dir);
    kb_gpu_lock_path(dir, "0000:bb:00.0", path, sizeof path);
    kb_gpu_lock l;
    kb_err e;
    kb_gpu_lock_init(&l);
    ck_assert_int_eq(kb_gpu_lock_acquire(&l, path, "a", NULL, &e), KB_OK);
    ck_assert_double_eq(l.waited_s, 0);
    ck_assert_int_eq(kb_gpu_lock_acquire(&l, path, "a", NULL, &e), KB_OK);
    kb_gpu_lock_release(&l);
    kb_gpu_lock_release(&l); /* twice is harmless */

    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        kb_gpu_lock c;
        kb_gpu_lock_init(&c);
        if (kb_gpu_lock_acquire(&c, path, "doomed", NULL, &e) != KB_OK) _exit(3);
        pause();
        _exit(0);
    }
    sleep_s(0.1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    const double t0 = now_s();
    ck_assert_int_eq(kb_gpu_lock_acquire(&l, path, "after", NULL, &e), KB_OK);
    ck_assert(now_s() - t0 < 2.0); /* no wait for a dead holder (slack for a loaded box) */
    kb_gpu_lock_release(&l);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(unwritable_dir_is_an_error)
{
    kb_gpu_lock l;
    kb_err e;
    kb_gpu_lock_init(&l);
    ck_assert_int_eq(kb_gpu_lock_acquire(&l, "/nonexistent-dir/kbench-gpu-x.lock", "a", NULL, &e),
                     KB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent-dir/kbench-gpu-x.lock"));
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_LOCK_DIR"));
}
END_TEST

Suite *kb_suite_gpulock(void)
{
    Suite *s = suite_create("gpulock");
    TCase *t = tcase_create("lock");
    tcase_set_timeout(t, 20);
    tcase_add_test(t, path_from_pci_bus_id);
    tcase_add_test(t, second_process_waits);
    tcase_add_test(t, free_lock_reentry_and_dead_holder);
    tcase_add_test(t, unwritable_dir_is_an_error);
    suite_add_tcase(s, t);
    return s;
}
