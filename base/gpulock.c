/* Per-GPU advisory lock; see gpulock.h for why. */
#include "gpulock.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

void kb_gpu_lock_init(kb_gpu_lock *l)
{
    l->fd = -1;
    l->path[0] = '\0';
    l->waited_s = 0;
}

const char *kb_lock_dir(void)
{
    const char *dir = getenv("KBENCH_LOCK_DIR");
    return dir && *dir ? dir : "/tmp";
}

void kb_gpu_lock_path(const char *dir, const char *pci, char *buf, size_t len)
{
    if (!dir || !*dir) dir = kb_lock_dir();
    char id[64];
    size_t j = 0;
    for (const char *c = pci && *pci ? pci : "unknown"; *c && j + 1 < sizeof id; c++)
        id[j++] = (*c == ':' || *c == '/') ? '_' : *c;
    id[j] = '\0';
    snprintf(buf, len, "%s/kbench-gpu-%s.lock", dir, id);
}

/* The pid holding an flock on fd's file, as the kernel lists it in
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> 0 EOF";
 * waiters' lines have "->" in place of FLOCK); 0 when not found. The inode
 * decides; the device too where it matches (some file systems list another
 * device number than stat gives). */
static long flock_holder(int fd)
{
    struct stat st;
    FILE *f = fstat(fd, &st) == 0 ? fopen("/proc/locks", "re") : NULL;
    if (!f) return 0;
    char line[256];
    long pid = 0;
    while (fgets(line, sizeof line, f)) {
        char kind[16];
        long p;
        unsigned maj, min;
        unsigned long ino;
        if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%lu", kind, &p, &maj, &min, &ino) != 5 ||
            strcmp(kind, "FLOCK") != 0 || ino != (unsigned long)st.st_ino)
            continue;
        pid = p;
        if (maj == major(st.st_dev) && min == minor(st.st_dev)) break;
    }
    fclose(f);
    return pid;
}

/* Who holds the lock, for the waiting message: "pid <n> <case>" (the note
 * the holder wrote, when it is that pid's), else "pid <n>", else the note,
 * else "unknown holder". Bytes outside printable ASCII become '?': the note
 * is text from a file another user may own. */
static void describe_holder(int fd, char *buf, size_t len)
{
    char note[256];
    ssize_t n = pread(fd, note, sizeof note - 1, 0);
    note[n > 0 ? n : 0] = '\0';
    note[strcspn(note, "\n")] = '\0';
    for (char *c = note; *c; c++)
        if (*c < 0x20 || *c > 0x7e) *c = '?';
    const long pid = flock_holder(fd);
    char mine[32];
    snprintf(mine, sizeof mine, "pid %ld ", pid);
    if (pid > 0 && strncmp(note, mine, strlen(mine)) != 0)
        snprintf(buf, len, "pid %ld", pid);
    else
        snprintf(buf, len, "%s", note[0] ? note : "unknown holder");
}

/* The lock file, opened as gpulock.h says; *writable: the holder note may
 * be written into it (a file of ours). */
static int open_lock(const char *path, int *writable, kb_err *e)
{
    kb_err why = {{0}};
    int fd = -1;
    *writable = 0;
    for (int turn = 0; fd < 0 && turn < 8; turn++) {
        fd = kb_open_shared(path, O_RDWR | O_CREAT | O_EXCL, 0644, NULL, &why);
        if (fd >= 0) { /* ours, just made: readable by all whatever the umask */
            if (fchmod(fd, 0644) != 0) {
                const int err = errno;
                close(fd);
                KB_FAIL(e, KB_ERR_IO, "cannot chmod the GPU lock file %s: %s", path,
                        strerror(err));
                return -1;
            }
            *writable = 1;
            return fd;
        }
        if (errno != EEXIST) break;
        fd = kb_open_shared(path, O_RDWR, 0, NULL, &why); /* ours, one link */
        if (fd >= 0) *writable = 1;
        else if (errno == EPERM || errno == EACCES || errno == EROFS)
            fd = kb_open_shared(path, O_RDONLY, 0, NULL, &why); /* to lock only */
        if (fd < 0 && errno != ENOENT) break; /* ENOENT: removed since; make it */
    }
    if (fd < 0)
        KB_FAIL(e, KB_ERR_IO, "cannot use the GPU lock file %s (set KBENCH_LOCK_DIR to a "
                "directory of your own, or remove the file)", kb_err_text(&why));
    return fd;
}

static int take(int fd, int how)
{
    int rc;
    while ((rc = flock(fd, how)) != 0 && errno == EINTR) {
    }
    return rc;
}

kb_status kb_gpu_lock_acquire(kb_gpu_lock *l, const char *path, const char *who, FILE *log,
                              kb_err *e)
{
    if (l->fd >= 0) return KB_OK;
    l->waited_s = 0;
    int writable = 0;
    const int fd = open_lock(path, &writable, e);
    if (fd < 0) return KB_ERR_IO;
    if (take(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            const int err = errno;
            close(fd);
            return KB_FAIL(e, KB_ERR_IO, "cannot lock %s: %s", path, strerror(err));
        }
        char holder[256];
        describe_holder(fd, holder, sizeof holder);
        if (log) {
            fprintf(log, "%s: waiting for the GPU lock %s (held by %s)\n", who, path, holder);
            fflush(log);
        }
        const double t0 = kb_mono_s();
        if (take(fd, LOCK_EX) != 0) {
            const int err = errno;
            close(fd);
            return KB_FAIL(e, KB_ERR_IO, "cannot lock %s: %s", path, strerror(err));
        }
        l->waited_s = kb_mono_s() - t0;
        if (log) {
            fprintf(log, "%s: got the GPU lock after waiting %.2f s\n", who, l->waited_s);
            fflush(log);
        }
    }
    char line[256];
    int n = snprintf(line, sizeof line, "pid %ld %s\n", (long)getpid(), who ? who : "");
    if (writable && n > 0 && ftruncate(fd, 0) == 0) {
        ssize_t w = pwrite(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, 0);
        (void)w; /* the note is for humans; the lock is what counts */
    }
    l->fd = fd;
    snprintf(l->path, sizeof l->path, "%s", path);
    return KB_OK;
}

void kb_gpu_lock_release(kb_gpu_lock *l)
{
    if (l->fd < 0) return;
    (void)flock(l->fd, LOCK_UN);
    close(l->fd); /* closing drops it anyway: this is its only descriptor */
    l->fd = -1;
}
