/* Scratch files for the file-format unit tests (baseline, results, npy):
 * a private temp directory per test, whole-file read/write helpers. */
#ifndef KB_TMPFILES_H
#define KB_TMPFILES_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes a directory tree (our scratch dirs only hold files and dirs). */
static inline void kbt_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char sub[4096];
            int n = snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
            if (n > 0 && (size_t)n < sizeof sub) kbt_rm_rf(sub);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* fn(path, arg) for every file in dir whose name ends in suffix; returns how
 * many (fails the test when dir cannot be opened). */
static inline int kbt_for_files(const char *dir, const char *suffix,
                                void (*fn)(const char *path, void *arg), void *arg)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    const size_t ls = strlen(suffix);
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const size_t n = strlen(de->d_name);
        if (n <= ls || strcmp(de->d_name + n - ls, suffix) != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        fn(path, arg);
        count++;
    }
    closedir(d);
    return count;
}

/* mkdtemp under TMPDIR (or /tmp); dir must hold 4096 bytes. */
static inline void kbt_tmpdir(char *dir)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, 4096, "%s/kbench_unit_XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* A fresh scratch dir (kbt_tmpdir) and path = dir/name in it, a file not
 * made yet; path holds len bytes. */
static inline void kbt_tmpdir_file(char *dir, char *path, size_t len, const char *name)
{
    kbt_tmpdir(dir);
    snprintf(path, len, "%s/%s", dir, name);
}

/* dir/name spelled with exactly total characters, padded with "./" segments
 * (and one extra '/' for parity) between dir and name: the same file, for
 * the tests of path-length limits. out holds cap bytes. */
static inline void kbt_long_path(char *out, size_t cap, const char *dir, const char *name,
                                 size_t total)
{
    const size_t base = strlen(dir) + 1 + strlen(name);
    ck_assert_msg(total >= base && total < cap, "cannot spell %s/%s in %zu characters", dir,
                  name, total);
    size_t at = (size_t)snprintf(out, cap, "%s/", dir);
    if ((total - base) % 2) out[at++] = '/';
    while (at + strlen(name) < total) {
        out[at++] = '.';
        out[at++] = '/';
    }
    snprintf(out + at, cap - at, "%s", name);
    ck_assert_uint_eq(strlen(out), total);
}

/* The n bytes of text into path (NUL bytes included). */
static inline void kbt_write_n(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static inline void kbt_write(const char *path, const char *text)
{
    kbt_write_n(path, text, strlen(text));
}

/* Whole file, NUL-terminated, caller frees; NULL if it cannot be opened. */
static inline char *kbt_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    ck_assert_ptr_nonnull(b);
    for (;;) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap) break;
        cap *= 2;
        b = realloc(b, cap + 1);
        ck_assert_ptr_nonnull(b);
    }
    fclose(f);
    b[n] = '\0';
    if (len) *len = n;
    return b;
}

static inline int kbt_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

#endif
