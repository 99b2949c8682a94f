/* Launch-configuration selection for the tuned backend: parse/format of
 * "key=val,..." texts, the on-disk cache of search results, the coordinate
 * descent search and the kb_impl glue every tuned kernel file uses.
 *
 * Cache file: plain text, one entry per line,
 *     gpu|benchmark|dtype|bucket|config|GB/s
 * e.g. "NVIDIA H200|softmax_forward|bf16|N<=4096,M<=32768|threads=256,rows=2|3890.5",
 * '#' comments and blank lines allowed. Keyed by GPU name so that one file can
 * travel between machines; the bucket (tunekey.h) keeps it small (one search
 * per power of two of N and of M) while still separating vector-aligned from
 * unaligned widths, whose kernels behave differently. */
#include "tuner.h"
#include "cli.h"
#include "csvio.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accuracy.h"
#include "buffers.h"
#include "reference.h"
#include "registry.h"
#include "timing.h"

#define CACHE_LINE_MAX 1024
#define CACHE_FIELDS 6
/* Improvement a move must bring: below this, timing noise decides. */
#define SEARCH_MIN_GAIN 0.01
/* Candidates timed per search (~20-60 ms each): the one-step descent and
 * end probes converge in 20-40, the all-directions check takes the rest.
 * With seven parameters (softmax backward, the norms then; the norm
 * backward has eight since session 16) 43 of 122 searches on the H200
 * needed more than 96 and a median of 77 (kernels/README.md, "How the tuned
 * backend picks"). KBENCH_TUNE_EVALS overrides it (ci/tune
 * --evals). */
#define SEARCH_MAX_EVALS 200

/* ---- parse / format ------------------------------------------------------- */

static int param_index(const kb_tune_space *sp, const char *name, size_t len)
{
    for (int i = 0; i < sp->nparams; i++)
        if (strlen(sp->names[i]) == len && strncmp(sp->names[i], name, len) == 0) return i;
    return -1;
}

static int choice_ok(const kb_tune_space *sp, int i, int v)
{
    for (int k = 0; k < sp->nchoices[i]; k++)
        if (sp->choices[i][k] == v) return 1;
    return 0;
}

static void choices_text(const kb_tune_space *sp, int i, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < sp->nchoices[i] && n < len; k++) {
        int w = snprintf(buf + n, len - n, "%s%d", k ? "|" : "", sp->choices[i][k]);
        if (w < 0) break;
        n += (size_t)w;
    }
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

kb_status kb_tune_parse(const kb_tune_space *sp, const char *text, const kb_tune_cfg *base,
                        kb_tune_cfg *out, kb_err *e)
{
    kb_tune_cfg c;
    int seen[KB_TUNE_MAX_PARAMS] = {0};
    memset(&c, 0, sizeof c);
    if (base) c = *base;
    const char *s = text ? text : "";
    s = skip_space(s);
    while (*s) {
        const char *key = s;
        while (*s && *s != '=' && *s != ',' && *s != ' ' && *s != '\t') s++;
        size_t klen = (size_t)(s - key);
        s = skip_space(s);
        if (klen == 0 || *s != '=')
            return KB_FAIL(e, KB_ERR_ARG, "%s: expected key=value in '%s'", sp->op, text);
        int i = param_index(sp, key, klen);
        if (i < 0) {
            char names[128] = "";
            size_t n = 0;
            for (int k = 0; k < sp->nparams && n < sizeof names; k++) {
                int w = snprintf(names + n, sizeof names - n, "%s%s", k ? "," : "", sp->names[k]);
                if (w < 0) break;
                n += (size_t)w;
            }
            return KB_FAIL(e, KB_ERR_ARG, "%s: unknown launch parameter '%.*s' (known: %s)", sp->op,
                           (int)klen, key, names);
        }
        if (seen[i])
            return KB_FAIL(e, KB_ERR_ARG, "%s: launch parameter '%s' given twice", sp->op,
                           sp->names[i]);
        seen[i] = 1;
        s = skip_space(s + 1);
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno != 0 || v < -1000000 || v > 1000000)
            return KB_FAIL(e, KB_ERR_ARG, "%s: '%s' needs an integer value", sp->op, sp->names[i]);
        if (!choice_ok(sp, i, (int)v)) {
            char ch[160];
            choices_text(sp, i, ch, sizeof ch);
            return KB_FAIL(e, KB_ERR_ARG, "%s: %s=%ld is not one of %s", sp->op, sp->names[i], v,
                           ch);
        }
        c.v[i] = (int)v;
        s = skip_space(end);
        if (*s == ',') {
            s = skip_space(s + 1);
            if (!*s)
                return KB_FAIL(e, KB_ERR_ARG, "%s: trailing ',' in '%s'", sp->op, text);
        } else if (*s) {
            return KB_FAIL(e, KB_ERR_ARG, "%s: unexpected '%c' after %s's value", sp->op, *s,
                           sp->names[i]);
        }
    }
    if (!base)
        for (int i = 0; i < sp->nparams; i++)
            if (!seen[i])
                return KB_FAIL(e, KB_ERR_ARG, "%s: launch parameter '%s' missing", sp->op,
                               sp->names[i]);
    if (sp->canon) sp->canon(&c);
    *out = c;
    return KB_OK;
}

void kb_tune_format(const kb_tune_space *sp, const kb_tune_cfg *c, char *buf, size_t len)
{
    size_t n = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < sp->nparams && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s=%d", i ? "," : "", sp->names[i], c->v[i]);
        if (w < 0) break;
        n += (size_t)w;
    }
}

/* ---- keys ------------------------------------------------------------------- */

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
    line = skip_space(line);
    return *line == '\0' || *line == '#';
}

/* Blanks around a field (a hand-aligned file) are not part of it. */
static char *trim(char *s)
{
    s = (char *)skip_space(s);
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
    snprintf(why, len, "bucket is not N<=n[,unaligned],M<=m with n, m powers of two: '%s'",
             bucket);
    return why;
}

/* NULL when the key can match what kb_tuned_setup looks up; else why not,
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
    if (strncmp(s, ",M<=", 4) != 0 || (s += 4, !pow2_at(&s)) || *s)
        return bucket_why(k->bucket, why, len);
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
    char *end;
    errno = 0;
    ce->gbps = strtod(ce->f[5], &end);
    if (end == ce->f[5] || *end || errno != 0 || !isfinite(ce->gbps) || ce->gbps < 0)
        return "GB/s is not a non-negative number";
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
 * file, or at a line longer than CACHE_LINE_MAX (*st: KB_ERR_PARSE naming
 * path:line). */
static int next_line(FILE *f, const char *path, char **buf, size_t *cap, int *lineno,
                     kb_status *st, kb_err *e)
{
    const ssize_t n = getline(buf, cap, f);
    if (n < 0) return 0;
    if (++*lineno == 1 && strncmp(*buf, "\xEF\xBB\xBF", 3) == 0)
        memmove(*buf, *buf + 3, (size_t)n - 2);
    if (n > CACHE_LINE_MAX) {
        *st = KB_FAIL(e, KB_ERR_PARSE, "%s:%d: line longer than %d characters", path, *lineno,
                      CACHE_LINE_MAX);
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
static kb_status cache_find(const char *path, const kb_tune_key *k, char *cfg, size_t cfg_len,
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
    return cache_find(path, k, cfg, cfg_len, gbps, found, &lineno, e);
}

static const char cache_header[] =
    "# kbench tuned-backend launch configurations, written by `kbench --tune`.\n"
    "# One entry per line: gpu|benchmark|dtype|bucket|config|GB/s\n"
    "#   bucket: N rounded up to a power of two; \",unaligned\" when N is not a\n"
    "#   multiple of the 16-byte vector width; then M rounded up to a power of two\n"
    "#   (\"N<=4096,M<=32768\"). A shape without its own entry takes one of the M\n"
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
    char new_line[CACHE_LINE_MAX + 1];
    int len = snprintf(new_line, sizeof new_line, "%s|%s|%s|%s|%s|%.1f", k->gpu, k->op, k->dtype,
                       k->bucket, cfg, gbps);
    if (len < 0 || len >= CACHE_LINE_MAX)
        return KB_FAIL(e, KB_ERR_ARG, "tuning-cache entry longer than %d characters",
                       CACHE_LINE_MAX);
    KB_TRY(kb_mkdir_parent(path, e));

    /* Serialise concurrent writers (parallel ctest runs of --tune) so that no
     * one's entry is lost between read and rename. */
    char lock_path[4200];
    snprintf(lock_path, sizeof lock_path, "%s.lock", path);
    int lock_fd = open(lock_path, O_RDWR | O_CREAT, 0666);
    if (lock_fd < 0)
        return KB_FAIL(e, KB_ERR_IO, "cannot open %s: %s", lock_path, strerror(errno));
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(lock_fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) {
            int err = errno;
            close(lock_fd);
            return KB_FAIL(e, KB_ERR_IO, "cannot lock %s: %s", lock_path, strerror(err));
        }
    }

    kb_status st;
    merge_ctx m = {fopen(path, "r"), path, k, new_line};
    if (!m.src && errno != ENOENT)
        st = KB_FAIL(e, KB_ERR_IO, "cannot read tuning cache %s: %s", path, strerror(errno));
    else /* the merged file replaces the cache as the baselines do: temp, fsync, rename */
        st = kb_atomic_write(path, write_merged, &m, e);
    if (m.src) fclose(m.src);
    close(lock_fd); /* releases the lock */
    return st;
}

/* ---- coordinate descent ------------------------------------------------------ */

typedef struct {
    kb_tune_cfg c;
    double cost;
} evaluated;

static int cfg_eq(const kb_tune_space *sp, const kb_tune_cfg *a, const kb_tune_cfg *b)
{
    for (int i = 0; i < sp->nparams; i++)
        if (a->v[i] != b->v[i]) return 0;
    return 1;
}

static int is_valid(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                    const kb_tune_cfg *c)
{
    return !sp->valid || sp->valid(p, ctx, c);
}

/* Index of v among parameter i's choices, -1 if absent. */
static int choice_index(const kb_tune_space *sp, int i, int v)
{
    for (int k = 0; k < sp->nchoices[i]; k++)
        if (sp->choices[i][k] == v) return k;
    return -1;
}

/* c with parameter i changed is invalid: make it valid by changing one other
 * parameter as little as possible (nearest choice in the list's order
 * first). Kernels whose parameters only mean something in one design (a
 * streaming unroll, say) make the plain neighbour invalid across designs;
 * without the repair the search could never cross from one design to the
 * other. 1 and *c repaired, or 0. */
static int repair(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx, int i,
                  kb_tune_cfg *c)
{
    for (int d = 1; d < KB_TUNE_MAX_CHOICES; d++)
        for (int j = 0; j < sp->nparams; j++) {
            const int at = choice_index(sp, j, c->v[j]);
            if (j == i || at < 0) continue;
            for (int s = -1; s <= 1; s += 2) {
                const int k = at + s * d;
                if (k < 0 || k >= sp->nchoices[j]) continue;
                kb_tune_cfg r = *c;
                r.v[j] = sp->choices[j][k];
                if (is_valid(sp, p, ctx, &r)) {
                    *c = r;
                    return 1;
                }
            }
        }
    return 0;
}

/* Nearest valid choice of parameter i strictly below (dir < 0) or above
 * (dir > 0) the value in c; failing that, the nearest one that repair()
 * makes valid; 0 when there is none. Choices need not be sorted. */
static int neighbour(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                     const kb_tune_cfg *c, int i, int dir, kb_tune_cfg *out)
{
    const int cur = c->v[i];
    for (int fix = 0; fix <= 1; fix++) {
        int tried[KB_TUNE_MAX_CHOICES] = {0};
        for (;;) {
            int pick = -1;
            for (int k = 0; k < sp->nchoices[i]; k++) {
                const int v = sp->choices[i][k];
                if (tried[k] || (dir < 0 ? v >= cur : v <= cur)) continue;
                if (pick < 0 || (dir < 0 ? v > sp->choices[i][pick] : v < sp->choices[i][pick]))
                    pick = k;
            }
            if (pick < 0) break;
            tried[pick] = 1;
            *out = *c;
            out->v[i] = sp->choices[i][pick];
            if (fix ? repair(sp, p, ctx, i, out) : is_valid(sp, p, ctx, out)) return 1;
        }
    }
    return 0;
}

/* Nearest choice of parameter i strictly below (dir < 0) or above the
 * value v, validity aside; 0 when there is none. */
static int step_value(const kb_tune_space *sp, int i, int v, int dir, int *out)
{
    int found = 0;
    for (int k = 0; k < sp->nchoices[i]; k++) {
        const int w = sp->choices[i][k];
        if (dir < 0 ? w >= v : w <= v) continue;
        if (!found || (dir < 0 ? w > *out : w < *out)) *out = w;
        found = 1;
    }
    return found;
}

/* A diagonal whose one-step values are invalid together may become valid
 * further along the same directions: the norm backward's db=1 needs NV <= 2
 * packs per thread, so from (threads 128, acc 1, db 0) at a long row the
 * diagonal (256, 0, 1) is invalid while (256, 0, 2) is the best layout
 * (kernels/README.md, session 22). Walk one moved parameter at a time
 * further in its own direction, the nearest extra distance first, parameter
 * order breaking ties; 1 and *c the first valid one, or 0. */
static int skip_invalid(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                        unsigned set, const int *dir, kb_tune_cfg *c)
{
    for (int extra = 1; extra < KB_TUNE_MAX_CHOICES; extra++) {
        int any = 0; /* some moved parameter still had choices this far on */
        for (int i = 0; i < sp->nparams; i++) {
            if (!(set & (1u << i))) continue;
            kb_tune_cfg r = *c;
            int ok = 1;
            for (int k = 0; k < extra && ok; k++) ok = step_value(sp, i, r.v[i], dir[i], &r.v[i]);
            if (!ok) continue;
            any = 1;
            if (is_valid(sp, p, ctx, &r)) {
                *c = r;
                return 1;
            }
        }
        if (!any) break;
    }
    return 0;
}

static int popcount(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

int kb_tune_diagonals(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                      const kb_tune_cfg *c, kb_tune_cfg *out, int max)
{
    int n = 0;
    const unsigned all = (1u << sp->nparams) - 1;
    for (int k = 2; k <= sp->nparams; k++)
        for (unsigned set = 1; set <= all; set++) {
            if (popcount(set) != k) continue;
            /* dirs: bit j of the moved parameters' order set = step up */
            for (unsigned dirs = 0; dirs < (1u << k); dirs++) {
                kb_tune_cfg cand = *c;
                int ok = 1, dir[KB_TUNE_MAX_PARAMS] = {0};
                for (int i = 0, j = 0; i < sp->nparams && ok; i++) {
                    if (!(set & (1u << i))) continue;
                    dir[i] = (dirs >> j++) & 1 ? 1 : -1;
                    ok = step_value(sp, i, c->v[i], dir[i], &cand.v[i]);
                }
                if (!ok) continue;
                if (!is_valid(sp, p, ctx, &cand)) {
                    if (!skip_invalid(sp, p, ctx, set, dir, &cand)) continue;
                    int dup = 0; /* another diagonal may have walked to it */
                    for (int m = 0; m < n && !dup; m++) dup = cfg_eq(sp, &out[m], &cand);
                    if (dup) continue;
                }
                if (n >= max) return n;
                out[n++] = cand;
            }
        }
    return n;
}

typedef struct {
    evaluated *seen;
    int n, cap;
} memo;

/* Cost of c, evaluated at most once; 0 in *done when the budget is spent. */
static kb_status evaluate(memo *m, const kb_tune_space *sp, const kb_tune_cfg *cand,
                          kb_tune_cost_fn cost, void *arg, double *out, int *done, kb_err *e)
{
    kb_tune_cfg canon = *cand; /* one kernel, one evaluation */
    if (sp->canon) sp->canon(&canon);
    const kb_tune_cfg *c = &canon;
    for (int k = 0; k < m->n; k++)
        if (cfg_eq(sp, &m->seen[k].c, c)) {
            *out = m->seen[k].cost;
            *done = 1;
            return KB_OK;
        }
    if (m->n >= m->cap) {
        *done = 0;
        return KB_OK;
    }
    double v = INFINITY;
    KB_TRY(cost(arg, c, &v, e));
    if (!(v >= 0) || isnan(v)) v = INFINITY;
    m->seen[m->n].c = *c;
    m->seen[m->n].cost = v;
    m->n++;
    *out = v;
    *done = 1;
    return KB_OK;
}

kb_status kb_tune_search(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                         const kb_tune_cfg *start, kb_tune_cost_fn cost, void *arg,
                         int max_evals, kb_tune_cfg *best, double *best_cost, int *evals,
                         kb_err *e)
{
    if (max_evals < 1) max_evals = 1;
    if (!is_valid(sp, p, ctx, start))
        return KB_FAIL(e, KB_ERR_ARG, "%s: search start is not a valid configuration", sp->op);
    memo m = {calloc((size_t)max_evals, sizeof(evaluated)), 0, max_evals};
    kb_tune_cfg *diag = calloc(KB_TUNE_MAX_DIAGONALS, sizeof *diag);
    if (!m.seen || !diag) {
        free(m.seen);
        free(diag);
        return KB_FAIL(e, KB_ERR_NOMEM, "%s: tuning search: out of host memory", sp->op);
    }
    kb_tune_cfg cur = *start;
    double cur_cost = INFINITY;
    int done = 1;
    kb_status st = evaluate(&m, sp, &cur, cost, arg, &cur_cost, &done, e);
    for (int jumped = 1; st == KB_OK && done && jumped;) {
        for (int moved = 1; st == KB_OK && moved;) {
            moved = 0;
            for (int i = 0; i < sp->nparams && st == KB_OK; i++) {
                kb_tune_cfg pick = cur;
                double pick_cost = cur_cost;
                for (int dir = -1; dir <= 1; dir += 2) {
                    kb_tune_cfg cand;
                    double c;
                    if (!neighbour(sp, p, ctx, &cur, i, dir, &cand)) continue;
                    st = evaluate(&m, sp, &cand, cost, arg, &c, &done, e);
                    if (st != KB_OK || !done) break;
                    if (c < pick_cost) {
                        pick = cand;
                        pick_cost = c;
                    }
                }
                if (st == KB_OK && pick_cost < cur_cost * (1.0 - SEARCH_MIN_GAIN)) {
                    cur = pick;
                    cur_cost = pick_cost;
                    moved = 1;
                }
                if (!done) {
                    moved = 0;
                    break;
                }
            }
        }
        /* One-step moves stop at a local minimum: a far choice stays out of
         * reach when the steps towards it are worse (measured on the H200:
         * tall norm forwards gain 4-6 % at occ=0, nine choices from
         * occ=32, and nothing at occ=4 or 8 on the way). So each parameter's first and
         * last choice is tried too, the others as they are; an improvement
         * restarts the descent from there. */
        jumped = 0;
        for (int i = 0; i < sp->nparams && st == KB_OK && done && !jumped; i++) {
            for (int end = 0; end < 2 && st == KB_OK && done; end++) {
                kb_tune_cfg cand = cur;
                double c;
                cand.v[i] = sp->choices[i][end ? sp->nchoices[i] - 1 : 0];
                if (cand.v[i] == cur.v[i] || !is_valid(sp, p, ctx, &cand)) continue;
                st = evaluate(&m, sp, &cand, cost, arg, &c, &done, e);
                if (st == KB_OK && done && c < cur_cost * (1.0 - SEARCH_MIN_GAIN)) {
                    cur = cand;
                    cur_cost = c;
                    jumped = 1;
                    break;
                }
            }
        }
        /* Converged along every axis: check all directions at once (moves
         * that pay only together, e.g. more threads with fewer rows per CTA
         * when threads x rows is capped). */
        if (!jumped && st == KB_OK && done && diag) {
            const int nd = kb_tune_diagonals(sp, p, ctx, &cur, diag, KB_TUNE_MAX_DIAGONALS);
            kb_tune_cfg pick = cur;
            double pick_cost = cur_cost;
            for (int k = 0; k < nd && st == KB_OK && done; k++) {
                double c;
                st = evaluate(&m, sp, &diag[k], cost, arg, &c, &done, e);
                if (st == KB_OK && done && c < pick_cost) {
                    pick = diag[k];
                    pick_cost = c;
                }
            }
            if (st == KB_OK && pick_cost < cur_cost * (1.0 - SEARCH_MIN_GAIN)) {
                cur = pick;
                cur_cost = pick_cost;
                jumped = 1;
            }
        }
    }
    if (st == KB_OK) {
        *best = cur;
        if (sp->canon) sp->canon(best);
        *best_cost = cur_cost;
        if (evals) *evals = m.n;
    }
    free(m.seen);
    free(diag);
    return st;
}

/* ---- kb_impl glue ---------------------------------------------------------- */

typedef struct {
    const kb_tune_space *sp;
    kb_tune_cfg cfg;
    char source[512]; /* "heuristic" | "cache:<file>" | "tuned:<file>" | "custom" */
    char note[160];   /* why the heuristic replaced a cache entry, or "" */
} tuned_state;

static void sanitize_gpu(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name && *name ? name : "unknown GPU");
    for (char *c = buf; *c; c++)
        if (*c == '|' || *c == '\n' || *c == '\r') *c = '_';
}

typedef struct {
    const kb_tune_space *sp;
    const kb_problem *p;
    const kb_setup_ctx *ctx;
    kb_buffers *b;
    void *extra_ws; /* grown when a candidate needs more than b's workspace */
    size_t extra_bytes;
    kb_flusher *fl;
    kb_timing_opts opts;
    cudaStream_t s;
} timing_arg;

typedef struct {
    timing_arg *ta;
    kb_tensors t;
    const kb_tune_cfg *c;
} launch_arg;

static kb_status launch_once(void *arg, cudaStream_t s, kb_err *e)
{
    launch_arg *la = (launch_arg *)arg;
    return la->ta->sp->launch(la->ta->p, &la->t, la->c, s, e);
}

static kb_status check_candidate(const timing_arg *ta, const kb_tune_cfg *c, kb_err *e)
{
    const kb_problem *p = ta->p;
    const kb_tol tol = kb_tol_default(p->dtype);
    kb_accuracy acc;
    char what[160], cfg[256];
    const char *label = "output";
    KB_TRY(kb_check_output(ta->b, tol, ta->s, &acc, e));
    if (!acc.mismatches && ta->b->t.dw) {
        label = "dw";
        KB_TRY(kb_check_dw(ta->b, tol, ta->s, &acc, e));
    }
    if (!acc.mismatches) return KB_OK;
    kb_tune_format(ta->sp, c, cfg, sizeof cfg);
    kb_accuracy_describe(&acc, kb_out_cols(p), label, what, sizeof what);
    return KB_FAIL(e, KB_ERR_ACCURACY, "tuning %s %s %lldx%lld: candidate %s is wrong: %s",
                   ta->sp->op, kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, cfg,
                   what);
}

static kb_status time_candidate(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    timing_arg *ta = (timing_arg *)arg;
    launch_arg la = {ta, ta->b->t, c};
    size_t ws = ta->sp->workspace ? ta->sp->workspace(ta->p, ta->ctx, c) : 0;
    /* The candidate sees the workspace a case run with it would have, not
     * the start's: a launch may size its grid by the workspace (the norm
     * backward's slots), and a larger one here would time a launch no real
     * run makes. */
    if (ws <= ta->b->t.workspace_bytes) la.t.workspace_bytes = ws;
    if (ws > ta->b->t.workspace_bytes) {
        if (ws > ta->extra_bytes) {
            if (ta->extra_ws) KB_CUDA(e, cudaFree(ta->extra_ws));
            ta->extra_ws = NULL;
            ta->extra_bytes = 0;
            if (cudaMalloc(&ta->extra_ws, ws) != cudaSuccess) {
                (void)cudaGetLastError();
                *cost = INFINITY; /* this candidate does not fit; others may */
                return KB_OK;
            }
            ta->extra_bytes = ws;
        }
        la.t.workspace = ta->extra_ws;
        la.t.workspace_bytes = ws;
    }
    /* A launch the hardware refuses (too many registers for the block, an
     * unschedulable cluster) is a bad candidate, not a failed search. */
    KB_TRY(kb_buffers_poison(ta->b, ta->s, e));
    kb_err le;
    kb_status st = ta->sp->launch(ta->p, &la.t, c, ta->s, &le);
    if (st != KB_OK) {
        (void)cudaGetLastError();
        if (cudaStreamSynchronize(ta->s) != cudaSuccess) {
            if (e) *e = le;
            return st;
        }
        *cost = INFINITY;
        return KB_OK;
    }
    /* A configuration that computes wrong results is a kernel bug: stop and
     * say which one, rather than time it (or silently skip it). */
    KB_TRY(check_candidate(ta, c, e));
    kb_timing tm;
    KB_TRY(kb_time_fn(launch_once, &la, &ta->opts, ta->fl, ta->s, &tm, e));
    *cost = tm.median_ms;
    return KB_OK;
}

static kb_status run_search(const kb_tune_space *sp, const kb_problem *p,
                            const kb_setup_ctx *ctx, const kb_tune_cfg *start, kb_tune_cfg *best,
                            double *gbps, kb_err *e)
{
    size_t ws = sp->workspace ? sp->workspace(p, ctx, start) : 0;
    kb_buffers b;
    memset(&b, 0, sizeof b);
    kb_status rc = kb_buffers_alloc(p, ws, &b, e);
    if (rc == KB_ERR_DEVMEM) return KB_ERR_UNSUPPORTED; /* the case itself will not fit */
    if (rc != KB_OK) return rc;
    timing_arg ta;
    memset(&ta, 0, sizeof ta);
    ta.sp = sp;
    ta.p = p;
    ta.ctx = ctx;
    ta.b = &b;
    kb_flusher fl = {0};
    ta.fl = &fl;
    kb_timing_defaults(&ta.opts);
    /* Ranking candidates needs less precision than a reported result, and a
     * whole sweep has to tune in minutes: ~0.1 s per candidate at most. */
    ta.opts.warmup = 2;
    ta.opts.min_samples = 10;
    ta.opts.max_samples = 200;
    ta.opts.min_ms = 2;
    ta.opts.max_ms = 100;
    ta.opts.target_rel_err = 0.01;

    kb_status st = KB_OK;
    double ms = INFINITY;
    /* The environment's values first: a bad one fails before the search,
     * and an unwritable log before the search it would have recorded. */
    int max_evals = SEARCH_MAX_EVALS;
    st = kb_env_tune_evals(getenv("KBENCH_TUNE_EVALS"), &max_evals, e);
    const char *log_path = getenv("KBENCH_TUNE_LOG");
    FILE *lf = NULL;
    if (st == KB_OK && log_path && *log_path && !(lf = fopen(log_path, "a")))
        st = KB_FAIL(e, KB_ERR_IO, "KBENCH_TUNE_LOG '%s': cannot open for appending: %s", log_path,
                     strerror(errno));
    const cudaError_t crc = st == KB_OK ? cudaStreamCreateWithFlags(&ta.s, cudaStreamNonBlocking)
                                        : cudaSuccess;
    if (crc != cudaSuccess) {
        st = KB_FAIL(e, KB_ERR_CUDA, "%s: cudaStreamCreate: %s", sp->op, cudaGetErrorString(crc));
        ta.s = NULL;
    }
    if (st == KB_OK) st = kb_flusher_init(&fl, e);
    if (st == KB_OK) st = kb_buffers_prepare(&b, 1234, ta.s, e);
    int evals = 0;
    const double t0 = kb_mono_s();
    if (st == KB_OK)
        st = kb_tune_search(sp, p, ctx, start, time_candidate, &ta, max_evals, best, &ms, &evals,
                            e);
    if (st == KB_OK && lf) {
        /* ci/tune's record of what each search cost (its run-time estimate). */
        char cfg[256], bucket[64];
        kb_tune_format(sp, best, cfg, sizeof cfg);
        kb_tune_bucket(p->dtype, p->M, p->N, bucket, sizeof bucket);
        /* benchmark,dtype,M,N,bucket,evals,search_s,best_ms,config */
        fprintf(lf, "%s,%s,%lld,%lld,\"%s\",%d,%.3f,%.4f,\"%s\"\n", sp->op,
                kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, bucket, evals,
                kb_mono_s() - t0, ms, cfg);
    }
    if (lf && fclose(lf) != 0 && st == KB_OK)
        st = KB_FAIL(e, KB_ERR_IO, "KBENCH_TUNE_LOG '%s': write failed: %s", log_path,
                     strerror(errno));
    if (st == KB_OK && !isfinite(ms))
        st = KB_FAIL(e, KB_ERR_CUDA, "%s %lldx%lld: no candidate configuration ran", sp->op,
                     (long long)p->M, (long long)p->N);
    if (st == KB_OK) *gbps = kb_bytes_moved(p) / (ms * 1e-3) / 1e9;
    if (ta.s) cudaStreamSynchronize(ta.s);
    if (ta.extra_ws) cudaFree(ta.extra_ws);
    kb_flusher_free(&fl);
    kb_buffers_free(&b);
    if (ta.s) cudaStreamDestroy(ta.s);
    return st;
}

static kb_status from_cache(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                            const kb_tune_key *k, tuned_state *st, int *found, kb_err *e)
{
    char cfg[CACHE_LINE_MAX];
    double gbps;
    int lineno = 0;
    KB_TRY(cache_find(ctx->tune_cache, k, cfg, sizeof cfg, &gbps, found, &lineno, e));
    if (!*found) return KB_OK;
    kb_tune_cfg c;
    kb_err pe;
    /* A stale entry (the kernel's parameters changed since it was written)
     * or one that cannot run this particular N of its bucket: heuristic. */
    if (kb_tune_parse(sp, cfg, &st->cfg, &c, &pe) != KB_OK) {
        snprintf(st->note, sizeof st->note, "cached %.100s unknown to this build", cfg);
        return KB_OK;
    }
    /* Every key known, but one left out: `kbench --tune` writes every
     * parameter, so this is a hand edit or an entry not migrated when its
     * kernel gained a parameter (kernels/README.md). Filled from the
     * heuristic it would be reported as the cache's choice while being
     * neither: refused, naming the line. A search (--tune) replaces it, so
     * there it only starts from the heuristic. */
    if (kb_tune_parse(sp, cfg, NULL, &c, &pe) != KB_OK) {
        if (!ctx->tune)
            return KB_FAIL(e, KB_ERR_PARSE, "%s:%d: tuning-cache entry '%s' is incomplete: %s "
                           "(complete it, or delete the line and tune again)",
                           ctx->tune_cache, lineno, cfg, pe.msg);
        snprintf(st->note, sizeof st->note, "cached %.100s incomplete", cfg);
        return KB_OK;
    }
    if (!is_valid(sp, p, ctx, &c)) {
        snprintf(st->note, sizeof st->note, "cached %.100s cannot run N=%lld", cfg, (long long)p->N);
        return KB_OK;
    }
    st->cfg = c;
    snprintf(st->source, sizeof st->source, "cache:%s", ctx->tune_cache);
    return KB_OK;
}

kb_status kb_tuned_setup(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                         void **state, size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    tuned_state *st = (tuned_state *)calloc(1, sizeof *st);
    if (!st) return KB_FAIL(e, KB_ERR_IO, "out of host memory");
    st->sp = sp;
    sp->heuristic(p, ctx, &st->cfg);
    if (sp->canon) sp->canon(&st->cfg);
    snprintf(st->source, sizeof st->source, "heuristic");
    kb_status rc = KB_OK;
    char text[256];
    if (!is_valid(sp, p, ctx, &st->cfg)) {
        kb_tune_format(sp, &st->cfg, text, sizeof text);
        /* A failure, not a SKIP: every shape the op accepts must have a
         * runnable heuristic, so the op's validity check rejecting it is a
         * bug (a kernel that spills, a launch or 32-bit index limit, no code
         * for this GPU). As a SKIP it hid a build whose every tuned
         * cross-entropy forward case verified nothing. Checked before the
         * custom and cached configurations on purpose: a cache entry must
         * not hide a broken fallback that other buckets and GPUs run. */
        rc = KB_FAIL(e, KB_ERR_CUDA,
                     "%s %s %lldx%lld: heuristic %s cannot run (a bug: the op's validity check "
                     "rejects it: a kernel that spills registers, a launch or 32-bit index limit, "
                     "or no code for this GPU)",
                     sp->op, kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, text);
        goto out;
    }
    if (ctx->custom_config) {
        kb_tune_cfg c;
        rc = kb_tune_parse(sp, ctx->custom_config, &st->cfg, &c, e);
        if (rc != KB_OK) goto out;
        if (!is_valid(sp, p, ctx, &c)) {
            kb_tune_format(sp, &c, text, sizeof text);
            rc = KB_FAIL(e, KB_ERR_ARG, "%s %s %lldx%lld: custom config %s cannot run this shape",
                         sp->op, kb_dtype_name(p->dtype), (long long)p->M, (long long)p->N, text);
            goto out;
        }
        st->cfg = c;
        snprintf(st->source, sizeof st->source, "custom");
        goto out;
    }

    char gpu[256], bucket[64];
    sanitize_gpu(ctx->gpu_name, gpu, sizeof gpu);
    kb_tune_bucket(p->dtype, p->M, p->N, bucket, sizeof bucket);
    const kb_tune_key k = {gpu, sp->op, kb_dtype_name(p->dtype), bucket};
    if (ctx->tune) {
        /* The search starts at this bucket's own cache entry when this build
         * can run it, else at the heuristic: the descent only moves to
         * faster configurations, so re-tuning (after a kernel gained a
         * parameter, say) ends no slower than the entry it replaces. */
        kb_tune_cfg best, start = st->cfg;
        double gbps = 0;
        if (ctx->tune_cache) {
            int found = 0;
            tuned_state probe = *st;
            rc = from_cache(sp, p, ctx, &k, &probe, &found, e);
            if (rc != KB_OK) goto out;
            if (found && strncmp(probe.source, "cache", 5) == 0) start = probe.cfg;
        }
        rc = run_search(sp, p, ctx, &start, &best, &gbps, e);
        if (rc != KB_OK) goto out;
        st->cfg = best;
        if (ctx->tune_cache) {
            kb_tune_format(sp, &best, text, sizeof text);
            rc = kb_tune_cache_store(ctx->tune_cache, &k, text, gbps, e);
            if (rc != KB_OK) goto out;
            snprintf(st->source, sizeof st->source, "tuned:%s", ctx->tune_cache);
        } else {
            snprintf(st->source, sizeof st->source, "tuned");
        }
    } else if (ctx->tune_cache) {
        /* This M class's entry, else one of the M classes within two powers
         * of two, the larger first (timed on more rows, less noisy); never
         * one further away. An entry this build cannot use does not end the
         * search; the first such one's reason stays as the note when none
         * is used. k.bucket is `bucket`. */
        const int64_t mc = kb_tune_rows_class(p->M);
        const int64_t big = (int64_t)1 << 60; /* no overflow in mc * 4 */
        const int64_t near[] = {mc, mc < big ? mc * 2 : 0, mc / 2, mc < big ? mc * 4 : 0, mc / 4};
        char note[sizeof st->note] = "";
        for (size_t i = 0; i < sizeof near / sizeof near[0] && rc == KB_OK; i++) {
            if (near[i] < 1) continue;
            int found = 0;
            st->note[0] = '\0';
            kb_tune_bucket(p->dtype, near[i], p->N, bucket, sizeof bucket);
            rc = from_cache(sp, p, ctx, &k, st, &found, e);
            if (rc != KB_OK || !found) continue;
            if (strncmp(st->source, "cache", 5) == 0) { /* used */
                if (i > 0)
                    snprintf(st->note, sizeof st->note, "entry of M<=%lld", (long long)near[i]);
                note[0] = '\0';
                break;
            }
            if (!note[0]) {
                if (i > 0)
                    snprintf(note, sizeof note, "%.150s (entry of M<=%lld)", st->note,
                             (long long)near[i]);
                else
                    snprintf(note, sizeof note, "%s", st->note);
            }
        }
        if (note[0]) snprintf(st->note, sizeof st->note, "%s", note);
    }
out:
    if (rc != KB_OK) {
        free(st);
        return rc;
    }
    *workspace_bytes = sp->workspace ? sp->workspace(p, ctx, &st->cfg) : 0;
    *state = st;
    return KB_OK;
}

kb_status kb_tuned_run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                       kb_err *e)
{
    const tuned_state *st = (const tuned_state *)state;
    if (!st) return KB_FAIL(e, KB_ERR_ARG, "tuned: run without setup");
    return st->sp->launch(p, t, &st->cfg, s, e);
}

int kb_tuned_kernels(const kb_problem *p, const void *state)
{
    const tuned_state *st = (const tuned_state *)state;
    if (!st) return 0;
    return st->sp->kernels ? st->sp->kernels(p, &st->cfg) : 1;
}

void kb_tuned_describe(const void *state, char *buf, size_t len)
{
    const tuned_state *st = (const tuned_state *)state;
    if (!len) return;
    if (!st) {
        snprintf(buf, len, "-");
        return;
    }
    char cfg[256];
    kb_tune_format(st->sp, &st->cfg, cfg, sizeof cfg);
    const char *colon = strchr(st->source, ':');
    const int label = colon ? (int)(colon - st->source) : (int)strlen(st->source);
    if (st->note[0])
        snprintf(buf, len, "%s (%.*s; %s)", cfg, label, st->source, st->note);
    else
        snprintf(buf, len, "%s (%.*s)", cfg, label, st->source);
}

void kb_tuned_teardown(void *state) { free(state); }
