/* One timed case per GPU, however kbench is started.
 *
 * CTest's resource allocation keeps the cases of one `ctest` run apart, but
 * two runs (two terminals, two CI jobs on one host) know nothing of each
 * other. So kbench also takes an exclusive advisory lock per GPU while it
 * does GPU work that is timed or would disturb a timing: a POSIX record lock
 * (fcntl F_SETLKW) on "<dir>/kbench-gpu-<pci bus id>.lock", dir from
 * KBENCH_LOCK_DIR (default /tmp: every process of the host sees it; give
 * containers that share a GPU a shared directory). The kernel drops the lock
 * when the process exits, however it exits, so a crash never leaves a GPU
 * locked. A process that has to wait says so, with the holder's pid and what
 * it runs (written into the file by the holder). */
#ifndef KB_GPULOCK_H
#define KB_GPULOCK_H

#include <stdio.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int fd;            /* -1: not held */
    char path[512];
    double waited_s;   /* how long the last acquire waited */
} kb_gpu_lock;

void kb_gpu_lock_init(kb_gpu_lock *l);

/* The folder of the GPU locks and of the case servers' sockets (server.h):
 * $KBENCH_LOCK_DIR, else /tmp. kb_cli_check_lock_dir checks it before any
 * GPU work. */
const char *kb_lock_dir(void);

/* The lock file for a PCI bus id ("0000:19:00.0"): dir/kbench-gpu-0000_19_00.0.lock.
 * dir NULL or empty: $KBENCH_LOCK_DIR, else /tmp. */
void kb_gpu_lock_path(const char *dir, const char *pci, char *buf, size_t len);

/* Blocks until this process holds the lock on path; `who` (a case name) is
 * written into the file for waiters to read. When the lock is busy, one line
 * goes to `log` (NULL: none) naming the holder before waiting, and one after.
 * Re-entrant: acquiring a lock already held is a no-op. KB_ERR_IO when the
 * file cannot be opened or locked. */
kb_status kb_gpu_lock_acquire(kb_gpu_lock *l, const char *path, const char *who, FILE *log,
                              kb_err *e);
void kb_gpu_lock_release(kb_gpu_lock *l);

#ifdef __cplusplus
}
#endif
#endif
