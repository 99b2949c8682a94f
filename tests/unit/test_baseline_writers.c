/* --update-baseline's read-modify-write (kb_baseline_update): concurrent
 * writers of different rows of one file keep every row, and a write that
 * fails (a full disk, a read-only baselines folder) says so and leaves the
 * old file whole. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "tmpfiles.h"
#include "unit.h"

#define WRITERS 16
#define ROWS_EACH 3

typedef struct {
    int writer, row;
    long hold_us; /* time spent between the read and the write */
} one_row;

static kb_baseline_row make_row(int writer, int row)
{
    kb_baseline_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.benchmark, sizeof r.benchmark, "softmax_forward");
    snprintf(r.backend, sizeof r.backend, "fused");
    snprintf(r.dtype, sizeof r.dtype, "bf16");
    r.M = 1 + writer;
    r.N = 1 + row;
    r.median_ms = 0.01 * (1 + writer);
    r.gbps = 1000 + row;
    r.q1_ms = r.q3_ms = r.sm_mhz = NAN;
    return r;
}

/* The merge: one row upserted, then a pause standing for the time a real
 * update spends between its read and its rename (a large file, a slow
 * disk), so that writers without a lock overlap every time. */
static kb_status upsert_one(kb_baseline *b, void *ctx, kb_err *e)
{
    const one_row *o = ctx;
    const kb_baseline_row r = make_row(o->writer, o->row);
    KB_TRY(kb_baseline_upsert(b, &r, e));
    struct timespec ts = {0, o->hold_us * 1000};
    nanosleep(&ts, NULL);
    return KB_OK;
}

/* WRITERS processes, started together, each writing its ROWS_EACH rows in
 * as many updates: every row is in the file at the end. Without the lock
 * (kb_baseline_update's kb_lock_parent taken out) most rows are lost: each
 * writer renames over the rows the others wrote since it read. */
START_TEST(concurrent_writers_keep_every_row)
{
    char dir[4096], path[4200];
    kbt_tmpdir_file(dir, path, sizeof path, "NVIDIA_Test_GPU.csv");
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t kids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        kids[w] = fork();
        ck_assert_int_ge(kids[w], 0);
        if (kids[w] == 0) {
            close(go[1]);
            char c;
            if (read(go[0], &c, 1) != 0) _exit(2); /* EOF: all start at once */
            for (int r = 0; r < ROWS_EACH; r++) {
                one_row o = {w, r, 2000};
                kb_err e = {{0}};
                if (kb_baseline_update(path, upsert_one, &o, NULL, &e) != KB_OK) {
                    fprintf(stderr, "writer %d: %s\n", w, e.msg);
                    _exit(1);
                }
            }
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        waitpid(kids[w], &status, 0);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", w);
    }
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    ck_assert_msg(kb_baseline_read(path, &b, &e) == KB_OK, "%s", e.msg);
    ck_assert_msg(b.n == WRITERS * ROWS_EACH, "%zu of %d rows kept", b.n, WRITERS * ROWS_EACH);
    for (int w = 0; w < WRITERS; w++)
        for (int r = 0; r < ROWS_EACH; r++)
            ck_assert_msg(kb_baseline_find(&b, "softmax_forward", "fused", "bf16", 1 + w, 1 + r, 0),
                          "row of writer %d, update %d lost", w, r);
    kb_baseline_free(&b);
    kbt_rm_rf(dir);
}
END_TEST

/* A baseline of `rows` rows at path; its bytes (caller frees). */
static char *seed(const char *path, int rows)
{
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    for (int i = 0; i < rows; i++) {
        const kb_baseline_row r = make_row(100 + i, 0);
        ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    }
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_OK);
    kb_baseline_free(&b);
    return kbt_read(path, NULL);
}

/* In a child: (as NOBODY when root and drop is set) the update of path;
 * what it says goes to msg_path. Returns the child's exit status
 * (kb_baseline_update's kb_status). */
static int update_in_child(const char *path, const char *msg_path, int fsize_limit, int drop)
{
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        close(pfd[0]);
        if (drop && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(100);
        if (fsize_limit) { /* a full disk, as far as this process can tell */
            signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
            const struct rlimit rl = {(rlim_t)fsize_limit, (rlim_t)fsize_limit};
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(101);
        }
        one_row o = {7, 7, 0};
        kb_err e = {{0}};
        const kb_status st = kb_baseline_update(path, upsert_one, &o, NULL, &e);
        if (write(pfd[1], e.msg, strlen(e.msg)) < 0) _exit(102);
        _exit((int)st);
    }
    close(pfd[1]);
    char msg[1100] = "";
    size_t n = 0;
    ssize_t k;
    while ((k = read(pfd[0], msg + n, sizeof msg - 1 - n)) > 0) n += (size_t)k;
    msg[n] = '\0';
    close(pfd[0]);
    kbt_write(msg_path, msg);
    int status = 0;
    waitpid(c, &status, 0);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void count_file(const char *path, void *arg)
{
    (void)path;
    (void)arg;
}

static void same_file(const char *path, const char *before)
{
    char *after = kbt_read(path, NULL);
    ck_assert_msg(after && strcmp(after, before) == 0, "%s changed", path);
    free(after);
}

/* RLIMIT_FSIZE stands for a full disk: the temporary cannot grow past the
 * limit (EFBIG, where a full disk gives ENOSPC; the same failed write). */
START_TEST(full_disk_leaves_the_old_file_whole)
{
    char dir[4096], path[4200], msgp[4200];
    kbt_tmpdir_file(dir, path, sizeof path, "NVIDIA_Test_GPU.csv");
    snprintf(msgp, sizeof msgp, "%s/msg", dir);
    char *before = seed(path, 40);
    ck_assert_uint_gt(strlen(before), 2048);
    ck_assert_int_eq(update_in_child(path, msgp, 1024, 0), KB_ERR_IO);
    char *msg = kbt_read(msgp, NULL);
    ck_assert_msg(strstr(msg, "File too large") && strstr(msg, "not updated: it is as it was") &&
                      strstr(msg, path),
                  "%s", msg);
    free(msg);
    same_file(path, before);
    ck_assert_int_eq(kbt_for_files(dir, ".tmp", count_file, NULL), 0); /* no temporary left */
    free(before);
    kbt_rm_rf(dir);
}
END_TEST

/* A read-only baselines folder (as NOBODY when root: root writes anyway). */
START_TEST(read_only_folder_leaves_the_old_file_whole)
{
    char dir[4096], path[4200], msgp[4200], out[4096];
    kbt_tmpdir_file(dir, path, sizeof path, "NVIDIA_Test_GPU.csv");
    kbt_tmpdir(out);
    snprintf(msgp, sizeof msgp, "%s/msg", out);
    char *before = seed(path, 3);
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(dir, 65534, 65534), 0);
        ck_assert_int_eq(chmod(path, 0644), 0);
    }
    ck_assert_int_eq(chmod(dir, 0555), 0);
    ck_assert_int_eq(update_in_child(path, msgp, 0, 1), KB_ERR_IO);
    char *msg = kbt_read(msgp, NULL);
    ck_assert_msg(strstr(msg, "Permission denied") && strstr(msg, "not updated: it is as it was"),
                  "%s", msg);
    free(msg);
    same_file(path, before);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    free(before);
    kbt_rm_rf(dir);
    kbt_rm_rf(out);
}
END_TEST

Suite *kb_suite_baseline_writers(void)
{
    Suite *s = suite_create("baseline_writers");
    TCase *t = tcase_create("writers");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, concurrent_writers_keep_every_row);
    tcase_add_test(t, full_disk_leaves_the_old_file_whole);
    tcase_add_test(t, read_only_folder_leaves_the_old_file_whole);
    suite_add_tcase(s, t);
    return s;
}
