/* Per-GPU case server and its thin client; see server.h for why. */
#define _GNU_SOURCE /* SCM_RIGHTS/CMSG_*, struct ucred (SO_PEERCRED), POLLRDHUP, accept4, pipe2 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "device.h"
#include "gpulock.h"
#include "files.h"
#include "kbench.h"

extern char **environ;

#define ACK 'A'

/* ---- shared ---------------------------------------------------------------- */

/* All n bytes through read() or write(), across short counts and EINTR. */
static int io_all(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n) {
        ssize_t k = writing ? write(fd, p, n) : read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t n) { return io_all(fd, (void *)buf, n, 1); }
static int read_all(int fd, void *buf, size_t n) { return io_all(fd, buf, n, 0); }

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- client ---------------------------------------------------------------- */

kb_status kb_runtime_dir(char *buf, size_t len, kb_err *e)
{
    /* XDG_RUNTIME_DIR only when it is this user's private folder: sudo and
     * su keep the invoking user's in the environment. */
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (xdg && xdg[0] == '/' && lstat(xdg, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid() && (st.st_mode & 07777) == 0700)
        KB_TRY(kb_path_print(buf, len, "XDG_RUNTIME_DIR", xdg, e, "%s/kbench", xdg));
    else
        KB_TRY(kb_path_print(buf, len, "KBENCH_LOCK_DIR", kb_lock_dir(), e, "%s/kbench-%ld",
                             kb_lock_dir(), (long)geteuid()));
    return kb_private_dir(buf, e);
}

int kb_server_socket_path(const char *dir, const char *exe, int ordinal, char *buf, size_t len)
{
    struct stat st;
    if (stat(exe, &st) != 0) return -1;
    /* Named after what it must match (FNV-1a). The seed is not FNV's basis
     * (a digit short); kept, so that a running server keeps its name. */
    uint64_t h = 1469598103934665603ull;
    h = kb_fnv1a(h, exe, strlen(exe));
    h = kb_fnv1a(h, &st.st_ino, sizeof st.st_ino);
    h = kb_fnv1a(h, &st.st_mtime, sizeof st.st_mtime);
    h = kb_fnv1a(h, &st.st_size, sizeof st.st_size);
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis) h = kb_fnv1a(h, vis, strlen(vis) + 1);
    int n = snprintf(buf, len, "%s/srv-%016" PRIx64 "-%d.sock", dir, h, ordinal);
    struct sockaddr_un a;
    return n > 0 && (size_t)n < len && (size_t)n < sizeof a.sun_path ? 0 : -1;
}

/* The uid of the process at the other end of a connected AF_UNIX socket:
 * SO_PEERCRED, the kernel's record of who connected (or, seen from a
 * client, who listened). No peer can forge it. 0, or -1. */
static int peer_uid(int fd, uid_t *uid)
{
    struct ucred cr;
    socklen_t n = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) != 0 || n != sizeof cr) return -1;
    *uid = cr.uid;
    return 0;
}

static int connect_to(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The fd at which the server finds the write end of its ready pipe across
 * exec: it writes one byte there once it listens; its exit, before that or
 * after, closes it. */
#define KB_SERVER_READY_FD 3
#define KB_STR_(x) #x
#define KB_STR(x) KB_STR_(x)

/* Detached (own session, double fork) so that ctest, which waits for its
 * case's process and pipes, never waits for the server. *ready: the read
 * end of the server's ready pipe (close-on-exec in this process). */
static int spawn(const char *exe, const char *path, int *ready)
{
    int pf[2];
    if (pipe(pf) != 0) return -1;
    fcntl(pf[0], F_SETFD, FD_CLOEXEC); /* neither end for what this process runs */
    fcntl(pf[1], F_SETFD, FD_CLOEXEC);
    pid_t p = fork();
    if (p < 0) {
        close(pf[0]);
        close(pf[1]);
        return -1;
    }
    if (p == 0) {
        setsid();
        if (fork() != 0) _exit(0);
        /* The write end at KB_SERVER_READY_FD without close-on-exec (dup2's
         * copy has none), every other fd past stderr closed. */
        if (pf[1] == KB_SERVER_READY_FD ? fcntl(pf[1], F_SETFD, 0) != 0
                                        : dup2(pf[1], KB_SERVER_READY_FD) < 0)
            _exit(127);
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        for (int fd = KB_SERVER_READY_FD + 1; fd < 1024; fd++) close(fd);
        execl(exe, "kbench", "--serve", path, KB_STR(KB_SERVER_READY_FD), (char *)NULL);
        _exit(127);
    }
    close(pf[1]);
    int status;
    while (waitpid(p, &status, 0) < 0 && errno == EINTR) {
    }
    *ready = pf[0];
    return 0;
}

/* The request's first message: its length, with the client's stdout and
 * stderr attached as SCM_RIGHTS. Self-referencing: initialise in place. */
typedef struct {
    uint64_t len;
    struct iovec iov;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } ctl;
    struct msghdr m;
} fd_msg;

static void fd_msg_init(fd_msg *x)
{
    memset(x, 0, sizeof *x);
    x->iov.iov_base = &x->len;
    x->iov.iov_len = sizeof x->len;
    x->m.msg_iov = &x->iov;
    x->m.msg_iovlen = 1;
    x->m.msg_control = x->ctl.buf;
    x->m.msg_controllen = sizeof x->ctl.buf;
}

/* The request: fds 1 and 2 as SCM_RIGHTS, then a length and NUL-separated
 * strings: cwd, argc, envc, argv..., environ... */
static int send_request(int fd, int argc, char **argv)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    int envc = 0;
    while (environ[envc]) envc++;
    char counts[2][16];
    snprintf(counts[0], sizeof counts[0], "%d", argc);
    snprintf(counts[1], sizeof counts[1], "%d", envc);
    size_t len = strlen(cwd) + 1 + strlen(counts[0]) + 1 + strlen(counts[1]) + 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    for (int i = 0; i < envc; i++) len += strlen(environ[i]) + 1;
    char *blob = malloc(len), *p = blob;
    if (!blob) return -1;
    const char *head[3] = {cwd, counts[0], counts[1]};
    for (int i = 0; i < 3; i++) p = stpcpy(p, head[i]) + 1;
    for (int i = 0; i < argc; i++) p = stpcpy(p, argv[i]) + 1;
    for (int i = 0; i < envc; i++) p = stpcpy(p, environ[i]) + 1;

    fd_msg x;
    fd_msg_init(&x);
    x.len = len;
    struct cmsghdr *c = CMSG_FIRSTHDR(&x.m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(2 * sizeof(int));
    int fds[2] = {1, 2};
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    fflush(stdout);
    fflush(stderr);
    ssize_t w;
    do w = sendmsg(fd, &x.m, 0);
    while (w < 0 && errno == EINTR);
    int rc = (w == (ssize_t)sizeof x.len && write_all(fd, blob, len) == 0) ? 0 : -1;
    free(blob);
    return rc;
}

/* The case runs in this process, for the reason given: one line on stderr,
 * so that a case that could not use its server never does so silently. */
static int in_process(const char *why)
{
    fprintf(stderr, "kbench: not using the case server: %s; running the case in this process\n",
            why);
    fflush(stderr);
    return 0;
}

/* A connection to the server at path, spawning one when none listens:
 * the descriptor, or -1 with why said. */
static int reach(const char *exe, const char *path, char *why, size_t len)
{
    int fd = connect_to(path);
    if (fd >= 0) return fd;
    int ready;
    if (spawn(exe, path, &ready) != 0) {
        snprintf(why, len, "cannot start a server: %s", strerror(errno));
        return -1;
    }
    /* Until it answers, 30 s at most; but a server that exits without
     * listening (its pipe at EOF, no byte) will not, and unless another
     * server answers the case runs here at once. */
    int heard = 0, gone = 0;
    for (int waited = 0; fd < 0 && waited < 30000; waited += 10) {
        if (!heard) {
            struct pollfd rp = {ready, POLLIN, 0};
            if (poll(&rp, 1, 10) > 0) {
                char b;
                heard = 1;
                gone = read(ready, &b, 1) != 1;
            }
        } else {
            sleep_ms(10);
        }
        fd = connect_to(path);
        if (fd < 0 && gone) break;
    }
    close(ready);
    if (fd < 0)
        snprintf(why, len, "the server for %s %s", path,
                 gone ? "exited without listening" : "did not listen within 30 s");
    return fd;
}

int kb_server_client(int argc, char **argv, int ordinal, int *rc)
{
    return kb_server_client_as(argc, argv, ordinal, geteuid(), rc);
}

int kb_server_client_as(int argc, char **argv, int ordinal, uid_t server_uid, int *rc)
{
    kb_err e;
    int use = 1;
    /* A CUDA tool injected into this process must see the case's GPU work.
     * A KBENCH_SERVER value kb_env_switch refuses, or a lock folder no
     * server could use (its lock file, its socket), runs the case here,
     * where kb_cli_env reports it (exit 2) before any GPU work: spawning a
     * server there cost 30 s of polling for a socket that never came. */
    if (kb_env_switch("KBENCH_SERVER", getenv("KBENCH_SERVER"), &use, &e) != KB_OK || !use ||
        kb_under_cuda_tool() || kb_cli_check_lock_dir(&e) != KB_OK)
        return 0;
    if (kb_device_ordinal(ordinal, &ordinal, &e) != KB_OK)
        return 0; /* the in-process run reports the malformed allocation */
    char exe[PATH_MAX], dir[400], path[512], why[768];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return in_process("cannot read /proc/self/exe");
    exe[n] = '\0';
    if (kb_runtime_dir(dir, sizeof dir, &e) != KB_OK) return in_process(kb_err_text(&e));
    if (kb_server_socket_path(dir, exe, ordinal, path, sizeof path) != 0) {
        snprintf(why, sizeof why, "no socket name under %s fits a Unix socket address", dir);
        return in_process(why);
    }
    signal(SIGPIPE, SIG_IGN);
    /* Twice at most: a server that closed before taking the request (its
     * idle exit) never ran the case, so asking the next one is safe. */
    for (int attempt = 0; attempt < 2; attempt++) {
        const int fd = reach(exe, path, why, sizeof why);
        if (fd < 0) return in_process(why);
        /* Not a byte of argv, environment or descriptors before the server
         * is known to be this user's (server.h). */
        uid_t uid = 0;
        const int known = peer_uid(fd, &uid) == 0, err = errno;
        if (!known || uid != server_uid) {
            close(fd);
            if (!known)
                snprintf(why, sizeof why, "cannot tell who serves %s (SO_PEERCRED: %s)", path,
                         strerror(err));
            else
                snprintf(why, sizeof why, "%s is served by uid %ld, not by this user (uid %ld)",
                         path, (long)uid, (long)server_uid);
            return in_process(why);
        }
        char ack = 0;
        if (send_request(fd, argc, argv) != 0) {
            close(fd);
            continue;
        }
        /* The server takes the next request only when the GPU is free: a
         * late ACK is a wait for another case (this run's or another's). */
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 200) == 0) {
            const double t0 = kb_mono_s();
            printf("waiting for GPU %d: its kbench server is running another case\n", ordinal);
            fflush(stdout);
            if (read_all(fd, &ack, 1) == 0)
                printf("got GPU %d after waiting %.2f s\n", ordinal, kb_mono_s() - t0 + 0.2);
        } else if (read_all(fd, &ack, 1) != 0) {
            ack = 0;
        }
        if (ack != ACK) {
            close(fd);
            continue;
        }
        int32_t answer;
        int got = read_all(fd, &answer, sizeof answer) == 0;
        close(fd);
        if (!got) {
            fprintf(stderr, "Error: the kbench server running this case (%s) ended without an "
                            "answer: it crashed or was killed during the case\n",
                    path);
            *rc = 1;
            return 1;
        }
        *rc = answer;
        return 1;
    }
    return in_process("the server closed the connection twice without taking the case");
}

/* ---- server ---------------------------------------------------------------- */

typedef struct {
    int out, err;
    char *blob;
    char **argv, **env;
    int argc;
    const char *cwd;
} request;

static void request_free(request *r)
{
    if (r->out >= 0) close(r->out);
    if (r->err >= 0) close(r->err);
    free(r->blob);
    free(r->argv);
    free(r->env);
    memset(r, 0, sizeof *r);
    r->out = r->err = -1;
}

static int receive(int fd, request *r)
{
    memset(r, 0, sizeof *r);
    r->out = r->err = -1;
    fd_msg x;
    fd_msg_init(&x);
    ssize_t got;
    do got = recvmsg(fd, &x.m, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    const uint64_t len = x.len;
    struct cmsghdr *c = got == (ssize_t)sizeof x.len ? CMSG_FIRSTHDR(&x.m) : NULL;
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int))) return -1;
    int fds[2];
    memcpy(fds, CMSG_DATA(c), sizeof fds);
    r->out = fds[0];
    r->err = fds[1];
    if (len == 0 || len > (64u << 20)) return -1;
    r->blob = malloc(len + 1);
    if (!r->blob || read_all(fd, r->blob, len) != 0) return -1;
    r->blob[len] = '\0';
    char *p = r->blob, *end = r->blob + len;
    r->cwd = p;
    p += strlen(p) + 1;
    if (p >= end) return -1;
    r->argc = atoi(p);
    p += strlen(p) + 1;
    if (p >= end) return -1;
    int envc = atoi(p);
    p += strlen(p) + 1;
    if (r->argc < 1 || envc < 0 || envc > 100000) return -1;
    r->argv = calloc((size_t)r->argc + 1, sizeof *r->argv);
    r->env = calloc((size_t)envc + 1, sizeof *r->env);
    if (!r->argv || !r->env) return -1;
    for (int i = 0; i < r->argc; i++, p += strlen(p) + 1) {
        if (p >= end) return -1;
        r->argv[i] = p;
    }
    for (int i = 0; i < envc; i++, p += strlen(p) + 1) {
        if (p >= end) return -1;
        r->env[i] = p;
    }
    return 0;
}

/* Runs one request as if it were this process's own command line. */
static int serve(request *r, kb_server_main_fn fn)
{
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(r->out, 1);
    dup2(r->err, 2);
    char **base_env = environ;
    environ = r->env;
    int rc = chdir(r->cwd) == 0 ? fn(r->argc, r->argv) : 1;
    fflush(stdout);
    fflush(stderr);
    environ = base_env;
    /* The client's pipes must see EOF once it exits: keep no copy open. */
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    return rc;
}

/* While a case runs, a thread watches its client's connection. A client
 * that is gone (ended by CTest's TIMEOUT, by SIGKILL, by Ctrl-C) can never
 * be answered, and its case may never end: a kernel that hangs cannot be
 * stopped from inside its process, and it would hold the GPU, the GPU lock
 * and this server for good, every later case waiting behind it. So the
 * server exits at once: the driver tears the context down (the kernel with
 * it), the kernel drops the GPU lock and the server lock, and the client's
 * stdout and stderr close (CTest waits for them). The next case starts a new
 * server. A file the case was writing may leave its temporary
 * ("<path>.<pid>.tmp") behind; the file itself is whole (kb_atomic_write). */
typedef struct {
    int conn, stop[2];
    pthread_t t;
    int armed;
} watchdog;

#define KB_SERVER_CLIENT_GONE 3 /* the exit code of a server whose client went */

static void *watch(void *arg)
{
    watchdog *w = arg;
    struct pollfd p[2] = {{w->conn, POLLRDHUP, 0}, {w->stop[0], POLLIN, 0}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return NULL; /* cannot watch: the case runs on, as it would unwatched */
        }
        if (p[1].revents) return NULL;
        if (p[0].revents) _exit(KB_SERVER_CLIENT_GONE); /* hang-up or error */
    }
}

static void watch_start(watchdog *w, int conn)
{
    w->conn = conn;
    w->armed = pipe2(w->stop, O_CLOEXEC) == 0;
    if (w->armed && pthread_create(&w->t, NULL, watch, w) != 0) {
        close(w->stop[0]);
        close(w->stop[1]);
        w->armed = 0;
    }
}

/* Before the answer is written: once the client has it, it closes. */
static void watch_stop(watchdog *w)
{
    if (!w->armed) return;
    (void)!write(w->stop[1], "s", 1);
    pthread_join(w->t, NULL);
    close(w->stop[0]);
    close(w->stop[1]);
    w->armed = 0;
}

/* One accepted connection: the request read (10 s at most: a client that
 * connects and sends nothing must not hold the server), the ACK, the case,
 * the answer. A peer of another uid gets nothing and is not read from.
 * Whether a case ran. */
static int take(int c, uid_t client_uid, kb_server_main_fn fn)
{
    uid_t uid;
    if (peer_uid(c, &uid) != 0 || uid != client_uid) return 0;
    const struct timeval limit = {10, 0};
    (void)setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    request r;
    if (receive(c, &r) == 0) {
        char ack = ACK;
        if (write_all(c, &ack, 1) == 0) {
            watchdog w;
            watch_start(&w, c);
            int32_t rc = serve(&r, fn);
            watch_stop(&w);
            (void)write_all(c, &rc, sizeof rc);
            request_free(&r);
            return 1;
        }
    }
    request_free(&r);
    return 0;
}

int kb_server_run(const char *sock_path, int ready_fd, kb_server_main_fn fn)
{
    return kb_server_run_as(sock_path, ready_fd, fn, geteuid());
}

int kb_server_run_as(const char *sock_path, int ready_fd, kb_server_main_fn fn, uid_t client_uid)
{
    signal(SIGPIPE, SIG_IGN);
    /* Only in a private folder (kb_private_dir): what the client checked
     * before it spawned this server, checked again for `kbench --serve`
     * started by hand. */
    char dir[512], lock_path[600];
    if (snprintf(dir, sizeof dir, "%s", sock_path) >= (int)sizeof dir) return 1;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 1;
    *slash = '\0';
    kb_err e;
    if (kb_private_dir(dir, &e) != KB_OK) return 1;
    /* One server per socket, for its whole life: the lock is dropped by the
     * kernel when it exits, however it exits. A second one waits, then finds
     * the socket alive and leaves. */
    snprintf(lock_path, sizeof lock_path, "%s.lock", sock_path);
    const int lk = kb_open_shared(lock_path, O_RDWR | O_CREAT, 0600, NULL, &e);
    if (lk < 0) return 1;
    int locked;
    while ((locked = flock(lk, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (locked != 0) return 1;
    int alive = connect_to(sock_path);
    if (alive >= 0) { /* cannot happen while we hold the lock, but be sure */
        close(alive);
        return 0;
    }
    unlink(sock_path);
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    mode_t old = umask(077); /* this user's clients only */
    int ok = ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 64) == 0;
    umask(old);
    if (!ok) return 1;
    if (ready_fd >= 0) { /* listening: the spawning client may connect */
        (void)!write(ready_fd, "r", 1);
        close(ready_fd);
    }
    int healthy = 1;
    while (healthy) {
        struct pollfd p = {ls, POLLIN, 0};
        int pr = poll(&p, 1, KB_SERVER_IDLE_S * 1000);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) break; /* idle: leave */
        int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        const int ran = take(c, client_uid, fn);
        close(c);
        /* A case that left a CUDA error behind poisons the context. */
        if (ran && (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess))
            healthy = 0;
    }
    /* New clients must not find us any more; those already queued are told
     * nothing (no ACK) and ask the next server. */
    unlink(sock_path);
    close(ls);
    return 0;
}
