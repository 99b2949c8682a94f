/* The case server on a shared host (server.h): the client sends nothing to
 * a socket another user listens on, nor into a socket folder that is not
 * its own; the server serves no stranger; a client killed mid-case frees the
 * server and the GPU lock, and the next case runs on a new server. Without
 * a GPU: the server runs stand-ins for kbench's main.
 *
 * A stranger is real where the test runs as root (CI): the squatter drops
 * to uid 65534 before it listens. Elsewhere the client is told to expect a
 * server of another uid (kb_server_client_as), which makes the squatter,
 * running as this user, a stranger to it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpulock.h"
#include "server.h"
#include "tmpfiles.h"
#include "unit.h"

#define NOBODY 65534

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A scratch lock folder (KBENCH_LOCK_DIR, no XDG_RUNTIME_DIR): the server
 * folder is <dir>/kbench-<uid>; sock the socket of GPU `ordinal`. */
typedef struct {
    char dir[4096], rundir[512], sock[512], exe[PATH_MAX];
} place;

static void place_open(place *p, int ordinal)
{
    kbt_tmpdir(p->dir);
    setenv("KBENCH_LOCK_DIR", p->dir, 1);
    unsetenv("XDG_RUNTIME_DIR");
    unsetenv("KBENCH_SERVER");
    kb_err e = {{0}};
    ck_assert_msg(kb_runtime_dir(p->rundir, sizeof p->rundir, &e) == KB_OK, "%s", e.msg);
    const ssize_t n = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
    ck_assert_int_gt(n, 0);
    p->exe[n] = '\0';
    ck_assert_int_eq(kb_server_socket_path(p->rundir, p->exe, ordinal, p->sock, sizeof p->sock), 0);
}

static void place_close(place *p)
{
    unsetenv("KBENCH_LOCK_DIR");
    kbt_rm_rf(p->dir);
}

/* ---- a squatter where the server would be found ---- */

/* Binds path, drops to NOBODY when root (the uid SO_PEERCRED reports is the
 * listener's), listens, says so on ready, takes one connection and counts
 * the bytes it gets until the peer closes (10 s at most). Writes
 * "<accepted> <bytes>" to report. */
static void squatter(const char *path, int ready, int report)
{
    const int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0) _exit(10);
    if (geteuid() == 0 && (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)) _exit(11);
    if (listen(ls, 4) != 0) _exit(12);
    if (write(ready, "r", 1) != 1) _exit(13);
    long accepted = 0, bytes = 0;
    struct pollfd p = {ls, POLLIN, 0};
    if (poll(&p, 1, 10000) == 1) {
        const int c = accept(ls, NULL, NULL);
        accepted = c >= 0;
        char buf[4096];
        struct pollfd q = {c, POLLIN, 0};
        while (c >= 0 && poll(&q, 1, 10000) == 1) {
            const ssize_t k = read(c, buf, sizeof buf);
            if (k <= 0) break;
            bytes += k;
        }
    }
    char line[64];
    const int n = snprintf(line, sizeof line, "%ld %ld\n", accepted, bytes);
    if (write(report, line, (size_t)n) != n) _exit(14);
    _exit(0);
}

/* The client, in a child with SECRET_TOKEN in its environment and its
 * stderr in errp: the exit code is kb_server_client's answer (0: the case
 * runs in this process). */
static int run_client(int ordinal, const char *errp)
{
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        const int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(90);
        setenv("SECRET_TOKEN", "hunter2-from-the-ci-job", 1);
        char *argv[] = {"kbench", "--case", "softmax_forward.fused.bf16.8x8", NULL};
        int rc = -1;
        const uid_t want = geteuid() == 0 ? geteuid() : geteuid() + 1;
        _exit(kb_server_client_as(3, argv, ordinal, want, &rc));
    }
    int status = 0;
    waitpid(c, &status, 0);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(client_sends_nothing_to_a_squatter)
{
    place pl;
    place_open(&pl, 5);
    int ready[2], report[2];
    ck_assert_int_eq(pipe(ready), 0);
    ck_assert_int_eq(pipe(report), 0);
    pid_t sq = fork();
    ck_assert_int_ge(sq, 0);
    if (sq == 0) squatter(pl.sock, ready[1], report[1]);
    char r;
    ck_assert_int_eq(read(ready[0], &r, 1), 1);

    char errp[4300];
    snprintf(errp, sizeof errp, "%s/client.err", pl.dir);
    ck_assert_int_eq(run_client(5, errp), 0); /* in process */
    char line[64] = "";
    ck_assert_int_gt(read(report[0], line, sizeof line - 1), 0);
    long accepted = -1, bytes = -1;
    ck_assert_int_eq(sscanf(line, "%ld %ld", &accepted, &bytes), 2);
    ck_assert_int_eq(accepted, 1); /* the client did connect ... */
    ck_assert_msg(bytes == 0, "the squatter received %ld bytes", bytes); /* ... and sent nothing */
    char *err = kbt_read(errp, NULL);
    ck_assert_msg(strstr(err, "not using the case server") && strstr(err, "is served by uid") &&
                      strstr(err, pl.sock),
                  "%s", err);
    ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
    ck_assert_ptr_null(strstr(err, "hunter2"));
    free(err);
    waitpid(sq, NULL, 0);
    place_close(&pl);
}
END_TEST

/* The socket folder is not this user's private one: a link to a folder
 * where a squatter listens, or (root) a folder of another user's. The
 * client refuses the folder: the squatter is not even connected to. */
START_TEST(client_refuses_a_squatted_folder)
{
    place pl;
    place_open(&pl, 6);
    char theirs[4300], sock[4400];
    snprintf(theirs, sizeof theirs, "%s/theirs", pl.dir);
    ck_assert_int_eq(mkdir(theirs, 0700), 0);
    kbt_rm_rf(pl.rundir);
    ck_assert_int_eq(symlink(theirs, pl.rundir), 0);
    snprintf(sock, sizeof sock, "%s/%s", theirs, strrchr(pl.sock, '/') + 1);
    int ready[2], report[2];
    ck_assert_int_eq(pipe(ready), 0);
    ck_assert_int_eq(pipe(report), 0);
    pid_t sq = fork();
    ck_assert_int_ge(sq, 0);
    if (sq == 0) squatter(sock, ready[1], report[1]);
    char r;
    ck_assert_int_eq(read(ready[0], &r, 1), 1);
    char errp[4300];
    snprintf(errp, sizeof errp, "%s/client.err", pl.dir);
    /* as root the client expects its own uid, so the folder is all that
     * keeps it from the squatter (who listens as NOBODY: refused anyway) */
    ck_assert_int_eq(run_client(6, errp), 0);
    char *err = kbt_read(errp, NULL);
    ck_assert_msg(strstr(err, "not using the case server") && strstr(err, "symbolic link"), "%s",
                  err);
    free(err);
    kill(sq, SIGKILL);
    waitpid(sq, NULL, 0);
    close(report[1]);
    char line[64] = "";
    ck_assert_int_le(read(report[0], line, sizeof line - 1), 0); /* no report: never connected */
    ck_assert_int_eq(unlink(pl.rundir), 0);

    if (geteuid() == 0) { /* a folder of another user's, and one others can enter */
        ck_assert_int_eq(mkdir(pl.rundir, 0700), 0);
        ck_assert_int_eq(chown(pl.rundir, NOBODY, NOBODY), 0);
        ck_assert_int_eq(run_client(6, errp), 0);
        err = kbt_read(errp, NULL);
        ck_assert_msg(strstr(err, "owned by uid 65534"), "%s", err);
        free(err);
        ck_assert_int_eq(rmdir(pl.rundir), 0);
    }
    ck_assert_int_eq(mkdir(pl.rundir, 0700), 0);
    ck_assert_int_eq(chmod(pl.rundir, 0777), 0);
    ck_assert_int_eq(run_client(6, errp), 0);
    err = kbt_read(errp, NULL);
    ck_assert_msg(strstr(err, "mode 0777, not 0700"), "%s", err);
    free(err);
    place_close(&pl);
}
END_TEST

/* ---- the server's side ---- */

/* What the server runs: leaves a mark in $KB_TEST_MARK, exits 42. */
static int marking_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *m = getenv("KB_TEST_MARK");
    if (m) kbt_write(m, "ran\n");
    return 42;
}

/* A server of this process's own (fn for kbench's main), listening when
 * this returns. */
static pid_t start_server(const place *pl, kb_server_main_fn fn, uid_t client_uid)
{
    unlink(pl->sock); /* a dead server's socket must not pass for this one's */
    pid_t srv = fork();
    ck_assert_int_ge(srv, 0);
    if (srv == 0) _exit(kb_server_run_as(pl->sock, -1, fn, client_uid));
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", pl->sock);
    int up = 0;
    for (int i = 0; i < 500 && !up; i++) { /* a probe it takes and drops: no request */
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        up = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        if (fd >= 0) close(fd);
        if (!up) sleep_ms(10);
    }
    ck_assert_msg(up, "the server at %s did not listen", pl->sock);
    return srv;
}

/* A server told that its clients are of another uid takes this one for a
 * stranger: nothing runs, and the client runs the case itself, saying why. */
START_TEST(server_serves_no_stranger)
{
    place pl;
    place_open(&pl, 7);
    char mark[4300], errp[4300];
    snprintf(mark, sizeof mark, "%s/mark", pl.dir);
    snprintf(errp, sizeof errp, "%s/client.err", pl.dir);
    setenv("KB_TEST_MARK", mark, 1);
    const pid_t srv = start_server(&pl, marking_main, geteuid() + 1);
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        const int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(90);
        char *argv[] = {"kbench", "--case", "x", NULL};
        int rc = -1;
        _exit(kb_server_client(3, argv, 7, &rc));
    }
    int status = 0;
    waitpid(c, &status, 0);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert(!kbt_exists(mark));
    char *err = kbt_read(errp, NULL);
    ck_assert_msg(strstr(err, "not using the case server"), "%s", err);
    free(err);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    unsetenv("KB_TEST_MARK");
    place_close(&pl);
}
END_TEST

/* What the server runs: takes the GPU lock at $KB_TEST_LOCK, leaves the mark,
 * then never ends (a hung kernel, from the server's point of view). */
static int hanging_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    kb_gpu_lock l;
    kb_err e;
    kb_gpu_lock_init(&l);
    if (kb_gpu_lock_acquire(&l, getenv("KB_TEST_LOCK"), "hanging case", NULL, &e) != KB_OK)
        return 3;
    kbt_write(getenv("KB_TEST_MARK"), "running\n");
    for (;;) pause();
}

/* Waits up to ms for pid to exit; its status, or -1 when it did not. */
static int wait_exit(pid_t pid, long ms)
{
    int status = 0;
    for (long t = 0; t < ms; t += 10) {
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
        sleep_ms(10);
    }
    return -1;
}

START_TEST(killed_client_frees_the_server_and_the_gpu_lock)
{
    place pl;
    place_open(&pl, 8);
    char mark[4300], lockp[4300];
    snprintf(mark, sizeof mark, "%s/mark", pl.dir);
    kb_gpu_lock_path(pl.dir, "0000:ee:00.0", lockp, sizeof lockp);
    setenv("KB_TEST_MARK", mark, 1);
    setenv("KB_TEST_LOCK", lockp, 1);
    const pid_t srv = start_server(&pl, hanging_main, geteuid());
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        char *argv[] = {"kbench", "--case", "x", NULL};
        int rc = -1;
        _exit(kb_server_client(3, argv, 8, &rc));
    }
    for (int i = 0; i < 1000 && !kbt_exists(mark); i++) sleep_ms(10);
    ck_assert_msg(kbt_exists(mark), "the case never started");
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    /* The server goes at once, and its GPU lock with it. */
    const int status = wait_exit(srv, 5000);
    if (status == -1) {
        kill(srv, SIGKILL);
        waitpid(srv, NULL, 0);
        ck_abort_msg("the server still runs the case of a client that is gone");
    }
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 3);
    kb_gpu_lock l;
    kb_err e = {{0}};
    kb_gpu_lock_init(&l);
    ck_assert_msg(kb_gpu_lock_acquire(&l, lockp, "next", NULL, &e) == KB_OK, "%s", e.msg);
    ck_assert(l.waited_s < 1.0);
    kb_gpu_lock_release(&l);

    /* The next case: a new server at the same socket runs it. */
    unlink(mark);
    const pid_t next = start_server(&pl, marking_main, geteuid());
    c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        char *argv[] = {"kbench", "--case", "x", NULL};
        int rc = -1;
        if (!kb_server_client(3, argv, 8, &rc)) _exit(91);
        _exit(rc);
    }
    int cs = 0;
    waitpid(c, &cs, 0);
    ck_assert(WIFEXITED(cs));
    ck_assert_int_eq(WEXITSTATUS(cs), 42);
    ck_assert(kbt_exists(mark));
    kill(next, SIGKILL);
    waitpid(next, NULL, 0);
    unsetenv("KB_TEST_MARK");
    unsetenv("KB_TEST_LOCK");
    place_close(&pl);
}
END_TEST

Suite *kb_suite_server_peer(void)
{
    Suite *s = suite_create("server_peer");
    TCase *t = tcase_create("peers");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, client_sends_nothing_to_a_squatter);
    tcase_add_test(t, client_refuses_a_squatted_folder);
    tcase_add_test(t, server_serves_no_stranger);
    tcase_add_test(t, killed_client_frees_the_server_and_the_gpu_lock);
    suite_add_tcase(s, t);
    return s;
}
