/* Per-GPU advisory lock; see gpulock.h for why. */
#include "gpulock.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static struct flock whole_file(short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    return fl; /* l_start = l_len = 0: the whole file */
}

/* What the holder wrote ("pid <n> <case>"), for the waiting message. */
static void read_holder(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    if (n < 0) n = 0;
    buf[n] = '\0';
    char *nl = strchr(buf, '\n');
    if (nl) *nl = '\0';
    if (!buf[0]) snprintf(buf, len, "unknown holder");
}

kb_status kb_gpu_lock_acquire(kb_gpu_lock *l, const char *path, const char *who, FILE *log,
                              kb_err *e)
{
    if (l->fd >= 0) return KB_OK;
    l->waited_s = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return KB_FAIL(e, KB_ERR_IO, "cannot open GPU lock file %s: %s (set KBENCH_LOCK_DIR to a "
                       "writable directory)", path, strerror(errno));
    /* Another user's kbench must be able to lock it too: umask would drop
     * the group/other write bits. Best effort (we may not own the file). */
    (void)fchmod(fd, 0666);
    struct flock fl = whole_file(F_WRLCK);
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        if (errno != EACCES && errno != EAGAIN) {
            int err = errno;
            close(fd);
            return KB_FAIL(e, KB_ERR_IO, "cannot lock %s: %s", path, strerror(err));
        }
        char holder[256];
        read_holder(fd, holder, sizeof holder);
        struct flock q = whole_file(F_WRLCK);
        if (fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK && !strstr(holder, "pid"))
            snprintf(holder, sizeof holder, "pid %ld", (long)q.l_pid);
        if (log) {
            fprintf(log, "%s: waiting for the GPU lock %s (held by %s)\n", who, path, holder);
            fflush(log);
        }
        const double t0 = kb_mono_s();
        int rc;
        do {
            fl = whole_file(F_WRLCK);
            rc = fcntl(fd, F_SETLKW, &fl);
        } while (rc != 0 && errno == EINTR);
        if (rc != 0) {
            int err = errno;
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
    if (n > 0 && ftruncate(fd, 0) == 0) {
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
    struct flock fl = whole_file(F_UNLCK);
    (void)fcntl(l->fd, F_SETLK, &fl);
    close(l->fd); /* closing drops a POSIX lock anyway */
    l->fd = -1;
}
