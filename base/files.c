/* File-system helpers (files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

kb_status kb_mkdir_p(const char *path, kb_err *e)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return KB_FAIL(e, KB_ERR_IO, "path too long: %s", path);
    if (!buf[0]) return KB_FAIL(e, KB_ERR_IO, "empty directory path");
    for (char *p = buf + 1;; p++) {
        int end = *p == '\0';
        if (*p == '/' || end) {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return KB_FAIL(e, KB_ERR_IO, "cannot create directory %s: %s", buf,
                               strerror(errno));
            if (end) break;
            *p = '/';
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_IO, "%s is not a directory", path);
    return KB_OK;
}

kb_status kb_mkdir_parent(const char *path, kb_err *e)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return KB_FAIL(e, KB_ERR_IO, "path too long: %s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return KB_OK;
    *slash = '\0';
    return kb_mkdir_p(dir, e);
}

void kb_gpu_file_name(const char *gpu_name, char *buf, size_t len)
{
    if (!len) return;
    const char *g = gpu_name && *gpu_name ? gpu_name : "unknown_gpu";
    size_t n = 0;
    for (; *g && n + 1 < len; g++) {
        char ch = *g;
        buf[n++] = (ch == ' ' || ch == '\t' || ch == '/' || ch == '\\') ? '_' : ch;
    }
    buf[n] = '\0';
}

double kb_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t kb_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

kb_status kb_input_file_check(const char *what, const char *path, int explicit_path,
                              int will_write, const char *missing_hint, int *missing, kb_err *e)
{
    struct stat st;
    *missing = 0;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) return KB_FAIL(e, KB_ERR_IO, "%s %s: %s", what, path, strerror(errno));
        *missing = 1;
        if (explicit_path && !will_write)
            return KB_FAIL(e, KB_ERR_ARG, "%s %s does not exist%s%s%s", what, path,
                           missing_hint ? " (" : "", missing_hint ? missing_hint : "",
                           missing_hint ? ")" : "");
        return KB_OK;
    }
    if (S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_ARG, "%s %s is a directory, not a file", what, path);
    if (access(path, R_OK) != 0)
        return KB_FAIL(e, KB_ERR_IO, "%s %s is not readable: %s", what, path, strerror(errno));
    return KB_OK;
}

kb_status kb_path_print(char *path, size_t len, const char *what, const char *named, kb_err *e,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(path, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len)
        return KB_FAIL(e, KB_ERR_ARG, "%s '%.60s...': path longer than %zu characters", what, named,
                       len - 1);
    return KB_OK;
}

/* ---- files in shared folders (files.h) ----------------------------------- */

/* Why an open in a shared folder failed, in words. */
static const char *open_error(int err)
{
    switch (err) {
    case ELOOP: return "a symbolic link: refused (kbench never follows one in a shared folder)";
    case ENXIO: return "a FIFO or device with no reader: refused (not a regular file)";
    default: return strerror(err);
    }
}

int kb_open_shared(const char *path, int flags, mode_t mode, int *created, kb_err *e)
{
    if (created) *created = 0;
    const int want = (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    int fd = -1, made = 0;
    /* O_CREAT: make it (O_EXCL), else open the one there. A file removed
     * between the two opens is made on the next turn. */
    for (int turn = 0; fd < 0 && turn < 8; turn++) {
        if (want & O_CREAT) {
            fd = open(path, want | O_EXCL, mode);
            if (fd >= 0) {
                made = 1;
                break;
            }
            if (errno != EEXIST || (flags & O_EXCL)) break;
        }
        fd = open(path, want & ~(O_CREAT | O_EXCL));
        if (fd >= 0 || errno != ENOENT || !(want & O_CREAT)) break;
    }
    if (fd < 0) {
        const int err = errno;
        KB_FAIL(e, KB_ERR_IO, "%s: %s", path, open_error(err));
        errno = err;
        return -1;
    }
    struct stat st;
    char why[160] = "";
    const int writing = (flags & O_ACCMODE) != O_RDONLY;
    if (fstat(fd, &st) != 0)
        snprintf(why, sizeof why, "%s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, sizeof why, "not a regular file: refused");
    else if (writing && st.st_uid != geteuid())
        snprintf(why, sizeof why, "owned by uid %ld, not by this user (uid %ld): refused",
                 (long)st.st_uid, (long)geteuid());
    else if (writing && st.st_nlink != 1)
        snprintf(why, sizeof why, "has %ld links (a hard link to a file elsewhere?): refused",
                 (long)st.st_nlink);
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        snprintf(why, sizeof why, "%s", strerror(errno));
    if (why[0]) {
        close(fd);
        KB_FAIL(e, KB_ERR_IO, "%s: %s", path, why);
        errno = EPERM;
        return -1;
    }
    if (created) *created = made;
    return fd;
}

size_t kb_read_small(const char *path, char *buf, size_t len)
{
    if (!len) return 0;
    size_t n = 0;
    const int fd = kb_open_shared(path, O_RDONLY, 0, NULL, NULL);
    while (fd >= 0 && n + 1 < len) {
        const ssize_t k = read(fd, buf + n, len - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    if (fd >= 0) close(fd);
    buf[n] = '\0';
    return n;
}

kb_status kb_private_dir(const char *path, kb_err *e)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return KB_FAIL(e, KB_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0)
        return KB_FAIL(e, KB_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return KB_FAIL(e, KB_ERR_IO, "%s is a symbolic link, not a folder of this user's", path);
    if (!S_ISDIR(st.st_mode)) return KB_FAIL(e, KB_ERR_IO, "%s is not a folder", path);
    if (st.st_uid != geteuid())
        return KB_FAIL(e, KB_ERR_IO, "%s is owned by uid %ld, not by this user (uid %ld)", path,
                       (long)st.st_uid, (long)geteuid());
    if ((st.st_mode & 07777) != 0700)
        return KB_FAIL(e, KB_ERR_IO, "%s has mode %04o, not 0700 (others could reach it)", path,
                       (unsigned)(st.st_mode & 07777));
    return KB_OK;
}

int kb_lock_parent(const char *path, kb_err *e)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        KB_FAIL(e, KB_ERR_IO, "path too long: %s", path);
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0'; /* "/x": the root folder */
    else *slash = '\0';
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        KB_FAIL(e, KB_ERR_IO, "cannot open folder %s to lock it: %s", dir, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        close(fd);
        KB_FAIL(e, KB_ERR_IO, "cannot lock folder %s: %s", dir, strerror(err));
        return -1;
    }
    return fd;
}

void kb_unlock(int fd)
{
    if (fd < 0) return;
    (void)flock(fd, LOCK_UN);
    close(fd); /* would drop it anyway: the descriptor is this lock's only one */
}
