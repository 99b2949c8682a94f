/* One timed case per GPU, however kbench is started.
 *
 * CTest's resource allocation keeps the cases of one `ctest` run apart, but
 * two runs (two terminals, two CI jobs on one host, two users) know nothing
 * of each other. So kbench also takes an exclusive advisory lock per GPU
 * while it does GPU work that is timed or would disturb a timing:
 * flock(LOCK_EX) on "<dir>/kbench-gpu-<pci bus id>.lock", dir from
 * KBENCH_LOCK_DIR (default /tmp: every process of the host sees it; give
 * containers that share a GPU a shared directory). The kernel drops the lock
 * when the process exits, however it exits, so a crash never leaves a GPU
 * locked. A process that has to wait says so, naming the holder.
 *
 * The file is shared by every user of the host, in a folder every user can
 * write to, so it is opened as files.h says (kb_open_shared: never through a
 * symbolic link, never anything but a regular file), and:
 *   - it is made with O_CREAT|O_EXCL, and only a file this call made is
 *     chmodded: to 0644, whatever the umask, so that every user can open it
 *     to lock it (flock needs only a read-only descriptor) and read the
 *     holder note; only its maker can write it. Not 0666: nobody else
 *     writes it, and a note any user could rewrite would be text that
 *     another user's waiting kbench prints to its terminal;
 *   - one that exists is opened for writing only when it is ours with one
 *     link (kb_open_shared's checks); a file of another user, or of ours
 *     with a second link, is opened read-only: locked, never written, never
 *     chmodded. A symbolic link or a FIFO at the path is an error naming
 *     the file (the case fails; nothing is followed or touched);
 *   - the holder note ("pid <n> <case>") is written only into a file we
 *     own. A waiter names the holder by the pid the kernel lists for the
 *     lock (/proc/locks), with the note only when the note is that pid's (a
 *     file of another user keeps its owner's last note), its bytes outside
 *     printable ASCII replaced.
 * flock, not fcntl record locks: an exclusive record lock needs a descriptor
 * open for writing, which another user's lock file does not give. The two
 * kinds of lock are independent on Linux: a kbench that takes a record lock
 * on this file does not exclude this one. On NFS, where Linux emulates flock
 * with a record lock, a read-only descriptor cannot be locked exclusively:
 * keep KBENCH_LOCK_DIR on a local file system. */
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
