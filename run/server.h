/* One CUDA context per GPU for a whole ctest run.
 *
 * Each CTest case is its own `kbench --case NAME` process, and most of such a
 * process's ~450 ms on an H200 is CUDA context creation and teardown, not the
 * case. Cases of one GPU must not overlap (not even one's start-up with
 * another's timing: measured, docs/user/gpus.md), so that overhead is paid in series.
 * Instead a case process is a thin client: it hands its argv, environment,
 * working directory and its stdout/stderr descriptors (SCM_RIGHTS) to a
 * per-GPU server over a Unix socket and exits with the server's answer. The
 * server, started by the first case and gone after KB_SERVER_IDLE_S seconds
 * without a case, runs each case exactly as the process would have (same
 * code, the client's environment and descriptors), one at a time, and keeps
 * its CUDA context, SOL cache and loaded libraries between cases. The client
 * never touches the GPU. What a case prints and its exit code are unchanged.
 *
 * The server is not used (the case runs in its own process) when
 * KBENCH_SERVER is off (kb_env_switch; a value it refuses too: kb_main then
 * says so, exit 2), under a CUDA tool that injects itself into the process
 * (compute-sanitizer, nsys, ncu: they must see the case's GPU work), or when
 * the lock folder cannot be used (kb_cli_check_lock_dir: same). A server
 * exits after a case that left a CUDA error behind (a sticky error would
 * fail every later case); a server that dies mid-case makes that case fail
 * with a message, and the next case starts a new one. Servers are per user,
 * per kbench binary (path, inode, mtime), per CUDA_VISIBLE_DEVICES and per
 * GPU ordinal, so a rebuild never talks to an old server.
 *
 * On a shared host what crosses the socket is secret (a CI job's
 * environment holds its tokens) or powerful (the client's stdout and
 * stderr: whoever holds them writes into the user's terminal or log), and
 * what comes back is believed (the exit code), so both ends are this user's
 * alone, as OpenSSH's agent, systemd and PostgreSQL keep their local
 * sockets:
 *   - the socket lives in a folder only this user can enter
 *     (kb_runtime_dir): $XDG_RUNTIME_DIR/kbench, else <lock folder>/kbench-<uid>
 *     made 0700 and checked (kb_private_dir: a directory, not a symbolic
 *     link, ours, mode exactly 0700);
 *   - the client reads the listening peer's uid (SO_PEERCRED) and sends not
 *     a byte unless it is its own; the server reads the connecting peer's
 *     and serves only its own;
 *   - any of these failing runs the case in the client's process, with one
 *     line on stderr naming why, as does a server that cannot be started or
 *     reached.
 * A server exits at once when the client of the case it runs goes away
 * (killed, or ended by CTest's TIMEOUT: see the watchdog in server.c), so
 * that a hung case does not hold the GPU, its lock and the server for good. */
#ifndef KB_SERVER_H
#define KB_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_SERVER_IDLE_S 20

/* What the server runs for a request: kbench's main logic, returning the
 * exit code (no _exit). */
typedef int (*kb_server_main_fn)(int argc, char **argv);

/* Client side. ordinal: the GPU the case will use (-1: from CTest's
 * allocation or 0). Returns 1 when the case ran through a server (*rc its
 * exit code), 0 when the caller must run it in this process. */
int kb_server_client(int argc, char **argv, int ordinal, int *rc);
/* kb_server_client taking a server of uid server_uid only (kb_server_client:
 * geteuid()); tests name another uid to stand for a stranger's server. */
int kb_server_client_as(int argc, char **argv, int ordinal, uid_t server_uid, int *rc);

/* The folder of this user's server sockets, made when absent and checked:
 * $XDG_RUNTIME_DIR/kbench when XDG_RUNTIME_DIR is a folder of ours of mode
 * 0700 (pam_systemd's; sudo and su keep the invoking user's), else
 * kb_lock_dir()/kbench-<uid>. KB_ERR_IO (kb_private_dir's reason) or
 * KB_ERR_ARG (a name too long) when it cannot be used. */
kb_status kb_runtime_dir(char *buf, size_t len, kb_err *e);

/* The socket, in folder dir (kb_runtime_dir), of the server for this kbench
 * binary and GPU ordinal (a function of the binary's path, inode, mtime and
 * size, and of CUDA_VISIBLE_DEVICES). 0, or -1 when it cannot be named. */
int kb_server_socket_path(const char *dir, const char *exe, int ordinal, char *buf, size_t len);

/* `kbench --serve SOCKET [READY_FD]`: the server loop; returns the process
 * exit code. The socket's folder must pass kb_private_dir. ready_fd (-1:
 * none): written one byte once the server listens, then closed, so that the
 * client that spawned it stops waiting at once when it exits without
 * listening. */
int kb_server_run(const char *sock_path, int ready_fd, kb_server_main_fn fn);
/* kb_server_run serving clients of uid client_uid only (kb_server_run:
 * geteuid()); tests name another uid to make themselves strangers. */
int kb_server_run_as(const char *sock_path, int ready_fd, kb_server_main_fn fn, uid_t client_uid);

#ifdef __cplusplus
}
#endif
#endif
