/* File-system helpers (files.h). */
#include "files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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
