/* The tuning cache file: plain text, one entry per line,
 *     gpu|benchmark|dtype|bucket|config|GB/s
 * e.g. "NVIDIA H200|softmax_forward|bf16|N<=4096,M<=32768|threads=256,rows=2|3890.5",
 * '#' comments and blank lines allowed. Keyed by GPU name so that one file can
 * travel between machines; the bucket (tunekey.h) keeps it small (one search
 * per power of two of N and of M) while still separating vector-aligned from
 * unaligned widths, whose kernels behave differently. Reading is strict (a
 * malformed line is an error naming it); a store rewrites the file whole,
 * keeping comments. */
#include "tune_int.h"
#include "csvio.h"
#include "files.h"
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CACHE_FIELDS 6

/* ---- keys ------------------------------------------------------------------- */

void kb_tune_key_gpu(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name && *name ? name : "unknown GPU");
    for (char *c = buf; *c; c++)
        if (*c == '|' || *c == '\n' || *c == '\r') *c = '_';
}

static int field_ok(const char *s)
{
    return s && *s && !strpbrk(s, "|\r\n");
}

/* ---- cache file ----------------------------------------------------------------
 * A line is split in place into its six fields. */
typedef struct {
    char *f[CACHE_FIELDS];
    double gbps;
} cache_entry;

static int cfg_text_ok(const char *s)
{
    /* key=int(,key=int)*: the owner's space validates names and values. */
    for (;;) {
        const char *k = s;
        while (*s && *s != '=' && *s != ',') s++;
        if (s == k || *s != '=') return 0;
        s++;
        if (*s == '-') s++;
        if (*s < '0' || *s > '9') return 0;
        while (*s >= '0' && *s <= '9') s++;
        if (!*s) return 1;
        if (*s != ',') return 0;
        s++;
    }
}

static void chomp(char *line)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                 line[n - 1] == '\t'))
        line[--n] = '\0';
}

static int is_blank_or_comment(const char *line)
{
    line = kb_tune_skip_space(line);
    return *line == '\0' || *line == '#';
}

/* Blanks around a field (a hand-aligned file) are not part of it. */
static char *trim(char *s)
{
    s = (char *)kb_tune_skip_space(s);
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

/* A power of two, as kb_tune_bucket writes it (no sign, no leading zero);
 * advances *s past it. */
static int pow2_at(const char **s)
{
    const char *p = *s;
    char *end;
    if (*p < '1' || *p > '9') return 0;
    errno = 0;
    const long long v = strtoll(p, &end, 10);
    if (errno || v < 1 || (v & (v - 1))) return 0;
    *s = end;
    return 1;
}

static const char *bucket_why(const char *bucket, char *why, size_t len)
{
    snprintf(why, len,
             "bucket is not N<=n[,unaligned],M<=m[,K<=k] with n, m, k powers of two: '%s'",
             bucket);
    return why;
}

/* NULL when the key can match a key the tuner builds (kb_tune_key_gpu,
 * kb_tune_bucket); else why not,
 * naming the field, in why. A key that can never match would leave its
 * bucket on the heuristic without a word. */
static const char *key_why(const kb_tune_key *k, char *why, size_t len)
{
    kb_bench_id b;
    kb_dtype d;
    if (kb_bench_find(k->op, &b, NULL) != KB_OK) {
        snprintf(why, len, "benchmark '%s' is not registered (kbench --list)", k->op);
        return why;
    }
    if (kb_dtype_parse(k->dtype, &d, NULL) != KB_OK) {
        snprintf(why, len, "dtype '%s' is not bf16, fp16 or fp32", k->dtype);
        return why;
    }
    const char *s = k->bucket;
    if (strncmp(s, "N<=", 3) != 0 || (s += 3, !pow2_at(&s)))
        return bucket_why(k->bucket, why, len);
    if (!strstr(s, ",M<="))
        return "bucket without M<= (written before the cache was keyed by M as well as N): "
               "delete the line, or the file, and tune again (ci/tune)";
    if (strncmp(s, ",unaligned", 10) == 0) s += 10;
    if (strncmp(s, ",M<=", 4) != 0 || (s += 4, !pow2_at(&s)))
        return bucket_why(k->bucket, why, len);
    const int has_k = strncmp(s, ",K<=", 4) == 0;
    if (has_k && (s += 4, !pow2_at(&s))) return bucket_why(k->bucket, why, len);
    if (*s) return bucket_why(k->bucket, why, len);
    /* K<= exactly where the benchmark's shapes have a K (kb_tune_bucket) */
    if (has_k != (kb_bench_info_get(b)->dims == 3)) {
        snprintf(why, len, "bucket '%s' %s K<=k, but %s takes %s shapes", k->bucket,
                 has_k ? "has" : "lacks", k->op, has_k ? "2-D MxN" : "3-D MxNxK");
        return why;
    }
    return NULL;
}

/* NULL ok; otherwise a reason for the error message (in why, or static). */
static const char *split_entry(char *line, cache_entry *ce, char *why, size_t len)
{
    char *s = line;
    for (int i = 0; i < CACHE_FIELDS; i++) {
        ce->f[i] = s;
        char *bar = strchr(s, '|');
        if (i < CACHE_FIELDS - 1) {
            if (!bar) return "expected 6 '|'-separated fields gpu|benchmark|dtype|bucket|config|GB/s";
            *bar = '\0';
            s = bar + 1;
        } else if (bar) {
            return "more than 6 '|'-separated fields";
        }
    }
    for (int i = 0; i < CACHE_FIELDS; i++) ce->f[i] = trim(ce->f[i]);
    for (int i = 0; i < CACHE_FIELDS - 1; i++)
        if (!*ce->f[i]) return "empty field";
    const kb_tune_key k = {ce->f[0], ce->f[1], ce->f[2], ce->f[3]};
    const char *bad = key_why(&k, why, len);
    if (bad) return bad;
    if (!cfg_text_ok(ce->f[4])) return "config is not key=int,key=int,...";
    /* The baselines' number rule (csvio.h): decimal, finite; strtod alone
     * took "0x10" for 16 GB/s. */
    if (kb_parse_double(ce->f[5], &ce->gbps) != 0 || ce->gbps < 0) {
        snprintf(why, len, "GB/s is not a non-negative number: '%.40s'", ce->f[5]);
        return why;
    }
    return NULL;
}

static kb_tune_key entry_key(const cache_entry *ce)
{
    const kb_tune_key k = {ce->f[0], ce->f[1], ce->f[2], ce->f[3]};
    return k;
}

static int key_eq(const kb_tune_key *a, const kb_tune_key *b)
{
    return strcmp(a->gpu, b->gpu) == 0 && strcmp(a->op, b->op) == 0 &&
           strcmp(a->dtype, b->dtype) == 0 && strcmp(a->bucket, b->bucket) == 0;
}

/* A key the cache would refuse when read back is not written. */
static kb_status key_check(const kb_tune_key *k, kb_err *e)
{
    char why[200];
    if (!field_ok(k->gpu) || !field_ok(k->op) || !field_ok(k->dtype) || !field_ok(k->bucket))
        return KB_FAIL(e, KB_ERR_ARG, "tuning-cache key fields must be non-empty, without '|' or line breaks");
    const char *bad = key_why(k, why, sizeof why);
    if (bad) return KB_FAIL(e, KB_ERR_ARG, "tuning-cache key: %s", bad);
    return KB_OK;
}

/* The next line of the cache at path into *buf (growing it), chomped, and
 * without the UTF-8 byte order mark an editor may put before the first line
 * (it would make the first entry's GPU never match). 0 at the end of the
 * file, or at a line longer than KB_TUNE_LINE_MAX (*st: KB_ERR_PARSE naming
 * path:line). */
static int next_line(FILE *f, const char *path, char **buf, size_t *cap, int *lineno,
                     kb_status *st, kb_err *e)
{
    const ssize_t n = getline(buf, cap, f);
    if (n < 0) return 0;
    size_t len = (size_t)n; /* the line's bytes, its NUL terminator not counted */
    if (++*lineno == 1 && strncmp(*buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(*buf, *buf + 3, len - 2);
        len -= 3;
    }
    if (n > KB_TUNE_LINE_MAX) {
        *st = KB_FAIL(e, KB_ERR_PARSE, "%s:%d: line longer than %d characters", path, *lineno,
                      KB_TUNE_LINE_MAX);
        return 0;
    }
    /* The line is used as a C string: a NUL would end it there, and what
     * came after it (a damaged GB/s, a second entry) was dropped unseen. */
    if (memchr(*buf, '\0', len)) {
        *st = KB_FAIL(e, KB_ERR_PARSE,
                      "%s:%d: NUL byte in the line (a binary file, or text saved as UTF-16? "
                      "the cache is UTF-8 or ASCII text)",
                      path, *lineno);
        return 0;
    }
    chomp(*buf);
    return 1;
}

kb_status kb_tune_cache_each(const char *path, kb_tune_entry_fn fn, void *arg, kb_err *e)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return KB_OK;
        return KB_FAIL(e, KB_ERR_IO, "cannot read tuning cache %s: %s", path, strerror(errno));
    }
    char *line = NULL, buf[200];
    size_t cap = 0;
    int lineno = 0;
    kb_status st = KB_OK;
    while (st == KB_OK && next_line(f, path, &line, &cap, &lineno, &st, e)) {
        if (is_blank_or_comment(line)) continue;
        cache_entry ce;
        const char *why = split_entry(line, &ce, buf, sizeof buf);
        if (why) {
            st = KB_FAIL(e, KB_ERR_PARSE, "%s:%d: malformed tuning-cache line: %s", path, lineno,
                         why);
            break;
        }
        const kb_tune_key k = entry_key(&ce);
        st = fn(arg, &k, ce.f[4], ce.gbps, lineno, e);
    }
    if (st == KB_OK && ferror(f))
        st = KB_FAIL(e, KB_ERR_IO, "error reading tuning cache %s", path);
    free(line);
    fclose(f);
    return st;
}

/* kb_tune_cache_lookup's visitor: the last entry of key k wins. */
typedef struct {
    const char *path;
    const kb_tune_key *k;
    char *cfg;
    size_t cfg_len;
    double *gbps;
    int *found;
    int *lineno; /* the winning entry's */
} lookup_ctx;

static kb_status lookup_entry(void *arg, const kb_tune_key *k, const char *cfg, double gbps,
                              int lineno, kb_err *e)
{
    const lookup_ctx *l = arg;
    if (!key_eq(k, l->k)) return KB_OK;
    if (strlen(cfg) >= l->cfg_len)
        return KB_FAIL(e, KB_ERR_PARSE, "%s:%d: config too long", l->path, lineno);
    strcpy(l->cfg, cfg);
    *l->gbps = gbps;
    *l->found = 1;
    *l->lineno = lineno;
    return KB_OK;
}

/* kb_tune_cache_lookup, and the line the entry is on. */
kb_status kb_tune_cache_find(const char *path, const kb_tune_key *k, char *cfg, size_t cfg_len,
                            double *gbps, int *found, int *lineno, kb_err *e)
{
    *found = 0;
    KB_TRY(key_check(k, e));
    const lookup_ctx l = {path, k, cfg, cfg_len, gbps, found, lineno};
    const kb_status st = kb_tune_cache_each(path, lookup_entry, (void *)&l, e);
    if (st != KB_OK) *found = 0;
    return st;
}

kb_status kb_tune_cache_lookup(const char *path, const kb_tune_key *k, char *cfg, size_t cfg_len,
                               double *gbps, int *found, kb_err *e)
{
    int lineno;
    return kb_tune_cache_find(path, k, cfg, cfg_len, gbps, found, &lineno, e);
}

static const char cache_header[] =
    "# kbench tuned-backend launch configurations, written by `kbench --tune`.\n"
    "# One entry per line: gpu|benchmark|dtype|bucket|config|GB/s\n"
    "#   bucket: N rounded up to a power of two; \",unaligned\" when N is not a\n"
    "#   multiple of the 16-byte vector width; then M rounded up to a power of two\n"
    "#   (\"N<=4096,M<=32768\"); then, for an MxNxK benchmark (rope), K rounded up\n"
    "#   to a power of two (\",K<=8\"). A shape without its own entry takes one of the M\n"
    "#   classes within two powers of two (larger first), else the heuristic.\n"
    "#   GB/s: measured when tuned.\n"
    "# Edit freely: '#' comments and blank lines are kept; a malformed line is an error.\n";

/* Copies src (may be NULL) into dst replacing k's entry with new_line;
 * appends it when absent. */
static kb_status merge_into(FILE *src, FILE *dst, const char *path, const kb_tune_key *k,
                            const char *new_line, kb_err *e)
{
    int written = 0, out_err = 0;
    kb_status st = KB_OK;
    if (!src) {
        out_err |= fputs(cache_header, dst) == EOF;
    } else {
        char *line = NULL, *copy = NULL, buf[200];
        size_t cap = 0;
        int lineno = 0;
        while (st == KB_OK && next_line(src, path, &line, &cap, &lineno, &st, e)) {
            if (!is_blank_or_comment(line)) {
                free(copy);
                copy = strdup(line);
                cache_entry ce;
                const char *why =
                    copy ? split_entry(copy, &ce, buf, sizeof buf) : "out of host memory";
                if (why) {
                    st = KB_FAIL(e, KB_ERR_PARSE, "%s:%d: malformed tuning-cache line: %s",
                                 path, lineno, why);
                    break;
                }
                const kb_tune_key ck = entry_key(&ce);
                if (key_eq(&ck, k)) {
                    /* The first occurrence is replaced, later duplicates dropped. */
                    if (!written) out_err |= fprintf(dst, "%s\n", new_line) < 0;
                    written = 1;
                    continue;
                }
            }
            out_err |= fprintf(dst, "%s\n", line) < 0;
        }
        if (st == KB_OK && ferror(src))
            st = KB_FAIL(e, KB_ERR_IO, "error reading tuning cache %s", path);
        free(line);
        free(copy);
    }
    if (st != KB_OK) return st;
    if (!written) out_err |= fprintf(dst, "%s\n", new_line) < 0;
    if (out_err)
        return KB_FAIL(e, KB_ERR_IO, "cannot write tuning cache %s: %s", path, strerror(errno));
    return KB_OK;
}

/* The cache with k's entry replaced (or appended), for kb_atomic_write. */
typedef struct {
    FILE *src; /* the current cache, NULL when there is none */
    const char *path;
    const kb_tune_key *k;
    const char *line;
} merge_ctx;

static kb_status write_merged(FILE *dst, void *ctx, kb_err *e)
{
    const merge_ctx *m = ctx;
    return merge_into(m->src, dst, m->path, m->k, m->line, e);
}

kb_status kb_tune_cache_store(const char *path, const kb_tune_key *k, const char *cfg,
                              double gbps, kb_err *e)
{
    KB_TRY(key_check(k, e));
    if (!field_ok(cfg) || !cfg_text_ok(cfg))
        return KB_FAIL(e, KB_ERR_ARG, "tuning-cache config '%s' is not key=int,...", cfg);
    if (!isfinite(gbps) || gbps < 0) gbps = 0;
    char new_line[KB_TUNE_LINE_MAX + 1];
    int len = snprintf(new_line, sizeof new_line, "%s|%s|%s|%s|%s|%.1f", k->gpu, k->op, k->dtype,
                       k->bucket, cfg, gbps);
    if (len < 0 || len >= KB_TUNE_LINE_MAX)
        return KB_FAIL(e, KB_ERR_ARG, "tuning-cache entry longer than %d characters",
                       KB_TUNE_LINE_MAX);
    KB_TRY(kb_mkdir_parent(path, e));

    /* Serialise concurrent writers (parallel ctest runs of --tune) so that no
     * one's entry is lost between read and rename. */
    const int lock = kb_lock_parent(path, e);
    if (lock < 0) return KB_ERR_IO;
    kb_status st;
    kb_err why = {{0}};
    const int fd = kb_open_shared(path, O_RDONLY, 0, NULL, &why);
    const int absent = fd < 0 && errno == ENOENT;
    merge_ctx m = {fd >= 0 ? fdopen(fd, "r") : NULL, path, k, new_line};
    if (fd >= 0 && !m.src) {
        close(fd);
        KB_FAIL(&why, KB_ERR_NOMEM, "%s: out of host memory", path);
    }
    if (!m.src && !absent)
        st = KB_FAIL(e, KB_ERR_IO, "cannot read tuning cache %s", kb_err_text(&why));
    else /* the merged file replaces the cache as the baselines do: temp, fsync, rename */
        st = kb_atomic_write(path, write_merged, &m, e);
    if (m.src) fclose(m.src);
    kb_unlock(lock);
    return st;
}
